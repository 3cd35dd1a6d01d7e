-- Higher-order functions, partial application, sections, pipes, composition and the
-- function combinators of the prelude.
-- ==
-- entry: sections
-- input { [1, 2, 3] } output { [2, 4, 6] [0, -1, -2] [-1, 0, 1] 6 }

entry sections (xs: []i32) = (map (*2) xs, map (1-) xs, map (\x -> x - 2) xs, reduce (+) 0 xs)

-- ==
-- entry: pipes
-- input { [1, 2, 3, 4] } output { 20 }

entry pipes (xs: []i32) = xs |> map (+1) |> map (*2) |> reduce (+) 0 |> (\x -> x - 8)

-- ==
-- entry: compose
-- input { 3 } output { 8 7 }

entry compose (x: i32) = (((+1) >-> (*2)) x, ((+1) <-< (*2)) x)

-- ==
-- entry: combinators
-- input { 10 3 } output { -7 13 10 10 1024 }

entry combinators (a: i32) (b: i32) =
  (flip (-) a b, curry (\(p, q) -> p + q) a b, const a b, id a, iterate 10 (*2) 1)

-- ==
-- entry: until_while
-- input { 1 } output { 128 64 }

entry until_while (x: i32) = (iterate_until (> 100) (*2) x, iterate_while (< 50) (*2) x)

-- ==
-- entry: hof_param
-- input { [1.0, 2.0] } output { [2.0, 3.0] 3.0 }

def apply_all (f: f64 -> f64) (xs: []f64) = map f xs
entry hof_param (xs: []f64) = (apply_all (+ 1) xs, uncurry (+) (xs[0], xs[1]))

-- ==
-- entry: backticks
-- input { 7 2 } output { 5 9 }

def minus (a: i32) (b: i32) = a - b
entry backticks (a: i32) (b: i32) = (a `minus` b, (`minus` b) a + 4)

-- ==
-- entry: folds
-- input { [1, 2, 3] } output { -6 2 }

entry folds (xs: []i32) = (foldl (-) 0 xs, foldr (-) 0 xs)

-- ==
-- entry: point_free
-- input { [1, 2] [10, 20] } output { [11, 22] }

entry point_free = map2 (i32.+)
