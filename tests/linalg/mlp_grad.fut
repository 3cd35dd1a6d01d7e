-- The gradient of a two-layer MLP with softmax cross-entropy (the bench/apps MLP in
-- miniature): after AD, acc-to-reduce, hoisting and fission, every matrix product of the
-- gradient runs as a GEMM on the ir backend (crates/runic-cli/tests/acc_opt.rs counts
-- them). Expected values from JAX (jax.value_and_grad of the same loss).
-- ==
-- input { [[0.25f32, 0.79f32, 0.55f32], [-0.55f32, -0.4f32, 0.75f32], [-0.99f32, 0.64f32, 0.59f32], [-0.06f32, -0.39f32, -0.44f32]] [-0.49f32, -0.11f32, 0.01f32, 0.11f32] [[0.99f32, 0.59f32, 0.24f32, 0.98f32], [-0.57f32, -0.68f32, 0.23f32, -0.91f32]] [-0.93f32, 0.03f32]
--          [[-0.07f32, 0.83f32, 0.26f32], [0.03f32, -0.01f32, -0.5f32], [-0.98f32, -0.62f32, 0.38f32], [-0.6f32, -0.26f32, -0.99f32], [0.66f32, -0.69f32, -0.46f32]] [[1f32, 0f32], [0f32, 1f32], [0f32, 1f32], [1f32, 0f32], [0f32, 1f32]] }
-- output { 0.780786f32 [[0.0135847f32, -0.161076f32, -0.0504575f32], [-0.167964f32, -0.106263f32, 0.0651289f32], [-0.00123547f32, -0.00186925f32, 0.00018938f32], [-0.0216744f32, -0.253228f32, 0.0846891f32]] [-0.194067f32, 0.171392f32, 0.000105521f32, 0.449993f32] [[-0.0362259f32, 0.129826f32, 0.0139582f32, 0.0594156f32], [0.0362259f32, -0.129826f32, -0.0139582f32, -0.0594156f32]] [0.113689f32, -0.113689f32] }

def dot [n] (a: [n]f32) (b: [n]f32): f32 = reduce (+) 0 (map2 (*) a b)
def layer [i][o] (w: [o][i]f32) (b: [o]f32) (x: [i]f32): [o]f32 = map2 (\r c -> dot r x + c) w b

def loss [n][i][h][o] (w1: [h][i]f32, b1: [h]f32, w2: [o][h]f32, b2: [o]f32)
                      (xs: [n][i]f32) (ys: [n][o]f32): f32 =
  let per x y =
    let hid = map (f32.max 0) (layer w1 b1 x)
    let z = layer w2 b2 hid
    let mx = f32.maximum z
    let lse = mx + f32.log (f32.sum (map (\v -> f32.exp (v - mx)) z))
    in lse - dot z y
  in f32.sum (map2 per xs ys) / f32.i64 n

entry main [n][i][h][o] (w1: [h][i]f32) (b1: [h]f32) (w2: [o][h]f32) (b2: [o]f32)
                        (xs: [n][i]f32) (ys: [n][o]f32) =
  let (l, (g1, gb1, g2, gb2)) = vjp2 (\p -> loss p xs ys) (w1, b1, w2, b2) 1
  in (l, g1, gb1, g2, gb2)
