-- The non-differentiating worked examples of language.md Appendix B.
-- ==
-- entry: sqnorm_entry
-- input { [3f32, 4] } output { 25f32 }

def sqnorm [n] (v: [n]f32) : f32 = f32.sum (map (\x -> x * x) v)
entry sqnorm_entry [n] (v: [n]f32) : f32 = sqnorm v

-- ==
-- entry: poly_entry
-- input { 2.0 3.0 } output { [6.0, 5.0, 0.9092974268256817] }

def poly (p: (f64, f64)) : [3]f64 =
  let (a, b) = p
  in [a * b, a + b, f64.sin a]
entry poly_entry (a: f64) (b: f64) = poly (a, b)

-- ==
-- entry: weighted
-- input { [0i64, 1, 1, 3] 2f32 [1f32, 2, 3, 4] } output { [2f32, 10, 0, 8] }

def weighted_hist [n] (bins: [n]i64) (w: f32) (xs: [n]f32) : [4]f32 =
  hist (+) 0 4 bins (map (* w) xs)
entry weighted [n] (bins: [n]i64) (w: f32) (xs: [n]f32) = weighted_hist bins w xs
