-- Run-time errors carry the failing expression's location and a backtrace of the calls
-- that led there (data-tests-cli.md §6.1.3).
-- ==
-- entry: checked
-- input { 5 } output { 5 }
-- input { 0 } error: Assertion is false: \(?x > 0
-- input { -1 } error: errors.fut:9.*errors.fut:10.*errors.fut:11

def positive (x: i32) = assert (x > 0) x
def via (x: i32) = positive x
entry checked (x: i32) = via x

-- ==
-- entry: ascription
-- input { [1, 2] } error: Value of \(desugared\) shape \[2\] cannot match shape of type "\[3\]i32"

entry ascription (xs: []i32) = (xs :> [3]i32)

-- ==
-- entry: hole
-- input { 1 } error: hole

entry hole (x: i32) : i32 = if x > 0 then ??? else x

-- ==
-- entry: div_in_map
-- input { [1, 2, 0] } error: division by zero

entry div_in_map (xs: []i32) = map (\x -> 10 / x) xs
