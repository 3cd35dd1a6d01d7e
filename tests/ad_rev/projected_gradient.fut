-- The gradient of one argument of several: `(vjp f (w, b) 1).0`. Reverse mode computes
-- every adjoint; the ones not returned must go (DCE proves the sums of the others' dead
-- adjoints cannot fail, as their reads range over iotas of the arrays' sizes).
--
-- loss (w, b) = ½ Σ_r Σ_j y[r, j]², y = x·wᵀ + b. With x = [[1, 2], [3, 4]], w = I,
-- b = [0.5, -1]: y = [[1.5, 1], [3.5, 3]], dw[j, k] = Σ_r y[r, j] x[r, k] =
-- [[1.5 + 10.5, 3 + 14], [1 + 9, 2 + 12]] = [[12, 17], [10, 14]], db = Σ_r y[r] = [5, 4].
-- ==
-- entry: grad_w
-- input { [[1.0, 2.0], [3.0, 4.0]] [[1.0, 0.0], [0.0, 1.0]] [0.5, -1.0] }
-- output { [[12.0, 17.0], [10.0, 14.0]] }
-- ==
-- entry: grad_b
-- input { [[1.0, 2.0], [3.0, 4.0]] [[1.0, 0.0], [0.0, 1.0]] [0.5, -1.0] }
-- output { [5.0, 4.0] }
-- ==
-- entry: grad_both
-- input { [[1.0, 2.0], [3.0, 4.0]] [[1.0, 0.0], [0.0, 1.0]] [0.5, -1.0] }
-- output { [[12.0, 17.0], [10.0, 14.0]] [5.0, 4.0] }

def loss [n][i][o] (x: [n][i]f64) (w: [o][i]f64, b: [o]f64) : f64 =
  let y = map (\row -> map2 (\wr bj -> f64.sum (map2 (*) wr row) + bj) w b) x
  in f64.sum (map (\yr -> f64.sum (map (\v -> v * v) yr)) y) / 2

entry grad_w [n][i][o] (x: [n][i]f64) (w: [o][i]f64) (b: [o]f64) : [o][i]f64 =
  (vjp (loss x) (w, b) 1).0

entry grad_b [n][i][o] (x: [n][i]f64) (w: [o][i]f64) (b: [o]f64) : [o]f64 =
  (vjp (loss x) (w, b) 1).1

entry grad_both [n][i][o] (x: [n][i]f64) (w: [o][i]f64) (b: [o]f64) : ([o][i]f64, [o]f64) =
  vjp (loss x) (w, b) 1
