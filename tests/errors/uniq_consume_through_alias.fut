-- Consuming an alias of a variable consumes the variable too.
-- ==
-- error: Using variable "xs", but this was consumed at 7:12.*Possibly through aliasing

def f (xs: *[]i32) =
  let ys = xs
  let zs = ys with [0] = 0
  in (zs, xs)
