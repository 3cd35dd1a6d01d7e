-- An `if` condition that is a number.
-- ==
-- error: Cannot unify "bool"

def main = if 1 then 2 else 3
