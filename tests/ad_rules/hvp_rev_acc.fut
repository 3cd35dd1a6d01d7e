-- Reverse over reverse through an accumulator: the inner gradient adds into the adjoint
-- of its free array with `with_acc`; the outer vjp re-runs the lambda without its updates
-- and gives each update's value the destination's adjoint at its index (read only where
-- the index is in bounds).
-- Expected: the Hessian of Σ xs[i]·xs[i+1] (around the ring) is 1 on both off-diagonals,
-- so H·v adds the two ring neighbours of v.
-- ==
-- tags { autodiff }
-- input { [1.0, 2.0, 3.0, 4.0] [1.0, 0.0, 0.0, 0.0] }
-- output { [0.0, 1.0, 0.0, 1.0] }
-- input { [1.0, 2.0, 3.0, 4.0] [0.0, 2.0, 0.0, -1.0] }
-- output { [1.0, 0.0, 1.0, 0.0] }

def f [n] (xs: [n]f64) : f64 =
  f64.sum (map (\i -> xs[i] * xs[(i + 1) % n]) (iota n))

entry main [n] (xs: [n]f64) (v: [n]f64) : [n]f64 =
  vjp (\ys -> vjp f ys 1) xs v
