-- Shifting a u8 by an i32 amount (both operands must have one type).
-- ==
-- error: Cannot unify

def main = 1u8 << 2i32
