-- A two-parameter function applied to three arguments.
-- ==
-- error: takes 2 arguments but is applied to 3

def f (x: i32) (y: i32) = x + y
def main = f 1 2 3
