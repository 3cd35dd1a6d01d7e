-- Bitwise and on floats.
-- ==
-- error: Cannot unify

def main = 1.5 & 2.5
