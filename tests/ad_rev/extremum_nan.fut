-- reduce min/max under vjp with NaN, signed zeros and many ties: the forward sweep's
-- (value, position) reduce treats NaN as losing to any number (as f32.min and f32.max
-- do), prefers the first position on ties, and passes nothing on when the neutral element
-- wins or every element is NaN. Expected values by hand.

-- ==
-- entry: min_skips_nan
-- input { [f32.nan, 3f32, 1, f32.nan, 1] } output { [0f32, 0, 1, 0, 0] }
-- input { [f32.nan, f32.nan] } output { [0f32, 0] }
entry min_skips_nan (xs: []f32) = vjp (reduce f32.min f32.inf) xs 1

-- ==
-- entry: max_skips_nan
-- input { [1f64, f64.nan, 5, 5] } output { [0f64, 0, 1, 0] }
-- input { [f64.nan] } output { [0f64] }
entry max_skips_nan (xs: []f64) = vjp (reduce f64.max (-f64.inf)) xs 1

-- The neutral element is NaN itself: the result is NaN only when every element is.
-- ==
-- entry: nan_neutral
-- input { [f32.nan, 2f32, f32.nan] } output { [0f32, 1, 0] }
-- input { [f32.nan, f32.nan] } output { [0f32, 0] }
entry nan_neutral (xs: []f32) = vjp (reduce f32.min f32.nan) xs 1

-- Zero and negative zero compare equal: the first of them is the minimum's position.
-- ==
-- entry: signed_zeros
-- input { [1f32, 0, -0f32] } output { [0f32, 1, 0] }
-- input { [-0f32, 0f32] } output { [1f32, 0] }
entry signed_zeros (xs: []f32) = vjp (reduce f32.min f32.inf) xs 1

-- Ties far apart in a long array (the reduction is split between workers): the first
-- minimum gets the cotangent. Returns the cotangent at both ties and the total.
-- ==
-- entry: far_ties
-- input { 100000i64 } output { 1f32 0f32 1f32 }
entry far_ties (n: i64) =
  let xs = replicate n 2f32 with [n - 30000] = 1 with [n - 10000] = 1
  let g = vjp (reduce_comm f32.min f32.inf) xs 1
  in (g[n - 30000], g[n - 10000], f32.sum g)

-- Every element equal: the first one.
-- ==
-- entry: all_equal
-- input { 50000i64 } output { 1f32 1f32 }
entry all_equal (n: i64) =
  let g = vjp (reduce_comm f32.max (-f32.inf)) (replicate n 3f32) 1
  in (g[0], f32.sum g)
