-- Maps over short rows that replace an element at each row's own index, choose between
-- rows with an `if`, and find an arg-max with an `i64` reduction over an `iota`: the
-- softmax cross-entropy's gradient has all three (runic-jit runs them a row per SIMD
-- lane). Expected values: the gradient is softmax(z) − onehot(label), from numpy in f64;
-- the others by hand.
-- ==
-- entry: xent_grad
-- input { [[1f32, 2, 0.5, -1], [0f32, 0, 0, 0], [3f32, -2, 1, 3], [-1.5f32, 0.25, 2, 1],
--          [10f32, 9, -4, 0], [0.5f32, 0.5, 1.5, -0.5]]
--         [1i64, 3, 0, 2, 0, 3] }
-- output { [[0.224208f32, -0.390540, 0.135989, 0.030343],
--           [0.250000f32, 0.250000, 0.250000, -0.750000],
--           [-0.533163f32, 0.003146, 0.063180, 0.466837],
--           [0.019211f32, 0.110554, -0.363807, 0.234042],
--           [-0.268966f32, 0.268932, 0.000001, 0.000033],
--           [0.196612f32, 0.196612, 0.534447, -0.927671]] }
-- input { [[1f32, 2], [3f32, 4], [5f32, 6], [7f32, 8], [9f32, 10]] [0i64, 1, 0, 2, 1] }
-- error: out of bounds

def logsumexp [n] (xs: [n]f32) : f32 =
  let m = f32.maximum xs
  in m + f32.log (f32.sum (map (\x -> f32.exp (x - m)) xs))

entry xent_grad [b][c] (z: [b][c]f32) (labels: [b]i64) : [b][c]f32 =
  vjp (\z -> f32.sum (map2 (\r l -> logsumexp r - r[l]) z labels)) z 1

-- ==
-- entry: add_onehot
-- input { [[1f32, 2, 3], [4f32, 5, 6], [7f32, 8, 9], [0f32, 0, 0], [-1f32, -2, -3]]
--         [2i64, 0, 1, 1, 2] }
-- output { [[1f32, 2, 4], [5f32, 5, 6], [7f32, 9, 9], [0f32, 1, 0], [-1f32, -2, -2]] }

entry add_onehot [n][m] (a: [n][m]f32) (ls: [n]i64) : [n][m]f32 =
  map2 (\r l -> map2 (+) r (replicate m 0f32 with [l] = 1)) a ls

-- The first maximum of each row set to zero, when its index is below `lim`.
-- ==
-- entry: zero_first_max
-- input { [[1.0, 3, 3], [5.0, 4, 5], [0.0, -1, 2], [2.0, 2, 2], [-1.0, -1, -3]] 2i64 }
-- output { [[1.0, 0, 3], [0.0, 4, 5], [0.0, -1, 2], [0.0, 2, 2], [0.0, -1, -3]] }
-- input { [[1.0, 3, 3], [5.0, 4, 5], [0.0, -1, 2], [2.0, 2, 2], [-1.0, -1, -3]] 1099511627776i64 }
-- output { [[1.0, 0, 3], [0.0, 4, 5], [0.0, -1, 0], [0.0, 2, 2], [0.0, -1, -3]] }

entry zero_first_max [n][m] (a: [n][m]f64) (lim: i64) : [n][m]f64 =
  map (\r -> let mx = f64.maximum r
             let k = reduce_comm i64.min i64.highest
                       (map2 (\x i -> if x == mx then i else i64.highest) r (iota m))
             in if k < lim then copy r with [k] = 0 else r) a

-- An update guarded by its index (`-1` for none): the branch not taken is not checked.
-- ==
-- entry: double_at
-- input { [[1f32, 2, 3], [4f32, 5, 6], [7f32, 8, 9], [0f32, 0, 0], [-1f32, -2, -3]]
--         [2i64, -1, 0, -1, 1] }
-- output { [[1f32, 2, 6], [5f32, 6, 7], [14f32, 8, 9], [1f32, 1, 1], [-1f32, -4, -3]] }
-- input { [[1f32, 2, 3], [4f32, 5, 6], [7f32, 8, 9], [0f32, 0, 0], [-1f32, -2, -3]]
--         [2i64, -1, 3, -1, 1] }
-- error: out of bounds

entry double_at [n][m] (a: [n][m]f32) (ks: [n]i64) : [n][m]f32 =
  map2 (\r k -> if k >= 0 then copy r with [k] = r[k] * 2 else map (+ 1) r) a ks
