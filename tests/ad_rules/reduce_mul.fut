-- The `*` rule of reduce: zeros are counted and the non-zeros multiplied (exact with zeros).
-- ==
-- tags { autodiff }
-- input { [2f32, 0, 5] } output { [0f32, 10, 0] }
-- input { [2f32, 3, 5] } output { [15f32, 10, 6] }
-- input { [0f32, 3, 0] } output { [0f32, 0, 0] }

entry main (xs: []f32) = vjp (reduce (*) 1) xs 1
