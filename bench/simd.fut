-- Elementwise math that runs in SIMD lanes (runic-jit `simd.rs`; see docs/PERFORMANCE.md,
-- "SIMD"). Compare `RUNIC_SIMD=0` (the scalar kernels, `exp`/`log`/`tanh` through
-- runic_prim one element at a time) with the default in the same session.
-- ==
-- entry: sigmoid_f32 tanh_f32 exp_f32 log_f32 lstm_cell_f32 sum_sigmoid_f32
-- random input { [10000000]f32 }

entry sigmoid_f32 (xs: []f32) = map (\x -> 1 / (1 + f32.exp (-x))) xs
entry tanh_f32 (xs: []f32) = map f32.tanh xs
entry exp_f32 (xs: []f32) = map f32.exp xs
entry log_f32 (xs: []f32) = map (\x -> f32.log (f32.abs x + 1)) xs
entry lstm_cell_f32 (xs: []f32) =
  map (\x -> let s = 1 / (1 + f32.exp (-x)) in s * f32.tanh (x * 0.5) + f32.max x 0) xs
entry sum_sigmoid_f32 (xs: []f32) = f32.sum (map (\x -> 1 / (1 + f32.exp (-x))) xs)

-- The same over f64 (2 lanes), and the LSTM's gate shape: a map over rows of a map.
-- ==
-- entry: exp_f64 log_f64 sum_exp_f64
-- random input { [10000000]f64 }

entry exp_f64 (xs: []f64) = map f64.exp xs
entry log_f64 (xs: []f64) = map (\x -> f64.log (f64.abs x + 1)) xs
entry sum_exp_f64 (xs: []f64) = f64.sum (map (\x -> f64.exp (-x * x)) xs)

-- ==
-- entry: gates_rows
-- random input { [1024][192]f32 [1024][192]f32 [1024][192]f32 }

entry gates_rows (a: [][]f32) (b: [][]f32) (c: [][]f32) =
  map3 (map3 (\i f g -> 1 / (1 + f32.exp (-f)) * g + 1 / (1 + f32.exp (-i)) * f32.tanh g)) a b c

-- A row's own scalars used by a map over the row: an exp (`row_exp`) or a layer norm's
-- `1 / sqrt(var + eps)` (`row_norm`) must be computed once per row, not once per element
-- (compare `row_plain`, whose scalar is one addition). And the adjoint of a
-- matrix-vector product, `xᵀ·δ`: a column reduction whose steps read `δ[i]` once per
-- row, in SIMD lanes along the row.
-- ==
-- entry: row_exp row_norm row_plain xt_delta
-- random input { [8192][256]f64 [8192]f64 }

entry row_exp (x: [][]f64) (v: []f64) = map2 (\r a -> let e = f64.exp (-a) in map (* e) r) x v
entry row_norm (x: [][]f64) (v: []f64) =
  map2 (\r a -> let s = 1 / f64.sqrt (a * a + 1e-5) in map (* s) r) x v
entry row_plain (x: [][]f64) (v: []f64) = map2 (\r a -> let s = a + 1 in map (* s) r) x v
entry xt_delta [m] [n] (x: [m][n]f64) (v: [m]f64) : [n]f64 =
  map (\j -> f64.sum (map (\i -> v[i] * x[i, j]) (iota m))) (iota n)

-- Maps over rows whose bodies map along the rows: the per-example outer products of a
-- batched gradient (`[1024][10][784]`, 32 MB written) and a ReLU mask of two matrices.
-- The inner loops step through rows whose addresses the kernel computed once per row
-- (compare `flat_scale`, one level of rows).
-- ==
-- entry: outer_products relu_mask flat_scale
-- random input { [1024][784]f32 [10][784]f32 }

entry outer_products [n] [d] [c] (xs: [n][d]f32) (w: [c][d]f32) : [n][c][d]f32 =
  map (\x -> map (\wr -> map2 (*) wr x) w) xs
entry relu_mask [n] [d] [c] (xs: [n][d]f32) (_w: [c][d]f32) : [n][d]f32 =
  map2 (map2 (\a h -> a * (if h == 0 then 0 else 1))) xs (map (map (f32.max 0)) xs)
entry flat_scale [n] [d] [c] (xs: [n][d]f32) (_w: [c][d]f32) : [n][d]f32 =
  map (map (* 2)) xs

-- Products that are not matrix products (no GEMM), with a fixed inner size: a max-plus
-- product and a squared distance to every column of a matrix (`w`'s 256 columns, 10 rows),
-- per row of `xs`. Each is a map over rows whose elements reduce down a column of `w`
-- (`w[l, j]` for `l` in `iota 10`), run with the loops swapped. Sizes known when the
-- program is compiled let the optimiser hoist both `iota`s out of the rows' lambda; the
-- kernel loops over them with its counters, in SIMD lanes, as over ones it made itself.
-- ==
-- entry: max_plus sq_dists
-- random input { [1024][10]f32 [10][256]f32 }

entry max_plus [n] (xs: [n][10]f32) (w: [10][256]f32) : [n][256]f32 =
  map (\x -> map (\j -> f32.maximum (map (\l -> x[l] + w[l, j]) (iota 10))) (iota 256)) xs
entry sq_dists [n] (xs: [n][10]f32) (w: [10][256]f32) : [n][256]f32 =
  map (\x -> map (\j -> f32.sum (map (\l -> let d = x[l] - w[l, j] in d * d) (iota 10)))
                 (iota 256)) xs
