-- Reverse mode on integer code (§11.2: integer arithmetic with wrap-around, in i32, i64 and
-- u8) through reduce, scan, reduce_by_index, scatter and loops, and programs mixing
-- parameter kinds: array and scalar parameters, tuples of scalars and arrays as input and
-- output, records, booleans and integer components in tuples, float↔int conversions.
-- Expected values: exact integer arithmetic modulo 2^bits in Python and finite differences
-- / closed forms in tests/ad_rev/oracle.py (section integers).
-- ==
-- tags { autodiff }
-- entry: int_prod
-- input { [100000, 100000, 3] } output { [300000, 300000, 1410065408] }

-- ∂/∂x_2 = 10¹⁰, which wraps to 1410065408 in i32.
entry int_prod (xs: []i32) = vjp i32.product xs 1

-- ==
-- entry: int_scan
-- input { [5i64, -3, 7, 2] [1i64, 2, 3, 4] } output { [10i64, 9i64, 7i64, 4i64] }

-- Suffix sums of the seed, in i64.
entry int_scan (xs: []i64) (s: []i64) = vjp (scan (+) 0) xs s

-- ==
-- entry: int_pow
-- input { 7 13 } output { -1895237401 -451892819 }

-- x^y by repeated multiplication in i32: the primal 7¹³ and derivative 13·7¹² both wrap.
entry int_pow (x: i32) (y: i32) = vjp2 (\x -> loop acc = 1 for _i < y do acc * x) x 1

-- ==
-- entry: u8_wrap
-- input { 100u8 } output { 88u8 }

-- 3x² in u8 has derivative 6x = 600 ≡ 88 (mod 256).
entry u8_wrap (x: u8) = vjp (\x -> x * x * 3) x 1

-- ==
-- entry: int_rbi_mul
-- input { [3i64, 2] [0i64, 0, 1, 5] [4000000007i64, 3000000019, 4, 7] }
-- output { [-893487856419102833i64, 8] [-6446743976709551483i64, 4] [9000000057i64, 12000000021, 2, 0] }

-- Multiplicative bins in i64 whose primal and cotangents overflow and wrap.
entry int_rbi_mul (dest: []i64) (is: []i64) (vs: []i64) =
  let (r, (gd, gv)) = vjp2 (\(d, v) -> reduce_by_index (copy d) (*) 1 is v) (dest, vs) [1, 1]
  in (r, gd, gv)

-- ==
-- entry: int_scatter
-- input { [1i32, 2, 3] [2i64, 2, 0] [7i32, 8, 9] [10i32, 20, 30] } output { [0i32, 20, 0] [0i32, 30, 10] }

-- Integer scatter: the later duplicate (j = 1) wins position 2.
entry int_scatter (dest: []i32) (is: []i64) (vs: []i32) (s: []i32) =
  vjp (\(d, v) -> scatter (copy d) is v) (dest, vs) s

-- ==
-- entry: tuple_io
-- input { 1.5 [1.0, -2.0, 4.0] 2.0 [1.0, 0.5, -1.0] } output { 2.0 [4.5, 3.75, 1.5] }

-- (x, ys) ↦ (x·Σy, x·ys): x gets s1·Σy + Σ s2·y, each y gets (s1 + s2_i)·x.
entry tuple_io (x: f64) (ys: []f64) (s1: f64) (s2: []f64) =
  vjp (\(x, ys) -> (x * f64.sum ys, map (* x) ys)) (x, ys) (s1, s2)

-- ==
-- entry: linreg
-- input { [[1.0, 2.0], [0.5, -1.0], [3.0, 0.0]] [1.0, 0.0, 2.0] [0.25, -0.5] 0.1 } output { [-9.475, -8.05] -4.15 }

-- Least squares Σ(w·x_i + b − y_i)² with the parameters in a record {w, b}; the data are free.
type model [m] = {w: [m]f64, b: f64}
def loss [n][m] (xs: [n][m]f64) (ys: [n]f64) (p: model [m]) =
  f64.sum (map2 (\x y -> let r = f64.sum (map2 (*) p.w x) + p.b - y in r * r) xs ys)
entry linreg [n][m] (xs: [n][m]f64) (ys: [n]f64) (w: [m]f64) (b: f64) =
  let g = vjp (loss xs ys) {w, b} 1
  in (g.w, g.b)

-- ==
-- entry: bool_and_int_parts
-- input { true 3.0 4i32 } output { false 6.0 8i32 3.0 }
-- input { false 3.0 -5i32 } output { false 1.0 -10i32 3.0 }

-- A bool input used only in a condition gets false and k (multiplied by 0) gets 0, so the
-- first output is false; an i32 output k² gives k the cotangent 2k; the cotangent
-- of i32.f64 (3y) is converted back to f64: 1 → 3.0.
entry bool_and_int_parts (b: bool) (x: f64) (k: i32) =
  let (db, dx, dk) = vjp (\(b, x, k) -> (if b then x * x else x) + f64.i32 (k * k) * 0) (b, x, k) 1
  let (_, dk2) = vjp (\(x, k) -> (x * x, k * k)) (x, k) (0, 1)
  let dy = vjp (\y -> i32.f64 (y * 3)) x 1
  in (db || dk != 0, dx, dk2, dy)

-- ==
-- entry: float_of_int
-- input { [1.0, 2.0, 3.0] 4i64 } output { [4.0, 4.0, 4.0] 6i64 }

-- Σ x·f64.i64 k: the i64 parameter receives the f64 cotangent Σx = 6 converted back to i64
-- (integral values, so it does not matter whether it is converted per element or once).
entry float_of_int (xs: []f64) (k: i64) = vjp (\(xs, k) -> f64.sum (map (\x -> x * f64.i64 k) xs)) (xs, k) 1
