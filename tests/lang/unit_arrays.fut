-- Arrays whose elements hold no data (`[n][m]()`, arrays of empty records and of tuples of
-- them) still have a shape: it is what `length`, `map` and the other array operations see.

-- A function that returns such an array beside a function on arrays of the same shape
-- (the reference suite's `types/ext8`).
def pair (n: i64) (m: i64) : ([n][m](), [n][m]bool -> bool) =
  (replicate n (replicate m ()), \b -> b[0, 0])

-- ==
-- entry: through_uncurry
-- input { 2i64 3i64 } output { true }
entry through_uncurry x y =
  let (a, f) = uncurry pair (x, y)
  in f (map (map (const true)) a)

-- Mapping over both dimensions gives an array of that shape.
-- ==
-- entry: map_shape
-- input { 2i64 3i64 } output { [[0i64, 1i64, 2i64], [1i64, 2i64, 3i64]] }
-- input { 1i64 1i64 } output { [[0i64]] }
entry map_shape (n: i64) (m: i64) : [n][m]i64 =
  let a = replicate n (replicate m ())
  in map2 (\i row -> map2 (\j () -> i + j) (iota m) row) (iota n) a

-- `length`, `map` to units, `reduce` and `scan` over elements without data.
-- ==
-- entry: sizes
-- input { 4i64 } output { 4i64 4i64 4i64 3i64 }
entry sizes (n: i64) =
  let us = map (\_ -> ()) (iota n)
  let r = reduce (\() () -> ()) () us
  let s = scan (\() () -> ()) () us
  let t = tabulate n (\_ -> {})
  in (length us, length s, length (map (\(_: {}) -> r) t), length (filter (\_ -> true) (tail us)))

-- Concatenation, transposition, flattening and slicing keep track of the shape.
-- ==
-- entry: reshape
-- input { 2i64 3i64 } output { 5i64 3i64 2i64 6i64 2i64 }
entry reshape (n: i64) (m: i64) =
  let a = replicate n (replicate m ())
  let b = a ++ replicate m (replicate m ())
  let t = transpose a
  in (length b, length t, length t[0], length (flatten a), length a[1, 1:])

-- Tuples and records of units zip, unzip and index like other arrays of records.
-- ==
-- entry: records
-- input { 3i64 } output { 3i64 3i64 [10i32, 11i32, 12i32] }
entry records (n: i64) =
  let us = replicate n ((), {})
  let (xs, ys) = unzip us
  let zs = zip3 xs (map i32.i64 (iota n)) ys
  let ((), k, {}) = zs[2]
  in (length xs, length ys, map (\(_, i, _) -> i + 10 + k - k) zs)

-- An array literal of units, an in-place update, equality, a loop and a branch.
-- ==
-- entry: mixed
-- input { true } output { 3i64 true false 5i64 }
-- input { false } output { 3i64 true false 0i64 }
entry mixed (c: bool) =
  let a = [(), (), ()]
  let b = copy a with [1] = ()
  let grown = loop acc = [()] for _i < 4 do acc ++ [()]
  let pick = if c then grown else []
  in (length b, a == b, a == grown, length pick)

-- Scattering into an array of units and a histogram over it change nothing but check
-- nothing either; the result has the destination's shape.
-- ==
-- entry: scattered
-- input { 4i64 } output { 4i64 4i64 }
entry scattered (n: i64) =
  let dest = replicate n ()
  let s = scatter dest [0, 2] [(), ()]
  let h = reduce_by_index (replicate n ()) (\() () -> ()) () [1, 1] [(), ()]
  in (length s, length h)
