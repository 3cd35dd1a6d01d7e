-- One existential size given a size that a `let` binds and, elsewhere, a parameter: they
-- are different sizes.
-- ==
-- error: Sizes "len'" and "len" do not match

type^ grid = ?[n].([n]u8, u8 -> [n]u8)

def make (len: i64) : grid =
  let len' = len * 2
  in (replicate len' 0, \v -> replicate len v)
