-- Array construction and reshaping: iota, replicate, tabulate, concat, flatten,
-- unflatten, transpose, reverse, rotate, zip/unzip, take/drop/split, head/last/tail/init.
-- ==
-- entry: construct
-- input { 3i64 } output { [0i64, 1, 2] [7, 7, 7] [0i64, 1, 4] [[0i64, 1, 2], [1, 2, 3]] [0i64, 1, 2] }

entry construct (n: i64) =
  (iota n, replicate n 7, tabulate n (\i -> i * i), tabulate_2d 2 n (\i j -> i + j), indices (iota n))

-- ==
-- entry: reshape
-- input { [[1, 2, 3], [4, 5, 6]] } output { [1, 2, 3, 4, 5, 6] [[1, 4], [2, 5], [3, 6]] [[1, 2], [3, 4], [5, 6]] }

entry reshape [n][m] (a: [n][m]i32) =
  let flat = flatten a
  in (flat, transpose a, unflatten (flat :> [3*2]i32))

-- ==
-- entry: reorder
-- input { [1, 2, 3, 4, 5] } output { [5, 4, 3, 2, 1] [3, 4, 5, 1, 2] [5, 1, 2, 3, 4] [1, 2, 3, 4, 5, 1, 2] }

entry reorder (xs: []i32) = (reverse xs, rotate 2 xs, rotate (-1) xs, xs ++ xs[0:2])

-- ==
-- entry: access
-- input { [1, 2, 3, 4] } output { 1 4 [2, 3, 4] [1, 2, 3] [1, 2] [3, 4] 4i64 false }

entry access (xs: []i32) =
  (head xs, last xs, tail xs, init xs, take 2 xs, drop 2 xs, length xs, null xs)

-- ==
-- entry: splitting
-- input { [1, 2, 3, 4, 5] } output { [1, 2] [3, 4, 5] }

entry splitting (xs: [5]i32) = split (xs :> [2+3]i32)

-- ==
-- entry: zips
-- input { [1, 2] [3.0, 4.0] [true, false] } output { [3.0, 4.0] [true, false] [1, 2] }

entry zips (a: []i32) (b: []f64) (c: []bool) =
  let (x, y, z) = unzip3 (zip3 a b c)
  in (y, z, x)

-- ==
-- entry: concat_rows
-- input { [[1, 2]] [[3, 4], [5, 6]] } output { [[1, 2], [3, 4], [5, 6]] }

entry concat_rows (a: [][2]i32) (b: [][2]i32) = concat a b

-- ==
-- entry: bad_unflatten
-- input { [1, 2, 3, 4, 5] 2i64 } error: Cannot unflatten|cannot match shape

entry bad_unflatten (xs: []i32) (n: i64) = unflatten (xs :> [n*n]i32)

-- ==
-- entry: head_empty
-- input { empty([0]i32) } error: out of bounds

entry head_empty (xs: []i32) = head xs

-- ==
-- entry: irregular
-- input { [1, 2] [3] } error: Irregular array|cannot match

entry irregular (a: []i32) (b: []i32) = [a, b]
