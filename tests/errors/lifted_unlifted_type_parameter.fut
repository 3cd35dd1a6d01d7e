-- An unlifted type parameter ('a) cannot be instantiated with a function type.
-- ==
-- error: Cannot instantiate the unlifted type parameter "'a" with the functional type

def twice 'a (x: a) : (a, a) = (x, x)

def main (n: i32) = (twice (\(y: i32) -> y + n)).0 1
