-- reduce_by_index with operators other than a single `+`, large enough (20 000 elements)
-- for the ir backend to run them in parallel by bin ranges; `auto output` compares the
-- ir backend with the interpreter.
-- ==
-- entry: user_min mul rows
-- random input { [20000]i64 [20000]f64 } auto output
-- input { [3i64, 1, 3] [2.0, 5.0, 0.5] } auto output

def bins [n] (is: [n]i64) : [n]i64 = map (\i -> i %% 97) is

entry user_min [n] (is: [n]i64) (vs: [n]f64) : [97]f64 =
  hist (\a b -> if a < b then a else b) f64.inf 97 (bins is) vs

entry mul [n] (is: [n]i64) (vs: [n]f64) : [97]f64 =
  reduce_by_index (replicate 97 1) (*) 1 (bins is) (map (\v -> 1 + v / 1000) vs)

entry rows [n] (is: [n]i64) (vs: [n]f64) : [97][2]f64 =
  hist (map2 (+)) [0, 0] 97 (bins is) (map (\v -> [v, 2 * v]) vs)

-- ==
-- entry: first_error
-- input { 20000i64 } error: division by zero

-- Two elements fail (j = 15000 and j = 19000, in different bin ranges); either way the run
-- must fail with the operator's error.
entry first_error (n: i64) : [4]i32 =
  let is = map (\j -> j % 4) (iota n)
  let vs = map (\j -> if j == 15000 || j == 19000 then 0 else 1) (iota n) |> map i32.i64
  in hist (\a b -> a / b + b / b) 1 4 is vs
