-- The body does not have the declared return type.
-- ==
-- error: Cannot unify "i32" with "bool"

def main : i32 = true
