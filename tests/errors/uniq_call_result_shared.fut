-- The components of a call's result may be one array, so consuming one uses up
-- the other.
-- ==
-- error: result of applying "both".*consumed

def both (x: []f32) = (x, x)

def h (n: i64) =
  let (p, q) = both (replicate n 1f32)
  let p[0] = 2
  in (p, q)
