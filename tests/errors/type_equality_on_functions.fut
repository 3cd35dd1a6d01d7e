-- Comparing two functions with `==`.
-- ==
-- error: Cannot compare functions: equality is not defined on the functional type

def f (x: i32) = x + 1
def main = f == f
