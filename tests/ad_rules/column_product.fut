-- The gradient of dᵀ·x written with columns sliced out, C[j][k] = f64.sum (map2 (*)
-- d[:, j] x[:, k]), with respect to each operand. The adjoint of a column updates its
-- accumulator through a map over the slice's elements: runic-opt's sums-before-updates
-- reads d[b, j] in place of the slice, swaps the maps over j and k, and sums over the
-- map that does not decide the update (the nest then a product, transposed).
--
-- d = [[1, 2], [-1, 0.5], [3, -2]], x = [[2, 1], [0.5, -1], [1, 3]], W = [[1, -2], [0.5, 3]]:
-- dᵀ·x = [[4.5, 11], [2.25, -4.5]] (C[0][0] = 1·2 - 1·0.5 + 3·1), loss = Σ W ⊙ dᵀ·x =
-- 4.5 - 22 + 1.125 - 13.5 = -29.875; the gradients are x·Wᵀ and d·W (grad_d[0][1] =
-- 0.5·2 + 3·1 = 4); numpy agrees.
-- ==
-- entry: loss_by_columns
-- input { [[1.0, 2.0], [-1.0, 0.5], [3.0, -2.0]] [[2.0, 1.0], [0.5, -1.0], [1.0, 3.0]] [[1.0, -2.0], [0.5, 3.0]] }
-- output { -29.875 }
-- ==
-- entry: grad_d
-- input { [[1.0, 2.0], [-1.0, 0.5], [3.0, -2.0]] [[2.0, 1.0], [0.5, -1.0], [1.0, 3.0]] [[1.0, -2.0], [0.5, 3.0]] }
-- output { [[0.0, 4.0], [2.5, -2.75], [-5.0, 9.5]] }
-- ==
-- entry: grad_x
-- input { [[1.0, 2.0], [-1.0, 0.5], [3.0, -2.0]] [[2.0, 1.0], [0.5, -1.0], [1.0, 3.0]] [[1.0, -2.0], [0.5, 3.0]] }
-- output { [[2.0, 4.0], [-0.75, 3.5], [2.0, -12.0]] }

def by_columns [n][h][i] (d: [n][h]f64) (x: [n][i]f64) : [h][i]f64 =
  map (\j -> map (\k -> f64.sum (map2 (*) d[:, j] x[:, k])) (iota i)) (iota h)

def loss [n][h][i] (w: [h][i]f64) (d: [n][h]f64) (x: [n][i]f64) : f64 =
  f64.sum (map2 (\wr cr -> f64.sum (map2 (*) wr cr)) w (by_columns d x))

entry loss_by_columns [n][h][i] (d: [n][h]f64) (x: [n][i]f64) (w: [h][i]f64) : f64 =
  loss w d x

entry grad_d [n][h][i] (d: [n][h]f64) (x: [n][i]f64) (w: [h][i]f64) : [n][h]f64 =
  vjp (\d -> loss w d x) d 1

entry grad_x [n][h][i] (d: [n][h]f64) (x: [n][i]f64) (w: [h][i]f64) : [n][i]f64 =
  vjp (\x -> loss w d x) x 1
