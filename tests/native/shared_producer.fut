-- A map whose result is read by a later map and again after it fuses into that map, which
-- returns the result too (runic-opt's fusion). The layer `relu(x + b)` of a perceptron is
-- such a map under vjp: the ReLU's adjoint reads `x + b` after the ReLU has. Expected
-- values by hand.

-- z = [[1.5, -1], [-2.5, 5]], relu z = [[1.5, 0], [0, 5]], row sums of z [0.5, 2.5].
-- ==
-- entry: relu_and_row_sums
-- input { [[1f32, -2], [-3f32, 4]] [0.5f32, 1] }
-- output { [[1.5f32, 0], [0f32, 5]] [0.5f32, 2.5] }
entry relu_and_row_sums [n] (xss: [][n]f32) (b: [n]f32) =
  let z = map (\r -> map2 (+) r b) xss
  let h = map (map (f32.max 0)) z
  in (h, map f32.sum z)

-- loss b = Σ relu(x + b)²; its gradient Σ_rows 2·relu(z)·[z > 0] by columns: [2·1.5, 2·5].
-- ==
-- entry: relu_layer_grad
-- input { [[1f32, -2], [-3f32, 4]] [0.5f32, 1] }
-- output { [3f32, 10] }
entry relu_layer_grad [n] (xss: [][n]f32) (b: [n]f32) =
  let loss b =
    let z = map (\r -> map2 (+) r b) xss
    let h = map (map (f32.max 0)) z
    in f32.sum (map (\r -> f32.sum (map (\v -> v * v) r)) h)
  in vjp loss b 1
