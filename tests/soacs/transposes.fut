-- Transposes of arrays larger than one cache tile (runic-exec copies them in 32×32
-- tiles, in parallel above 65 536 elements), of every element type width, and the 3-D
-- permutations that `map transpose` and `transpose` of a 3-D array make. Each entry
-- checks every element against the formula that built the array, and returns a weighted
-- sum whose value was computed by hand (closed forms, below each entry).

-- ==
-- entry: t2_check
-- input { 2i64 3i64 } output { true [[0i64, 3], [1, 4]] }
-- input { 300i64 257i64 } output { true [[0i64, 257], [1, 258]] }
-- input { 33i64 1i64 } output { true [[0i64, 1]] }

def m64 (k: i64) (m: i64) : i64 = if m < k then m else k

entry t2_check (n: i64) (m: i64) : (bool, [][]i64) =
  let a = tabulate_2d n m (\i j -> i * m + j)
  let t = transpose a
  let ok = and (map2 (\j row -> and (map2 (\i x -> x == i * m + j) (iota n) row)) (iota m) t)
  in (ok, t[:m64 2 m, :2])

-- The sum over t[j][i] * j of a transposed [n][m] f32 array of ones: n * m(m-1)/2.
-- n = 300, m = 257: 300 * 32896 = 9868800 (exact in f64).
-- ==
-- entry: t2_weighted
-- input { 300i64 257i64 } output { 9868800f64 }
-- input { 5i64 7i64 } output { 105f64 }

entry t2_weighted (n: i64) (m: i64) : f64 =
  let t = transpose (replicate n (replicate m 1f32))
  in f64.sum (map2 (\j row -> f64.sum (map (\x -> f64.f32 x * f64.i64 j) row)) (iota m) t)

-- Bytes, shorts and booleans through a tile-crossing transpose.
-- ==
-- entry: t2_narrow
-- input { 70i64 45i64 } output { true true true }

entry t2_narrow (n: i64) (m: i64) : (bool, bool, bool) =
  let b = tabulate_2d n m (\i j -> i8.i64 ((i * m + j) % 101))
  let s = tabulate_2d n m (\i j -> i16.i64 (i * m + j))
  let z = tabulate_2d n m (\i j -> (i + j) % 3 == 0)
  let ok_b = and (map2 (\j row -> and (map2 (\i x -> x == i8.i64 ((i * m + j) % 101)) (iota n) row)) (iota m) (transpose b))
  let ok_s = and (map2 (\j row -> and (map2 (\i x -> x == i16.i64 (i * m + j)) (iota n) row)) (iota m) (transpose s))
  let ok_z = and (map2 (\j row -> and (map2 (\i x -> x == ((i + j) % 3 == 0)) (iota n) row)) (iota m) (transpose z))
  in (ok_b, ok_s, ok_z)

-- a[g][i][j] = g*10000 + i*100 + j. `map transpose a` is [g][j][i]; `transpose a` is
-- [i][g][j]; their corner elements by hand.
-- ==
-- entry: t3_check
-- input { 3i64 40i64 70i64 } output { true true [1i64, 100, 20000] [10000i64, 100, 20000] }
-- input { 3i64 200i64 130i64 } output { true true [1i64, 100, 20000] [10000i64, 100, 20000] }
-- input { 2i64 1i64 33i64 } output { true true [1i64, 0, 10000] [10000i64, 0, 10000] }

entry t3_check (g: i64) (n: i64) (m: i64) : (bool, bool, [3]i64, [3]i64) =
  let a = tabulate_3d g n m (\x i j -> x * 10000 + i * 100 + j)
  let inner = map transpose a
  let outer = transpose a
  let ok_inner = and (map (\x -> and (map2 (\j row -> and (map2 (\i v -> v == x * 10000 + i * 100 + j) (iota n) row)) (iota m) inner[x])) (iota g))
  let ok_outer = and (map (\i -> and (map2 (\x row -> and (map2 (\j v -> v == x * 10000 + i * 100 + j) (iota m) row)) (iota g) outer[i])) (iota n))
  let last_i = if n > 1 then 1 else 0
  in (ok_inner, ok_outer, [inner[0, 1, 0], inner[0, 0, last_i], inner[g - 1, 0, 0]],
      [outer[0, 1, 0], outer[last_i, 0, 0], outer[0, g - 1, 0]])
