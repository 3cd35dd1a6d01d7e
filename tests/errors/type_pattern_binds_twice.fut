-- A pattern binding the same variable twice.
-- ==
-- error: bound twice

def f (x, x) = x + 1i32
