-- Forward over reverse through an accumulator: the gradient of a map that reads a free
-- array at computed indices uses `with_acc`; its jvp (a Hessian-vector product) adds a
-- tangent accumulator that receives the tangent of every update.
-- ==
-- tags { autodiff }
-- input { [1.0, 2.0, 3.0, 4.0] [1.0, 0.0, 0.0, 0.0] }
-- output { [0.0, 1.0, 0.0, 1.0] }
-- input { [1.0, 2.0, 3.0, 4.0] [0.0, 2.0, 0.0, -1.0] }
-- output { [1.0, 0.0, 1.0, 0.0] }

def f [n] (xs: [n]f64) : f64 =
  f64.sum (map (\i -> xs[i] * xs[(i + 1) % n]) (iota n))

entry main [n] (xs: [n]f64) (v: [n]f64) : [n]f64 =
  jvp (\ys -> vjp f ys 1) xs v
