-- Reductions and scans whose results are only partly used: DCE drops the components the
-- used ones do not read (and what only they read), and keeps those they do. Expected
-- values by hand.
-- ==
-- entry: first_of_three
-- input { [1.0, -2.0, 3.0] } output { 2.0 }

-- Only the sum is used; the product and the maximum go.
entry first_of_three (xs: []f64) : f64 =
  let (s, _p, _m) =
    reduce (\(a, b, c) (x, y, z) -> (a + x, b * y, f64.max c z)) (0, 1, -f64.inf)
           (zip3 xs (map f64.exp xs) (map f64.sin xs))
  in s

-- ==
-- entry: index_of_min
-- input { [3.0, -1.0, 2.0, -1.0] } output { 2i64 }
-- input { [3.0, 1.0, 1.0] } output { 1i64 }

-- Only the index is used, but it reads the values: both stay.
entry index_of_min [n] (xs: [n]f64) : i64 =
  let (_, i) =
    reduce_comm (\(a, i) (b, j) ->
                   if a < b then (a, i) else if b < a then (b, j) else (a, i64.min i j))
                (f64.inf, -1) (zip (map (\x -> x * x - 2 * x) xs) (iota n))
  in i

-- ==
-- entry: scan_first
-- input { [1.0, 2.0, 3.0] } output { [2.0, 6.0, 12.0] }

-- The running product of cosines is not computed.
entry scan_first (xs: []f64) : []f64 =
  let (ps, _) = unzip (scan (\(a, b) (c, d) -> (a + c, b * d)) (0, 1)
                            (map (\x -> (2 * x, f64.cos x)) xs))
  in ps

-- ==
-- entry: rows
-- input { [[1.0, 2.0], [3.0, -4.0]] } output { [3.0, -1.0] }

-- Inside a map: each row's sum, not its maximum.
entry rows (xss: [][]f64) : []f64 =
  map (\xs -> (reduce (\(a, b) (c, d) -> (a + c, f64.max b d)) (0, -f64.inf)
                      (zip xs (map f64.exp xs))).0)
      xss

-- ==
-- entry: newton_like
-- input { [1.0, 2.0, 4.0] [0.0, 3.0] } output { [[2.0, 4.0]] }

-- The tangent of a minimum nobody reads (forward mode over the index of the nearest
-- centre): the jvp's tangent output is the Hessian-vector product of a sum of squared
-- distances to the nearest centre, 2 per point assigned to the centre (1 goes to 0; 2 and
-- 4 go to 3).
entry newton_like [n] [k] (ps: [n]f64) (cs: [k]f64) : [][k]f64 =
  let grad c = vjp (\c -> f64.sum (map (\p -> f64.minimum (map (\x -> (p - x) * (p - x)) c)) ps))
                   c 1
  in [(jvp2 grad cs (replicate k 1)).1]
