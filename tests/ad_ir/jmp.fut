-- Forward mode with many tangents at once (language.md §10.10, §11.1): `jmp f x seeds` is
-- `map (jvp f x) seeds` computed with one primal evaluation, and `jmp2 f x seeds` also
-- returns `f x`. One entry per construct the forward transformation must handle (straight-line
-- primitives, tuples/records, integer tangents, if, for/while loops, in-place updates, map with
-- gathers, reduce/scan/reduce_by_index/scatter, reshaping and data movement, nesting of jmp
-- inside map, nested array results, full Jacobians), each along 1 to 4 seeds.
-- Expected values were computed outside runic: complex-step derivatives (h = 1e-30) in numpy
-- of a Python transcription of each function, cross-checked against central finite
-- differences; integer tangents (wrapping i32, §11.2) and the truncating tangent of a
-- float->int->float conversion (§11.3) were worked out by hand.
-- ==
-- tags { autodiff }
-- entry: scalar_ops
-- input { 0.7 } output { [6.90802987994, 3.45401493997, -13.8160597599] }
-- input { 3.0 } output { [17.7804192571, 8.89020962856, -35.5608385142] }

-- exp, log, sin, division, pow, min/max: at 0.7 only `f64.min x 1.0` selects x (its
-- tangent passes, times 2), at 3.0 only `f64.max x 2.0` does (times 1).
def scalar_fn (x: f64) : f64 =
  f64.exp (0.5 * x) * f64.log x + f64.sin x / x + x ** 2.5
  + f64.max x 2.0 * f64.min x 1.0 - 3.0 / (1.0 + x * x)

entry scalar_ops (x: f64) : [3]f64 = jmp scalar_fn x [1.0, 0.5, -2.0]

-- ==
-- entry: conversions
-- input { 1.5 4 } output { [7.0, 9.5, 31.5] }
-- input { -1.25 -3 } output { [-5.0, -7.25, -24.25] }

-- The i32 component's tangent is converted like the primal (f64.i32); the tangent of
-- `i32.f64 (x*x)` is `i32.f64 (2·x·dx)`, truncated towards zero (§11.3). Tangent:
-- dx·n + x·dn + 2·n·dn + trunc(2·x·dx). At (1.5, 4): 4+3, 1.5+8, 2+4.5+24+1.
-- At (-1.25, -3): -3-2, -1.25-6, -1.5-3.75-18-1.
def conv_fn ((x, n): (f64, i32)) : f64 =
  x * f64.i32 n + f64.i32 (n * n) + f64.i32 (i32.f64 (x * x))

entry conversions (x: f64) (n: i32) : [3]f64 =
  jmp conv_fn (x, n) [(1.0, 0), (0.0, 1), (0.5, 3)]

-- ==
-- entry: f32_one_seed
-- input { 0.8f32 } output { [0.0978044316f32] }

entry f32_one_seed (x: f32) : [1]f32 =
  jmp (\x -> f32.sqrt x * f32.cos x + f32.tanh (2 * x)) x [2.0]

-- ==
-- entry: tuple_io
-- input { 2.0 3.0 } output { [3.0, 1.0100075034, 4.0100075034] [0.333333333333, -0.222222222222,
--   0.111111111111] [12.0, 5.54517744448, 17.5451774445] }

-- Tuple parameter and tuple result (the array of tuple tangents is unzipped).
def tup_fn ((x, y): (f64, f64)) : (f64, f64, f64) = (x * y + f64.sin y, x / y, x ** y)

entry tuple_io (x: f64) (y: f64) =
  unzip3 (jmp tup_fn (x, y) [(1.0, 0.0), (0.0, 1.0), (1.0, 1.0)])

-- ==
-- entry: record_io
-- input { 1.5 -0.5 } output { [0.25, -1.5, -4.0] [7.38905609893, -7.38905609893, -7.38905609893] }

type ab = {a: f64, b: f64}
def rec_fn (p: ab) : {s: f64, t: f64} = {s = p.a * p.b * p.b, t = f64.exp (p.a - p.b)}

entry record_io (a: f64) (b: f64) =
  let rs = jmp rec_fn {a, b} [{a = 1, b = 0}, {a = 0, b = 1}, {a = 2, b = 3}]
  in (map (.s) rs, map (.t) rs)

-- ==
-- entry: int_wrap
-- input { 1000 [1, 2, 1000] } output { 1000007000 [3000007, 6000014, -1294960296] }
-- input { -3 [1, -1] } output { -48 [34, -34] }

-- Integer tangents follow the integer rules with wrap-around (§11.2):
-- d(n³ + 7n) = (3n² + 7)·dn; 3000007 · 1000 = 3000007000 wraps to 3000007000 − 2³² in i32.
entry int_wrap [k] (n: i32) (dns: [k]i32) : (i32, [k]i32) = jmp2 (\n -> n * n * n + 7 * n) n dns

-- ==
-- entry: branches
-- input { 2.0 } output { [0.0770037537314, -0.0385018768657] }
-- input { -1.0 } output { [-2.63212055883, 1.31606027941] }

-- Only the branch taken is differentiated (§11.4).
def branch_fn (x: f64) : f64 = if x > 0 then x * f64.sin x else f64.exp x - x * x * x

entry branches (x: f64) = jmp branch_fn x [1.0, -0.5]

-- ==
-- entry: for_loop
-- input { 0.5 4i64 } output { [18.2165094632, 36.4330189264] }

-- A for loop carrying two scalars, one of which reads the loop counter.
def for_fn (n: i64) (x: f64) : f64 =
  let (a, b) = loop (a, b) = (x, 1.0) for i < n do (a * b + f64.sin a, b * x + f64.i64 i)
  in a + b

entry for_loop (x: f64) (n: i64) = jmp (for_fn n) x [1.0, 2.0]

-- ==
-- entry: while_loop
-- input { 1.5 } output { 243.69140625 3i64 [965.875, 241.46875] [0i64, 0i64] }
-- input { 3.0 } output { 147.0 2i64 [169.0, 42.25] [0i64, 0i64] }

-- A while loop whose trip count depends on the primal; the i64 counter gets zero tangents.
entry while_loop (x: f64) =
  let ((y, k), ds) =
    jmp2 (\x -> loop (y, k) = (x, 0i64) while y < 100.0 do (y * y + x, k + 1)) x [1.0, 0.25]
  let (dy, dk) = unzip ds
  in (y, k, dy, dk)

-- ==
-- entry: loop_inplace
-- input { [1.0, 2.0, 3.0, 0.5] [[1.0, 0.0, 0.0, 0.0], [0.5, -1.0, 2.0, 1.0]] }
-- output { [[1.0, 3.0, 9.0, 4.5], [0.5, 0.5, 6.5, 16.25]] }

-- A loop carrying an array updated in place, also reading the (differentiated) input.
entry loop_inplace [n][k] (xs: [n]f64) (dxs: [k][n]f64) : [k][n]f64 =
  jmp (\xs -> loop ys = copy xs for i < n - 1 do ys with [i + 1] = ys[i] * ys[i + 1] + xs[i])
      xs dxs

-- ==
-- entry: map_poly
-- input { [1.0f32, -2.0, 0.5] [[1.0f32, 1.0, 1.0], [0.0f32, 2.0, -1.0]] }
-- output { [[7.0f32, 31.0f32, 3.5f32], [0.0f32, 62.0f32, -3.5f32]] }

-- d(2x³ − x² + 3x − 1) = (6x² − 2x + 3)·dx, in f32.
entry map_poly [n][k] (xs: [n]f32) (dxs: [k][n]f32) : [k][n]f32 =
  jmp (map (\x -> 2 * x * x * x - x * x + 3 * x - 1)) xs dxs

-- ==
-- entry: map_gather
-- input { [0.5, 1.0, -2.0, 3.0, 0.25] [[1.0, 0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 2.0, -1.0, 0.5]] }
-- output { [[0.87758256189, 0.0, -0.909297426826, 0.0, 0.0], [0.479425538604, 0.779435932797,
--   -0.416146836547, -1.69774497708, 0.244816032341]] }

-- A map over iota reading the differentiated array at computed indices.
entry map_gather [n][k] (xs: [n]f64) (dxs: [k][n]f64) : [k][n]f64 =
  jmp (\xs -> map (\i -> xs[(2 * i + 1) % n] * f64.sin xs[i]) (iota n)) xs dxs

-- ==
-- entry: reduce_sum_prod
-- input { [2.0, 3.0, 5.0] [[1.0, 1.0, 1.0], [0.0, 1.0, 0.0], [1.0, -1.0, 0.5]] }
-- output { [-1.12247714768, -0.9899924966, 0.715676752785] [31.0, 10.0, 8.0] }
-- input { [2.0, 0.0, 5.0] [[1.0, 1.0, 1.0], [0.0, 1.0, 0.0], [1.0, -1.0, 0.5]] }
-- output { [0.867515348916, 1.0, -1.27431574382] [10.0, 10.0, -10.0] }

-- reduce (+) and reduce (*); the product's tangent is exact with a zero element (§11.4).
entry reduce_sum_prod [n][k] (xs: [n]f64) (dxs: [k][n]f64) =
  unzip (jmp (\xs -> (reduce (+) 0 (map f64.sin xs), reduce (*) 1 xs)) xs dxs)

-- ==
-- entry: reduce_min_max
-- input { [3.0, -1.0, 7.0, 2.0] [[1.0, 2.0, 3.0, 4.0], [-1.0, 0.5, 0.0, 1.0]] }
-- output { [2.0, 0.5] [3.0, 0.0] }

-- The tangent of the extremum is the tangent of the element attaining it (index 1 and 2).
entry reduce_min_max [n][k] (xs: [n]f64) (dxs: [k][n]f64) =
  unzip (jmp (\xs -> (reduce f64.min f64.highest xs, reduce f64.max f64.lowest xs)) xs dxs)

-- ==
-- entry: reduce_tuple_op
-- input { [2.0, -1.0, 0.5] [1.0, 3.0, -2.0] [[1.0, 0.0, 0.0], [0.5, 1.0, -1.0]]
--         [[0.0, 0.0, 0.0], [1.0, -2.0, 0.25]] }
-- output { [-0.5, 2.75] [0.0, -2.75] }

-- A user-written associative operator on pairs (composition of affine maps x -> a·x + b).
def affine ((a1, b1): (f64, f64)) ((a2, b2): (f64, f64)) : (f64, f64) = (a1 * a2, b1 * a2 + b2)

entry reduce_tuple_op [n][k] (ps: [n]f64) (qs: [n]f64) (dps: [k][n]f64) (dqs: [k][n]f64) =
  unzip (jmp (\(ps, qs) -> reduce affine (1, 0) (zip ps qs)) (ps, qs) (zip dps dqs))

-- ==
-- entry: scan_add_mul
-- input { [2.0f32, -1.0, 0.5, 3.0] [[1.0f32, 0.0, 0.0, 0.0], [1.0f32, 2.0, -1.0, 0.5]] }
-- output { [4.0f32, 5.0f32, 5.25f32, 14.25f32] [2.0f32, -2.0f32, -1.0f32, -3.0f32] [[4.0f32,
--   4.0f32, 4.0f32, 4.0f32], [4.0f32, 0.0f32, -1.0f32, 2.0f32]] [[1.0f32, -1.0f32, -0.5f32,
--   -1.5f32], [1.0f32, 3.0f32, 3.5f32, 10.0f32]] }

-- scan (+) of squares and scan (*), with the primal from jmp2, in f32.
entry scan_add_mul [n][k] (xs: [n]f32) (dxs: [k][n]f32) =
  let ((s, p), ds) = jmp2 (\xs -> (scan (+) 0 (map (\x -> x * x) xs), scan (*) 1 xs)) xs dxs
  let (dss, dps) = unzip ds
  in (s, p, dss, dps)

-- ==
-- entry: hist_add
-- input { [0i64, 2, 0, 5, -1, 2] [1.0, 2.0, 3.0] [1.0, -2.0, 0.5, 4.0, 3.0, 1.5]
--         [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]
--         [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 2.0, 1.0, 1.0, -1.0]] }
-- output { [[1.0, 1.0, 1.0], [4.0, 0.0, -7.0]] }

-- reduce_by_index (+) of squares over (dest, values); indices 5 and -1 are out of bounds and
-- bin 1 receives nothing.
entry hist_add [n][m][k] (is: [n]i64) (dest: [m]f64) (vs: [n]f64)
                         (ddest: [k][m]f64) (dvs: [k][n]f64) =
  jmp (\(d, v) -> reduce_by_index (copy d) (+) 0 is (map (\x -> x * x) v))
      (dest, vs) (zip ddest dvs)

-- ==
-- entry: hist_mul_max
-- input { [1i64, 0, 1, 3, 1, 0] [2.0, 0.5, -1.0, 1.5] [3.0, -2.0, 0.0, 4.0, 1.5, 0.25]
--         [[1.0, 1.0, 1.0, 1.0], [0.5, -1.0, 2.0, 0.0]]
--         [[1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 0.0, 1.0, -1.0, 3.0, 4.0]] }
-- output { [[-4.0, 2.25, 1.0, 5.5], [-16.25, 2.25, 2.0, -1.5]] [[1.0, 1.0, 1.0, 1.0], [0.5, 2.0,
--   2.0, -1.0]] }

-- reduce_by_index with (*) (bin 1 holds a zero value, bin 2 is empty) and with f64.max
-- (the destination wins in bins 0 and 2).
entry hist_mul_max [n][m][k] (is: [n]i64) (dest: [m]f64) (vs: [n]f64)
                             (ddest: [k][m]f64) (dvs: [k][n]f64) =
  unzip (jmp (\(d, v) -> (reduce_by_index (copy d) (*) 1 is v,
                          reduce_by_index (copy d) f64.max f64.lowest is v))
             (dest, vs) (zip ddest dvs))

-- ==
-- entry: scatter_cube
-- input { [1.0, 2.0, 3.0, 4.0, 5.0] [3i64, 0, 7, 1] [2.0, -1.0, 0.5, 1.5]
--         [[1.0, 1.0, 1.0, 1.0, 1.0], [0.0, 2.0, 0.0, -1.0, 3.0]]
--         [[1.0, 1.0, 1.0, 1.0], [0.5, 2.0, 1.0, -1.0]] }
-- output { [[3.0, 6.75, 1.0, 12.0, 1.0], [6.0, -6.75, 0.0, 6.0, 3.0]] }

-- scatter of cubes with distinct indices (7 is out of bounds): the tangent is the scatter of
-- the tangents into the destination's tangent.
entry scatter_cube [n][m][k] (dest: [m]f64) (is: [n]i64) (vs: [n]f64)
                             (ddest: [k][m]f64) (dvs: [k][n]f64) =
  jmp (\(d, v) -> scatter (copy d) is (map (\x -> x * x * x) v)) (dest, vs) (zip ddest dvs)

-- ==
-- entry: slices_concat
-- input { [1.0, 2.0, -0.5, 0.25] [[1.0, 0.0, 0.0, 0.0], [0.5, 1.0, -1.0, 2.0]] }
-- output { [[0.0, 0.0, 0.0, 0.0, 0.0, 2.71828182846, 0.25, 0.25, 1.0, 1.0, 0.0, 4.0], [4.0, 1.0,
--   2.56805083338, -0.606530659713, 7.38905609893, 1.35914091423, 2.125, 2.125, 2.5, -1.5, 4.0,
--   3.0]] }

-- A slice xs[1:3], reverse, concat (++), replicate and iota-based indexing.
entry slices_concat [n][k] (xs: [n]f64) (dxs: [k][n]f64) =
  jmp (\xs -> let mid = map (\x -> x * x) xs[1:3]
              let rev = reverse (map f64.exp xs)
              let rep = replicate 2 (xs[0] * xs[n - 1])
              let idx = map (\i -> xs[n - 1 - i] * f64.i64 (i + 1) + xs[i / 2]) (iota n)
              in mid ++ rev ++ rep ++ idx) xs dxs

-- ==
-- entry: transpose_2d
-- input { [[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]]
--         [[[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]], [[0.5, 1.0, -1.0], [2.0, 0.0, 1.0]]] }
-- output { [[[2.0, 0.0], [2.0, 0.0], [3.0, 0.0]], [[1.0, -4.0], [2.0, 1.0], [0.5, 3.0]]] }

-- transpose of a 2-D parameter: result[j][i] = m[i][j] · m[i][0].
entry transpose_2d [r][c][k] (m: [r][c]f64) (dms: [k][r][c]f64) : [k][c][r]f64 =
  jmp (\m -> let t = transpose m in map (\row -> map2 (*) row t[0]) t) m dms

-- ==
-- entry: flatten_unflatten
-- input { [[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]]
--         [[[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]], [[0.5, 1.0, -1.0], [2.0, 0.0, 1.0]]] }
-- output { [[[2.0, 0.0, 0.0], [0.0, 0.0, 2.0]], [[2.0, 0.5, 7.0], [7.0, 0.5, 2.0]]] }

-- flatten, then elementwise product with its reverse, then unflatten back to 2-D.
entry flatten_unflatten [r][c][k] (m: [r][c]f64) (dms: [k][r][c]f64) : [k][r][c]f64 =
  jmp (\m -> let fl = flatten m in unflatten (map2 (*) fl (reverse fl))) m dms

-- ==
-- entry: zip_unzip
-- input { [1.0, 2.0, 0.5] [0.5, -1.0, 3.0] [[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]] [[0.0, 0.0, 0.0],
--   [-1.0, 2.0, 0.5]] }
-- output { [[0.0864197530864, 0.0, 0.0], [-0.16049382716, 0.387755102041, 1.83333333333]] }

entry zip_unzip [n][k] (xs: [n]f64) (ys: [n]f64) (dxs: [k][n]f64) (dys: [k][n]f64) : [k][n]f64 =
  jmp (\(xs, ys) -> let (p, q) = unzip (map2 (\x y -> (x * y, x - y)) xs ys)
                    in map (\(a, b) -> a / (b + 4)) (zip p q))
      (xs, ys) (zip dxs dys)

-- ==
-- entry: four_seeds
-- input { 0.6 -1.2 } output { [-0.725371100645, -0.141641064547, -0.867012165192, -1.30910113674] }

def radial ((x, y): (f64, f64)) : f64 = f64.sqrt (x * x + y * y) * f64.cos (x * y)

entry four_seeds (x: f64) (y: f64) : [4]f64 = jmp radial (x, y) [(1, 0), (0, 1), (1, 1), (2, -1)]

-- ==
-- entry: jmp_per_row
-- input { [[1.0, 2.0, -1.0], [0.5, 0.0, 3.0]] } output { [[26.0, 32.0], [41.0, 54.25]] }

-- One jmp per row of a map; the seeds depend on the row.
entry jmp_per_row [r][c] (rows: [r][c]f64) : [r][2]f64 =
  map (\row -> jmp (\v -> f64.sum (map (\x -> x * x * x) v) * v[0]) row [replicate c 1.0, row])
      rows

-- ==
-- entry: nested_result
-- input { [0.5, -1.0, 2.0] [[1.0, 0.0, 0.0], [0.5, 1.0, -2.0]] } output { [[[0.918216819549,
--   -0.841470984808, 0.909297426826], [-0.87758256189, 0.0, 0.0], [1.75516512378, 0.0, 0.0]],
--   [[0.459108409775, -0.15058433947, 0.87079554996], [0.040634257659, -1.38177329068,
--   0.0770037537314], [-0.081268515318, 2.76354658135, -0.154007507463]]] }

-- A function returning an array of arrays: result[i][j] = x[i] · sin x[j].
entry nested_result [n][k] (xs: [n]f64) (dxs: [k][n]f64) : [k][n][n]f64 =
  jmp (\xs -> map (\a -> map (\b -> a * f64.sin b) xs) xs) xs dxs

-- ==
-- entry: full_jacobian
-- input { [0.5, -1.0, 2.0] } output { [1.1487212707, -1.81606027941,
--   3.46301869964] [[0.6487212707, 0.5, 0.0], [0.0, 2.18393972059, -1.0], [2.0, 0.0,
--   2.96301869964]] }

-- Identity seeds give the Jacobian column by column; jmp2 also returns the primal.
def jac_fn [n] (xs: [n]f64) : [n]f64 =
  map (\i -> xs[i] * xs[(i + 1) % n] + f64.exp xs[i] / f64.i64 (i + 1)) (iota n)

entry full_jacobian [n] (xs: [n]f64) : ([n]f64, [n][n]f64) =
  let ids = tabulate n (\i -> tabulate n (\j -> f64.bool (i == j)))
  let (y, cols) = jmp2 jac_fn xs ids
  in (y, transpose cols)

-- A map whose tangent code reads only a free variable (no element of its input): the
-- tangent of x·2 + i is 2·dx for every i.
-- ==
-- entry: free_only_tangent
-- input { 2.0 3i64 [1.0, -1.0] } output { [[2.0, 2.0, 2.0], [-2.0, -2.0, -2.0]] }

entry free_only_tangent (x: f64) (n: i64) (seeds: []f64) =
  jmp (\x -> map (\i -> x * 2 + f64.i64 i) (iota n)) x seeds
