-- Reverse mode (vjp, vjp2, mjp) through reduce: +, * with zeros in every position, min/max
-- with ties and empty arrays, a scalar user operator (a*b + a + b), a tuple operator
-- (composition of affine maps), an argmin operator with branches, and vectorised operators
-- (map2 (+), map2 (*), map2 max) over rows. Complements tests/ad/soacs_reduce.fut.
-- Expected values: closed forms worked by hand (comments), checked and, for the affine
-- case, computed by central finite differences in tests/ad_rev/oracle.py (section reduce).
-- ==
-- tags { autodiff }
-- entry: prod_vjp2
-- input { [1.5, -2.0, 4.0, 0.5] 1.0 } output { -6.0 [-4.0, 3.0, -1.5, -12.0] }
-- input { [3.0, 0.0, 2.0, 5.0] 2.0 } output { 0.0 [0.0, 60.0, 0.0, 0.0] }
-- input { [0.0, 2.0, 0.0, 7.0] 1.0 } output { 0.0 [0.0, 0.0, 0.0, 0.0] }
-- input { [4.0, 5.0, 0.0] 1.0 } output { 0.0 [0.0, 0.0, 20.0] }
-- input { [0.0] 3.0 } output { 0.0 [3.0] }

-- Gradient of a product: Π_{j≠i} x_j times the seed, exact with zeros (no division).
entry prod_vjp2 (xs: []f64) (s: f64) = vjp2 f64.product xs s

-- ==
-- entry: prod_mjp
-- input { [2f32, 0, 5, 3] } output { [[0f32, 30, 0, 0], [0f32, -30, 0, 0], [0f32, 15, 0, 0]] }

-- Three cotangents at once: each row is the gradient [0, 30, 0, 0] scaled by its seed.
entry prod_mjp (xs: []f32) = mjp (reduce (*) 1) xs [1, -1, 0.5]

-- ==
-- entry: max_vjp2
-- input { [1.0, 7.0, 3.0, 7.0] 2.0 } output { 7.0 [0.0, 2.0, 0.0, 0.0] }
-- input { [-3.0, -1.0, -2.0] 1.0 } output { -1.0 [0.0, 1.0, 0.0] }
-- input { [5.0, 5.0, 5.0] 1.0 } output { 5.0 [1.0, 0.0, 0.0] }
-- input { empty([0]f64) 1.0 } output { -f64.inf empty([0]f64) }

-- The whole cotangent goes to the first maximum; an empty array has an empty gradient.
entry max_vjp2 (xs: []f64) (s: f64) = vjp2 (reduce f64.max f64.lowest) xs s

-- ==
-- entry: min_vjp
-- input { [4f32, 2, 9, 2] 1f32 } output { [0f32, 1, 0, 0] }
-- input { [f32.inf, f32.inf] 1f32 } output { [0f32, 0] }
-- input { [3f32] -2f32 } output { [-2f32] }

-- reduce_comm: same tie rule as reduce; a result equal to the neutral element (inf) gives
-- nothing to the elements (as tests/ad/soacs_reduce.fut grad_max does for lowest).
entry min_vjp (xs: []f32) (s: f32) = vjp (reduce_comm f32.min f32.inf) xs s

-- ==
-- entry: range_grad
-- input { [2.0, 9.0, 1.0, 9.0, 1.0] } output { [0.0, 1.0, -1.0, 0.0, 0.0] }
-- input { [3.0] } output { [0.0] }

-- max − min: +1 at the first maximum, −1 at the first minimum (they cancel for one element).
entry range_grad (xs: []f64) = vjp (\xs -> f64.maximum xs - f64.minimum xs) xs 1

-- ==
-- entry: userop
-- input { [0.5, 2.0, -0.25] 2.0 } output { 2.375 [4.5, 2.25, 9.0] }
-- input { [-1.0, 2.0, 3.0] 1.0 } output { -1.0 [12.0, 0.0, 0.0] }
-- input { [-1.0, -1.0, 3.0] 1.0 } output { -1.0 [0.0, 0.0, 0.0] }

-- a*b + a + b = (1+a)(1+b) − 1 is associative with neutral 0: the reduction is
-- Π(1+x) − 1 and ∂/∂x_i = s·Π_{j≠i}(1+x_j); x = −1 plays the role of a zero factor.
entry userop (xs: []f64) (s: f64) = vjp2 (reduce (\a b -> a * b + a + b) 0) xs s

-- ==
-- entry: affine
-- input { [2.0, 0.5, -1.0] [1.0, 3.0, 2.0] 1.5 } output { [-0.75, -4.0, 5.0] [-0.5, -1.0, 1.0] -1.0 }
-- input { [2.0, 0.0, 3.0] [1.0, 1.0, 1.0] 2.0 } output { [0.0, 15.0, 1.0] [0.0, 3.0, 1.0] 0.0 }

-- Composition of affine maps x ↦ a·x + b, applied to x; gradient w.r.t. all three inputs.
def lin (a1: f64, b1: f64) (a2: f64, b2: f64) = (a2 * a1, a2 * b1 + b2)
entry affine (as: []f64) (bs: []f64) (x: f64) =
  vjp (\(as, bs, x) -> let (a, b) = reduce lin (1, 0) (zip as bs) in a * x + b) (as, bs, x) 1

-- ==
-- entry: argmin
-- input { [3.0, 4.0, 1.0, 5.0, 1.0] } output { [0.0, 0.0, 2.0, 0.0, 0.0] }
-- input { [2.0, 2.0, 2.0] } output { [0.0, 0.0, 0.0] }
-- input { [7.0, 2.0, 2.0] } output { [0.0, 1.0, 0.0] }

-- Tuple operator with branches selecting (value, index) of the first minimum; the result
-- v·i has derivative i at the selected element (the index itself is not differentiable).
def amin (v1: f64, i1: i64) (v2: f64, i2: i64) =
  if v1 < v2 then (v1, i1) else if v2 < v1 then (v2, i2) else if i1 <= i2 then (v1, i1) else (v2, i2)
entry argmin [n] (xs: [n]f64) =
  vjp (\xs -> let (v, i) = reduce amin (f64.inf, i64.highest) (zip xs (iota n)) in v * f64.i64 i) xs 1

-- ==
-- entry: vec_add
-- input { [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]] [0.5, -1.0] }
-- output { [9.0, 12.0] [[0.5, -1.0], [0.5, -1.0], [0.5, -1.0]] }

-- Column sums: every row receives the seed.
entry vec_add [n][m] (xss: [n][m]f64) (s: [m]f64) =
  vjp2 (\xss -> reduce (map2 (+)) (replicate m 0) xss) xss s

-- ==
-- entry: vec_mul
-- input { [[2.0, 0.0, 1.0], [3.0, 4.0, 0.0], [5.0, 6.0, 0.0]] [1.0, 2.0, 3.0] }
-- output { [[15.0, 48.0, 0.0], [10.0, 0.0, 0.0], [6.0, 0.0, 0.0]] }

-- Column products with no zero (column 0), one zero (column 1) and two zeros (column 2).
entry vec_mul [n][m] (xss: [n][m]f64) (s: [m]f64) =
  vjp (\xss -> reduce (map2 (*)) (replicate m 1) xss) xss s

-- ==
-- entry: vec_max
-- input { [[1.0, 8.0, 2.0], [4.0, 8.0, 0.0], [4.0, 3.0, -1.0]] [1.0, 2.0, 3.0] }
-- output { [[0.0, 2.0, 3.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]] }

-- Column maxima, ties going to the first row.
entry vec_max [n][m] (xss: [n][m]f64) (s: [m]f64) =
  vjp (\xss -> reduce (map2 f64.max) (replicate m f64.lowest) xss) xss s

-- ==
-- entry: big_sum_sq
-- input { 1000i64 } output { 999000.0 1998.0 }

-- Σ x² at x_i = i: the gradient is 2i; its sum is n(n−1), its last element 2(n−1).
entry big_sum_sq (n: i64) =
  let g = vjp (\xs -> f64.sum (map (\x -> x * x) xs)) (map f64.i64 (iota n)) 1
  in (f64.sum g, g[n - 1])

-- ==
-- entry: big_prod
-- input { 1000i64 } output { 1001.0 1001000.0 }

-- x_i = (i+2)/(i+1) telescopes: Π x = n+1; the gradient is (n+1)/x_i, so Σ g_i·x_i = n(n+1).
entry big_prod (n: i64) =
  let xs = map (\i -> f64.i64 (i + 2) / f64.i64 (i + 1)) (iota n)
  let (p, g) = vjp2 (reduce (*) 1) xs 1
  in (p, f64.sum (map2 (*) g xs))

-- ==
-- entry: vec_min
-- input { [[3.0, 1.0], [2.0, 1.0], [2.0, 5.0]] [1.0, 2.0] } output { [[0.0, 2.0], [1.0, 0.0], [0.0, 0.0]] }

-- Column minima with ties in both columns: the first row attaining each minimum wins.
entry vec_min [n][m] (xss: [n][m]f64) (s: [m]f64) =
  vjp (\xss -> reduce (map2 f64.min) (replicate m f64.inf) xss) xss s
