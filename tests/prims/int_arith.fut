-- Integer arithmetic: floored and truncating division, remainders, wrap-around, powers.
-- ==
-- entry: divmod
-- input { 7 -2 } output { -4 -1 -3 1 }
-- input { -7 2 } output { -4 1 -3 -1 }
-- input { 7 2 } output { 3 1 3 1 }
-- input { -2147483648 -1 } output { -2147483648 0 -2147483648 0 }
-- input { 1 0 } error: division by zero

entry divmod (a: i32) (b: i32) = (a / b, a % b, a // b, a %% b)

-- ==
-- entry: unsigned_div
-- input { 7u8 2u8 } output { 3u8 1u8 3u8 1u8 }
-- input { 200u8 7u8 } output { 28u8 4u8 28u8 4u8 }

entry unsigned_div (a: u8) (b: u8) = (a / b, a % b, a // b, a %% b)

-- ==
-- entry: wrap
-- input { 2147483647 255u8 } output { -2147483648 0u8 -2147483648 }
-- input { 0 0u8 } output { 1 1u8 -1 }

entry wrap (x: i32) (y: u8) = (x + 1, y + 1, -(x + 1))

-- ==
-- entry: mul_wrap
-- input { 1500000000 2 } output { -1294967296 }

entry mul_wrap (a: i32) (k: i32) = a * k

-- ==
-- entry: pow
-- input { 3 4 } output { 81 }
-- input { 0 0 } output { 1 }
-- input { -2 3 } output { -8 }
-- input { 2 31 } output { -2147483648 }
-- input { 2 -1 } error: negative exponent

entry pow (x: i32) (y: i32) = x ** y

-- ==
-- entry: bits
-- input { 12 10 } output { 8 14 6 -13 48 3 }
-- input { -16 2 } output { 0 -14 -14 15 -64 -4 }

entry bits (x: i32) (k: i32) = (x & k, x | k, x ^ k, !x, x << 2, x >> 2)

-- ==
-- entry: shifts_u
-- input { 240u8 } output { 60u8 60u8 192u8 }

entry shifts_u (x: u8) = (x >> 2, x u8.>>> 2, x << 2)

-- ==
-- entry: abs_sgn
-- input { -5 } output { 5 -1 -5 }
-- input { -2147483648 } output { -2147483648 -1 -2147483648 }

entry abs_sgn (x: i32) = (i32.abs x, i32.sgn x, i32.min x (-x))

-- ==
-- entry: int_module
-- input { 11u32 } output { 3 28 0 1 32 }

entry int_module (x: u32) = (u32.popc x, u32.clz x, u32.ctz x, u32.get_bit 3 x, u32.num_bits)
