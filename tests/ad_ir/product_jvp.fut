-- jvp of reduce (*): the dot product with the zero-counting gradient in the common case,
-- the rule on (value, tangent) pairs when the product is 0 or not finite (the gradient's
-- division by each factor would be wrong after an underflow). Expected values by hand:
-- d(∏xᵢ) = Σᵢ dxᵢ·∏_{j≠i} xⱼ.
-- ==
-- entry: prod64
-- input { [2.0, 3.0, 5.0] [1.0, 0.0, 2.0] } output { 30.0 27.0 }
-- input { [2.0, 0.0, 5.0] [1.0, 1.0, 2.0] } output { 0.0 10.0 }
-- input { [0.0, 0.0, 5.0] [1.0, 1.0, 2.0] } output { 0.0 0.0 }
-- input { [1e-200, 1e-200, 1e200] [1.0, 0.0, 0.0] } output { 0.0 1.0 }
-- input { empty([0]f64) empty([0]f64) } output { 1.0 0.0 }

entry prod64 (xs: []f64) (dxs: []f64) = jvp2 (reduce (*) 1) xs dxs

-- ==
-- entry: prod32
-- input { [1e-30f32, 1e-30f32, 1e30f32] [1f32, 0f32, 0f32] } output { 0f32 1f32 }
-- input { [0.5f32, 4f32] [1f32, 1f32] } output { 2f32 4.5f32 }

entry prod32 (xs: []f32) (dxs: []f32) = jvp2 (reduce (*) 1) xs dxs

-- jmp: the same rule per seed, the gradient computed once.
-- ==
-- entry: prod_jmp
-- input { [2.0, 3.0, 5.0] [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 0.0, 2.0]] }
-- output { [15.0, 10.0, 27.0] }

entry prod_jmp [k][n] (xs: [n]f64) (seeds: [k][n]f64) = jmp (reduce (*) 1) xs seeds
