-- Adding an f64 to an i32.
-- ==
-- error: Cannot unify

def main = (2.0 + 3.0) / (2 + 3i32)
