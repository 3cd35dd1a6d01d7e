-- Loss of a two-layer perceptron on a batch: 784 inputs, a hidden layer of 256 ReLU units,
-- 10 outputs, softmax cross-entropy against integer labels, averaged over the batch.
-- w1 [H][I], b1 [H], w2 [C][H], b2 [C]; the gradient is with respect to all four.
--
-- Data (bench/apps/gen_data.py): batch 1024, I = 784, H = 256, C = 10.
-- ==
-- entry: mlp_loss mlp_grad
-- input @ data/mlp.in

def dot [n] (a: [n]f32) (b: [n]f32) : f32 = f32.sum (map2 (*) a b)

-- Rows of `xs` times the transpose of `w`, plus `b`: a dense layer on a batch.
def linear [bs] [i] [o] (w: [o][i]f32) (b: [o]f32) (xs: [bs][i]f32) : [bs][o]f32 =
  map (\x -> map2 (\wr bv -> dot wr x + bv) w b) xs

def logsumexp [n] (xs: [n]f32) : f32 =
  let m = f32.maximum xs
  in m + f32.log (f32.sum (map (\x -> f32.exp (x - m)) xs))

def loss [bs] [i] [h] [c] (xs: [bs][i]f32) (labels: [bs]i64)
                          (w1: [h][i]f32, b1: [h]f32, w2: [c][h]f32, b2: [c]f32) : f32 =
  let hidden = map (map (f32.max 0)) (linear w1 b1 xs)
  let logits = linear w2 b2 hidden
  let nll = map2 (\z lab -> logsumexp z - z[lab]) logits labels
  in f32.sum nll / f32.i64 bs

entry mlp_loss [bs] [i] [h] [c] (w1: [h][i]f32) (b1: [h]f32) (w2: [c][h]f32) (b2: [c]f32)
                                (xs: [bs][i]f32) (labels: [bs]i64) : f32 =
  loss xs labels (w1, b1, w2, b2)

entry mlp_grad [bs] [i] [h] [c] (w1: [h][i]f32) (b1: [h]f32) (w2: [c][h]f32) (b2: [c]f32)
                                (xs: [bs][i]f32) (labels: [bs]i64)
                              : ([h][i]f32, [h]f32, [c][h]f32, [c]f32) =
  vjp (loss xs labels) (w1, b1, w2, b2) 1
