-- A constructor that the declared sum type does not have.
-- ==
-- error: Cannot unify|does not exist

def main : #a | #b = #c
