-- Gradients through `reduce max`/`min` whose one-hot adjoints feed more adjoint code (the
-- compiled path runs that code at the extremum only: runic-opt's `sparse-adjoints`).
-- Expected values by hand.
-- ==
-- tags { autodiff }
-- entry: maxpool_grad
-- input { [1f64, 5, 3, 2, 7, 7] }
-- output { [0f64, 1, 2, 0, 3, 0] }
-- input { [-1f64, -2] }
-- output { [1f64, 0] }

-- Max-pooling over windows of two, weighted 1, 2, 3, …: each window's weight goes to the
-- first position of its maximum.
def maxpool [n] (xs: [n]f64) : f64 =
  f64.sum (map (\i -> f64.i64 (i + 1) * f64.maximum xs[2 * i:2 * i + 2]) (iota (n / 2)))

entry maxpool_grad [n] (xs: [n]f64) : [n]f64 = vjp maxpool xs 1

-- ==
-- entry: nearest_scaled_grad
-- input { [[0f64, 0], [4, 4]] [[1f64, 0], [3, 5], [10, 10]] }
-- output { [[4f64, 0], [-4, 4], [0, 0]] }

-- The nearest centre under distances scaled by a centre-dependent weight (here 1 for
-- every centre, entered as `c[0]·0 + 1` so that the weight is differentiated too):
-- d/dc (w(c)·‖p − c‖²) at the nearest centre, doubled by the outer `2 *`.
def cost [n] [k] [d] (points: [n][d]f64) (centres: [k][d]f64) : f64 =
  let w c = c[0] * 0 + 1
  in 2 * f64.sum (map (\p -> f64.minimum (map (\c -> w c * f64.sum (map2 (\x y -> (x - y) * (x - y)) p c)) centres)) points)

entry nearest_scaled_grad [n] [k] [d] (points: [n][d]f64) (centres: [k][d]f64) : [k][d]f64 =
  vjp (cost points) centres 1
