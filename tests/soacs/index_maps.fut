-- Maps whose input is `iota n`. The compiled path binds such a parameter to the element's
-- index instead of reading it (runic-jit's index parameters, in SIMD lanes where the body
-- only converts the index to floats) and does not build the iota at all when nothing else
-- reads it (runic-exec's lazy iotas). These pin down the values, the errors of a kernel
-- that fails part-way (the evaluator redoes the elements with their indices), and the
-- cases that still build the iota. Expected values by hand.

-- ==
-- entry: halves
-- input { 0i64 } output { empty([0]f32) }
-- input { 1i64 } output { [1f32] }
-- input { 9i64 } output { [1f32, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5] }
-- input { -1i64 } error: index_maps.fut:.*Range 0..1..<-1 is invalid

entry halves (n: i64) : []f32 = map (\i -> f32.i64 i * 0.5 + 1) (iota n)

-- f64 lanes, and a comparison in the body (a select).
-- ==
-- entry: clipped
-- input { 7i64 } output { [0f64, 0.25, 0.5, 0.75, 0.75, 0.75, 0.75] }

entry clipped (n: i64) : []f64 = map (\i -> f64.min 0.75 (f64.i64 i / 4)) (iota n)

-- Over many elements, split between the workers: each element against a value computed
-- without the index (a scan of twos), so a counter that restarted in each chunk would
-- show. `true` for every size. (The last element read apart keeps the map from fusing
-- into the reduction.)
-- ==
-- entry: agrees_with_a_scan
-- input { 1i64 } output { true }
-- input { 100003i64 } output { true }
-- input { 300001i64 } output { true }

entry agrees_with_a_scan (n: i64) : bool =
  let r = map (\i -> f32.i64 i * 2) (iota n)
  let s = scan (+) 0 (replicate n 2f32)
  in and (map2 (\x y -> x == y - 2) r s) && r[n - 1] == f32.i64 (2 * n - 2)

-- The index beside an input array, and as an integer.
-- ==
-- entry: weighted
-- input { [1f32, 2, 3, 4] } output { [0f32, 2, 6, 12] }
-- input { empty([0]f32) } output { empty([0]f32) }

entry weighted [n] (xs: [n]f32) : [n]f32 = map2 (\i x -> x * f32.i64 i) (iota n) xs

-- ==
-- entry: squares
-- input { 5i64 } output { [0i64, 1, 4, 9, 16] }

entry squares (n: i64) : []i64 = map (\i -> i * i) (iota n)

-- The index reads an array (reversed), and the same iota read a second time.
-- ==
-- entry: reversed
-- input { [1i32, 2, 3] } output { [3i32, 2, 1] [0i32, 2, 4] }

entry reversed [n] (xs: [n]i32) : ([n]i32, [n]i32) =
  let is = iota n
  in (map (\i -> xs[n - 1 - i]) is, map (\i -> i32.i64 i * 2) is)

-- A kernel that fails part-way: index 2·i mod (n+1) reaches n at i = 2 for n = 4; and a
-- division by zero at i = 3. The error is the first failing element's.
-- ==
-- entry: wraps
-- input { [10i32, 20, 30, 40] } error: index_maps.fut:.*Index \[4\] out of bounds for array of shape \[4\]
-- input { [10i32, 20, 30] } output { [10i32, 30, 10] }

entry wraps [n] (xs: [n]i32) : [n]i32 = map (\i -> xs[(2 * i) % (n + 1)]) (iota n)

-- (Integer division rounds down: 10 / -3 is -4.)
-- ==
-- entry: divides
-- input { 3i64 } output { [-4i64, -5, -10] }
-- input { 5i64 } error: division by zero

entry divides (n: i64) : []i64 = map (\i -> 10 / (i - 3)) (iota n)

-- The iota is also a result: it must be built.
-- ==
-- entry: also_returned
-- input { 4i64 } output { [0i64, 1, 2, 3] [1f32, 2, 3, 4] }

entry also_returned (n: i64) : ([]i64, []f32) =
  let is = iota n
  in (is, map (\i -> f32.i64 i + 1) is)

-- Column sums: a map over an iota whose elements are reductions down columns, which
-- reads the iota (its kernel takes no index parameter), so it is built where needed.
-- ==
-- entry: column_sums
-- input { [[1f32, 2, 3], [4, 5, 6]] } output { [5f32, 7, 9] }

entry column_sums [n] [m] (xs: [n][m]f32) : [m]f32 =
  map (\j -> f32.sum (map (\r -> r[j]) xs)) (iota m)

-- An iota bound inside a loop's body, mapped there.
-- ==
-- entry: in_a_loop
-- input { 3i64 } output { [3f32, 4, 5, 6] }

entry in_a_loop (k: i64) : []f32 =
  loop acc = replicate 4 0f32 for _t < k do
    let is = iota 4
    in map2 (\i a -> a + 1 + f32.i64 i / f32.i64 k) is acc

-- The gradient of Σ_i w·i² through a map over the indices: dL/dw = Σ i² = 0+1+4+9+16.
-- ==
-- entry: grad_weight
-- input { 5i64 2f32 } output { 30f32 }

entry grad_weight (n: i64) (w: f32) : f32 =
  vjp (\w -> f32.sum (map (\i -> w * f32.i64 (i * i)) (iota n))) w 1

-- Reductions and scans over the indices beside other inputs: their kernels take the
-- index from the counter too (a sum in SIMD lanes).
-- ==
-- entry: weighted_sum
-- input { [1f32, 2, 3, 4] } output { 20f32 }
-- input { empty([0]f32) } output { 0f32 }

entry weighted_sum [n] (xs: [n]f32) : f32 = f32.sum (map2 (\i x -> x * f32.i64 i) (iota n) xs)

-- ==
-- entry: divided_sum
-- input { [4i64, 6, 8] } output { -13i64 }
-- input { [4i64, 6, 8, 10] } error: division by zero

entry divided_sum [n] (xs: [n]i64) : i64 = i64.sum (map2 (\i x -> x / (i - 3)) (iota n) xs)

-- ==
-- entry: doubled_prefix
-- input { 5i64 } output { [0i64, 2, 6, 12, 20] }
-- input { 0i64 } output { empty([0]i64) }

entry doubled_prefix (n: i64) : []i64 = scan (+) 0 (map (\i -> i * 2) (iota n))

-- ==
-- entry: divided_prefix
-- input { 3i64 } output { [-4i64, -10, -22] }
-- input { 4i64 } error: division by zero

entry divided_prefix (n: i64) : []i64 = scan (+) 0 (map (\i -> 12 / (i - 3)) (iota n))

-- A grid of coordinates: the inner map over its own iota runs in SIMD lanes too (6
-- columns: a group of four lanes and two elements after it).
-- ==
-- entry: coordinates
-- input { 2i64 6i64 }
-- output { [[0f32, 1, 2, 3, 4, 5], [0.5f32, 1.5, 2.5, 3.5, 4.5, 5.5]] }
-- input { 0i64 3i64 } output { empty([0][3]f32) }

entry coordinates (n: i64) (m: i64) : [n][m]f32 =
  map (\i -> map (\j -> f32.i64 i * 0.5 + f32.i64 j) (iota m)) (iota n)

-- ==
-- entry: coordinates_f64
-- input { 2i64 3i64 } output { [[0f64, 0.25, 0.5], [1f64, 1.25, 1.5]] }

entry coordinates_f64 (n: i64) (m: i64) : [n][m]f64 =
  map (\i -> map (\j -> f64.i64 i + f64.i64 j / 4) (iota m)) (iota n)
