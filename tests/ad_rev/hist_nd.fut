-- Reverse mode through reduce_by_index_2d and _3d with operators other than `+` (the
-- histogram's bins are flattened and the one-dimensional rules apply): a user operator
-- ((1+a)(1+b) − 1, the general rule), `max` (the destination wins ties) and `*` (zero
-- counting), with out-of-range indices in either dimension and duplicate bins.
-- Expected values: central finite differences in plain Python in
-- tests/ad_rev/oracle_gaps.py (section hist_nd), checked by hand for a few bins (comments).
-- ==
-- tags { autodiff }
-- entry: rbi2_user
-- input { [[0.5, -2.0, 1.0], [1.5, 0.25, 2.0]] [1i64, 0, 1, 3, 0, 1, 0] [2i64, 0, 2, 0, 0, -1, 1]
--         [1.0, 0.5, -0.5, 4.0, 2.0, 7.0, 0.75] [[1.0, 2.0, -1.0], [0.5, 3.0, 1.5]] }
-- output { [[5.75, -2.75, 1.0], [1.5, 0.25, 2.0]] [[4.5, 3.5, -1.0], [0.5, 3.0, 1.5]]
--          [2.25, 4.5, 9.0, 0.0, 2.25, 0.0, -2.0] }

-- Bin (1, 2) is (1+2)(1+v₀)(1+v₂) − 1, so v̄₀ = 1.5·3·0.5 = 2.25; (3, 0) and (1, −1) are
-- out of range.
entry rbi2_user [n][m] (dest: [n][m]f64) (rs: []i64) (cs: []i64) (vs: []f64) (s: [n][m]f64) =
  let (r, (gd, gv)) = vjp2 (\(d, v) -> reduce_by_index_2d (copy d) (\a b -> a * b + a + b) 0 (zip rs cs) v) (dest, vs) s
  in (r, gd, gv)

-- ==
-- entry: rbi2_max
-- input { [[0.5, -2.0], [1.0, 3.0]] [0i64, 1, 0, 1, 0, 2] [1i64, 0, 1, 1, 0, 0]
--         [1.0, 2.5, -0.5, 2.0, 0.25, 9.0] [[1.0, 2.0], [3.0, 4.0]] }
-- output { [[0.5, 1.0], [2.5, 3.0]] [[1.0, 0.0], [0.0, 4.0]] [2.0, 3.0, 0.0, 0.0, 0.0, 0.0] }

-- The destination keeps bins (0, 0) and (1, 1); v₀ wins (0, 1) and v₁ wins (1, 0).
entry rbi2_max [n][m] (dest: [n][m]f64) (rs: []i64) (cs: []i64) (vs: []f64) (s: [n][m]f64) =
  let (r, (gd, gv)) = vjp2 (\(d, v) -> reduce_by_index_2d (copy d) f64.max (-f64.inf) (zip rs cs) v) (dest, vs) s
  in (r, gd, gv)

-- ==
-- entry: rbi3_mul
-- input { [[[2.0, 1.0], [0.5, 3.0]], [[1.0, -1.0], [2.0, 0.5]]]
--         [0i64, 1, 0, 1, 2, 1] [1i64, 0, 1, 1, 0, 0] [1i64, 0, 1, 0, 0, 0] [1.5, 2.0, -2.0, 0.0, 5.0, 3.0]
--         [[[1.0, 1.0], [1.0, 2.0]], [[0.5, 1.0], [-1.0, 1.0]]] }
-- output { [[[2.0, 1.0], [0.5, -9.0]], [[6.0, -1.0], [0.0, 0.5]]]
--          [[[1.0, 1.0], [1.0, -6.0]], [[3.0, 1.0], [0.0, 1.0]]] [-12.0, 1.5, 9.0, -2.0, 0.0, 1.0] }

-- Bin (1, 1, 0) holds a zero (v₃), so only v₃ gets a cotangent there: −1·2 = −2.
entry rbi3_mul [a][b][c] (dest: [a][b][c]f64) (is: []i64) (js: []i64) (ks: []i64) (vs: []f64) (s: [a][b][c]f64) =
  let (r, (gd, gv)) = vjp2 (\(d, v) -> reduce_by_index_3d (copy d) (*) 1 (zip3 is js ks) v) (dest, vs) s
  in (r, gd, gv)
