-- A failing map whose result is summed inside another map's function: the ir backend
-- hoists the sum out of that function and fuses the failing map into it, yet the report
-- names the frames the interpreter names (the index, then the map it is in), not the
-- function the sum came from. Expected: the locations are counted by hand.
-- ==
-- input { [1.0, 2.0, 3.0] 5i64 } error: fused_backtrace.fut:13:16-21: Error: Index \[5\] out of bounds for array of shape \[3\]
-- input { [1.0, 2.0, 3.0] 5i64 } error: Backtrace:\n-> #0  [^\n]*fused_backtrace.fut:13:16-21\n   #1  [^\n]*fused_backtrace.fut:13:5-29\n$
-- input { [1.0, 2.0, 3.0] 1i64 } output { [13.0, 14.0, 15.0] }

-- ys = xs[k] * xs; the sum of ys is 2 * 6 = 12 for k = 1.
entry main (xs: []f64) (k: i64) =
  let ys =
    map (\x -> xs[k] * x) xs
  in map (\x -> x + reduce (+) 0 ys) xs
