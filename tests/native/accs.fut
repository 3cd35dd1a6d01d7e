-- Reverse-mode AD of gathers: the adjoint maps update accumulators, which run as
-- runic-jit kernels on the ir backend. Expected values by hand.
-- ==
-- tags { autodiff }
-- entry: gather
-- input { [1f64, 2, 3] [2i64, 0, 2, 1] [1f64, 10, 100, 1000] }
-- output { [20f64, 4000, 606] }

-- d/dxs of map (\i -> xs[i]^2) is: 2 xs[i] s_j added at every i. (An index out of bounds
-- is tested in crates/runic-exec/tests/native_soacs.rs: the ir backend's backtrace through
-- `vjp` repeats two frames, with native code off too.)
entry gather (xs: []f64) (is: []i64) (s: []f64) =
  vjp (\xs -> map (\i -> xs[i] * xs[i]) is) xs s

-- ==
-- entry: conv
-- input { [1f64, 2, 3, 4] [0.5f64, -1, 2] [1f64, 0, 0, 0] }
-- output { [0.5f64, -1, 2, 0] [1f64, 2, 3] }

-- y_i = sum_k xs[(i + k) % n] w[k]; with the seed e_0: d xs[k] = w[k], d w[k] = xs[k].
entry conv (xs: []f64) (w: []f64) (s: []f64) =
  let n = length xs
  in vjp (\(xs, w) -> map (\i -> reduce (+) 0 (map (\k -> xs[(i + k) % n] * w[k]) (iota 3)))
                          (iota n)) (xs, w) s
