-- Comparing two functions with `==`.
-- ==
-- error: Equality is not defined on functional type

def f (x: i32) = x + 1
def main = f == f
