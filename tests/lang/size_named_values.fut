-- A size parameter that occurs only inside a function-typed parameter is known at a call
-- when the value it describes has a named size.

def f [n] (_: [n]i32 -> i32) : [n]i32 -> i64 = \_ -> n + 1

-- ==
-- entry: named
-- input { [1, -2, 3] } output { 3i64 }
-- input { [-1] } output { 1i64 }
entry named (xs: []i32) =
  let [k] ys = filter (> 0) xs
  in f (\_ -> 0) ys
