-- A recurrent cell over a batch, differentiated with respect to its weights: inside the
-- reverse sweep of the time loop, the adjoints of W, U and b are accumulators updated by
-- every batch row; acc-to-reduce turns each into a sum over the rows (matrix products).
-- Expected values from JAX (jax.grad of the same objective).
-- ==
-- tags { autodiff }
-- input { [[-0.14f32, 0.17f32], [0.48f32, 0.91f32], [-0.43f32, 0.3f32]]
--         [[0.39f32, -0.41f32, -1f32], [0.95f32, -0.4f32, -0.37f32], [0.78f32, 0.17f32, -0.06f32]]
--         [0.55f32, -0.94f32, 0.41f32]
--         [[[-0.83f32, -0.53f32], [0.6f32, 0.16f32], [-0.81f32, -0.13f32]], [[-0.04f32, -0.68f32], [0.47f32, -0.77f32], [-0.22f32, 0.03f32]]] }
-- output { [[-0.314626f32, 0.0236491f32], [0.573673f32, 0.0727916f32], [-1.01703f32, 0.490671f32]]
--          [[0.884071f32, -0.685868f32, 0.46617f32], [-0.501143f32, 0.149257f32, -0.233678f32], [0.275188f32, 0.510376f32, -0.0183491f32]]
--          [1.29367f32, -0.97022f32, 0.0458878f32] }

def dot [n] (a: [n]f32) (b: [n]f32): f32 = reduce (+) 0 (map2 (*) a b)
def matvec [m][n] (w: [m][n]f32) (x: [n]f32): [m]f32 = map (\row -> dot row x) w

def objective [t][b][d][h] (W: [h][d]f32, U: [h][h]f32, c: [h]f32) (xs: [b][t][d]f32): f32 =
  let h0 = replicate b (replicate h 0f32)
  let hs = loop hs = h0 for i < t do
    map2 (\x hr -> map3 (\p q r -> f32.tanh (p + q + r)) (matvec W x[i]) (matvec U hr) c) xs hs
  in reduce (+) 0 (map (\hr -> dot hr hr) hs)

entry main [t][b][d][h] (W: [h][d]f32) (U: [h][h]f32) (c: [h]f32) (xs: [b][t][d]f32) =
  vjp (\p -> objective p xs) (W, U, c) 1
