-- map and map2..map5, including nested maps, maps returning tuples and arrays, and the
-- size check on arrays of different lengths.
-- ==
-- entry: squares
-- input { [1f32, 2, 3] } output { [1f32, 4, 9] }
-- input { empty([0]f32) } output { empty([0]f32) }

entry squares (xs: []f32) = map (\x -> x * x) xs

-- ==
-- entry: maps
-- input { [1, 2] [3, 4] [5, 6] [7, 8] [9, 10] } output { [4, 6] [9, 12] [16, 20] [25, 30] }

entry maps (a: []i32) (b: []i32) (c: []i32) (d: []i32) (e: []i32) =
  (map2 (+) a b, map3 (\x y z -> x + y + z) a b c,
   map4 (\x y z w -> x + y + z + w) a b c d, map5 (\x y z w v -> x + y + z + w + v) a b c d e)

-- ==
-- entry: nested
-- input { [[1, 2], [3, 4]] } output { [[2, 4], [6, 8]] [3, 7] }

entry nested (m: [][]i32) = (map (map (*2)) m, map i32.sum m)

-- ==
-- entry: unzipped
-- input { [1, 2, 3] } output { [1, 4, 9] [true, false, true] }

entry unzipped (xs: []i32) = unzip (map (\x -> (x * x, x % 2 == 1)) xs)

-- ==
-- entry: size_mismatch
-- input { [1, 2] [3] } error: cannot match shape|invalid size

entry size_mismatch (a: []i32) (b: []i32) = map2 (+) a b

-- ==
-- entry: free_vars
-- input { [1.0, 2.0] 3.0 } output { [3.0, 6.0] }

entry free_vars (xs: []f64) (k: f64) = map (* k) xs
