-- A call of a function with a unique parameter consumes the argument.
-- ==
-- error: Using variable "xs", but this was consumed at 8:14

def g (xs: *[]i32) = xs with [0] = 0

def f (xs: *[]i32) =
  let ys = g xs
  in (ys, xs)
