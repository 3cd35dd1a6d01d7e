-- Reverse mode through maps whose return sweep reads the expensive values of the forward
-- sweep (residuals: exp, log, tanh, pow, sin, cos) instead of computing them again: a
-- map of scalars, a map whose result is itself the residual, nested maps (the gates of a
-- batch), and an LSTM-like batch cell in a loop, whose gate maps are the next states and
-- keep their residuals in the loop's tape.
-- Expected values: central finite differences in tests/ad_rev/oracle.py (section
-- residuals).
-- ==
-- tags { autodiff }
-- entry: scalars
-- input { [0.3, -1.2, 2.0, 0.5] [1.5, 0.7, 2.5, 1.1] }
-- output { [1.780322, 0.263338, 6.770978, 0.981567] [1.146506, -0.205322, 2.955986, 1.873577] }

entry scalars [n] (xs: [n]f64) (ys: [n]f64) =
  vjp (\(xs, ys) -> f64.sum (map2 (\x y -> f64.exp x * f64.log y + f64.tanh (x * y)) xs ys))
      (xs, ys) 1

-- ==
-- entry: result
-- input { [0.3, -1.2, 2.0, 0.5] [1.0, 2.0, -1.0, 0.5] }
-- output { [1.349859, 0.602388, -7.389056, 0.824361] }

entry result [n] (xs: [n]f64) (seed: [n]f64) = vjp (map f64.exp) xs seed

-- ==
-- entry: pow_trig
-- input { [0.3, -1.2, 2.0, 0.5] [1.5, 0.7, 2.5, 1.1] }
-- output { [0.525489, -0.270065, 6.06021, 0.49803] [-0.068911, -2.029623, 4.455811, 0.049464] }

entry pow_trig [n] (xs: [n]f64) (ys: [n]f64) =
  vjp (\(xs, ys) -> f64.sum (map2 (\x y -> y ** x + f64.sin x * f64.cos y) xs ys)) (xs, ys) 1

-- ==
-- entry: gates
-- input { [[0.2, -0.4, 1.0], [0.7, 0.1, -0.3]] [[1.0, 0.5, -0.5], [0.3, -0.2, 0.8]] }
-- output { [[0.950095, 0.652731, 0.060251], [0.431135, 0.395819, 0.826988]]
--          [[0.58864, 0.312023, 0.910036], [0.81593, 0.549649, 0.363243]] }

def sigmoid (x: f64) = 1 / (1 + f64.exp (-x))

entry gates [b] [h] (a: [b][h]f64) (c: [b][h]f64) =
  vjp (\(a, c) -> f64.sum (flatten (map2 (map2 (\x y -> sigmoid x * y + sigmoid y * f64.tanh x)) a c)))
      (a, c) 1

-- ==
-- entry: batch_cell
-- input { [[0.5, -0.2, 0.1], [0.3, 0.4, -0.6], [-0.1, 0.2, 0.7]] [[0.1, -0.2, 0.3], [0.4, 0.0, -0.5]] 3i64 }
-- output { [[0.360245, -0.011395, -0.19195], [0.200905, 0.059059, -0.15763], [0.101535, -0.149318, 0.190225]]
--          [[0.347604, 0.11513, 0.430788], [0.509673, 0.242041, -0.068903]] }

entry batch_cell [b] [h] (u: [h][h]f64) (h0: [b][h]f64) (k: i64) =
  vjp (\(u, h0) ->
         let (h, c) =
           loop (h, c) = (h0, h0) for _i < k do
             let z = map (\hr -> map (\ur -> f64.sum (map2 (*) ur hr)) u) h
             let c = map2 (map2 (\z c -> sigmoid z * c + sigmoid (-z) * f64.tanh z)) z c
             let h = map2 (map2 (\z c -> sigmoid (z + 1) * f64.tanh c)) z c
             in (h, c)
         in f64.sum (map f64.sum h) + f64.sum (map (\r -> f64.sum (map (\x -> x * x) r)) c))
      (u, h0) 1
