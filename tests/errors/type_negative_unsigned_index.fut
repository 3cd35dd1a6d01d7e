-- An index must be a signed integer.
-- ==
-- error: Cannot unify

def main (xs: []i32) = xs[1u8]
