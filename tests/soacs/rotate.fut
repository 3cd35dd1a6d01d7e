-- rotate by amounts below zero, past the length, multiples of it, and of empty arrays
-- and of rows; and the gradient of a rotation (a rotation the other way).
-- (The compiled path reduces the amount modulo the length once and wraps each index with
-- one comparison: these pin down the cases where that differs from a modulo per row.)
-- ==
-- entry: rot
-- input { 0i64 [1, 2, 3, 4, 5] } output { [1, 2, 3, 4, 5] }
-- input { 1i64 [1, 2, 3, 4, 5] } output { [2, 3, 4, 5, 1] }
-- input { -1i64 [1, 2, 3, 4, 5] } output { [5, 1, 2, 3, 4] }
-- input { 5i64 [1, 2, 3, 4, 5] } output { [1, 2, 3, 4, 5] }
-- input { 7i64 [1, 2, 3, 4, 5] } output { [3, 4, 5, 1, 2] }
-- input { -8i64 [1, 2, 3, 4, 5] } output { [3, 4, 5, 1, 2] }
-- input { 35i64 [1, 2, 3, 4, 5] } output { [1, 2, 3, 4, 5] }
-- input { 3i64 empty([0]i32) } output { empty([0]i32) }
-- input { -4i64 [9] } output { [9] }

entry rot (r: i64) (xs: []i32) : []i32 = rotate r xs

-- ==
-- entry: rot_rows
-- input { 1i64 [[1, 2], [3, 4], [5, 6]] } output { [[3, 4], [5, 6], [1, 2]] }
-- input { -4i64 [[1, 2], [3, 4], [5, 6]] } output { [[5, 6], [1, 2], [3, 4]] }

entry rot_rows (r: i64) (xss: [][]i32) : [][]i32 = rotate r xss

-- The gradient of Σ w_i · xs[(i + r) mod n] with respect to xs is w rotated by -r.
-- ==
-- entry: rot_grad
-- input { 2i64 [1f64, 2, 3, 4, 5] [0.5f64, -1, 2, 0, 3] } output { [4f64, 5, 1, 2, 3] }
-- input { -7i64 [1f64, 2, 3, 4, 5] [0.5f64, -1, 2, 0, 3] } output { [3f64, 4, 5, 1, 2] }

entry rot_grad (r: i64) (w: []f64) (xs: []f64) : []f64 =
  vjp (\xs -> f64.sum (map2 (*) w (rotate r xs))) xs 1
