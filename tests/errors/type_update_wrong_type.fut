-- An in-place update writing a value of the wrong type.
-- ==
-- error: Cannot unify

def main (xs: *[]i32) = xs with [0] = 1.5
