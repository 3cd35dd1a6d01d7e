-- Scans that run as runic-jit kernels on the ir backend (`--explain-exec` shows them
-- native): a fused map, a tuple operator, indexing a free array (and failing out of
-- bounds), rows of a matrix, and scans inside a map's lambda. Expected values by hand.
-- ==
-- entry: squares
-- input { [1f32, 2, 3, -0.5] } output { [1f32, 5, 14, 14.25] }
-- input { empty([0]f32) } output { empty([0]f32) }

entry squares (xs: []f32) = scan (+) 0 (map (\x -> x * x) xs)

-- ==
-- entry: running_max
-- input { [1f64, 3, 2, 3, 5] } output { [1f64, 3, 3, 3, 5] [0i64, 1, 1, 1, 4] }

entry running_max (xs: []f64) =
  unzip (scan (\(a, i) (b, j) -> if a < b then (b, j) else (a, i)) (f64.lowest, -1)
              (zip xs (iota (length xs))))

-- ==
-- entry: gathered
-- input { [5i64, 6, 7] [2i64, 0, 1, 1] } output { [14i64, 24, 36, 48] }
-- input { [5i64, 6, 7] [2i64, 0, 3, 1] } error: out of bounds

entry gathered (xs: []i64) (is: []i64) = scan (+) 0 (map (\i -> xs[i] * 2) is)

-- ==
-- entry: row_sums
-- input { [[1, 2], [3, 4], [5, 6]] } output { [3, 10, 21] }

entry row_sums (m: [][]i32) = scan (+) 0 (map (\r -> reduce (+) 0 r) m)

-- ==
-- entry: inner
-- input { [[1, 2, 3], [4, 5, 6]] } output { [[1, 3, 6], [4, 9, 15]] [11, 32] }

entry inner (m: [][]i32) =
  unzip (map (\r -> let s = scan (+) 0 r in (s, reduce (+) 0 s + r[0])) m)

-- ==
-- entry: products
-- input { [2u8, 3, 200, 7] } output { [2u8, 6, 176, 208] }

entry products (xs: []u8) = scan (*) 1u8 xs
