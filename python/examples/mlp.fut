-- A two-layer perceptron with softmax cross-entropy: the loss of a batch, for
-- python/examples/train_mlp.py to differentiate with runic.value_and_grad.

def dot [n] (a: [n]f32) (b: [n]f32): f32 = f32.sum (map2 (*) a b)
def layer [i][o] (w: [o][i]f32) (b: [o]f32) (x: [i]f32): [o]f32 = map2 (\r c -> dot r x + c) w b

entry loss [n][i][h][o] (w1: [h][i]f32) (b1: [h]f32) (w2: [o][h]f32) (b2: [o]f32)
                        (xs: [n][i]f32) (ys: [n][o]f32): f32 =
  let per x y =
    let hid = map (f32.max 0) (layer w1 b1 x)
    let z = layer w2 b2 hid
    let mx = f32.maximum z
    let lse = mx + f32.log (f32.sum (map (\v -> f32.exp (v - mx)) z))
    in lse - dot z y
  in f32.sum (map2 per xs ys) / f32.i64 n
