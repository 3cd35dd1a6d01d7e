-- Range expressions (language.md §7.5) and their run-time errors.
-- ==
-- entry: ranges
-- input { } output { [0, 1, 2, 3, 4] [1, 3, 5, 7, 9] [5, 4, 3] [10, 7, 4, 1] [3] empty([0]i32) }

entry ranges : ([]i32, []i32, []i32, []i32, []i32, []i32) =
  (0..<5, 1..3...9, 5..>2, 10..7...0, 3...3, 0..<0)

-- ==
-- entry: upto
-- input { 5i64 } output { [2i64, 3i64, 4i64] }

entry upto (n: i64) = 2..<n

-- ==
-- entry: bad_range
-- input { 5 2 } error: Range 5..<2 is invalid

entry bad_range (a: i32) (b: i32) = a..<b

-- ==
-- entry: bad_iota
-- input { -2i64 } error: Range 0..1..<-2 is invalid

entry bad_iota (n: i64) = iota n

-- ==
-- entry: bad_inclusive
-- input { 4 1 } error: Range 4...1 is invalid

entry bad_inclusive (a: i32) (b: i32) = a...b
