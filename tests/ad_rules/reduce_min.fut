-- The `min` rule of reduce: the smallest index attaining the minimum gets the cotangent.
-- ==
-- tags { autodiff }
-- input { [3f32, 1, 1, 2] } output { [0f32, 1, 0, 0] }

entry main (xs: []f32) = vjp (reduce f32.min f32.inf) xs 1
