-- reduce_by_index and scatter as runic-jit kernels on the ir backend: the `+` fast path,
-- a user-defined operator on pairs, an operator that fails, and both inside a map's
-- lambda. Expected values by hand.
-- ==
-- entry: counts
-- input { [1i64, 3, 1, 7, -1, 0] [1f32, 2, 3, 4, 5, 6] } output { [6f32, 4, 0, 2] }

entry counts (is: []i64) (vs: []f32) = hist (+) 0 4 is vs

-- ==
-- entry: argmin
-- input { [0i64, 1, 0, 2, 2] [2f32, 1, 2, 5, 4] }
-- output { [2f32, 1, 4] [0i64, 1, 4] }

entry argmin (is: []i64) (vs: []f32) =
  unzip (hist (\(a, i) (b, j) -> if a < b || (a == b && i < j) then (a, i) else (b, j))
              (f32.inf, -1) 3 is (zip vs (iota (length vs))))

-- ==
-- entry: divide
-- input { [0i64, 1, 0, 2] [3, 7, 2, -5] } output { [18, 15, -19] }
-- input { [0i64, 1, 0, 2] [3, 7, 0, -5] } error: division by zero

entry divide (is: []i64) (vs: []i32) = hist (\a b -> a / b + 1) 100 3 is vs

-- ==
-- entry: per_row
-- input { [[1i64, 2, 5, 7], [4, 8, 3, 3]] } output { [[0i64, 6, 2, 7], [12, 0, 0, 6]] }

entry per_row (m: [][]i64) = map (\r -> hist (+) 0 4 (map (\x -> x % 4) r) r) m

-- ==
-- entry: scatters
-- input { [[1, 2, 3], [4, 5, 6]] [2i64, -1, 0] } output { [[30, 2, 10], [60, 5, 40]] }

entry scatters (m: [][]i32) (is: []i64) = map (\r -> scatter (copy r) is (map (* 10) r)) m
