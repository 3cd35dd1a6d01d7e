-- A name bound by two parameters of one function.
-- ==
-- error: Variable "x" is bound twice in the parameters of this function

def main (x: i32) (x: i32) = x
