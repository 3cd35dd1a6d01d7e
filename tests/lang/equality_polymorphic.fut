-- Equality in polymorphic code: a function over a type parameter takes the comparison as an
-- argument; a top-level function compares values of a written type; a local function
-- compares values whose type its uses fix.

def count_by 't (eq: t -> t -> bool) (x: t) (xs: []t) : i64 =
  i64.sum (map (\y -> i64.bool (eq y x)) xs)

-- ==
-- entry: count_ints
-- input { 2 [1, 2, 3, 2] } output { 2i64 }
-- input { 5 [1, 2] } output { 0i64 }
entry count_ints (x: i32) (xs: []i32) = count_by (==) x xs

-- ==
-- entry: local_equality
-- input { 3 } output { true false }
entry local_equality (a: i32) =
  let same x y = x == y
  in (same a 3, same a 4)

def same_bool (x: bool) y = x == y

-- ==
-- entry: top_level_equality
-- input { true } output { false }
entry top_level_equality (b: bool) = same_bool b (!b)
