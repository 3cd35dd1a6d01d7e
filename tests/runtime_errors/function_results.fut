-- A function passed for a parameter declared with a function type whose result is an
-- array (`f: [n]i32 -> [n]i32`) must return that shape, with the callee's sizes: a lambda
-- returning a filter's result (of a size only the run time knows) is checked when it
-- returns, at the declared type, on both backends. Before, neither backend checked it:
-- `lenof` returned n + (the filter's length) where its type promised 2·n. Expected values
-- by hand.

def keep [n] (f: [n]i32 -> [n]i32) (xs: [n]i32) = f xs

-- ==
-- entry: kept
-- input { [1, 2, 3] } output { [1, 2, 3] }
-- input { [1, -2, 3] } error: function_results.fut:8:18-34:.*shape \[2\] cannot match shape of type "\[3\]i32"
entry kept (xs: []i32) = keep (\ys -> filter (> 0) ys) xs

-- ==
-- entry: doubled
-- input { [1, -2, 3] } output { [2, -4, 6] }

-- A lambda that keeps the size passes.
entry doubled (xs: []i32) = keep (\ys -> map (* 2) ys) xs

def lenof [n] (f: [n]i32 -> [n]i32) (xs: [n]i32) : i64 = let ys = f xs in n + length ys

-- ==
-- entry: lengths
-- input { [4, 5] } output { 4i64 }
-- input { [4, -5] } error: function_results.fut:23:19-35:.*shape \[1\] cannot match shape of type "\[2\]i32"
entry lengths (xs: []i32) = lenof (\ys -> filter (> 0) ys) xs

-- Curried: the check waits for both arguments. g k adds k and keeps the values above 2:
-- g 2 [1, 2, 3] = [3, 4, 5] and g 1 of it = [4, 5, 6]; with [0, 2, 3] the inner call
-- returns [4, 5], two of three.
def twice [n] (g: i32 -> [n]i32 -> [n]i32) (xs: [n]i32) = g 1 (g 2 xs)

-- ==
-- entry: curried
-- input { [1, 2, 3] } output { [4, 5, 6] }
-- input { [0, 2, 3] } error: function_results.fut:34:19-42:.*shape \[2\] cannot match shape of type "\[3\]i32"
entry curried (xs: []i32) = twice (\k ys -> filter (> 2) (map (+ k) ys)) xs

-- A function type over a type parameter: `t` is the argument's array type, so `f` must
-- keep its shape (the argument is a `[3]i32` here; the filter keeps 2).
def app 't (f: t -> t) (x: t) = (f x, x)

-- ==
-- entry: applied
-- input { [1, 2, 3] } output { [2, 3, 4] }
-- input { [1, -2, 3] } error: function_results.fut:44:16-22:.*shape \[2\] cannot match shape of type "\[3\]i32"
entry applied (xs: []i32) = (app (\ys -> map (+ 1) (filter (> 0) ys)) xs).0
