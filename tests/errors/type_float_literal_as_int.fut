-- A float literal where an integer is required.
-- ==
-- error: Cannot unify "i32"

def main : i32 = 1.5
