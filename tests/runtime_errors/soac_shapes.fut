-- Size mismatches between a SOAC's inputs report the interpreter's message on both
-- backends (the ir backend used to say "internal error: SOAC input of outer size").

-- ==
-- entry: hist_values
-- input { [0i64, 1] [1f32, 2] } output { [1f32, 2, 0] }
-- input { [0i64, 1] [1f32, 2, 3] } error: soac_shapes.fut:11:.*shape \[3\] cannot match shape of type "\[2\]f32"
-- input { [0i64, 1, 2] [1f32] } error: soac_shapes.fut:11:.*shape \[1\] cannot match shape of type "\[3\]f32"

entry hist_values (is: []i64) (vs: []f32) =
  reduce_by_index (replicate 3 0f32) (+) 0 is vs

-- ==
-- entry: vector_reduce
-- input { [[1f32, 2], [3f32, 4]] [10f32, 20] } output { [14f32, 26] }
-- input { empty([0][2]f32) [1f32, 2, 3] } output { [1f32, 2, 3] }
-- input { [[1f32, 2], [3f32, 4]] [1f32, 2, 3] } error: soac_shapes.fut:20:.*Row shape of input array does not match shape of neutral element

entry vector_reduce (xss: [][]f32) (ne: []f32) =
  reduce (map2 (+)) ne xss

-- ==
-- entry: vector_scan
-- input { [[1f32, 2], [3f32, 4]] [0f32, 0] } output { [[1f32, 2], [4f32, 6]] }
-- input { [[1f32, 2], [3f32, 4]] [0f32] } error: soac_shapes.fut:28:.*Row shape of input array does not match shape of neutral element

entry vector_scan (xss: [][]f32) (ne: []f32) =
  scan (map2 (+)) ne xss
