-- The adjoint of a ReLU layer: ∂/∂x of Σ w·max(0, x + b) is w·[x + b > 0] (a tie at 0
-- goes to the constant, so gives 0: the third element of the first dataset and of the
-- rows' first row). The derivative of `max 0 y` is read off its result (r == 0); on the
-- ir backend the result is what the layer's map returns, so the return sweep reads the
-- layer's output, not its input, and the forward sweep keeps nothing else
-- (crates/runic-cli/tests/ad_rules.rs). Values by hand.
-- ==
-- entry: relu_grad
-- input { [1.0f32, -2.0f32, -0.25f32, 0.5f32] [0.5f32, 1.0f32, 0.25f32, -1.0f32] [2.0f32, 3.0f32, 4.0f32, 5.0f32] }
-- output { [2.0f32, 0.0f32, 0.0f32, 0.0f32] }
-- ==
-- entry: relu_rows_grad
-- input { [[1.0f32, -1.0f32, 0.5f32], [-2.0f32, 3.0f32, 0.0f32]] [0.5f32, 0.5f32, -0.5f32] [[1.0f32, 2.0f32, 3.0f32], [4.0f32, 5.0f32, 6.0f32]] }
-- output { [[1.0f32, 0.0f32, 0.0f32], [0.0f32, 5.0f32, 0.0f32]] }

entry relu_grad [n] (x: [n]f32) (b: [n]f32) (w: [n]f32) : [n]f32 =
  vjp (\x -> f32.sum (map2 (*) w (map (f32.max 0) (map2 (+) x b)))) x 1

-- A batch of rows, as in an MLP's hidden layer: the layer is a map of its own, whose
-- result the next layer reads.
entry relu_rows_grad [m] [n] (x: [m][n]f32) (b: [n]f32) (w: [m][n]f32) : [m][n]f32 =
  vjp (\x -> let hidden = map (map (f32.max 0)) (map (\xr -> map2 (+) xr b) x)
             in f32.sum (map2 (\hr wr -> f32.sum (map2 (*) hr wr)) hidden w))
      x 1
