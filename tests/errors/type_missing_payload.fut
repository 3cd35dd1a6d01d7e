-- A constructor pattern with the wrong number of payloads.
-- ==
-- error: Cannot unify|payload|does not exist

def f (s: #some i32 | #none) : i32 =
  match s
  case #some -> 0
  case #none -> 1
