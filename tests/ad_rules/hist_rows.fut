-- Histograms that sum whole rows (`map2 (+)`, and `map2 (map2 (+))` over matrices): each
-- value's adjoint is its bin's row of the result's adjoint, a gather of rows (zeros for the
-- out-of-range indices -1, 3 and 5), and the destination's adjoint is the result's. The
-- rule keeps the rows (crates/runic-cli/tests/ad_rules.rs); other row operators are
-- transposed into histograms of columns. Expected values by hand:
--   dest_and_squares: ∂/∂d = t; ∂/∂vs_j = 2·vs_j·t[is_j] (the loss is Σ t·h, h the bins).
-- ==
-- entry: rows_grad
-- input { [0i64, 2i64, -1i64, 0i64, 3i64] [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0], [9.0, 10.0]] [[0.5, -1.0], [2.0, 3.0], [-4.0, 0.25]] }
-- output { [[0.5, -1.0], [-4.0, 0.25], [0.0, 0.0], [0.5, -1.0], [0.0, 0.0]] }
-- ==
-- entry: dest_and_squares_grad
-- input { [1i64, -1i64, 2i64, 1i64] [[1.0, 2.0], [3.0, 4.0], [0.5, -1.0], [-2.0, 0.0]] [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]] [[1.0, 0.5], [2.0, -1.0], [0.0, 3.0]] }
-- output { [[1.0, 0.5], [2.0, -1.0], [0.0, 3.0]] [[4.0, -4.0], [0.0, 0.0], [0.0, -6.0], [-8.0, 0.0]] }
-- ==
-- entry: mats_grad
-- input { [1i64, 0i64, 5i64] [[[1.0, 1.0], [1.0, 1.0]], [[2.0, 2.0], [2.0, 2.0]], [[3.0, 3.0], [3.0, 3.0]]] [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]] }
-- output { [[[5.0, 6.0], [7.0, 8.0]], [[1.0, 2.0], [3.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]]] }

entry rows_grad [n] [m] (is: [n]i64) (vs: [n][m]f64) (s: [3][m]f64) : [n][m]f64 =
  vjp (\vs -> hist (map2 (+)) (replicate m 0) 3 is vs) vs s

entry dest_and_squares_grad [n] (is: [n]i64) (vs: [n][2]f64) (d: [3][2]f64) (t: [3][2]f64)
                            : ([3][2]f64, [n][2]f64) =
  vjp (\(d, vs) -> let h = reduce_by_index (copy d) (map2 (+)) [0, 0] is
                                           (map (map (\x -> x * x)) vs)
                   in f64.sum (map2 (\hr tr -> f64.sum (map2 (*) hr tr)) h t))
      (d, vs) 1

entry mats_grad [n] (is: [n]i64) (vs: [n][2][2]f64) (s: [2][2][2]f64) : [n][2][2]f64 =
  vjp (\vs -> hist (map2 (map2 (+))) (replicate 2 (replicate 2 0)) 2 is vs) vs s
