-- Conversions between primitive types (language.md §9.4).
-- ==
-- entry: narrow
-- input { 300 -1i8 } output { 44i8 255u8 }

entry narrow (x: i32) (y: i8) = (i8.i32 x, u8.i8 y)

-- ==
-- entry: widen
-- input { -1i8 255u8 -2i16 } output { -1i64 255i64 255u64 65534u32 }

entry widen (a: i8) (b: u8) (c: i16) = (i64.i8 a, i64.u8 b, u64.i8 a, u32.i16 c)

-- ==
-- entry: float_to_int
-- input { 2.7 -2.7 } output { 2 -2 0 0 }

entry float_to_int (x: f64) (y: f64) = (i32.f64 x, i32.f64 y, i32.f64 f64.nan, i64.f64 f64.inf |> i32.i64)

-- ==
-- entry: to_bool
-- input { 0 3.5 } output { false true true 1.0f32 0i64 }

entry to_bool (x: i32) (y: f64) = (bool.i32 x, bool.f64 y, bool.f64 f64.nan, f32.bool true, i64.bool false)

-- ==
-- entry: bits
-- input { 1f32 } output { 1065353216u32 1.0f32 }

entry bits (x: f32) = (f32.to_bits x, f32.from_bits (f32.to_bits x))

-- ==
-- entry: shorthand
-- input { 7 2.9 } output { 7.0f32 2 7.0 }

entry shorthand (i: i32) (x: f64) = (r32 i, t64 x, r64 i)

-- ==
-- entry: f32_of_f64
-- input { 1e300 } output { f32.inf }

entry f32_of_f64 (x: f64) = f32.f64 x

-- `from_fraction n d` is `n / d` in the module's type, each operand rounded from i64.
-- Expected values computed with Python's struct rounding to f32/f16.
-- ==
-- entry: fractions
-- input { 1i64 3i64 9007199254740993i64 -7i64 }
-- output { 0.33333334f32 0.3333333333333333f64 3.0023998e15f32 -3.5f16 -f32.inf }

entry fractions (a: i64) (b: i64) (big: i64) (neg: i64) =
  (f32.from_fraction a b, f64.from_fraction a b, f32.from_fraction big b,
   f16.from_fraction neg 2, f32.from_fraction neg 0)
