-- A value bound with the name of a size parameter hides the size: the types of arrays
-- bound before still mean the parameter (here the flattened size `n*m` after `m` is
-- rebound to an array, an `i32`, and an `i64`). Before the fix the ir backend evaluated
-- `n*m` with the new `m` ("an operator on non-scalar values", "Mul of i64 and i32").
-- Expected values by hand.
-- ==
-- entry: by_array
-- input { [[1i64, 2i64, 3i64], [4i64, 5i64, 6i64]] }
-- output { 21i64 2i64 }

entry by_array [n] [m] (xs: [n][m]i64) =
  let m = xs[0, 1:]
  in (i64.sum (flatten xs), length m)

-- ==
-- entry: by_i32
-- input { [[1i64, 2i64, 3i64], [4i64, 5i64, 6i64]] }
-- output { 6i64 2i32 }

entry by_i32 [n] [m] (xs: [n][m]i64) =
  let m = 2i32
  let ys = flatten xs
  in (length ys, m)

-- ==
-- entry: by_i64
-- input { [[1i64, 2i64, 3i64], [4i64, 5i64, 6i64]] }
-- output { [3i64, 4i64, 5i64, 6i64, 7i64, 8i64] }

entry by_i64 [n] [m] (xs: [n][m]i64) =
  let m = 2i64
  in map (+ m) (flatten xs)

-- ==
-- entry: lstm_like
-- input { [[0.5, -0.2], [0.3, 0.4]] [[0.1, -0.2], [0.4, 0.0], [1.0, 2.0]] }
-- output { [[3.0, 3.0], [3.0, 3.0]] [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]] }

-- The gradient of a sum over a state named like the size parameter `h`.
entry lstm_like [b] [h] (u: [h][h]f64) (h0: [b][h]f64) =
  vjp (\(u, h0) ->
         let (h, c) = (h0, u)
         in f64.sum (flatten h) + f64.sum (flatten c) * 3)
      (u, h0) 1
