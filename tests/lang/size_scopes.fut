-- Sizes bound inside an expression may be used there freely, and a result whose size
-- mentions them gets a size known only at run time.

-- ==
-- entry: local_size
-- input { [1, 2, 3] } output { [0i64, 2i64, 4i64] }
entry local_size (xs: []i32) =
  let n = length xs
  in map2 (\i x -> i + i64.i32 x - 1) (iota n) xs

-- ==
-- entry: escaping_size
-- input { 4i64 } output { 6i64 }
entry escaping_size (k: i64) =
  let ys = let m = k + 2 in iota m
  in length ys

-- ==
-- entry: lambda_sizes
-- input { [2i64, 3i64] } output { [1i64, 3i64] }
entry lambda_sizes (ns: []i64) = map (\n -> let xs = iota n in reduce (+) 0 xs) ns

-- A name bound to the size of a value (`let [n]`, `let n = length xs`) may stand for an
-- anonymous parameter size.
-- ==
-- entry: witnessed
-- input { [3, 4] } output { [3i64, 5i64] }
entry witnessed (xs: []i32) =
  let [n] (ys: [n]i32) = xs
  in map2 (\i y -> i + i64.i32 y) (iota n) ys

-- An ascribed sum type whose payload sizes are all settled by the value.
type~ maybe_bytes = #bytes ([]u8) | #none

-- ==
-- entry: settled_sum
-- input { [1u8, 2u8] } output { 2i64 }
entry settled_sum (bs: []u8) =
  let m : maybe_bytes = #bytes (map (+ 1) bs)
  in match m
     case #bytes b -> length b
     case #none -> 0

-- A lambda's array parameter whose size a filtering loop in the body joins with new sizes is
-- not a causality problem.
-- ==
-- entry: lambda_loop_filter
-- input { [1, -2, 3] } output { 16 }
entry lambda_loop_filter (xs: []i32) =
  (\ys -> i32.sum (loop zs = ys for i < 2 do filter (> 0) (map (* 2) zs))) xs

-- A size of a declared function type given by the lambda's result twice, as the same term
-- (tests/errors/scope_violation_escaped_sizes.fut gives it two different ones).
type twin_of [n] = ([n]u8, [n]u8)

def twins : i64 -> twin_of [] = \k -> (replicate (k * 2) 0, replicate (k * 2) 1)

-- ==
-- entry: same_escaped
-- input { 3i64 } output { 6i64 6i64 }
entry same_escaped (k: i64) =
  let (a, b) = twins k
  in (length a, length b)

-- An existential size given twice the size a `let` binds (tests/errors/
-- size_escaped_against_name.fut gives it that size and a parameter).
type^ shown = ?[n].([n]u8, [n]u8)

def shown_twice (len: i64) : shown =
  let len' = len * 2
  in (replicate len' 0, replicate len' 1)

-- ==
-- entry: escaped_twice
-- input { 3i64 } output { 6i64 6i64 }
entry escaped_twice (len: i64) =
  let (a, b) = shown_twice len
  in (length a, length b)
