-- A match that forgets a constructor.
-- ==
-- error: Unmatched cases

def area (s: #circle f64 | #rect f64 f64) : f64 =
  match s
  case #circle r -> r * r
