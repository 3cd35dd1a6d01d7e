-- A tuple pattern with the wrong number of components.
-- ==
-- error: Cannot unify

def main = let (a, b) = (1, 2, 3) in a + b
