-- A recurrent step `h ← tanh (W h)`: the forward sweep stores each iteration's product
-- `W h` beside the tape of `h`; the return sweep reads it back (no product is recomputed)
-- and takes the tanh's result from the tape's next row. Expected: central finite
-- differences (numpy).
-- ==
-- tags { autodiff }
-- input { [[0.5, -0.3], [0.2, 0.8]] [1.0, -1.0] }
-- output { [[0.849271, -0.74877], [0.961764, -0.84534]] }

entry main [n] (w: [n][n]f64) (h0: [n]f64) : [n][n]f64 =
  vjp (\w -> f64.sum (loop h = map (\i -> h0[i]) (iota n) for _i < 2 do
                        let z = map (\row -> f64.sum (map2 (*) row h)) w
                        in map f64.tanh z)) w 1
