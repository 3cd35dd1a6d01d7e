-- Derivatives of scan, reduce_by_index, hist and scatter (closed forms worked by hand).
-- ==
-- tags { autodiff }
-- entry: grad_scan_add
-- input { [1f32, 2, 3] [1f32, 2, 3] } output { [6f32, 5, 3] }

entry grad_scan_add (xs: []f32) (ys_bar: []f32) = vjp (scan (+) 0) xs ys_bar

-- ==
-- entry: grad_scan_mul
-- input { [2f32, 3, 4] } output { [16f32, 10, 6] }
-- input { [2f32, 0, 4] } output { [1f32, 10, 0] }

entry grad_scan_mul (xs: []f32) = vjp (scan (*) 1) xs (map (const 1) xs)

-- ==
-- entry: grad_scan_min
-- input { [3.0, 1.0, 2.0] } output { [1.0, 2.0, 0.0] }

entry grad_scan_min (xs: []f64) = vjp (scan f64.min f64.inf) xs (map (const 1) xs)

-- ==
-- entry: grad_scan_tuple
-- input { [2.0, 3.0] [1.0, 1.0] } output { [0.0, 1.0] [3.0, 1.0] }

def affine (a1: f64, b1: f64) (a2: f64, b2: f64) = (a1 * a2, b1 * a2 + b2)
def last_of (as: []f64, bs: []f64) = (last (scan affine (1, 0) (zip as bs))).1
entry grad_scan_tuple (as: []f64) (bs: []f64) = vjp last_of (as, bs) 1

-- ==
-- entry: grad_rbi_add
-- input { [1f32, 2] [0i64, 1, 0, 5] [1f32, 2, 3, 4] [10f32, 20] }
-- output { [10f32, 20] [10f32, 20, 10, 0] }

entry grad_rbi_add (dest: []f32) (is: []i64) (vs: []f32) (seed: []f32) =
  vjp (\(d, v) -> reduce_by_index (copy d) (+) 0 is v) (dest, vs) seed

-- ==
-- entry: grad_rbi_mul
-- input { [2f32, 3] [0i64, 0, 1] [4f32, 5, 6] } output { [20f32, 6] [10f32, 8, 3] }
-- input { [2f32, 3] [0i64, 0, 1] [0f32, 5, 6] } output { [0f32, 6] [10f32, 0, 3] }

entry grad_rbi_mul (dest: []f32) (is: []i64) (vs: []f32) =
  vjp (\(d, v) -> reduce_by_index (copy d) (*) 1 is v) (dest, vs) [1, 1]

-- ==
-- entry: grad_rbi_min
-- input { [5f32, 1] [0i64, 0, 1] [3f32, 3, 1] } output { [0f32, 1] [1f32, 0, 0] }

entry grad_rbi_min (dest: []f32) (is: []i64) (vs: []f32) =
  vjp (\(d, v) -> reduce_by_index (copy d) f32.min f32.inf is v) (dest, vs) [1, 1]

-- ==
-- entry: grad_rbi_max
-- input { [5f32, 1] [0i64, 0, 1, 9] [7f32, 7, 0, 100] } output { [0f32, 1] [1f32, 0, 0, 0] }

entry grad_rbi_max (dest: []f32) (is: []i64) (vs: []f32) =
  vjp (\(d, v) -> reduce_by_index (copy d) f32.max f32.lowest is v) (dest, vs) [1, 1]

-- ==
-- entry: grad_rbi_user
-- input { [1.0, 1.0] [0i64, 1, 1] [2.0, 3.0, 4.0] } output { [1.0, 1.0] [4.0, 6.0, 8.0] }

-- Bins accumulate squares through a user-written associative operator.
entry grad_rbi_user (dest: []f64) (is: []i64) (vs: []f64) =
  vjp (\(d, v) -> reduce_by_index (copy d) (\a b -> a + b) 0 is (map (\x -> x * x) v)) (dest, vs) [1, 1]

-- ==
-- entry: grad_hist
-- input { [0i64, 1, 1] [1f32, 2, 3] 2f32 } output { [2f32, 4, 4] }

entry grad_hist (is: []i64) (vs: []f32) (w: f32) =
  vjp (\v -> hist (+) 0 2 is (map (* w) v)) vs [1, 2]

-- ==
-- entry: grad_scatter
-- input { [1f32, 2, 3, 4] [0i64, 2, 2, -1] [10f32, 20, 30, 40] [1f32, 2, 3, 4] }
-- output { [0f32, 2, 0, 4] [1f32, 0, 3, 0] }

entry grad_scatter (dest: []f32) (is: []i64) (vs: []f32) (seed: []f32) =
  vjp (\(d, v) -> scatter (copy d) is v) (dest, vs) seed

-- ==
-- entry: jvp_scatter
-- input { [1f32, 2, 3] [2i64, 0] [10f32, 20] } output { [1f32, 0, 1] }

entry jvp_scatter (dest: []f32) (is: []i64) (vs: []f32) =
  jvp (\(d, v) -> scatter (copy d) is v) (dest, vs) (map (const 0) dest, map (const 1) vs)

-- ==
-- entry: grad_map_free
-- input { [1.0, 2.0, 3.0] 2.0 } output { [2.0, 2.0, 2.0] 6.0 }

entry grad_map_free (xs: []f64) (k: f64) = vjp (\(xs, k) -> f64.sum (map (* k) xs)) (xs, k) 1
