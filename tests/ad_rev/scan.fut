-- Reverse mode through scan: +, * with zeros, min/max with ties, a tuple operator
-- (composition of affine maps, both components seeded), vectorised operators over rows
-- (map2 (+), map2 (*)), exscan, a scan feeding a nonlinear loss, and a 1000-element case.
-- Complements tests/ad/soacs_scan_hist.fut (which seeds only ones or the last element).
-- Expected values: closed forms by hand (comments) and central finite differences in
-- tests/ad_rev/oracle.py (section scan).
-- ==
-- tags { autodiff }
-- entry: scan_add
-- input { [1.0, 2.0, 3.0, 4.0] [1.0, 0.0, 2.0, -1.0] } output { [1.0, 3.0, 6.0, 10.0] [2.0, 1.0, 1.0, -1.0] }

-- The cotangent of x_i is the suffix sum of the seed from i on.
entry scan_add (xs: []f64) (s: []f64) = vjp2 (scan (+) 0) xs s

-- ==
-- entry: scan_mul
-- input { [2.0, 0.0, 3.0, 4.0] [1.0, 1.0, 1.0, 1.0] } output { [2.0, 0.0, 0.0, 0.0] [1.0, 32.0, 0.0, 0.0] }
-- input { [0.0, 3.0, 0.0, 2.0] [1.0, 1.0, 1.0, 1.0] } output { [0.0, 0.0, 0.0, 0.0] [4.0, 0.0, 0.0, 0.0] }
-- input { [1.5, -2.0, 0.5] [1.0, 2.0, -1.0] } output { [1.5, -3.0, -1.5] [-2.0, 2.25, 3.0] }

-- Prefix products with one zero, two zeros and none.
entry scan_mul (xs: []f64) (s: []f64) = vjp2 (scan (*) 1) xs s

-- ==
-- entry: scan_max
-- input { [1.0, 3.0, 2.0, 5.0, 5.0] [1.0, 2.0, 3.0, 4.0, 5.0] } output { [1.0, 5.0, 0.0, 9.0, 0.0] }

-- Prefix maxima [1, 3, 3, 5, 5]: each output's cotangent goes to the first element attaining
-- it (the tie at index 4 goes to index 3): 1, 2+3, 0, 4+5, 0.
entry scan_max (xs: []f64) (s: []f64) = vjp (scan f64.max f64.lowest) xs s

-- ==
-- entry: scan_min
-- input { [2f32, 2, 1, 3] [1f32, 1, 1, 1] } output { [2f32, 0, 2, 0] }
-- input { [f32.inf, 4] [5f32, 1] } output { [0f32, 1] }

-- Prefix minima [2, 2, 1, 1]: index 0 gets s0+s1, index 2 gets s2+s3. In the second case the
-- first prefix equals the neutral element (inf), so index 0 receives nothing.
entry scan_min (xs: []f32) (s: []f32) = vjp (scan f32.min f32.inf) xs s

-- ==
-- entry: scan_affine
-- input { [2.0, 0.5, -1.0] [1.0, 3.0, 2.0] [1.0, 0.0, 2.0] [0.5, 1.0, -1.0] }
-- output { [0.0, -2.0, -1.5] [1.5, 2.0, -1.0] }
-- input { [3.0, 0.0, 2.0] [1.0, -1.0, 1.0] [1.0, 1.0, 1.0] [1.0, 1.0, 1.0] }
-- output { [1.0, 12.0, -1.0] [1.0, 3.0, 1.0] }

-- Every prefix composition (A_k, B_k) is an output, with its own seed for both parts.
def lin (a1: f64, b1: f64) (a2: f64, b2: f64) = (a2 * a1, a2 * b1 + b2)
entry scan_affine (as: []f64) (bs: []f64) (sa: []f64) (sb: []f64) =
  vjp (\(as, bs) -> unzip (scan lin (1, 0) (zip as bs))) (as, bs) (sa, sb)

-- ==
-- entry: vec_scan_add
-- input { [[1.0, 2.0], [0.5, 0.0], [3.0, -1.0]] [[1.0, 1.0], [2.0, 0.0], [-1.0, 3.0]] }
-- output { [[1.0, 2.0], [1.5, 2.0], [4.5, 1.0]] [[2.0, 4.0], [1.0, 3.0], [-1.0, 3.0]] }

-- Row-wise prefix sums: column-wise suffix sums of the seed.
entry vec_scan_add [n][m] (xss: [n][m]f64) (s: [n][m]f64) =
  vjp2 (\xss -> scan (map2 (+)) (replicate m 0) xss) xss s

-- ==
-- entry: vec_scan_mul
-- input { [[1.0, 2.0], [0.5, 0.0], [3.0, -1.0]] [[1.0, 1.0], [2.0, 0.0], [-1.0, 3.0]] }
-- output { [[1.0, 2.0], [0.5, 0.0], [1.5, 0.0]] [[0.5, 1.0], [-1.0, -6.0], [-0.5, 0.0]] }

-- Row-wise prefix products; column 1 has a zero in the middle.
entry vec_scan_mul [n][m] (xss: [n][m]f64) (s: [n][m]f64) =
  vjp2 (\xss -> scan (map2 (*)) (replicate m 1) xss) xss s

-- ==
-- entry: scan_sq_loss
-- input { [1.0, -2.0, 0.5, 3.0] } output { [4.0, 2.0, 4.0, 5.0] }

-- Σ_k p_k² with p the prefix sums [1, −1, −0.5, 2.5]: x_i gets Σ_{k≥i} 2·p_k.
entry scan_sq_loss (xs: []f64) = vjp (\xs -> f64.sum (map (\p -> p * p) (scan (+) 0 xs))) xs 1

-- ==
-- entry: exscan_add
-- input { [0.5, 1.5, -1.0, 2.0] [1.0, 2.0, 3.0, 4.0] } output { [9.0, 7.0, 4.0, 0.0] }

-- Exclusive prefix sums: x_i reaches outputs i+1.., so it gets the seed's suffix sum after i.
entry exscan_add (xs: []f64) (s: []f64) = vjp (exscan (+) 0) xs s

-- ==
-- entry: big_scan
-- input { 1000i64 } output { 500500.0 1000.0 1.0 }

-- Seeding every prefix sum with 1: x_i gets n − i; Σ = n(n+1)/2.
entry big_scan (n: i64) =
  let xs = map (\i -> f64.i64 i * 0.5) (iota n)
  let g = vjp (scan (+) 0) xs (replicate n 1)
  in (f64.sum g, g[0], g[n - 1])

-- ==
-- entry: vec_scan_min
-- input { [[3.0, 1.0], [2.0, 1.0], [2.0, 0.0]] [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]] }
-- output { [[1.0, 2.0], [2.0, 0.0], [0.0, 1.0]] }

-- Column-wise prefix minima [3, 2, 2] and [1, 1, 0]: ties go to the earlier row.
entry vec_scan_min [n][m] (xss: [n][m]f64) (s: [n][m]f64) =
  vjp (\xss -> scan (map2 f64.min) (replicate m f64.inf) xss) xss s
