-- Derivatives of reduce with +, *, min, max and a user-defined operator, in both modes.
-- Expected values: closed forms (the gradient of a sum is all ones; of a product the
-- products of the other elements, exact with zeros; of min/max a one-hot vector at the
-- first extremum).
-- ==
-- tags { autodiff }
-- entry: grad_sum
-- input { [1f32, 2, 3] } output { [1f32, 1, 1] }

entry grad_sum (xs: []f32) = vjp (reduce (+) 0) xs 1

-- ==
-- entry: grad_prod
-- input { [2f32, 3, 5] } output { [15f32, 10, 6] }
-- input { [2f32, 0, 5] } output { [0f32, 10, 0] }
-- input { [0f32, 0, 5] } output { [0f32, 0, 0] }

entry grad_prod (xs: []f32) = vjp (reduce (*) 1) xs 1

-- ==
-- entry: jvp_prod
-- input { [2f32, 0, 5] [1f32, 1, 1] } output { 10f32 }

entry jvp_prod (xs: []f32) (dxs: []f32) = jvp f32.product xs dxs

-- Fixed: f32.lowest is not data syntax (data-tests-cli.md allows only fN.nan, fN.inf and
-- -fN.inf); it equals -f32.inf, which the second case now uses.
-- ==
-- entry: grad_max
-- input { [1f32, 7, 3, 7] } output { [0f32, 1, 0, 0] }
-- input { [-f32.inf, -f32.inf] } output { [0f32, 0] }

entry grad_max (xs: []f32) = vjp (reduce f32.max f32.lowest) xs 1

-- ==
-- entry: grad_min
-- input { [4.0, 1.0, 1.0, 2.0] } output { [0.0, 1.0, 0.0, 0.0] }

entry grad_min (xs: []f64) = vjp f64.minimum xs 1

-- ==
-- entry: grad_user_op
-- input { [1.0, 2.0, 3.0] } output { [2.0, 4.0, 6.0] }

-- Sum of squares folded with an associative operator that squares nothing itself: the
-- operator is plain addition written as a lambda, applied to squared elements.
entry grad_user_op (xs: []f64) = vjp (\xs -> reduce (\a b -> a + b) 0 (map (\x -> x * x) xs)) xs 1

-- ==
-- entry: grad_logsumexp
-- input { [0.0, 1.0, 2.0] } output { [0.09003057317038046, 0.24472847105479767, 0.6652409557748219] }

def logsumexp (xs: []f64) = f64.log (f64.sum (map f64.exp xs))
entry grad_logsumexp (xs: []f64) = vjp logsumexp xs 1
