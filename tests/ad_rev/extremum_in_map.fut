-- vjp of reduce min/max inside a map, over a free array (its adjoint is an accumulator):
-- the first extremum gets the adjoint, and nothing when the neutral element wins.
-- Expected values by hand: the lambda's result is extremum(xs)·i, so the adjoint of the
-- extremum's element is Σ i over iota 3 = 3.
-- ==
-- entry: min_in_map
-- input { [3.0, 1.0, 2.0, 1.0] } output { [0.0, 3.0, 0.0, 0.0] }
-- input { [-3.0, -4.0] } output { [0.0, 3.0] }
-- input { empty([0]f64) } output { empty([0]f64) }

entry min_in_map (xs: []f64) =
  vjp (\xs -> f64.sum (map (\i -> reduce f64.min f64.inf xs * f64.i64 i) (iota 3))) xs 1

-- ==
-- entry: max_in_map
-- input { [3.0, 1.0, 2.0, 3.0] } output { [3.0, 0.0, 0.0, 0.0] }
-- input { [-3.0, -4.0] } output { [0.0, 0.0] }

entry max_in_map (xs: []f64) =
  vjp (\xs -> f64.sum (map (\i -> reduce f64.max (-1.0) xs * f64.i64 i) (iota 3))) xs 1

-- ==
-- entry: min_top
-- input { [3.0, 1.0, 2.0, 1.0] 2.0 } output { [0.0, 2.0, 0.0, 0.0] }
-- input { empty([0]f64) 2.0 } output { empty([0]f64) }

entry min_top (xs: []f64) (s: f64) = vjp (reduce f64.min f64.inf) xs s
