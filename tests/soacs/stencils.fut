-- Maps over a range of indices that read arrays at the index plus an offset: finite
-- differences, three-point sums, shifts by a run-time amount, rows of a grid. The compiled
-- path takes the rows as slices when every one is in bounds (runic-opt's `stencils`) and
-- runs the original map otherwise; these pin down both sides of that test, the errors of
-- reads out of bounds and of invalid ranges, and reads the body makes under a condition.
-- Expected values by hand.

-- ==
-- entry: diffs
-- input { [1f32, 4, 9, 16] } output { [3f32, 5, 7] }
-- input { [5f32] } output { empty([0]f32) }
-- input { empty([0]f32) } error: stencils.fut:.*Range 0..1..<-1 is invalid

entry diffs [n] (a: [n]f32) : []f32 = map (\i -> a[i+1] - a[i]) (iota (n-1))

-- A range that starts at 1, and reads on both sides.
-- ==
-- entry: sums3
-- input { [1i32, 2, 3, 4, 5] } output { [6i32, 9, 12] }
-- input { [1i32, 2] } output { empty([0]i32) }
-- input { [7i32] } error: stencils.fut:.*Range 1..<0 is invalid

entry sums3 [n] (a: [n]i32) : []i32 = map (\i -> a[i-1] + a[i] + a[i+1]) (1..<n-1)

-- A read past the end fails at the first index out of bounds, as it always did.
-- ==
-- entry: past_end
-- input { [1i32, 2, 3] } error: stencils.fut:.*Index \[3\] out of bounds for array of shape \[3\]
-- input { empty([0]i32) } output { empty([0]i32) }

entry past_end (a: []i32) : []i32 = map (\i -> a[i+1]) (iota (length a))

-- An offset known only at run time: in bounds, zero, below zero (fails at index -1), and
-- the whole length (nothing to read).
-- ==
-- entry: shift
-- input { 1i64 [1f64, 2, 3, 4] } output { [2f64, 3, 4] }
-- input { 0i64 [1f64, 2, 3, 4] } output { [1f64, 2, 3, 4] }
-- input { -1i64 [1f64, 2, 3, 4] } error: stencils.fut:.*Index \[-1\] out of bounds for array of shape \[4\]
-- input { 4i64 [1f64, 2, 3, 4] } output { empty([0]f64) }

entry shift (k: i64) (a: []f64) : []f64 = map (\i -> a[i + k]) (iota (length a - k))

-- Reads under a condition: `a[i-1]` is out of bounds at i = 0 but never made there.
-- ==
-- entry: guarded
-- input { [1i32, 2, 3] } output { [1i32, 3, 5] }
-- input { empty([0]i32) } output { empty([0]i32) }

entry guarded (a: []i32) : []i32 =
  map (\i -> if i > 0 then a[i-1] + a[i] else a[i]) (iota (length a))

-- Rows of a grid above and below each interior row; the inner index runs along them.
-- ==
-- entry: rows_above_below
-- input { [[1i32, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]] }
-- output { [[8i32, 10, 12], [14, 16, 18]] }
-- input { [[1i32, 2], [3, 4]] } output { empty([0][2]i32) }

entry rows_above_below [n] [m] (g: [n][m]i32) : [][m]i32 =
  map (\i -> map (\j -> g[i-1, j] + g[i+1, j]) (iota m)) (1..<n-1)

-- The index also used as a value, and two arrays of different lengths:
-- a_i·i + b_{i+1} + a_i.
-- ==
-- entry: weighted
-- input { [1f32, 2, 3] [10f32, 20, 30, 40] } output { [21f32, 34, 49] }

entry weighted [n] [k] (a: [n]f32) (b: [k]f32) : [n]f32 =
  map (\i -> a[i] * f32.i64 i + b[i+1] + a[i]) (iota n)

-- The range read elsewhere too (it stays), beside a map with another input.
-- ==
-- entry: with_range
-- input { [1i32, 2, 3] [5i32, 6] } output { [10i32, 18] [0i64, 1, 2] }

entry with_range [n] (a: [n]i32) (xs: [n-1]i32) : ([n-1]i32, [n]i64) =
  let is = iota n
  in (map2 (\i x -> x * a[i+1] + a[i] - a[i]) (take (n-1) is) xs, is)

-- Two steps of a smoothing loop whose body is a stencil: [0, 4, 4, 0, 0], then
-- [2, 4, 2, 0, 0].
-- ==
-- entry: smooth
-- input { 2i32 [0f32, 0, 8, 0, 0] } output { [2f32, 4, 2, 0, 0] }

entry smooth [n] (k: i32) (a: [n]f32) : [n]f32 =
  loop x = a for _i < k do
    let inner = map (\i -> (x[i] + x[i+1]) / 2) (iota (n-1))
    in inner ++ [x[n-1]] :> [n]f32

-- The gradient of Σ (a[i+1] − a[i])²: 2(a_j − a_{j−1}) − 2(a_{j+1} − a_j), one-sided at the
-- ends. For [1, 4, 9, 16] the differences are 3, 5, 7.
-- ==
-- entry: diffs_grad
-- input { [1f32, 4, 9, 16] } output { [-6f32, -4, -4, 14] }

entry diffs_grad [n] (a: [n]f32) : [n]f32 =
  vjp (\a -> f32.sum (map (\i -> (a[i+1] - a[i]) ** 2) (iota (n-1)))) a 1

-- The range read as an array too (its own rows).
-- ==
-- entry: self_read
-- input { 4i64 } output { [1i64, 3, 5, 7] }
-- input { 0i64 } output { empty([0]i64) }

entry self_read (n: i64) : []i64 =
  let is = iota n
  in map (\i -> is[i] * 2 + 1) is

-- Reads along each row of a grid (an inner map over a range), the test of their bounds
-- made once for the whole grid.
-- ==
-- entry: row_neighbours
-- input { [[1i32, 2, 3, 4], [5, 6, 7, 8]] } output { [[4i32, 6], [12, 14]] }
-- input { [[1i32, 2], [3, 4]] } output { [empty([0]i32), empty([0]i32)] }
-- input { empty([0][3]i32) } output { empty([0][1]i32) }

entry row_neighbours [n] [m] (g: [n][m]i32) : [n][]i32 =
  map (\r -> map (\j -> r[j-1] + r[j+1]) (1..<m-1)) g

-- The five-point Laplacian of i² + j² is 4 at every interior point.
-- ==
-- entry: laplacian
-- input { [[0f32, 1, 4, 9], [1, 2, 5, 10], [4, 5, 8, 13], [9, 10, 13, 18]] }
-- output { [[4f32, 4], [4, 4]] }

entry laplacian [n] [m] (g: [n][m]f32) : [][]f32 =
  map (\i -> map (\j -> g[i-1, j] + g[i+1, j] + g[i, j-1] + g[i, j+1] - 4 * g[i, j])
                 (1..<m-1))
      (1..<n-1)

-- Along the rows: a read past the end fails as it did; one made under a condition runs.
-- ==
-- entry: row_past_end
-- input { [[1i32, 2, 3]] } error: stencils.fut:.*Index \[3\] out of bounds for array of shape \[3\]

entry row_past_end [n] [m] (g: [n][m]i32) : [n][m]i32 =
  map (\r -> map (\j -> r[j+1]) (iota m)) g

-- ==
-- entry: row_shifted
-- input { [[1i32, 2, 3], [4, 5, 6]] } output { [[0i32, 1, 2], [0, 4, 5]] }

entry row_shifted [n] [m] (g: [n][m]i32) : [n][m]i32 =
  map (\r -> map (\j -> if j > 0 then r[j-1] else 0) (iota m)) g

-- A width each row computes with a division: with no rows, the division never runs (and
-- must not fail, even by zero); with rows, the reads are along them.
-- ==
-- entry: divided_width
-- input { 0i64 empty([0][3]i32) } output { empty([0][0]i32) }
-- input { 2i64 [[1i32, 2, 3, 4]] } output { [[2i32]] }

entry divided_width [n] [m] (k: i64) (g: [n][m]i32) =
  map (\r -> map (\j -> r[j+1]) (iota (m / k - 1))) g
