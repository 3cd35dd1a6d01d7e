-- An array literal mixing numbers and booleans.
-- ==
-- error: Cannot unify

def main = [1, true]
