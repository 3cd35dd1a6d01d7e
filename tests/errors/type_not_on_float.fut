-- Logical/bitwise not on a float.
-- ==
-- error: Cannot unify

def main = !1.5
