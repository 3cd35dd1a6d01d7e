-- A declared result size that the parameters' sizes determine is fine when the sizes are
-- named; a size only known at run time is converted with `:>` (checked when it runs).

def join [n] [m] (xs: [n]i32) (ys: [m]i32) : [n + m]i32 = xs ++ ys

def join4 (xs: []i32) (ys: []i32) : [4]i32 = xs ++ ys :> [4]i32

-- ==
-- entry: named
-- input { [1, 2] [3] } output { [1, 2, 3] }
entry named (xs: []i32) (ys: []i32) = join xs ys

-- ==
-- entry: coerced
-- input { [1, 2] [3, 4] } output { [1, 2, 3, 4] }
-- input { [1] [3, 4] } error: cannot match shape
entry coerced (xs: []i32) (ys: []i32) = join4 xs ys

-- A bare anonymous size is inferred to be the declared one.
def first2 (xs: []i32) : [2]i32 = xs

-- ==
-- entry: bare
-- input { [5, 6] } output { [5, 6] }
entry bare (xs: []i32) = first2 xs
