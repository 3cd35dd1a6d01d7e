-- A type parameter may stand for a function or an abstract type, so its values cannot be
-- compared with `==`; pass a comparison function instead.
-- ==
-- error: Cannot compare values of type "t": equality is not defined on the type parameter "t"

def count_equal 't (x: t) (xs: []t) : i64 = i64.sum (map (\y -> i64.bool (y == x)) xs)
