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
