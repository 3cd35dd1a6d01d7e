-- A gate of a batch, applied twice in a loop from c = 2·c0 (sized like a): c ← σ(a) · tanh c. The gate's map is the
-- next state; its derivative reads e^{-a} and tanh c, which the forward sweep stores in
-- the loop's tape beside the states (residuals), so the return sweep computes no exp or
-- tanh. Expected: central finite differences (numpy).
-- ==
-- tags { autodiff }
-- input { [[0.2, -0.4, 1.0], [0.7, 0.1, -0.3]] [[1.0, 0.5, -0.5], [0.3, -0.2, 0.8]] }
-- output { [[0.220433, 0.138207, -0.180889], [0.146449, -0.096907, 0.173773]] }

def sigmoid (x: f64) = 1 / (1 + f64.exp (-x))

entry main [b] [h] (a: [b][h]f64) (c0: [b][h]f64) : [b][h]f64 =
  vjp (\a -> let c = loop c = map2 (map2 (\x y -> y * 2 + 0 * x)) a c0 for _i < 2 do
                     map2 (map2 (\x y -> sigmoid x * f64.tanh y)) a c
             in f64.sum (map f64.sum c)) a 1
