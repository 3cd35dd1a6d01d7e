-- Maps over iota n whose body branches on a boundary condition of the index (a stencil's
-- ends): the ir backend splits them into the ends, which run the body as written, and the
-- interior, which runs the else branch alone (split-boundaries). Each form of condition,
-- sizes where the ends meet or overlap, conditions it cannot split, several results, and a
-- read that fails inside. Expected values from numpy (float32) and by hand.

-- ==
-- entry: average
-- input { [1f32, 3.18f32, 2.21f32, -2.2f32, -1.6f32, 2.99f32, -3.96f32, 2.57f32, 2.38f32, -0.26f32, -1.58f32, -1.77f32, -1.96f32, -0.44f32, 0.04f32, 0.43f32, 3.96f32, 2.34f32, 0.98f32, 3.91f32] }
-- output { [1f32, 2.13f32, 1.0633334f32, -0.53000003f32, -0.27000007f32, -0.85666674f32, 0.5333333f32, 0.33f32, 1.5633332f32, 0.18000002f32, -1.2033334f32, -1.77f32, -1.39f32, -0.7866667f32, 0.010000001f32, 1.4766666f32, 2.243333f32, 2.4266667f32, 2.41f32, 3.91f32] }
-- input { [1f32, 2f32, 3f32, 4f32, 8f32] } output { [1f32, 2f32, 3f32, 5f32, 8f32] }
-- input { [7f32, 9f32] } output { [7f32, 9f32] }
-- input { [7f32] } output { [7f32] }
-- input { empty([0]f32) } output { empty([0]f32) }

entry average [n] (a: [n]f32) : [n]f32 =
  map (\i -> if i == 0 || i == n - 1 then a[i] else (a[i - 1] + a[i] + a[i + 1]) / 3) (iota n)

-- A band of width k at both ends (k free): none, some, more than half, and a negative
-- width, which reads outside.
-- ==
-- entry: band
-- input { 3i64 [1f32, 3.18f32, 2.21f32, -2.2f32, -1.6f32, 2.99f32, -3.96f32, 2.57f32, 2.38f32, -0.26f32, -1.58f32, -1.77f32, -1.96f32, -0.44f32, 0.04f32, 0.43f32, 3.96f32, 2.34f32, 0.98f32, 3.91f32] }
-- output { [-1f32, -1f32, -1f32, -2.96f32, 5.75f32, 4.59f32, -2.46f32, -3.18f32, 1.22f32, -5.92f32, 2.1299999f32, 2.42f32, 0.17000002f32, 2.38f32, 0.56999993f32, -0.98f32, 3.47f32, -1f32, -1f32, -1f32] }
-- input { 0i64 [1f32, 3.18f32, 2.21f32, -2.2f32, -1.6f32, 2.99f32, -3.96f32, 2.57f32, 2.38f32, -0.26f32, -1.58f32, -1.77f32, -1.96f32, -0.44f32, 0.04f32, 0.43f32, 3.96f32, 2.34f32, 0.98f32, 3.91f32] }
-- output { [2f32, 6.36f32, 4.42f32, -4.4f32, -3.2f32, 5.98f32, -7.92f32, 5.14f32, 4.76f32, -0.52f32, -3.16f32, -3.54f32, -3.92f32, -0.88f32, 0.08f32, 0.86f32, 7.92f32, 4.68f32, 1.96f32, 7.82f32] }
-- input { 12i64 [1f32, 3.18f32, 2.21f32, -2.2f32, -1.6f32, 2.99f32, -3.96f32, 2.57f32, 2.38f32, -0.26f32, -1.58f32, -1.77f32, -1.96f32, -0.44f32, 0.04f32, 0.43f32, 3.96f32, 2.34f32, 0.98f32, 3.91f32] }
-- output { [-1f32, -1f32, -1f32, -1f32, -1f32, -1f32, -1f32, -1f32, -1f32, -1f32, -1f32, -1f32, -1f32, -1f32, -1f32, -1f32, -1f32, -1f32, -1f32, -1f32] }
-- input { -2i64 [1f32, 2f32] } error: Index \[2\] out of bounds for array of shape \[2\]

entry band [n] (k: i64) (a: [n]f32) : [n]f32 =
  map (\i -> if i < k || i >= n - k then -1 else a[i - k] + a[i + k]) (iota n)

-- The operands the other way round, <= and >, and only one end.
-- ==
-- entry: flipped
-- input { 1i64 [1, 2, 3, 4, 5, 6] } output { [0, 0, 5, 7, 9, 0] }
-- input { 0i64 [1, 2, 3] } output { [0, 3, 0] }
-- input { 9223372036854775807i64 [1, 2, 3] } output { [0, 0, 0] }

entry flipped [n] (k: i64) (a: [n]i32) : [n]i32 =
  map (\i -> if k >= i || i > n - 2 then 0 else a[i - 1] + a[i]) (iota n)

-- ==
-- entry: first_only
-- input { [5, 1, 2, 3] } output { [5, 6, 3, 5] }
-- input { [5] } output { [5] }

entry first_only [n] (a: [n]i32) : [n]i32 =
  map (\i -> if 0 == i then a[0] else a[i - 1] + a[i]) (iota n)

-- A point inside (k), which leaves everything to the body as written; a condition
-- independent of the index.
-- ==
-- entry: point
-- input { 2i64 false [1, 2, 3, 4, 5] } output { [1, 3, 0, 7, 9] }
-- input { 0i64 false [1, 2, 3, 4, 5] } output { [0, 3, 5, 7, 9] }
-- input { 4i64 true [1, 2, 3, 4, 5] } output { [0, 0, 0, 0, 0] }

entry point [n] (k: i64) (flag: bool) (a: [n]i32) : [n]i32 =
  map (\i -> if flag || i == k then 0 else if i == 0 then a[0] else a[i - 1] + a[i]) (iota n)

-- Two results, each split at the same bounds.
-- ==
-- entry: pair
-- input { [1f64, 2f64, 4f64, 8f64] } output { [0f64, 5f64, 10f64, 0f64] [1f64, 1f64, 2f64, 8f64] }

entry pair [n] (a: [n]f64) : ([n]f64, [n]f64) =
  unzip (map (\i -> if i == 0 || i == n - 1 then (0, a[i]) else (a[i - 1] + a[i + 1], a[i] - a[i - 1]))
             (iota n))

-- A read past the end inside (the condition guards only the first element): the same
-- failure as without the split.
-- ==
-- entry: past_end
-- input { [1, 2, 3] } error: boundary_split.fut:80:39-47: Error: Index \[3\] out of bounds for array of shape \[3\]
-- input { empty([0]i32) } output { empty([0]i32) }

entry past_end [n] (a: [n]i32) : [n]i32 =
  map (\i -> if i == 0 then a[0] else a[i + 1]) (iota n)

-- An end and the interior both fail: the first element's failure (index 10, at the
-- start) is reported, as the map in order reports it, though the parts may run together.
-- ==
-- entry: first_failure
-- input { 1i64 [1, 2, 3] } error: boundary_split.fut:90:28-43: Error: Index \[10\] out of bounds
-- input { 0i64 [1, 2, 3] } error: boundary_split.fut:90:49-57: Error: Index \[3\] out of bounds

entry first_failure [n] (k: i64) (a: [n]i32) : [n]i32 =
  map (\i -> if i < k then a[(i + 1) * 10] else a[i + 1]) (iota n)

-- The stencil in the then branch, under a conjunction (the boundary is its negation), with
-- !=, or under one comparison.
-- ==
-- entry: inside
-- input { [2f32, 4f32, 8f32, 16f32] } output { [2f32, 5f32, 10f32, 16f32] [2f32, 5f32, 10f32, 16f32] [2f32, 6f32, 12f32, 24f32] }
-- input { [3f32] } output { [3f32] [3f32] [3f32] }
-- input { empty([0]f32) } output { empty([0]f32) empty([0]f32) empty([0]f32) }

entry inside [n] (a: [n]f32) : ([n]f32, [n]f32, [n]f32) =
  ( map (\i -> if i > 0 && i < n - 1 then (a[i - 1] + a[i + 1]) / 2 else a[i]) (iota n)
  , map (\i -> if i != 0 && n - 1 != i then (a[i - 1] + a[i + 1]) / 2 else a[i]) (iota n)
  , map (\i -> if i > 0 then a[i - 1] + a[i] else a[i]) (iota n) )

-- Other inputs beside the index, elements and rows, sliced at the same bounds.
-- ==
-- entry: with_elems
-- input { [1, 2, 3, 4] [10, 20, 30, 40] } output { [10, 21, 32, 43] }
-- input { [1] [10] } output { [10] }

entry with_elems [n] (a: [n]i32) (xs: [n]i32) : [n]i32 =
  map2 (\i x -> if i == 0 then x else x + a[i - 1]) (iota n) xs

-- ==
-- entry: with_rows
-- input { [[1, 2], [3, 4], [5, 6], [7, 8]] } output { [1, 10, 16, 7] }
-- input { [[1, 2]] } output { [1] }

entry with_rows [n] (g: [n][2]i32) : [n]i32 =
  map2 (\r i -> if i == 0 || i == n - 1 then r[0] else r[1] + g[i - 1, 0] + g[i + 1, 0]) g (iota n)
