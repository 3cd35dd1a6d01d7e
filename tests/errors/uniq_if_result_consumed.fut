-- An if-expression whose branches return the same array in both components cannot
-- have one component consumed while the other is used.
-- ==
-- error: result of if-expression

def sel (c: bool) (u: *[]i64) (a: *[]i64) (b: *[]i64) =
  let (x, y) = if c then (u, u) else (let _ = u with [0] = 1 in (a, b))
  let x[0] = 3
  in y
