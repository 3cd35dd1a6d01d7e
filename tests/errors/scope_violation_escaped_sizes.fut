-- A constant's declared function type uses one size twice; the lambda gives it two sizes
-- that depend on the lambda's own parameter, so that one size would have to be both.
-- ==
-- error: Sizes "k\*2" and "k\+3" do not match: one size from outside would have to be both

type pair_of [n] = ([n]u8, [n]u8)

def widen : i64 -> pair_of [] = \k -> (replicate (k * 2) 0, replicate (k + 3) 1)
