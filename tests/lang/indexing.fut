-- Indexing and slicing (language.md §7.6): multi-dimensional indices, slices with
-- strides, negative strides, empty slices, and bounds errors with their exact messages.
-- ==
-- entry: basics
-- input { [[1, 2, 3], [4, 5, 6]] } output { 6 [4, 5, 6] [2, 5] [[2, 3], [5, 6]] }

entry basics (m: [][]i32) = (m[1, 2], m[1], m[:, 1], m[:, 1:])

-- ==
-- entry: strides
-- input { [0, 1, 2, 3, 4, 5, 6] } output { [0, 2, 4, 6] [6, 5, 4, 3, 2, 1, 0] [5, 3] empty([0]i32) [1, 2] }

entry strides (xs: []i32) = (xs[::2], xs[::-1], xs[5:1:-2], xs[7:7], xs[1:3])

-- ==
-- entry: index_error
-- input { [1, 2, 3, 4] 5 } error: Index \[5\] out of bounds for array of shape \[4\]
-- input { [1, 2, 3, 4] -1 } error: Index \[-1\] out of bounds

entry index_error (xs: []i32) (i: i32) = xs[i]

-- ==
-- entry: slice_error
-- input { [[1, 2, 3], [4, 5, 6]] } error: Index \[0:2, 1:0\] out of bounds for array of shape \[2\]\[3\]

entry slice_error (m: [][]i32) = m[0:2, 1:0]

-- ==
-- entry: whitespace_rules
-- input { [10, 20, 30] } output { 20 [[10, 20, 30]] }

def f (xs: [][]i32) = xs
entry whitespace_rules (a: []i32) = (a[1], f [a])

-- ==
-- entry: index_result
-- input { [3, 1, 2] } output { 3 }

entry index_result (xs: []i32) = (copy xs)[0]

-- ==
-- entry: row_slices
-- input { [[1, 2], [3, 4], [5, 6]] 1i64 }
-- output { empty([0][2]i32) [[3, 4], [5, 6]] [[1, 2], [3, 4], [5, 6]] [[5, 6], [3, 4]] }

-- Slices of rows: none, adjacent ones, all of them, and reversed.
entry row_slices (m: [][]i32) (k: i64) = (m[k:k], m[k:], m[0:3], m[:0:-1])
