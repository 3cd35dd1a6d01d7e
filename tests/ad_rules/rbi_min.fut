-- The `min` rule of reduce_by_index: per bin, the first position attaining the minimum
-- (the destination wins ties) gets the bin's cotangent.
-- ==
-- tags { autodiff }
-- input { [3f32, 5, 1, 7] [10f32, 20] } output { [0f32, 20, 10, 0] }

entry main (vs: []f32) (s: []f32) =
  vjp (\vs -> reduce_by_index (replicate 2 f32.inf) f32.min f32.inf [0, 1, 0, 5] vs) vs s
