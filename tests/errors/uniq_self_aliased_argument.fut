-- A consuming parameter's argument whose components are the same array.
-- ==
-- error: Argument passed for consuming parameter is self-aliased

def g (t: *([]i64, []i64)) = t.0 with [0] = 1

def f (n: i64) =
  let x = iota n
  in g (x, x)
