-- Forward mode (jvp, jvp2) on the ir backend: one case per rule of the runic-ad forward
-- transformation. Expected values are worked out by hand (the derivation is in comments).
-- ==
-- tags { autodiff }
-- entry: poly_map
-- input { [1.0, 2.0, -1.5] [1.0, 0.5, 2.0] } output { [7.0, 17.0, 36.5] }

-- d(3x³ − 2x + 1) = (9x² − 2)·dx: 7·1, 34·0.5, 18.25·2.
entry poly_map (xs: []f64) (dxs: []f64) = jvp (map (\x -> 3 * x * x * x - 2 * x + 1)) xs dxs

-- ==
-- entry: dot
-- input { [1.0, 2.0, 3.0] [4.0, 5.0, 6.0] [1.0, 0.0, 1.0] [0.0, 1.0, 0.0] } output { 12.0 }

-- Σ(da·b + a·db) = 1·4 + 1·6 + 2·1.
entry dot (a: []f64) (b: []f64) (da: []f64) (db: []f64) =
  jvp (\(a, b) -> f64.sum (map2 (*) a b)) (a, b) (da, db)

-- ==
-- entry: prod
-- input { [2.0, 3.0, 5.0] [1.0, 1.0, 1.0] } output { 31.0 }
-- input { [2.0, 0.0, 5.0] [1.0, 1.0, 1.0] } output { 10.0 }

-- d(abc) = bc + ac + ab.
entry prod (xs: []f64) (dxs: []f64) = jvp (reduce (*) 1) xs dxs

-- ==
-- entry: maximum
-- input { [1.0, 7.0, 3.0] [1.0, 2.0, 3.0] } output { 2.0 }

entry maximum (xs: []f64) (dxs: []f64) = jvp (reduce f64.max f64.lowest) xs dxs

-- ==
-- entry: scan_mul
-- input { [2.0, 3.0, 4.0] [1.0, 0.0, 1.0] } output { [2.0, 6.0, 24.0] [1.0, 3.0, 18.0] }

-- Prefix products; tangents d(p·x) = dp·x + p·dx: 1, 1·3 + 2·0, 3·4 + 6·1.
entry scan_mul (xs: []f64) (dxs: []f64) = jvp2 (scan (*) 1) xs dxs

-- ==
-- entry: scan_pairs
-- input { [2.0, 3.0] [1.0, 1.0] [1.0, 0.0] } output { [1.0, 3.0] [0.0, 0.0] }

-- Composition of affine maps (a, b)∘(a', b') = (a·a', b·a' + b'): r₀ = (2, 1),
-- r₁ = (6, 4); tangents (1, 0) and (1·3 + 2·0, 0·3 + 1·0 + 0) = (3, 0).
entry scan_pairs (a: []f64) (b: []f64) (da: []f64) =
  let (x, y) = jvp (\a -> unzip (scan (\(x1, y1) (x2, y2) -> (x1 * x2, y1 * x2 + y2)) (1, 0) (zip a b)))
                   a da
  in (x, y)

-- ==
-- entry: hist_add
-- input { [0i64, 2i64, 0i64, 5i64] [1.0, 1.0, 1.0, 1.0] [1.0, 2.0, 3.0, 4.0] }
-- output { [4.0, 0.0, 2.0] }

-- Bin 0 sums the tangents 1 and 3, bin 2 gets 2, index 5 is out of range.
entry hist_add (is: []i64) (vs: []f64) (dvs: []f64) =
  jvp (\vs -> reduce_by_index (replicate 3 0) (+) 0 is vs) vs dvs

-- ==
-- entry: hist_mul
-- input { [1.0, 1.0] [0i64, 0i64, 1i64] [2.0, 3.0, 4.0] [1.0, 1.0, 1.0] [10.0, 0.0] }
-- output { [6.0, 4.0] [65.0, 1.0] }

-- Bin 0 is d·2·3 with d = 1: tangent 10·6 + 1·3 + 1·2 = 65. Bin 1 is d·4: 0·4 + 1·1 = 1.
entry hist_mul (dest: []f64) (is: []i64) (vs: []f64) (dvs: []f64) (dd: []f64) =
  jvp2 (\(d, vs) -> reduce_by_index (copy d) (*) 1 is vs) (dest, vs) (dd, dvs)

-- ==
-- entry: scatter_dup
-- input { [1.0, 2.0, 3.0] [0i64, 1i64, 0i64] [4.0, 5.0, 6.0] [10.0, 20.0, 30.0] [1.0, 2.0, 3.0] }
-- output { [3.0, 2.0, 30.0] }

-- Index 0 is written twice: the later position (value tangent 3) wins.
entry scatter_dup (dest: []f64) (is: []i64) (vs: []f64) (dd: []f64) (dv: []f64) =
  jvp (\(d, v) -> scatter (copy d) is v) (dest, vs) (dd, dv)

-- ==
-- entry: pow_loop
-- input { 2.0 5 } output { 80.0 }

-- d(x⁵) = 5x⁴.
def powi (x: f64) (n: i32) = loop acc = 1 for _i < n do acc * x
entry pow_loop (x: f64) (n: i32) = jvp (\x -> powi x n) x 1

-- ==
-- entry: while_loop
-- input { 1.5 } output { 136.6875 }

-- Three squarings: x⁸, derivative 8x⁷ = 8·17.0859375.
entry while_loop (x: f64) =
  jvp (\x -> (loop (y, i) = (x, 0) while i < 3 do (y * y, i + 1)).0) x 1

-- ==
-- entry: branch
-- input { 3.0 } output { 6.0 }
-- input { -2.0 } output { -1.0 }

entry branch (x: f64) = jvp (\x -> if x > 0 then x * x else -x) x 1

-- ==
-- entry: nested
-- input { 2.0 } output { 12.0 1.0 }

-- d/dx (d/dx x³) = 6x; d/dx (x · d/dy (x + y)) = 1 (no perturbation confusion).
def cube (y: f64) = y * y * y
entry nested (x: f64) =
  (jvp (\x -> jvp cube x 1) x 1, jvp (\x -> x * jvp (\y -> x + y) 3.0 1.0) x 1.0)

-- ==
-- entry: integers
-- input { 5 1500000000 } output { 75 -1294967296 }

-- d(x³) = 3x² = 75; 2·k wraps in i32.
def icube (x: i32) = x * x * x
entry integers (x: i32) (k: i32) = (jvp icube x 1, jvp (\a -> a * k) x 2)

-- ==
-- entry: booleans
-- input { 1.0 } output { false false }

entry booleans (x: f64) = (jvp (\b -> !b) false true, jvp f64.isinf x 1)

-- ==
-- entry: conversions
-- input { 2.5f32 } output { 1i64 1065353216u32 0i64 }

entry conversions (x: f32) =
  (jvp i64.f32 x 1.0, jvp f32.to_bits x 1.0, jvp (\x -> i64.f32 (f32.floor x)) x 1)

-- ==
-- entry: array_ops
-- input { [1.0, 2.0, 3.0] [1.0, 1.0, 1.0] }
-- output { [1.0, 1.0, 1.0, 2.0] [1.0, 4.0, 1.0] [0.0, 1.0, 2.0] [2.0, 2.0, 2.0, 2.0] }

-- reverse and ++ move tangents; xs with [1] = x₀·x₂ has tangent 1·3 + 1·1 at 1;
-- xs[i]·i has tangent i; replicate copies x₁'s tangent scaled by 2.
entry array_ops (xs: []f64) (dxs: []f64) =
  let n = length xs
  in ( jvp (\xs -> reverse xs ++ [xs[0] * 2]) xs dxs
     , jvp (\xs -> copy xs with [1] = xs[0] * xs[2]) xs dxs
     , jvp (\xs -> map (\i -> xs[i] * f64.i64 i) (iota n)) xs dxs
     , jvp (\xs -> replicate 4 (xs[1] * 2)) xs dxs )

-- ==
-- entry: transpose_flat
-- input { [[1.0, 2.0], [3.0, 4.0]] [[1.0, 2.0], [3.0, 4.0]] } output { [1.0, 3.0, 2.0, 4.0] }

entry transpose_flat (m: [][]f64) (dm: [][]f64) = jvp (\m -> flatten (transpose m)) m dm

-- ==
-- entry: free_in_map
-- input { [1.0, 2.0, 3.0] 2.0 } output { 6.0 }

-- d/dc Σ x·c = Σ x.
entry free_in_map (xs: []f64) (c: f64) = jvp (\c -> f64.sum (map (\x -> x * c) xs)) c 1

-- ==
-- entry: pairs
-- input { 2.0 3.0 } output { 27.0 27.0 3.0 1.0 }

entry pairs (a: f64) (b: f64) =
  let (y, dy) = jvp2 cube b 1
  let (p, s) = jvp (\(a, b) -> (a * b, a + b)) (a, b) (1, 0)
  in (y, dy, p, s)

-- ==
-- entry: ternary
-- input { 0.5 2.0 } output { 2.0 3.0 }

-- lerp 1 3 t has ∂t = 3 − 1; fma a 3 1 has ∂a = 3.
entry ternary (t: f64) (a: f64) = (jvp (\t -> f64.lerp 1.0 3.0 t) t 1, jvp (\a -> f64.fma a 3.0 1.0) a 1)

-- ==
-- entry: sum_sq
-- input { [1.0, 2.0, 3.0] } output { 28.0 }

-- d Σx² along xs itself: Σ 2x·x = 2·14 (the seed is the argument array).
entry sum_sq (xs: []f64) = jvp (\xs -> f64.sum (map (\x -> x * x) xs)) xs xs

-- ==
-- entry: bad_tangent
-- input { [1.0, 2.0] } error: Value of \(desugared\) shape \[1\] cannot match shape of type "\[2\]f64"
-- input { [1.0] } output { [2.0] }

entry bad_tangent (xs: []f64) = jvp (map (* 2)) xs [1.0]

-- ==
-- entry: bad_jmp_seeds
-- input { [1.0, 2.0] } error: Value of \(desugared\) shape \[1\]\[1\] cannot match shape of type "\[1\]\[2\]f64"

entry bad_jmp_seeds (xs: []f64) = jmp (map (* 2)) xs [[1.0]]

-- ==
-- entry: self_sized
-- input { [1.0, 2.0] [1.0, 1.0] } output { 3.0 1i64 2.0 0i64 }

-- `zip xs (iota (length xs))` gives `xs` the size term `length xs`, which mentions the
-- occurrence of `length` itself; both backends read that size from the argument.
entry self_sized (xs: []f64) (dxs: []f64) =
  let ((s, i), (ds, di)) =
    jvp2 (\xs -> reduce (\(a, i) (b, j) -> (a + b, i + j)) (0, 0i64) (zip xs (iota (length xs)))) xs dxs
  in (s, i, ds, di)
