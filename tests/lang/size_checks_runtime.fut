-- Size checks that happen at run time on both backends: coercions through a type
-- abbreviation, a scalar parameter used as the size of a later one, and a return type
-- whose element type is a type parameter instantiated with arrays.

type ints [n] = [n]i64

-- ==
-- entry: coerce_abbreviation
-- input { 3i64 } output { [0i64, 1i64, 2i64] }
-- input { 2i64 } error: Value of \(desugared\) shape \[2\] cannot match shape of type "\[3\]i64"
entry coerce_abbreviation (n: i64) = iota n :> ints [3]

-- ==
-- entry: value_as_size
-- input { 3i64 [1, 2, 3] } output { [1, 2, 3] }
-- input { 2i64 [1, 2, 3] } error: entry point arguments have invalid sizes: expected size 2, but an argument has size 3
entry value_as_size n (xs: [n]i32) = xs

-- ==
-- entry: constant_size
-- input { [1, 2] } output { 3 }
-- input { [1, 2, 3] } error: entry point arguments have invalid sizes: expected size 2, but an argument has size 3
entry constant_size (xs: [2]i32) = xs[0] + xs[1]

-- The result type `[n]t` names only the outer size of a 2-D instance.
def reverse [n] 't (a: [n]t) : [n]t = a[::-1]

-- ==
-- entry: reverse_rows
-- input { [[1, 2], [3, 4], [5, 6]] } output { [[5, 6], [3, 4], [1, 2]] }
entry reverse_rows (x: [][]i32) = reverse x
