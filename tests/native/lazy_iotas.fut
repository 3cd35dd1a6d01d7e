-- An `iota` inside a native kernel that only maps, reductions and scans read is never
-- stored (runic-jit binds its element to the loop counter); one read otherwise (an index,
-- a column reduction) is stored where it is read. Expected values by hand.

-- ==
-- entry: weighted
-- input { [[1f32, 1, 1], [0f32, 2, 0]] } output { [3f32, 2] }
entry weighted [n] (xss: [][n]f32) =
  map (\r -> f32.sum (map2 (\i x -> f32.i64 i * x) (iota n) r)) xss

-- The first position of each row's minimum.
-- ==
-- entry: argmin_rows
-- input { [[3f32, 1, 1], [5f32, 4, 9]] } output { [1i64, 1] }
entry argmin_rows [n] (xss: [][n]f32) =
  let first (a, i) (b, j) = if b < a || (b == a && j < i) then (b, j) else (a, i)
  in map (\r -> (reduce_comm first (f32.inf, -1) (zip r (iota n))).1) xss

-- Read in a branch and after it: 2·(0 + 1 + 2) + 3 and 0 + 6.
-- ==
-- entry: branch_and_after
-- input { [[1i64, 0, 0], [-1i64, 0, 0]] } output { [9i64, 3] }
entry branch_and_after [n] (xss: [][n]i64) =
  map (\r ->
         let is = iota n
         let a = if r[0] > 0 then i64.sum (map (\i -> i * 2) is) else 0
         in a + i64.sum is)
      xss

-- Indexed as well: stored. 1 + 2·(0 + 1 + 2).
-- ==
-- entry: indexed_too
-- input { [[5i64, 5, 5], [1i64, 2, 3]] } output { [7i64, 7] }
entry indexed_too [n] (xss: [][n]i64) =
  map (\_ -> let is = iota n in is[1] + i64.sum (map (* 2) is)) xss

-- ==
-- entry: scanned
-- input { [[9i64, 9, 9, 9]] } output { [[0i64, 1, 3, 6]] }
entry scanned [n] (xss: [][n]i64) = map (\_ -> scan (+) 0 (iota n)) xss

-- Column sums of each matrix, over an iota of the columns.
-- ==
-- entry: column_sums
-- input { [[[1f32, 2], [3f32, 4]], [[0f32, 1], [1f32, 0]]] } output { [[4f32, 6], [1f32, 1]] }
entry column_sums [m] [d] (xsss: [][m][d]f32) =
  map (\xss -> map (\j -> f32.sum (map (\r -> r[j]) xss)) (iota d)) xsss
