-- Vectorised operators as runic-jit kernels on the ir backend: reduce and scan whose
-- accumulators are arrays, and reduce_by_index of rows. Expected values by hand.
-- ==
-- entry: column_sums
-- input { [[1f32, 2, 3], [4, 5, 6.5]] } output { [5f32, 7, 9.5] }
-- input { empty([0][3]f32) } output { [0f32, 0, 0] }

entry column_sums (m: [][]f32) = reduce (map2 (+)) (replicate 3 0) m

-- ==
-- entry: running_columns
-- input { [[1, 2], [3, 4], [5, 6]] } output { [[1, 2], [4, 6], [9, 12]] }

entry running_columns (m: [][]i32) = scan (map2 (+)) (replicate 2 0) m

-- ==
-- entry: row_bins
-- input { [0i64, 2, 0, 5, -1, 1] [[1f32, 2], [3, 4], [5, 6], [7, 8], [9, 10], [11, 12]] }
-- output { [[6f32, 8], [11, 12], [3, 4]] }

entry row_bins (is: []i64) (m: [][]f32) = hist (map2 (+)) (replicate 2 0) 3 is m
