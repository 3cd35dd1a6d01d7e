-- A map that reads a free array at computed indices: the array's adjoint is accumulated
-- through an accumulator (never a copy of the array per element).
-- ==
-- tags { autodiff }
-- input { [1f32, 2, 3] [1f32, 10, 100] } output { [2f32, 0, 220] }

entry main (xs: []f32) (s: []f32) = vjp (\xs -> map (\i -> xs[i] * 2) [0, 2, 2]) xs s
