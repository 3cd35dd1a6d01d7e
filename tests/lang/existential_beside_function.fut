-- An existential size that an array beside the function shows is fine: the pair carries a
-- value of that size.

def make (k: i64) : ?[n].([n]bool, bool -> [n]bool) =
  (replicate k true, \(b: bool) -> replicate k b)

-- ==
-- input { 3i64 } output { [false, false, false] }
entry main (k: i64) =
  let (_, f) = make k
  in f false
