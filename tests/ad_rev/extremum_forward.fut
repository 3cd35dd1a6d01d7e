-- reduce min/max under vjp: the forward sweep keeps the extremum's position (one reduce
-- over (value, index) pairs) and the return sweep sends the cotangent there. Expected
-- values by hand: the first position attaining the extremum gets the cotangent; nothing
-- when the neutral element wins or the result is NaN.

-- ==
-- entry: first_min
-- input { [3f32, 1, 1, 2] 2f32 } output { [0f32, 2, 0, 0] }
-- input { [5f32] 1f32 } output { [1f32] }
entry first_min (xs: []f32) (s: f32) = vjp (reduce f32.min f32.inf) xs s

-- ==
-- entry: neutral_wins
-- input { [3f32, 1, 2] } output { [0f32, 0, 0] }
-- input { [3f32, -1, -1] } output { [0f32, 1, 0] }
entry neutral_wins (xs: []f32) = vjp (reduce f32.min 0) xs 1

-- ==
-- entry: last_max
-- input { [1f32, 4, 2, 4] } output { 4f32 [0f32, 1, 0, 0] }
entry last_max (xs: []f32) = vjp2 (reduce f32.max (-f32.inf)) xs 1

-- ==
-- entry: rows
-- input { [[1f32, 0, 2], [7f32, 7, 7], [-1f32, 5, -3]] }
-- output { [[0f32, 1, 0], [1f32, 0, 0], [0f32, 0, 1]] }
entry rows (xss: [][]f32) = vjp (map (reduce f32.min f32.inf)) xss (replicate (length xss) 1)

-- ==
-- entry: product_with_zero
-- input { [2f32, 0, 3] } output { [0f32, 6, 0] }
-- input { [2f32, 4, 3] } output { [12f32, 6, 8] }
entry product_with_zero (xs: []f32) = vjp (reduce (*) 1) xs 1
