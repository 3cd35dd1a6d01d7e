-- Reverse-mode AD overhead: each `*_vjp` entry computes the primal result and the
-- cotangent of its array input(s) (vjp2) for the same inputs as its `*_primal` entry; both
-- take the seed, so argument passing costs the same. 10⁷ f32 elements per array (see
-- bench/ad_rev_large.fut for 10⁸ and bench/README.md for how to run and compare with JAX).
--
-- Products run over values mapped close to 1 (near1) so that 10⁷ factors neither underflow
-- nor overflow; the map is part of both the primal and the differentiated function.
-- Row-wise ("vectorised") operators work on 625000 rows of m = 16 columns, either given as
-- a 2-D array or reshaped from the flat array with unflatten.
-- Histogram bins: the bin count is the length of the destination (31, 401 or 50000); the
-- u16 indices are mapped into range with `% bins` inside the program.

-- ==
-- entry: sum_primal sum_vjp prod_primal prod_vjp min_primal min_vjp
-- random input { [10000000]f32 f32 }

def near1 (x: f32) = 1 + (x - 0.5) * 1e-3

entry sum_primal (xs: []f32) (_s: f32) = reduce (+) 0 xs
entry sum_vjp (xs: []f32) (s: f32) = vjp2 (reduce (+) 0) xs s
entry prod_primal (xs: []f32) (_s: f32) = reduce (*) 1 (map near1 xs)
entry prod_vjp (xs: []f32) (s: f32) = vjp2 (\xs -> reduce (*) 1 (map near1 xs)) xs s
entry min_primal (xs: []f32) (_s: f32) = reduce f32.min f32.inf xs
entry min_vjp (xs: []f32) (s: f32) = vjp2 (reduce f32.min f32.inf) xs s

-- ==
-- entry: vecsum_primal vecsum_vjp
-- random input { [625000][16]f32 [16]f32 }

def colsums [n][m] (xss: [n][m]f32) : [m]f32 = reduce (map2 (+)) (replicate m 0) xss
entry vecsum_primal [n][m] (xss: [n][m]f32) (_s: [m]f32) = colsums xss
entry vecsum_vjp [n][m] (xss: [n][m]f32) (s: [m]f32) = vjp2 colsums xss s

-- ==
-- entry: vecsum_reshape_primal vecsum_reshape_vjp
-- random input { 625000i64 [10000000]f32 [16]f32 }

def rows16 [n] (k: i64) (xs: [n]f32) : [k][16]f32 = unflatten (xs :> [k * 16]f32)
entry vecsum_reshape_primal [n] (k: i64) (xs: [n]f32) (_s: [16]f32) = colsums (rows16 k xs)
entry vecsum_reshape_vjp [n] (k: i64) (xs: [n]f32) (s: [16]f32) =
  vjp2 (\xs -> colsums (rows16 k xs)) xs s

-- ==
-- entry: scan_add_primal scan_add_vjp scan_mul_primal scan_mul_vjp scan_min_primal scan_min_vjp
-- random input { [10000000]f32 [10000000]f32 }

entry scan_add_primal (xs: []f32) (_s: []f32) = scan (+) 0 xs
entry scan_add_vjp (xs: []f32) (s: []f32) = vjp2 (scan (+) 0) xs s
entry scan_mul_primal (xs: []f32) (_s: []f32) = scan (*) 1 (map near1 xs)
entry scan_mul_vjp (xs: []f32) (s: []f32) = vjp2 (\xs -> scan (*) 1 (map near1 xs)) xs s
entry scan_min_primal (xs: []f32) (_s: []f32) = scan f32.min f32.inf xs
entry scan_min_vjp (xs: []f32) (s: []f32) = vjp2 (scan f32.min f32.inf) xs s

-- ==
-- entry: vecscan_primal vecscan_vjp
-- random input { [625000][16]f32 [625000][16]f32 }

def rowscan [n][m] (xss: [n][m]f32) : [n][m]f32 = scan (map2 (+)) (replicate m 0) xss
entry vecscan_primal [n][m] (xss: [n][m]f32) (_s: [n][m]f32) = rowscan xss
entry vecscan_vjp [n][m] (xss: [n][m]f32) (s: [n][m]f32) = vjp2 rowscan xss s

-- ==
-- entry: hist_add_primal hist_add_vjp hist_mul_primal hist_mul_vjp hist_min_primal hist_min_vjp
-- random input { [31]f32 [10000000]u16 [10000000]f32 [31]f32 }
-- random input { [401]f32 [10000000]u16 [10000000]f32 [401]f32 }
-- random input { [50000]f32 [10000000]u16 [10000000]f32 [50000]f32 }

def bins [n] (k: i64) (is: [n]u16) : [n]i64 = map (\i -> i64.u16 i % k) is

entry hist_add_primal [k][n] (dest: [k]f32) (is: [n]u16) (xs: [n]f32) (_s: [k]f32) =
  reduce_by_index (copy dest) (+) 0 (bins k is) xs
entry hist_add_vjp [k][n] (dest: [k]f32) (is: [n]u16) (xs: [n]f32) (s: [k]f32) =
  let bs = bins k is
  in vjp2 (\(d, v) -> reduce_by_index (copy d) (+) 0 bs v) (dest, xs) s

entry hist_mul_primal [k][n] (dest: [k]f32) (is: [n]u16) (xs: [n]f32) (_s: [k]f32) =
  reduce_by_index (copy dest) (*) 1 (bins k is) (map near1 xs)
entry hist_mul_vjp [k][n] (dest: [k]f32) (is: [n]u16) (xs: [n]f32) (s: [k]f32) =
  let bs = bins k is
  in vjp2 (\(d, v) -> reduce_by_index (copy d) (*) 1 bs (map near1 v)) (dest, xs) s

entry hist_min_primal [k][n] (dest: [k]f32) (is: [n]u16) (xs: [n]f32) (_s: [k]f32) =
  reduce_by_index (copy dest) f32.min f32.inf (bins k is) xs
entry hist_min_vjp [k][n] (dest: [k]f32) (is: [n]u16) (xs: [n]f32) (s: [k]f32) =
  let bs = bins k is
  in vjp2 (\(d, v) -> reduce_by_index (copy d) f32.min f32.inf bs v) (dest, xs) s

-- ==
-- entry: vechist_primal vechist_vjp
-- random input { [31][16]f32 [625000]u16 [625000][16]f32 [31][16]f32 }
-- random input { [401][16]f32 [625000]u16 [625000][16]f32 [401][16]f32 }
-- random input { [50000][16]f32 [625000]u16 [625000][16]f32 [50000][16]f32 }

def rowhist [k][n][m] (dest: [k][m]f32) (bs: [n]i64) (vss: [n][m]f32) : [k][m]f32 =
  reduce_by_index (copy dest) (map2 (+)) (replicate m 0) bs vss
entry vechist_primal [k][n][m] (dest: [k][m]f32) (is: [n]u16) (vss: [n][m]f32) (_s: [k][m]f32) =
  rowhist dest (bins k is) vss
entry vechist_vjp [k][n][m] (dest: [k][m]f32) (is: [n]u16) (vss: [n][m]f32) (s: [k][m]f32) =
  let bs = bins k is
  in vjp2 (\(d, v) -> rowhist d bs v) (dest, vss) s

-- A map that reads a free array at computed indices: its adjoint goes through an
-- accumulator (10⁷ reads of a 10⁶-element table).
-- ==
-- entry: gather_primal gather_vjp
-- random input { [1000000]f32 [10000000]u32 [10000000]f32 }

def gather [m][n] (tbl: [m]f32) (is: [n]u32) : [n]f32 =
  map (\i -> tbl[i64.u32 i % m] * 2) is
entry gather_primal [m][n] (tbl: [m]f32) (is: [n]u32) (_s: [n]f32) = gather tbl is
entry gather_vjp [m][n] (tbl: [m]f32) (is: [n]u32) (s: [n]f32) = vjp2 (\t -> gather t is) tbl s
