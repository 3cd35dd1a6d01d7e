-- An anonymous function consuming a variable it did not bind.
-- ==
-- error: Consuming variable "a" inside an anonymous function, but it is bound outside it

def f (n: i64) =
  let a = replicate n 0i32
  in map (\i -> (a with [0] = i32.i64 i)[0]) (iota n)
