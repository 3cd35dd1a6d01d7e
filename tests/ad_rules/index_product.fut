-- The gradient of a matrix product written with indices, with respect to each operand.
-- The adjoint of a[i, l] read in map_i (map_j (sum_l ...)) is an accumulator update at
-- [i, l] that no j decides: runic-opt's sums-before-updates makes the map over j a sum
-- inside the map over l, and the accumulator, written once per element, the plain
-- nest of those sums: a product (W·bᵀ for a, aᵀ·W for b, by indices again). The
-- adjoint of b[l, j] is decided by j and l under the map over i: the maps over i and j
-- swap first.
--
-- loss = Σ W ⊙ (a·b) with a = [[1, 2, -1], [0.5, 3, 2]], b = [[2, 1], [-1, 0.5], [3, -2]],
-- W = [[1, -2], [0.5, 3]]: a·b = [[-3, 4], [4, -2]], loss = -3 - 8 + 2 - 6 = -15;
-- da = W·bᵀ = [[0, -2, 7], [4, 1, -4.5]] (da[0, 0] = 1·2 - 2·1), db = aᵀ·W =
-- [[1.25, -0.5], [3.5, 5], [0, 8]] (db[0, 0] = 1·1 + 0.5·0.5); numpy agrees.
-- ==
-- entry: loss_by_indices
-- input { [[1.0, 2.0, -1.0], [0.5, 3.0, 2.0]] [[2.0, 1.0], [-1.0, 0.5], [3.0, -2.0]] [[1.0, -2.0], [0.5, 3.0]] }
-- output { -15.0 }
-- ==
-- entry: grad_a
-- input { [[1.0, 2.0, -1.0], [0.5, 3.0, 2.0]] [[2.0, 1.0], [-1.0, 0.5], [3.0, -2.0]] [[1.0, -2.0], [0.5, 3.0]] }
-- output { [[0.0, -2.0, 7.0], [4.0, 1.0, -4.5]] }
-- ==
-- entry: grad_b
-- input { [[1.0, 2.0, -1.0], [0.5, 3.0, 2.0]] [[2.0, 1.0], [-1.0, 0.5], [3.0, -2.0]] [[1.0, -2.0], [0.5, 3.0]] }
-- output { [[1.25, -0.5], [3.5, 5.0], [0.0, 8.0]] }

def product [m][k][p] (a: [m][k]f64) (b: [k][p]f64) : [m][p]f64 =
  map (\i -> map (\j -> f64.sum (map (\l -> a[i, l] * b[l, j]) (iota k))) (iota p)) (iota m)

def loss [m][k][p] (w: [m][p]f64) (a: [m][k]f64) (b: [k][p]f64) : f64 =
  f64.sum (map2 (\wr cr -> f64.sum (map2 (*) wr cr)) w (product a b))

entry loss_by_indices [m][k][p] (a: [m][k]f64) (b: [k][p]f64) (w: [m][p]f64) : f64 =
  loss w a b

entry grad_a [m][k][p] (a: [m][k]f64) (b: [k][p]f64) (w: [m][p]f64) : [m][k]f64 =
  vjp (\a -> loss w a b) a 1

entry grad_b [m][k][p] (a: [m][k]f64) (b: [k][p]f64) (w: [m][p]f64) : [k][p]f64 =
  vjp (\b -> loss w a b) b 1

-- The weight adjoint's form, dᵀ·x by indices: the update of d's adjoint is at [l, j], the
-- inner map's index first, so the nest of sums is transposed into it. W2 ⊙ (dᵀ·x) with
-- d = [[2, 1], [-1, 0.5], [3, -2]], x = [[1, 0], [2, 1], [0, -1]], W2 = [[1, -2], [0.5, 3]]:
-- dd = x·W2ᵀ = [[1, 0.5], [0, 4], [2, -3]] (numpy, and central differences).
-- ==
-- entry: grad_d
-- input { [[2.0, 1.0], [-1.0, 0.5], [3.0, -2.0]] [[1.0, 0.0], [2.0, 1.0], [0.0, -1.0]] [[1.0, -2.0], [0.5, 3.0]] }
-- output { [[1.0, 0.5], [0.0, 4.0], [2.0, -3.0]] }

entry grad_d [n][h][i] (d: [n][h]f64) (x: [n][i]f64) (w2: [h][i]f64) : [n][h]f64 =
  vjp (\d -> let c = map (\j -> map (\k -> f64.sum (map (\l -> d[l, j] * x[l, k]) (iota n))) (iota i)) (iota h)
             in f64.sum (map2 (\wr cr -> f64.sum (map2 (*) wr cr)) w2 c)) d 1
