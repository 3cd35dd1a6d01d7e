-- An array whose elements are functions.
-- ==
-- error: Arrays of functions

def main = [\(x: i32) -> x + 1, \x -> x * 2]
