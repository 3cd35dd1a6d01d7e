-- Reverse mode through reduce_by_index and hist: +, *, min, max, a scalar user operator
-- ((1+a)(1+b) − 1), a nonlinear user operator (log-add-exp), negative and too-large
-- indices, duplicate indices, non-neutral destination values and their cotangents, empty
-- bins, indices computed from the data, integer index cotangents, and vectorised operators
-- over rows (map2 (+), map2 (*)). Complements tests/ad/soacs_scan_hist.fut and extra.fut.
-- Expected values: per-bin closed forms by hand (comments) and central finite differences
-- of `dest[b] op (ne op v1 op ... op vk)` in tests/ad_rev/oracle.py (section hist).
-- ==
-- tags { autodiff }
-- entry: rbi_add
-- input { [1.0, 2.0, 3.0] [0i64, 2, 2, -1, 3, 7, 0] [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0] [10.0, 20.0, 30.0] }
-- output { [9.0, 2.0, 8.0] [10.0, 20.0, 30.0] [10.0, 30.0, 30.0, 0.0, 0.0, 0.0, 10.0] }

-- Out-of-range (−1, 3, 7) values get 0; dest gets the seed unchanged; duplicates each get
-- their bin's seed.
entry rbi_add (dest: []f64) (is: []i64) (vs: []f64) (s: []f64) =
  let (r, (gd, gv)) = vjp2 (\(d, v) -> reduce_by_index (copy d) (+) 0 is v) (dest, vs) s
  in (r, gd, gv)

-- ==
-- entry: rbi_add_ints
-- input { [1.0, 2.0] [1i64, 0, 1] [1.0, 2.0, 3.0] [5.0, 7.0] } output { [0i64, 0, 0] [7.0, 5.0, 7.0] }

-- The index argument is an integer input: it receives an all-zero cotangent.
entry rbi_add_ints (dest: []f64) (is: []i64) (vs: []f64) (s: []f64) =
  vjp (\(is, v) -> reduce_by_index (copy dest) (+) 0 is v) (is, vs) s

-- ==
-- entry: rbi_mul
-- input { [2.0, 0.0, 3.0, 1.0] [0i64, 0, 1, 2, 2, 5] [3.0, 0.0, 4.0, 5.0, 0.5, 9.0] [1.0, 1.0, 1.0, 2.0] }
-- output { [0.0, 0.0, 7.5, 1.0] [0.0, 4.0, 2.5, 2.0] [0.0, 6.0, 0.0, 1.5, 15.0, 0.0] }

-- Bin 0: 2·3·0 (a zero value), bin 1: 0·4 (a zero destination), bin 2: 3·5·0.5, bin 3
-- empty (its destination gets the seed 2), index 5 out of range.
entry rbi_mul (dest: []f64) (is: []i64) (vs: []f64) (s: []f64) =
  let (r, (gd, gv)) = vjp2 (\(d, v) -> reduce_by_index (copy d) (*) 1 is v) (dest, vs) s
  in (r, gd, gv)

-- ==
-- entry: rbi_min
-- input { [1.0, 5.0, 3.0] [0i64, 1, 1, 2, 2] [1.0, 2.0, 2.0, 4.0, 0.0] [1.0, 2.0, 3.0] }
-- output { [1.0, 0.0, 0.0] [0.0, 2.0, 0.0, 0.0, 3.0] }

-- Bin 0: value 1 ties with dest 1 → dest wins; bin 1: tie 2, 2 → the lower index (1);
-- bin 2: 0 < 3 → index 4.
entry rbi_min (dest: []f64) (is: []i64) (vs: []f64) (s: []f64) =
  vjp (\(d, v) -> reduce_by_index (copy d) f64.min f64.inf is v) (dest, vs) s

-- ==
-- entry: hist_max
-- input { [2i64, -1, 2, 0] [1f32, 9, 3, 3] [1f32, 1, 2] }
-- output { [3f32, -f32.inf, 3] [0f32, 0, 2, 1] }

-- hist starts from ne = −inf: bin 1 stays −inf (nothing to differentiate), index −1 ignored.
entry hist_max (is: []i64) (vs: []f32) (s: []f32) = vjp2 (hist f32.max f32.lowest 3 is) vs s

-- ==
-- entry: rbi_user
-- input { [0.5, -2.0, 1.0] [1i64, 0, 1, 3, 0, -1] [1.0, 0.5, -0.5, 4.0, 2.0, 7.0] [1.0, 2.0, -1.0] }
-- output { [5.75, -2.0, 1.0] [4.5, 2.0, -1.0] [-1.0, 4.5, -4.0, 0.0, 2.25, 0.0] }

-- a*b + a + b: bin b becomes (1+dest)·Π(1+v) − 1; bin 2 is empty, its dest gets the seed.
entry rbi_user (dest: []f64) (is: []i64) (vs: []f64) (s: []f64) =
  let (r, (gd, gv)) = vjp2 (\(d, v) -> reduce_by_index (copy d) (\a b -> a * b + a + b) 0 is v) (dest, vs) s
  in (r, gd, gv)

-- ==
-- entry: rbi_logaddexp
-- input { [0.0, 1.0] [0i64, 1, 0, 0, 2] [1.0, -1.0, 2.0, 0.5, 3.0] [1.0, 2.0] }
-- output { [2.546006, 1.126928] [0.078394, 1.761594] [0.213097, 0.238406, 0.579259, 0.12925, 0.0] }

-- log(eᵃ + eᵇ), neutral −inf: the cotangent of each term is the seed times its softmax weight.
def logaddexp (a: f64) (b: f64) = f64.log (f64.exp a + f64.exp b)
entry rbi_logaddexp (dest: []f64) (is: []i64) (vs: []f64) (s: []f64) =
  let (r, (gd, gv)) = vjp2 (\(d, v) -> reduce_by_index (copy d) logaddexp (-f64.inf) is v) (dest, vs) s
  in (r, gd, gv)

-- ==
-- entry: hist_data_bins
-- input { [0.5, 2.5, 1.25, 1.75, 3.5] [1.0, 10.0, 100.0] } output { [0.75, 1875.0, 46.875, 91.875, 0.0] }

-- Bins computed from the data (floor); the weights x³ give 3x²·seed[bin]; 3.5 is out of range.
entry hist_data_bins (xs: []f64) (s: []f64) =
  vjp (\xs -> hist (+) 0 3 (map (\x -> i64.f64 x) xs) (map (\x -> x * x * x) xs)) xs s

-- ==
-- entry: rbi_vec_add
-- input { [[1.0, 2.0], [3.0, 4.0]] [1i64, -3, 0, 1, 2] [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0], [5.0, 5.0]] [[1.0, -1.0], [0.5, 2.0]] }
-- output { [[4.0, 5.0], [8.0, 9.0]] [[1.0, -1.0], [0.5, 2.0]] [[0.5, 2.0], [0.0, 0.0], [1.0, -1.0], [0.5, 2.0], [0.0, 0.0]] }

-- Whole rows as bins: each value row gets its bin's seed row, out-of-range rows get zeros.
entry rbi_vec_add [k][m] (dest: [k][m]f64) (is: []i64) (vss: [][m]f64) (s: [k][m]f64) =
  let (r, (gd, gv)) = vjp2 (\(d, v) -> reduce_by_index (copy d) (map2 (+)) (replicate m 0) is v) (dest, vss) s
  in (r, gd, gv)

-- ==
-- entry: rbi_vec_mul
-- input { [[1.0, 2.0], [0.5, -1.0]] [1i64, 0, 1, 2, 1] [[2.0, 3.0], [4.0, 0.0], [-1.0, 0.5], [9.0, 9.0], [3.0, 2.0]] [[1.0, 1.0], [1.0, 2.0]] }
-- output { [[4.0, 0.0], [-3.0, -3.0]] [[4.0, 0.0], [-6.0, 6.0]] [[-1.5, -2.0], [1.0, 2.0], [3.0, -12.0], [0.0, 0.0], [-1.0, -3.0]] }

-- Element-wise products of rows per bin, with a zero in bin 0's column 1.
entry rbi_vec_mul [k][m] (dest: [k][m]f64) (is: []i64) (vss: [][m]f64) (s: [k][m]f64) =
  let (r, (gd, gv)) = vjp2 (\(d, v) -> reduce_by_index (copy d) (map2 (*)) (replicate m 1) is v) (dest, vss) s
  in (r, gd, gv)

-- ==
-- entry: big_hist
-- input { 1000i64 } output { 3998.008 11.988 }

-- x_i = i/1000 squared into bin i mod 7, seed of bin b is b+1: the gradient is
-- 2·x_i·(i mod 7 + 1); Σ = 3998.008, last element 2·0.999·6.
entry big_hist (n: i64) =
  let xs = map (\i -> f64.i64 i * 0.001) (iota n)
  let g = vjp (\xs -> hist (+) 0 7 (map (% 7) (iota n)) (map (\x -> x * x) xs)) xs (map (\b -> f64.i64 (b + 1)) (iota 7))
  in (f64.sum g, g[n - 1])

-- ==
-- entry: rbi_vec_max
-- input { [[1.0, 5.0], [0.0, 0.0]] [0i64, 0, 1] [[1.0, 2.0], [0.0, 5.0], [3.0, 0.0]] [[1.0, 2.0], [3.0, 4.0]] }
-- output { [[1.0, 2.0], [0.0, 4.0]] [[0.0, 0.0], [0.0, 0.0], [3.0, 0.0]] }

-- Row-wise max into bins: element ties with the destination (1 vs 1, 5 vs 5, 0 vs 0) go to
-- the destination; only value row 2, column 0 (3 > 0) beats its destination.
entry rbi_vec_max [k][m] (dest: [k][m]f64) (is: []i64) (vss: [][m]f64) (s: [k][m]f64) =
  vjp (\(d, v) -> reduce_by_index (copy d) (map2 f64.max) (replicate m f64.lowest) is v) (dest, vss) s
