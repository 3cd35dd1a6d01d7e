-- Branches and loops may produce arrays of different sizes: the result has a size known
-- only at run time, and sizes that are the same constant written differently agree.

-- ==
-- entry: branch_sizes
-- input { true 2i64 3i64 } output { 2i64 }
-- input { false 2i64 3i64 } output { 3i64 }
entry branch_sizes (b: bool) (n: i64) (m: i64) = length (if b then iota n else iota m)

-- ==
-- entry: branch_pairs
-- input { false } output { [1i32, 2i32] [3i32, 4i32] }
-- input { true } output { [1i32, 2i32, 3i32] [4i32, 5i32, 6i32] }
entry branch_pairs (b: bool) =
  let (xs, ys) = if b then ([1, 2, 3], [4, 5, 6]) else ([1, 2], [3, 4])
  in unzip (zip xs ys)

-- ==
-- entry: growing_loop
-- input { 3i64 } output { 8i64 }
entry growing_loop (n: i64) = length (loop xs = [0i32] for _i < n do xs ++ xs)

-- ==
-- entry: constant_terms
-- input { [1, 2, 3, 4] } output { [2, 3] }
entry constant_terms (xs: [4]i32) : [2]i32 = xs[1:3]
