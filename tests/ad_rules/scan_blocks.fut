-- A scan over pairs whose components never read each other (a block-diagonal Jacobian):
-- the general rule solves two 1×1 recurrences instead of one 2×2 (see the snapshot).
-- Expected: x_i gets Σ_{k≥i} (product of x_0..x_k) / x_i (the seed is all ones), and y_i
-- gets the number of prefix maxima it is part of — [2, 0, 1] for y = [2, 1, 3] (max at
-- 0, 0, 2; ties go to the left operand).
-- ==
-- tags { autodiff }
-- input { [1f64, 2, 3] [2f64, 1, 3] } output { [9f64, 4, 2] [2f64, 0, 1] }

entry main (xs: []f64) (ys: []f64) =
  let f (xs, ys) = unzip (scan (\(a1, b1) (a2, b2) -> (a1 * a2, f64.max b1 b2)) (1, -f64.inf) (zip xs ys))
  let (gx, gy) = vjp f (xs, ys) (map (\_ -> 1) xs, map (\_ -> 1) ys)
  in (gx, gy)
