-- A size coercion `e :> [n]t` inside a lambda whose parameter has no type annotation: the
-- parameter's size is only inferred later (from the map), and the coercion's named size
-- `n` must not be unified with it — the expression's size (here n + n − 1, or n − 1) is
-- checked against n when it runs, as with an annotated parameter. Expected values by hand.
-- ==
-- entry: doubled
-- input { [[7], [8]] } output { [[7], [8]] }
-- input { [[1, 2, 3]] } error: shape \[5\] cannot match shape of type "\[3\]i32"

-- `r ++ r[1:]` has n + n − 1 elements: n only when n = 1.
entry doubled [n] (m: [][n]i32) = map (\r -> (r ++ r[1:]) :> [n]i32) m

-- ==
-- entry: wrap
-- input { [[1, 2], [3, 4]] } output { [[1, 2], [3, 4]] }
-- input { [[1, 2, 3]] } output { [[1, 2, 3]] }

-- The first n of them, bound to a name before the coercion.
entry wrap [n] (m: [][n]i32) =
  map (\r -> let c = (r ++ r[1:])[:n] in c :> [n]i32) m

-- ==
-- entry: tail_padded
-- input { [[1, 2, 3], [4, 5, 6]] } output { [[2, 3, 0], [5, 6, 0]] }
-- input { [[9], [8]] } output { [[0], [0]] }

entry tail_padded [n] (m: [][n]i32) = map (\r -> (r[1:] ++ [0]) :> [n]i32) m

-- ==
-- entry: too_short
-- input { [[1, 2, 3]] } error: shape \[2\] cannot match shape of type "\[3\]i32"

entry too_short [n] (m: [][n]i32) = map (\r -> r[1:] :> [n]i32) m
