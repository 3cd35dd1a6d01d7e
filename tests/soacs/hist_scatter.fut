-- hist, reduce_by_index (including out-of-range indices and non-trivial operators),
-- scatter (duplicates: the last write wins in runic), spread, and 2-D variants.
-- ==
-- entry: hist_add
-- input { [0i64, 1, 1, 3, 7, -1] [1f32, 2, 3, 4, 5, 6] } output { [1f32, 5, 0, 4] }

entry hist_add (is: []i64) (vs: []f32) = hist (+) 0 4 is vs

-- ==
-- entry: rbi
-- input { [10, 20, 30] [0i64, 2, 2, 5] [1, 2, 3, 4] } output { [11, 20, 35] [10, 20, 30] [1, 20, 2] }

entry rbi (dest: []i32) (is: []i64) (vs: []i32) =
  (reduce_by_index (copy dest) (+) 0 is vs,
   reduce_by_index (copy dest) i32.max i32.lowest is vs,
   reduce_by_index (copy dest) i32.min i32.highest is vs)

-- ==
-- entry: scatter_1d
-- input { [0, 0, 0, 0] [1i64, 3, -1, 9] [5, 6, 7, 8] } output { [0, 5, 0, 6] }

entry scatter_1d (dest: *[]i32) (is: []i64) (vs: []i32) = scatter dest is vs

-- ==
-- entry: scatter_dup
-- input { [0, 0] [1i64, 1, 1] [5, 6, 7] } output { [0, 7] }

entry scatter_dup (dest: *[]i32) (is: []i64) (vs: []i32) = scatter dest is vs

-- ==
-- entry: spread_e
-- input { [2i64, 0] [5, 6] } output { [6, -1, 5] }

entry spread_e (is: []i64) (vs: []i32) = spread 3 (-1) is vs

-- ==
-- entry: rbi_2d
-- input { [0i64, 1, 1] [1i64, 0, 0] [1, 2, 3] } output { [[0, 1], [5, 0]] }

entry rbi_2d (rs: []i64) (cs: []i64) (vs: []i32) =
  reduce_by_index_2d (replicate 2 (replicate 2 0)) (+) 0 (zip rs cs) vs

-- ==
-- entry: scatter_2d_e
-- input { [0i64, 1] [1i64, 0] [7, 8] } output { [[0, 7], [8, 0]] }

entry scatter_2d_e (rs: []i64) (cs: []i64) (vs: []i32) =
  scatter_2d (replicate 2 (replicate 2 0)) (zip rs cs) vs

-- ==
-- entry: hist_vec
-- input { [0i64, 1, 0] [[1, 2], [3, 4], [5, 6]] } output { [[6, 8], [3, 4]] }

entry hist_vec (is: []i64) (vs: [][2]i32) = hist (map2 (+)) [0, 0] 2 is vs
