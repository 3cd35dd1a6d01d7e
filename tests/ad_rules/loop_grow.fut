-- A loop whose carried array doubles: the loop runs once recording each iteration's
-- size, an exclusive scan gives the offsets, a copy stores every iteration's value in one
-- flat tape, and the backward loop carries the size of the array's adjoint.
-- Expected: Σ of [x, x², x², x³, …] after three doublings is x(1+x)³, whose derivative is
-- (1+x)²(1+4x).
-- ==
-- tags { autodiff }
-- input { 2.0 } output { 81.0 }
-- input { -0.5 } output { -0.25 }

entry main (x: f64) : f64 =
  vjp (\x -> let xs = loop xs = [x] for _i < 3 do concat xs (map (* x) xs) in f64.sum xs) x 1
