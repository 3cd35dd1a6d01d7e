-- Gradients with respect to a stack of matrices of which the program reads single
-- matrices by index (`w[1]`, `w[g]`), as an LSTM reads its gates. On the ir backend the
-- adjoint of each matrix read is narrowed to its row of the stack and becomes a matrix
-- product (runic dev --backend ir --explain-exec); the interpreter runs it as written.
-- The matrices are indexed inside the maps, so the reverse sweep's updates of the stack's
-- adjoint sit inside the map over the rows. Expected values from JAX (jax.grad of the
-- same objective, in f64).

def dot [n] (a: [n]f32) (b: [n]f32): f32 = reduce (+) 0 (map2 (*) a b)

-- ==
-- tags { autodiff }
-- entry: fixed
-- input { [[[0f32, 0.15f32, -0.14f32], [-0.45f32, -0.23f32, -0.5f32]], [[0.03f32, 0.67f32, -0.25f32], [-0.31f32, 0.24f32, 0.18f32]], [[0.05f32, -0.47f32, -0.01f32], [0.35f32, -0.67f32, -0.23f32]], [[-0.95f32, -0.64f32, -0.92f32], [-0.12f32, -0.63f32, 0.14f32]]]
--         [[0.16f32, -0.19f32, -2.52f32], [-0.54f32, -0.05f32, 0.11f32], [-1.53f32, -0.48f32, -0.98f32]] }
-- output { [[[0f32, 0f32, 0f32], [0f32, 0f32, 0f32]], [[-3.96513f32, -1.62048f32, -7.02471f32], [-0.605035f32, -0.131404f32, 0.158342f32]], [[0f32, 0f32, 0f32], [0f32, 0f32, 0f32]], [[0.302978f32, -0.026559f32, -1.06837f32], [-0.450053f32, -0.000477f32, 1.10104f32]]] }

entry fixed [m][k][h] (w: [4][h][k]f32) (x: [m][k]f32): [4][h][k]f32 =
  let loss w = reduce (+) 0 (map2 (\a b -> reduce (+) 0 (map2 (\u v -> f32.tanh u * v) a b))
                                    (map (\r -> map (\c -> dot r c) w[1]) x)
                                    (map (\r -> map (\c -> dot r c) w[3]) x))
  in vjp loss w 1

-- The matrix is chosen at run time, and the stack is also read whole, so its adjoint
-- starts from the whole-stack term before the chosen row is added to.
-- ==
-- entry: chosen
-- input { [[[0f32, 0.15f32, -0.14f32], [-0.45f32, -0.23f32, -0.5f32]], [[0.03f32, 0.67f32, -0.25f32], [-0.31f32, 0.24f32, 0.18f32]], [[0.05f32, -0.47f32, -0.01f32], [0.35f32, -0.67f32, -0.23f32]], [[-0.95f32, -0.64f32, -0.92f32], [-0.12f32, -0.63f32, 0.14f32]]]
--         [[0.16f32, -0.19f32, -2.52f32], [-0.54f32, -0.05f32, 0.11f32], [-1.53f32, -0.48f32, -0.98f32]] 2i64 }
-- output { [[[0f32, 0.15f32, -0.14f32], [-0.45f32, -0.23f32, -0.5f32]], [[0.03f32, 0.67f32, -0.25f32], [-0.31f32, 0.24f32, 0.18f32]], [[-1.82438f32, -1.17526f32, -3.33823f32], [-1.60863f32, -1.30984f32, -2.5822f32]], [[-0.95f32, -0.64f32, -0.92f32], [-0.12f32, -0.63f32, 0.14f32]]] }
-- input { [[[0f32, 0.15f32, -0.14f32], [-0.45f32, -0.23f32, -0.5f32]], [[0.03f32, 0.67f32, -0.25f32], [-0.31f32, 0.24f32, 0.18f32]], [[0.05f32, -0.47f32, -0.01f32], [0.35f32, -0.67f32, -0.23f32]], [[-0.95f32, -0.64f32, -0.92f32], [-0.12f32, -0.63f32, 0.14f32]]]
--         [[0.16f32, -0.19f32, -2.52f32], [-0.54f32, -0.05f32, 0.11f32], [-1.53f32, -0.48f32, -0.98f32]] 0i64 }
-- output { [[[-1.91894f32, -0.549279f32, -3.27841f32], [-1.32426f32, -0.458966f32, -1.38027f32]], [[0.03f32, 0.67f32, -0.25f32], [-0.31f32, 0.24f32, 0.18f32]], [[0.05f32, -0.47f32, -0.01f32], [0.35f32, -0.67f32, -0.23f32]], [[-0.95f32, -0.64f32, -0.92f32], [-0.12f32, -0.63f32, 0.14f32]]] }
-- input { [[[0f32, 0.15f32, -0.14f32], [-0.45f32, -0.23f32, -0.5f32]], [[0.03f32, 0.67f32, -0.25f32], [-0.31f32, 0.24f32, 0.18f32]], [[0.05f32, -0.47f32, -0.01f32], [0.35f32, -0.67f32, -0.23f32]], [[-0.95f32, -0.64f32, -0.92f32], [-0.12f32, -0.63f32, 0.14f32]]]
--         [[0.16f32, -0.19f32, -2.52f32], [-0.54f32, -0.05f32, 0.11f32], [-1.53f32, -0.48f32, -0.98f32]] 4i64 }
-- error: Index \[4\] out of bounds

entry chosen [m][k][h] (w: [4][h][k]f32) (x: [m][k]f32) (g: i64): [4][h][k]f32 =
  let loss (w: [4][h][k]f32) =
    reduce (+) 0 (map (\a -> reduce (+) 0 (map f32.tanh a)) (map (\r -> map (\c -> dot r c) w[g]) x))
    + 0.5 * reduce (+) 0 (map (\m -> reduce (+) 0 (map (\r -> reduce (+) 0 (map (\e -> e * e) r)) m)) w)
  in vjp loss w 1

-- The four matrices of the stack read in one map, as an LSTM's gates: the adjoint's
-- updates fall at four rows of one accumulator, narrowed to four row accumulators.
-- ==
-- entry: gates
-- input { [[[0f32, 0.15f32, -0.14f32], [-0.45f32, -0.23f32, -0.5f32]], [[0.03f32, 0.67f32, -0.25f32], [-0.31f32, 0.24f32, 0.18f32]], [[0.05f32, -0.47f32, -0.01f32], [0.35f32, -0.67f32, -0.23f32]], [[-0.95f32, -0.64f32, -0.92f32], [-0.12f32, -0.63f32, 0.14f32]]]
--         [[0.16f32, -0.19f32, -2.52f32], [-0.54f32, -0.05f32, 0.11f32], [-1.53f32, -0.48f32, -0.98f32]] }
-- output { [[[0.294811f32, -0.018076f32, -0.953044f32], [-0.185685f32, -0.003638f32, 0.336025f32]], [[-0.046684f32, -0.076152f32, -0.682135f32], [-1.27303f32, -0.52853f32, -2.38739f32]], [[-3.94689f32, -1.73481f32, -8.326f32], [-0.63435f32, -0.125072f32, 0.306259f32]], [[-0.221033f32, -0.099317f32, -0.464928f32], [0.202101f32, -0.141431f32, -1.95367f32]]] }

entry gates [m][k][h] (w: [4][h][k]f32) (x: [m][k]f32): [4][h][k]f32 =
  let mv (a: [h][k]f32) (r: [k]f32) = map (\c -> dot r c) a
  let loss (w: [4][h][k]f32) =
    reduce (+) 0 (map (\r -> let i = map f32.tanh (mv w[0] r)
                             let f = map f32.tanh (mv w[1] r)
                             in reduce (+) 0 (map4 (\a b c d -> a * b + c * d) i f (mv w[2] r) (mv w[3] r))) x)
  in vjp loss w 1

-- Two matrices chosen at run time and read in one map: narrowed when they differ; when
-- they are the same matrix, both terms' adjoints go to its row (the original form).
-- ==
-- entry: pair
-- input { [[[0f32, 0.15f32, -0.14f32], [-0.45f32, -0.23f32, -0.5f32]], [[0.03f32, 0.67f32, -0.25f32], [-0.31f32, 0.24f32, 0.18f32]], [[0.05f32, -0.47f32, -0.01f32], [0.35f32, -0.67f32, -0.23f32]], [[-0.95f32, -0.64f32, -0.92f32], [-0.12f32, -0.63f32, 0.14f32]]]
--         [[0.16f32, -0.19f32, -2.52f32], [-0.54f32, -0.05f32, 0.11f32], [-1.53f32, -0.48f32, -0.98f32]] 2i64 0i64 }
-- output { [[[-0.219105f32, -0.098566f32, -0.462096f32], [0.181833f32, -0.118706f32, -1.65075f32]], [[0f32, 0f32, 0f32], [0f32, 0f32, 0f32]], [[-0.033796f32, -0.090075f32, -0.869922f32], [-1.96039f32, -0.765578f32, -3.06317f32]], [[0f32, 0f32, 0f32], [0f32, 0f32, 0f32]]] }
-- input { [[[0f32, 0.15f32, -0.14f32], [-0.45f32, -0.23f32, -0.5f32]], [[0.03f32, 0.67f32, -0.25f32], [-0.31f32, 0.24f32, 0.18f32]], [[0.05f32, -0.47f32, -0.01f32], [0.35f32, -0.67f32, -0.23f32]], [[-0.95f32, -0.64f32, -0.92f32], [-0.12f32, -0.63f32, 0.14f32]]]
--         [[0.16f32, -0.19f32, -2.52f32], [-0.54f32, -0.05f32, 0.11f32], [-1.53f32, -0.48f32, -0.98f32]] 1i64 1i64 }
-- output { [[[0f32, 0f32, 0f32], [0f32, 0f32, 0f32]], [[0.592474f32, -0.040102f32, -1.95734f32], [-0.878109f32, -0.015562f32, 1.98429f32]], [[0f32, 0f32, 0f32], [0f32, 0f32, 0f32]], [[0f32, 0f32, 0f32], [0f32, 0f32, 0f32]]] }

entry pair [m][k][h] (w: [4][h][k]f32) (x: [m][k]f32) (g: i64) (j: i64): [4][h][k]f32 =
  let loss (w: [4][h][k]f32) =
    reduce (+) 0 (map (\r -> reduce (+) 0 (map2 (\u v -> f32.tanh u * v)
                                                  (map (\c -> dot r c) w[g])
                                                  (map (\c -> dot r c) w[j]))) x)
  in vjp loss w 1
