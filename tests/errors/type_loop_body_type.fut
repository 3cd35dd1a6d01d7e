-- A loop body whose type differs from the loop parameter.
-- ==
-- error: Cannot unify

def main = loop x = 0i32 for i < 10 do 1.5
