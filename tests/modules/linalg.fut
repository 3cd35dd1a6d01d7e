-- A parametric linear-algebra module applied to f64 and f32, imported from a vendored
-- package path; its gradient through vjp. Expected values computed by hand:
-- dot [1,2,3] [4,5,6] = 4+10+18 = 32; matvec [[1,2],[3,4]] [1,1] = [3,7];
-- matmul [[1,2],[3,4]] [[5,6],[7,8]] = [[19,22],[43,50]].
-- The gradient of f(v) = dot (matvec A v) (matvec A v) = |Av|^2 is 2 A^T A v:
-- A = [[1,2],[3,4]], v = [1,1]: Av = [3,7], A^T (Av) = [1*3+3*7, 2*3+4*7] = [24,34],
-- so the gradient is [48,68] (checked against finite differences below as well).

import "lib/github.com/runic-tests/linalg/linalg"

module la = mk_linalg f64
module la32 = mk_linalg f32

-- ==
-- entry: dot
-- input { [1.0, 2.0, 3.0] [4.0, 5.0, 6.0] } output { 32.0 }
entry dot (a: []f64) (b: []f64) = la.dot a b

-- ==
-- entry: matvec
-- input { [[1.0, 2.0], [3.0, 4.0]] [1.0, 1.0] } output { [3.0, 7.0] }
entry matvec (a: [][]f64) (v: []f64) = la.matvec a v

-- ==
-- entry: matmul
-- input { [[1f32, 2f32], [3f32, 4f32]] [[5f32, 6f32], [7f32, 8f32]] }
-- output { [[19f32, 22f32], [43f32, 50f32]] }
entry matmul (a: [][]f32) (b: [][]f32) = la32.matmul a b

def sqnorm_av [n] (a: [n][n]f64) (v: [n]f64) : f64 =
  let w = la.matvec a v in la.dot w w

-- ==
-- entry: grad
-- input { [[1.0, 2.0], [3.0, 4.0]] [1.0, 1.0] } output { [48.0, 68.0] }
entry grad [n] (a: [n][n]f64) (v: [n]f64) : [n]f64 = vjp (sqnorm_av a) v 1.0

-- Central finite differences of the same function, to compare with the gradient: the
-- function is quadratic, so they agree up to rounding.
-- ==
-- entry: grad_error
-- input { [[1.0, 2.0], [3.0, 4.0]] [1.0, 1.0] } output { true }
-- input { [[0.5, -1.0, 2.0], [1.5, 0.0, -2.0], [3.0, 1.0, 1.0]] [0.3, -0.7, 1.1] } output { true }
entry grad_error [n] (a: [n][n]f64) (v: [n]f64) : bool =
  let g = vjp (sqnorm_av a) v 1.0
  let h = 1e-4
  let fd = tabulate n (\i ->
             let vp = copy v with [i] = v[i] + h
             let vm = copy v with [i] = v[i] - h
             in (sqnorm_av a vp - sqnorm_av a vm) / (2 * h))
  in f64.maximum (map2 (\x y -> f64.abs (x - y)) g fd) < 1e-6

-- The module type hides nothing here (`with t = T.t`), so values of la.t are f64s.
-- ==
-- entry: scaled
-- input { 2.0 [1.0, -3.0] } output { [2.0, -6.0] }
entry scaled (k: la.t) (v: []f64) = la.scale k v
