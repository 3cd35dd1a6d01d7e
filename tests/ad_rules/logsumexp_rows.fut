-- The adjoint of a log-sum-exp per row, as in a softmax cross-entropy: ∂/∂x of
-- Σ_i w_i · lse(x_i) is w_i · softmax(x_i). Each row's return sweep runs the row's
-- forward sweep again (max, the exps, their sum); the exps are the map's own result, so
-- the adjoint of `exp` reads them there instead of computing every exp a second time
-- (crates/runic-cli/tests/ad_rules.rs counts them). Expected values from numpy in f64.
-- ==
-- entry: lse_rows_grad
-- input { [[1.0f32, 2.0f32, 3.0f32], [0.0f32, 0.0f32, 0.0f32], [-1.0f32, 0.5f32, 2.0f32]] [1.0f32, 2.0f32, -0.5f32] }
-- output { [[9.003057317e-02f32, 2.447284711e-01f32, 6.652409558e-01f32],
--           [6.666666667e-01f32, 6.666666667e-01f32, 6.666666667e-01f32],
--           [-1.955628664e-02f32, -8.764519607e-02f32, -3.927985173e-01f32]] }

def logsumexp [n] (xs: [n]f32) : f32 =
  let m = f32.maximum xs
  in m + f32.log (f32.sum (map (\x -> f32.exp (x - m)) xs))

entry lse_rows_grad [m] [n] (x: [m][n]f32) (w: [m]f32) : [m][n]f32 =
  vjp (\x -> f32.sum (map2 (\r wi -> wi * logsumexp r) x w)) x 1
