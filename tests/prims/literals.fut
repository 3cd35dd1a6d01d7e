-- Numeric literals: suffixes, hexadecimal, binary, underscores, defaulting.
-- ==
-- entry: lits
-- input { } output { 255 5 1000000i64 3.0f32 1000.0 42i8 }

entry lits : (i32, i32, i64, f32, f64, i8) = (0xff, 0b101, 1_000_000, 3f32, 1e3, 42)

-- ==
-- entry: defaults
-- input { } output { 1 2.5 }

entry defaults = (1, 2.5)

-- ==
-- entry: wrapped_suffix
-- input { } output { 0u8 -1i8 }

entry wrapped_suffix = (256u8, 255i8)

-- ==
-- entry: negative_literal
-- input { } output { -128i8 }

entry negative_literal : i8 = -128
