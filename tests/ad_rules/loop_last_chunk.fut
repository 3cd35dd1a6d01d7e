-- A loop that carries an array is strip-mined, with the chunk size chosen at run time
-- (here one chunk: the tape is small). The forward sweep keeps the inner tape of the last
-- chunk, so the return sweep restores it instead of running the loop a second time.
-- Expected: x ← x·x + c twice per element from x₀; d/dx₀ = (2x₁)(2x₀), with x₁ = x₀² + c.
-- ==
-- tags { autodiff }
-- input { [1.0, -0.5] 0.5 } output { [6.0, -1.5] }

entry main [n] (xs: [n]f64) (c: f64) : [n]f64 =
  vjp (\xs -> f64.sum (loop ys = xs for _i < 2 do map (\y -> y * y + c) ys)) xs 1
