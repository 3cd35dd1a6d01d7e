-- `f`'s size parameter occurs only in the type of a function argument, so it is not read
-- from an argument; here it would be the size of the unnamed result of `filter`.
-- ==
-- error: Causality check: the size parameter "n" of "f" is the size of a value that has no name here

def f [n] (_: [n]i32 -> i32) : [n]i32 -> i64 = \_ -> n

def g (xs: []i32) = f (\_ -> 0) (filter (> 0) xs)
