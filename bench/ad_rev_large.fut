-- The reverse-mode AD benchmarks of bench/ad_rev.fut at 10⁸ f32 elements per array, for a
-- subset of the operators (sum, product, min; scan with + and min; row-wise sums; histograms
-- with + and min at 31, 401 and 50000 bins). Each array takes 400 MB; a vjp entry holds the
-- input, the seed, the gradient and its tape at once, so plan for several GB of memory
-- (about 1.2 GB per input array). The definitions are copies of those in bench/ad_rev.fut
-- (runic has no `import` yet); keep the two files in step.

-- ==
-- entry: sum_primal sum_vjp prod_primal prod_vjp min_primal min_vjp
-- random input { [100000000]f32 f32 }

def near1 (x: f32) = 1 + (x - 0.5) * 1e-3

entry sum_primal (xs: []f32) (_s: f32) = reduce (+) 0 xs
entry sum_vjp (xs: []f32) (s: f32) = vjp2 (reduce (+) 0) xs s
entry prod_primal (xs: []f32) (_s: f32) = reduce (*) 1 (map near1 xs)
entry prod_vjp (xs: []f32) (s: f32) = vjp2 (\xs -> reduce (*) 1 (map near1 xs)) xs s
entry min_primal (xs: []f32) (_s: f32) = reduce f32.min f32.inf xs
entry min_vjp (xs: []f32) (s: f32) = vjp2 (reduce f32.min f32.inf) xs s

-- ==
-- entry: vecsum_reshape_primal vecsum_reshape_vjp
-- random input { 6250000i64 [100000000]f32 [16]f32 }

def colsums [n][m] (xss: [n][m]f32) : [m]f32 = reduce (map2 (+)) (replicate m 0) xss
def rows16 [n] (k: i64) (xs: [n]f32) : [k][16]f32 = unflatten (xs :> [k * 16]f32)
entry vecsum_reshape_primal [n] (k: i64) (xs: [n]f32) (_s: [16]f32) = colsums (rows16 k xs)
entry vecsum_reshape_vjp [n] (k: i64) (xs: [n]f32) (s: [16]f32) =
  vjp2 (\xs -> colsums (rows16 k xs)) xs s

-- ==
-- entry: scan_add_primal scan_add_vjp scan_min_primal scan_min_vjp
-- random input { [100000000]f32 [100000000]f32 }

entry scan_add_primal (xs: []f32) (_s: []f32) = scan (+) 0 xs
entry scan_add_vjp (xs: []f32) (s: []f32) = vjp2 (scan (+) 0) xs s
entry scan_min_primal (xs: []f32) (_s: []f32) = scan f32.min f32.inf xs
entry scan_min_vjp (xs: []f32) (s: []f32) = vjp2 (scan f32.min f32.inf) xs s

-- ==
-- entry: hist_add_primal hist_add_vjp hist_min_primal hist_min_vjp
-- random input { [31]f32 [100000000]u16 [100000000]f32 [31]f32 }
-- random input { [401]f32 [100000000]u16 [100000000]f32 [401]f32 }
-- random input { [50000]f32 [100000000]u16 [100000000]f32 [50000]f32 }

def bins [n] (k: i64) (is: [n]u16) : [n]i64 = map (\i -> i64.u16 i % k) is

entry hist_add_primal [k][n] (dest: [k]f32) (is: [n]u16) (xs: [n]f32) (_s: [k]f32) =
  reduce_by_index (copy dest) (+) 0 (bins k is) xs
entry hist_add_vjp [k][n] (dest: [k]f32) (is: [n]u16) (xs: [n]f32) (s: [k]f32) =
  let bs = bins k is
  in vjp2 (\(d, v) -> reduce_by_index (copy d) (+) 0 bs v) (dest, xs) s
entry hist_min_primal [k][n] (dest: [k]f32) (is: [n]u16) (xs: [n]f32) (_s: [k]f32) =
  reduce_by_index (copy dest) f32.min f32.inf (bins k is) xs
entry hist_min_vjp [k][n] (dest: [k]f32) (is: [n]u16) (xs: [n]f32) (s: [k]f32) =
  let bs = bins k is
  in vjp2 (\(d, v) -> reduce_by_index (copy d) f32.min f32.inf bs v) (dest, xs) s
