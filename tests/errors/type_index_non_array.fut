-- Indexing a scalar.
-- ==
-- error: Cannot index into a value of type "i32"

def main (x: i32) = x[0]
