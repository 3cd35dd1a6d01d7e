-- Floating-point semantics: fmod remainder, IEEE division, nan-ignoring min/max, rounding.
-- ==
-- entry: fmod
-- input { -7.5 2.0 } output { -1.5 }
-- input { 7.5 -2.0 } output { 1.5 }

entry fmod (x: f64) (y: f64) = x % y

-- ==
-- entry: ieee_div
-- input { 1f32 0f32 } output { f32.inf }
-- input { -1f32 0f32 } output { -f32.inf }
-- input { 0f32 0f32 } output { f32.nan }

entry ieee_div (x: f32) (y: f32) = x / y

-- ==
-- entry: nan_minmax
-- input { 1.0 } output { 1.0 1.0 true }

entry nan_minmax (x: f64) = (f64.max f64.nan x, f64.min x f64.nan, f64.isnan (f64.max f64.nan f64.nan))

-- ==
-- entry: rounding
-- input { 2.5 } output { 2.0 3.0 2.0 2.0 }
-- input { 3.5 } output { 4.0 4.0 3.0 3.0 }
-- input { -2.5 } output { -2.0 -2.0 -3.0 -2.0 }

entry rounding (x: f64) = (f64.round x, f64.ceil x, f64.floor x, f64.trunc x)

-- ==
-- entry: math
-- input { 2.0 } output { 1.4142135623730951 7.38905609893065 0.6931471805599453 }

entry math (x: f64) = (f64.sqrt x, f64.exp x, f64.log x)

-- ==
-- entry: trig
-- input { 0.5 } output { 0.479425538604203 0.8775825618903728 0.5463024898437905 2.356194490192345 5.0 }

entry trig (x: f64) = (f64.sin x, f64.cos x, f64.tan x, f64.atan2 1 (-1), f64.hypot 3 4)

-- ==
-- entry: thirds
-- input { 1f32 } output { 0.33333334f32 }

entry thirds (x: f32) = x / 3

-- ==
-- entry: float_pow
-- input { 2.0 10.0 } output { 1024.0 }
-- input { 0.0 0.0 } output { 1.0 }

entry float_pow (x: f64) (y: f64) = x ** y

-- ==
-- entry: specials
-- input { } output { true false 1 0 -1 }

entry specials : (bool, bool, i32, i32, i32) =
  (f32.isinf (-f32.inf), f64.nan == f64.nan, t32 (f32.sgn 3), t32 (f32.sgn 0), t32 (f32.sgn (-2)))

-- ==
-- entry: consts
-- input { } output { 3.141592653589793 2.718281828459045 2.220446049250313e-16 }

entry consts : (f64, f64, f64) = (f64.pi, f64.e, f64.epsilon)
