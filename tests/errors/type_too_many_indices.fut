-- Indexing a one-dimensional array with two indices.
-- ==
-- error: Too many indices

def main (xs: [3]i32) = xs[0, 1]
