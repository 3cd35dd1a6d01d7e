-- A unique array used after an in-place update consumed it.
-- ==
-- error: Using variable "xs", but this was consumed at 6:12

def f (xs: *[]i32) =
  let ys = xs with [0] = 1
  in (ys, xs[1])
