-- A loop that changes its array only by element updates is not strip-mined and stores no
-- array per iteration: the forward sweep keeps each iteration's position and the element
-- it overwrites; the return sweep carries the array backwards, writing the old element
-- back before re-running the body.
-- Expected: a₁ = x₁ + x₀²/2, a₂ = x₂ + a₁²/2, loss a₀ + a₁ + a₂, so
-- ∇ = [1 + x₀(1 + a₁), 1 + a₁, 1] = [4.5, 3.5, 1] at x = [1, 2, 3].
-- ==
-- tags { autodiff }
-- input { [1.0, 2.0, 3.0] } output { [4.5, 3.5, 1.0] }

entry main [n] (xs: [n]f64) : [n]f64 =
  vjp (\xs -> f64.sum (loop a = copy xs for i in 1..<n do
                         a with [i] = a[i] + 0.5 * a[i - 1] * a[i - 1])) xs 1
