-- In-place updates and loops with array parameters inside map kernels (runic-jit on the
-- ir backend). Expected values by hand.
-- ==
-- entry: set_column
-- input { [[1, 2, 3], [4, 5, 6]] 1i64 } output { [[1, 99, 3], [4, 99, 6]] }
-- input { [[1, 2, 3], [4, 5, 6]] 3i64 } error: out of bounds

entry set_column (m: [][]i32) (i: i64) = map (\r -> copy r with [i] = 99) m

-- ==
-- entry: buckets
-- input { [0i64, 7] } output { [0i64, 215] }

-- n = 7: a = [0+5, 1+6, 2, 3, 4], sum 21, a[0] = 5.
entry buckets (ns: []i64) =
  map (\n -> let a = loop a = replicate 5 0i64 for i < n do a with [i % 5] = a[i % 5] + i
             in reduce (+) 0 a * 10 + a[0]) ns

-- ==
-- entry: swapped
-- input { [5] } output { [3120] }

-- (a, b): ([5,5,5], [6,6,6]) → ([0,6,6], [5,5,5]) → ([5,1,5], [0,6,6]) → ([0,6,2], [5,1,5])
-- → ([3,1,5], [0,6,2]).
entry swapped (xs: []i32) =
  map (\x -> let (a, b) = loop (a, b) = (replicate 3 x, replicate 3 (x + 1)) for i < 4 do
                            (copy b with [i % 3] = i, a)
             in a[0] * 1000 + a[1] * 100 + b[2] * 10 + b[0]) xs
