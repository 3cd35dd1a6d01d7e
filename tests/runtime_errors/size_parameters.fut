-- Two sizes that only the run time can compare (the length of a filter's result and an
-- anonymous parameter size) meet at a function whose size parameter names both: the call
-- fails at the second parameter, with the interpreter's message, on both backends. The ir
-- backend used to check only where a SOAC used the arrays, and not at all otherwise.

def pair [n] (a: [n]i32) (b: [n]i32) : ([n]i32, [n]i32) = (a, b)

-- ==
-- entry: kept
-- input { [1, 2, 3] } output { [1, 2, 3] }
-- input { [1, -2, 3] } error: size_parameters.fut:6:26-37:.*shape \[2\] cannot match shape of type "\[3\]i32"
entry kept (xs: []i32) =
  let ys = filter (> 0) xs
  in (pair xs ys).1

def sum_both [n] (a: [n]i32) (b: [n]i32) = map2 (+) a b

-- ==
-- entry: summed
-- input { [4, 5] } output { [8, 10] }
-- input { [4, -5] } error: size_parameters.fut:16:30-41:.*shape \[1\] cannot match shape of type "\[2\]i32"
entry summed (xs: []i32) = sum_both xs (filter (> 0) xs)
