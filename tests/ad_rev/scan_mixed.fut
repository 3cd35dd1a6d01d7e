-- Reverse mode through scans whose operator works on a tuple of scalars of different types
-- (the general rule's recurrence has one row per component, in that component's type):
-- f32 with f64, f64 with f32 (the affine composition), and i64 with f64.
-- Expected values: central finite differences in plain Python in
-- tests/ad_rev/oracle_gaps.py (section scan_mixed); every value is a small dyadic
-- rational, exact in f32, so both types give them exactly.
-- ==
-- tags { autodiff }
-- entry: pairs
-- input { [1f32, -2, 0.5, 3] [0.25, 1.0, -1.0, 2.0] [1f32, 0, 2, -1] [0.5, 1.0, -1.0, 2.0] }
-- output { [4.5f32, 9.5, 6.0, -2.0] [2.5, 2.0, 1.0, 2.0] }

-- (a1, b1) ⊙ (a2, b2) = (a1 + a2, b1 + b2 + a1·a2) gives (Σa, Σb + Σ_{i<j} aᵢaⱼ): the f64
-- component depends on the f32 one.
def pair_op (a1: f32, b1: f64) (a2: f32, b2: f64) = (a1 + a2, b1 + b2 + f64.f32 (a1 * a2))

entry pairs (as: []f32) (bs: []f64) (sa: []f32) (sb: []f64) =
  vjp (\(as, bs) -> unzip (scan pair_op (0, 0) (zip as bs))) (as, bs) (sa, sb)

-- ==
-- entry: affine
-- input { [2.0, 0.5, -1.0] [1f32, 3, 2] [1.0, 0.0, 2.0] [0.5f32, 1, -1] }
-- output { [0.0, -2.0, -1.5] [1.5f32, 2.0, -1.0] }

-- The composition of x ↦ a·x + b with a in f64 and b in f32.
entry affine (as: []f64) (bs: []f32) (sa: []f64) (sb: []f32) =
  vjp (\(as, bs) -> unzip (scan (\(a1, b1) (a2, b2) -> (a2 * a1, f32.f64 a2 * b1 + b2)) (1, 0) (zip as bs)))
      (as, bs) (sa, sb)

-- ==
-- entry: counts
-- input { [1i64, 2, -1, 3] [0.5, -1.0, 2.0, 0.25] [1i64, 1, 2, 0] [1.0, -1.0, 2.0, 3.0] }
-- output { [16i64, 11, 26, 6] [5.0, 4.0, 5.0, 3.0] }

-- The pair operator on (i64, f64): the i64 cotangents are integral (integer seeds), so
-- their conversions are exact.
entry counts (cs: []i64) (xs: []f64) (sc: []i64) (sx: []f64) =
  vjp (\(cs, xs) -> unzip (scan (\(c1, x1) (c2, x2) -> (c1 + c2, x1 + x2 + f64.i64 (c1 * c2))) (0, 0) (zip cs xs)))
      (cs, xs) (sc, sx)
