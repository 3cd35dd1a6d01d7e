-- An operator that fails (an integer division by zero) in a reduce, a scan or a
-- reduce_by_index whose function is that one operator: the ir backend applies it in loops
-- of its own, yet reports the operator's location and then the SOAC's, as the
-- interpreter does. Small inputs run in one chunk; 100 000 elements are split between
-- the workers (the zero at element 70 000). Locations counted by hand.

-- ==
-- entry: quotient
-- input { [8, 2, 0, 3] } error: operator_errors.fut:13:46-51: Error: division by zero
-- input { [8, 2, 0, 3] } error: Backtrace:\n-> #0  [^\n]*operator_errors.fut:13:46-51\n   #1  [^\n]*operator_errors.fut:13:30-57\n$
-- input { [8, 2, 1] } output { 0 }

entry quotient (xs: []i32) = reduce (\a b -> a / b) 1 xs

-- ==
-- entry: quotient_large
-- input { 100000i64 } error: operator_errors.fut:21:49-54: Error: division by zero
-- input { 100000i64 } error: Backtrace:\n-> #0  [^\n]*operator_errors.fut:21:49-54\n   #1  [^\n]*operator_errors.fut:21:33-108\n$
-- input { 60000i64 } output { 1 }

entry quotient_large (n: i64) = reduce (\a b -> a / b) 1 (map (\i -> if i == 70000 then 0 else 1) (iota n))

-- ==
-- entry: quotients
-- input { [8, 2, 0, 3] } error: operator_errors.fut:29:45-50: Error: division by zero
-- input { [8, 2, 0, 3] } error: Backtrace:\n-> #0  [^\n]*operator_errors.fut:29:45-50\n   #1  [^\n]*operator_errors.fut:29:31-56\n$
-- input { [1, 2, 1] } output { [1, 0, 0] }

entry quotients (xs: []i32) = scan (\a b -> a / b) 1 xs

-- ==
-- entry: quotients_large
-- input { 100000i64 } error: operator_errors.fut:36:48-53: Error: division by zero
-- input { 100000i64 } error: Backtrace:\n-> #0  [^\n]*operator_errors.fut:36:48-53\n   #1  [^\n]*operator_errors.fut:36:34-107\n$

entry quotients_large (n: i64) = scan (\a b -> a / b) 1 (map (\i -> if i == 70000 then 0 else 1) (iota n))

-- ==
-- entry: binned
-- input { [1, 2, 0, 3] } error: operator_errors.fut:44:42-47: Error: division by zero
-- input { [1, 2, 0, 3] } error: Backtrace:\n-> #0  [^\n]*operator_errors.fut:44:42-47\n   #1  [^\n]*operator_errors.fut:44:28-86\n$
-- input { [1, 2, 3] } output { [0, 1, 0] }

entry binned (xs: []i32) = hist (\a b -> a / b) 1 3 (map (\x -> i64.i32 x % 3) xs) xs
