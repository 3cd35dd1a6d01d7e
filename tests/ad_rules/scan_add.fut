-- The `+` rule of scan: a reversed prefix sum of the cotangents.
-- ==
-- tags { autodiff }
-- input { [1f32, 2, 3] [1f32, 10, 100] } output { [111f32, 110, 100] }

entry main (xs: []f32) (s: []f32) = vjp (scan (+) 0) xs s
