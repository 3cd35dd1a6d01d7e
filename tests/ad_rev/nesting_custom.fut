-- Custom derivatives (with_vjp) inside larger programs (inside map, a loop, around an
-- array function), full Jacobians of small vector functions with mjp/mjp2, and nested
-- differentiation on SOAC programs: vjp of vjp and jvp of vjp (Hessian-vector products)
-- through map/reduce, product reduce with a zero, and a multiplicative histogram, plus an
-- outer vjp w.r.t. a variable captured by an inner vjp.
-- Expected values: closed forms (comments) checked in tests/ad_rev/oracle.py (section
-- nesting), Hessians both analytically and by finite differences of the gradient.
-- ==
-- tags { autodiff }
-- entry: clip_in_map
-- input { [1.0, -2.0, 0.5] } output { [2.0, -4.0, 1.0] }

-- An identity whose cotangent is clipped to [−1, 1]: 5·clip(x²) gets cotangent 5 → 1, so
-- the gradient is 2x instead of 10x.
def clip (x: f64) = with_vjp (\x -> x) (\_ dy -> f64.max (-1) (f64.min 1 dy)) x
entry clip_in_map (xs: []f64) = vjp (\xs -> f64.sum (map (\x -> 5 * clip (x * x)) xs)) xs 1

-- ==
-- entry: custom_in_loop
-- input { 1.5 } output { 136.6875 }
-- input { -1.5 } output { 136.6875 }

-- Squaring three times with the custom cotangent 2·√y·dy (= 2|x|·dy): x⁸ has derivative
-- 8x⁷ = ±136.6875; at −1.5 the custom rule gives 2·1.5 instead of −3 at the first step, so
-- the result is +136.6875 (the true derivative would be negative).
def sq (x: f64) = with_vjp (\x -> x * x) (\y dy -> dy * 2 * f64.sqrt y) x
entry custom_in_loop (x: f64) = vjp (\x -> loop x for _i < 3 do sq x) x 1

-- ==
-- entry: custom_norm
-- input { [1.0, 2.0] } output { 4.472136 [4.0, 8.0] }

-- A norm whose custom derivative deliberately omits the division by the norm: the
-- cotangent of v is dr·v, so for v = 2·xs the gradient is 4·xs (the true one is 4·xs/‖v‖).
def odd_norm [n] (v: [n]f64) : f64 =
  with_vjp (\v -> f64.sqrt (f64.sum (map (\x -> x * x) v))) (\_ dr -> map (\x -> dr * x) v) v
entry custom_norm (xs: []f64) = vjp2 (\xs -> odd_norm (map (* 2) xs)) xs 1

-- ==
-- entry: softmax_jac
-- input { [1.0, 2.0, 3.0] }
-- output { [0.090031, 0.244728, 0.665241]
--          [[0.081925, -0.022033, -0.059892], [-0.022033, 0.184836, -0.162803], [-0.059892, -0.162803, 0.222695]] }

-- The Jacobian of softmax is diag(p) − p·pᵀ; mjp2 with the identity gives its rows.
def softmax [n] (xs: [n]f64) : [n]f64 =
  let m = f64.maximum xs
  let es = map (\x -> f64.exp (x - m)) xs
  let t = f64.sum es
  in map (/ t) es
entry softmax_jac [n] (xs: [n]f64) =
  mjp2 softmax xs (tabulate n (\i -> tabulate n (\j -> f64.bool (i == j))))

-- ==
-- entry: scan_jac
-- input { [2.0, 3.0, 0.5] } output { [[1.0, 0.0, 0.0], [3.0, 2.0, 0.0], [1.5, 1.0, 6.0]] }

-- Rows of the Jacobian of the prefix products: ∂p_i/∂x_j = p_i / x_j for j ≤ i.
entry scan_jac [n] (xs: [n]f64) = mjp (scan (*) 1) xs (tabulate n (\i -> tabulate n (\j -> f64.bool (i == j))))

-- ==
-- entry: hist_jac
-- input { [1.0, 2.0, 3.0] } output { [[0.0, 2.0, 0.0], [2.0, 0.0, 2.0]] }

-- hist (+) 0 2 [1, 0, 1] (2·vs) is linear: its Jacobian is 2 at (bin, value) pairs.
entry hist_jac (vs: []f64) = mjp (\vs -> hist (+) 0 2 [1, 0, 1] (map (* 2) vs)) vs [[1, 0], [0, 1]]

-- ==
-- entry: hvp_rev_rev hvp_fwd_rev
-- input { [1.0, -2.0, 0.5] [1.0, 0.5, -1.0] } output { [6.75, 17.25, 10.125] }

-- f = (Σx³)(Σx): H_ij = 6·x_i·Σx·δ_ij + 3x_i² + 3x_j²; both nestings give H·v.
def cubes_times_sum (xs: []f64) = f64.sum (map (\x -> x * x * x) xs) * f64.sum xs
def grad_cts (xs: []f64) = vjp cubes_times_sum xs 1
entry hvp_rev_rev [n] (xs: [n]f64) (v: [n]f64) = vjp grad_cts xs v
entry hvp_fwd_rev [n] (xs: [n]f64) (v: [n]f64) = jvp grad_cts xs v

-- ==
-- entry: prod_hvp prod_hvp_fwd
-- input { [2.0, 0.0, 3.0] } output { [3.0, 5.0, 2.0] }

-- Hessian of a product with a zero: H_ij = Π_{k≠i,j} x_k off the diagonal, 0 on it;
-- H·1 = [3, 3 + 2, 2].
def grad_prod (xs: []f64) = vjp (reduce (*) 1) xs 1
entry prod_hvp [n] (xs: [n]f64) = vjp grad_prod xs (replicate n 1)
entry prod_hvp_fwd [n] (xs: [n]f64) = jvp grad_prod xs (replicate n 1)

-- ==
-- entry: hist_hvp
-- input { [2.0, 5.0, 3.0, 4.0] } output { [7.0, 0.0, 6.0, 5.0] }

-- Σ of a multiplicative histogram, bins [0, 1, 0, 0]: the Hessian couples values of the
-- same bin (H_02 = x3, H_03 = x2, H_23 = x0); the lone value in bin 1 has H = 0.
-- The bin indices fix the number of values at 4.
def grad_hist_prod (vs: [4]f64) = vjp (\vs -> f64.sum (hist (*) 1 2 [0, 1, 0, 0] vs)) vs 1
entry hist_hvp (vs: [4]f64) = vjp grad_hist_prod vs (replicate 4 1)

-- ==
-- entry: captured
-- input { [1.0, 2.0, -0.5] 3.0 } output { 5.0 }

-- The inner vjp closes over c: Σ_i ∂/∂x_i (c·Σx²) = 2c·Σx, whose derivative in c is 2·Σx.
entry captured (xs: []f64) (c: f64) =
  vjp (\c -> f64.sum (vjp (\xs -> f64.sum (map (\x -> c * x * x) xs)) xs 1)) c 1

-- ==
-- entry: scan_hvp
-- input { [2.0, 3.0, 0.5] [1.0, -1.0, 2.0] } output { [4.5, 5.5, 1.0] }

-- Σ of the prefix products x0 + x0x1 + x0x1x2: H_01 = 1 + x2, H_02 = x1, H_12 = x0, H_ii = 0.
def grad_scan_prod [n] (xs: [n]f64) = vjp (scan (*) 1) xs (replicate n 1)
entry scan_hvp [n] (xs: [n]f64) (v: [n]f64) = vjp grad_scan_prod xs v
