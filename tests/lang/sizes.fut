-- Size parameters, sizes inferred from the context (rep, user functions with size
-- parameters only), size coercion and the entry-point size check.
-- ==
-- entry: dot
-- input { [1.0, 2.0, 3.0] [4.0, 5.0, 6.0] } output { 32.0 }
-- input { [1.0, 2.0] [4.0, 5.0, 6.0] } error: invalid sizes

def dot_prod [n] (a: [n]f64) (b: [n]f64) : f64 = f64.sum (map2 (*) a b)
entry dot [n] (a: [n]f64) (b: [n]f64) = dot_prod a b

-- ==
-- entry: zeros_ctx
-- input { 2i64 } output { [0f32, 1, 2] }

def zeros [n] : [n]f32 = replicate n 0
entry zeros_ctx (k: i64) = map2 (+) zeros (map f32.i64 (iota (k + 1)))

-- ==
-- entry: rep_ctx
-- input { [1, 2, 3] } output { [5, 5, 5] }

entry rep_ctx [n] (xs: [n]i32) : [n]i32 = map2 (\_ y -> y) xs (rep 5)

-- ==
-- entry: length_param
-- input { [[1, 2, 3], [4, 5, 6]] } output { 2i64 3i64 }

def dims [n][m] 't (_: [n][m]t) = (n, m)
entry length_param (a: [][]i32) = dims a

-- ==
-- entry: constant_size
-- input { [1, 2, 3] } output { 6 }
-- input { [1, 2] } error: invalid sizes

entry constant_size (xs: [3]i32) = i32.sum xs

-- ==
-- entry: top_level_size
-- input { [1f32, 2, 3, 4] } output { 10f32 }

def w : i64 = 4
entry top_level_size (xs: [w]f32) = f32.sum xs

-- ==
-- entry: unflatten_ctx
-- input { 2i64 3i64 } output { [[0i64, 1, 2], [3, 4, 5]] }

entry unflatten_ctx (r: i64) (c: i64) = unflatten (iota (r * c))

-- ==
-- entry: ascribed_empty
-- input { } output { empty([0][3]f32) 0i64 }

entry ascribed_empty : ([0][3]f32, i64) =
  let e = ([] : [0][3]f32)
  in (e, length e)

-- ==
-- entry: partly_unknown_size
-- input { 3i64 } output { [0i64, 1, 2, 3] }
-- input { -1i64 } error: Range 0..1..<-1 is invalid

-- The size `k + (if ...)` has an unknown part, so it is read from the value.
entry partly_unknown_size (k: i64) = map (\x -> x) (iota (k + (if k < 0 then 0 else 1)))

-- ==
-- entry: let_in_slice
-- input { [1, 2, 3, 4] 1i64 3i64 } output { [2, 3] }

entry let_in_slice (xs: []i32) (a: i64) (b: i64) = let v = xs[a:(let k = b + 0 in k)] in map (\x -> x) v
