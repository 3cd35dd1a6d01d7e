-- The branches of an `if` have different types.
-- ==
-- error: Cannot unify

def main (b: bool) = if b then 1i32 else 2.0f32
