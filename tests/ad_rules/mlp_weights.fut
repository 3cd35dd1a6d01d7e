-- The adjoint of a weight matrix that every row of a batch reads: after AD it is an
-- accumulator updated with a whole [h][i] array per row; the accumulator optimisation
-- (pass acc-to-reduce) makes it a map over (j, k) of a sum over the rows, i.e. δᵀ·x.
-- Expected values from JAX (jax.grad of the same loss).
-- ==
-- tags { autodiff }
-- input { [[0.5f32, 0.25f32, -1f32], [-0.75f32, 0.5f32, 0.125f32], [1f32, 1f32, 1f32], [0.2f32, -0.4f32, 0.6f32]]
--         [0.1f32, -0.2f32, 0.3f32, 0f32]
--         [[1f32, -2f32, 0.5f32], [0.25f32, 1.5f32, -1f32]] }
-- output { [[0.8f32, 4.8f32, -3.2f32], [0.11875f32, 0.7125f32, -0.475f32], [0.525f32, 3.15f32, -2.1f32], [2.6f32, -5.2f32, 1.3f32]]
--          [3.2f32, 0.475f32, 2.1f32, 2.6f32] }

def dot [n] (a: [n]f32) (b: [n]f32): f32 = reduce (+) 0 (map2 (*) a b)

def loss [b][i][h] (w: [h][i]f32, bias: [h]f32) (xs: [b][i]f32): f32 =
  let layer x = map2 (\row c -> f32.max 0 (dot row x + c)) w bias
  in reduce (+) 0 (map (\x -> reduce (+) 0 (map (\v -> v * v) (layer x))) xs)

entry main [b][i][h] (w: [h][i]f32) (bias: [h]f32) (xs: [b][i]f32) =
  vjp (\p -> loss p xs) (w, bias) 1
