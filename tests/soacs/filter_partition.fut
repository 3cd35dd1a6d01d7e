-- filter, partition, partition2, all/any, flatmap-free selection, and existential sizes
-- with coercion (language.md Appendix B.6).
-- ==
-- entry: picks
-- input { [1i64, 4, 7, 2, 10] } output { [1i64, 5, 9, 13] }

entry picks (xs: []i64) : []i64 =
  let ys = filter (\x -> x % 3 == 1) xs
  let k = length ys
  in map2 (+) (ys :> [k]i64) (iota k)

-- ==
-- entry: part
-- input { [1, 2, 3, 4, 5] } output { [2, 4] [1, 3, 5] }

entry part (xs: []i32) = partition (\x -> x % 2 == 0) xs

-- ==
-- entry: part2
-- input { [1, 2, 3, 4, 5, 6] } output { [3, 6] [2, 4] [1, 5] }

entry part2 (xs: []i32) = partition2 (\x -> x % 3 == 0) (\x -> x % 2 == 0) xs

-- ==
-- entry: quantifiers
-- input { [2, 4, 5] } output { false true true false }
-- input { empty([0]i32) } output { true false true false }

entry quantifiers (xs: []i32) =
  (all (\x -> x % 2 == 0) xs, any (\x -> x % 2 == 1) xs, and (map (> 0) xs), or (map (> 10) xs))

-- ==
-- entry: bad_coerce
-- input { [1, 2, 3] } error: cannot match shape of type

entry bad_coerce (xs: []i32) = filter (> 1) xs :> [3]i32
