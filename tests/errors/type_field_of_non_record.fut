-- Projecting a field of a number.
-- ==
-- error: Cannot access field "y"

def main (x: i32) = x.y
