-- Logistic regression: the mean log-loss of a linear model over a batch, and its gradient
-- with respect to the weights and the bias. Used by examples/train_logreg.rs.

def dot [d] (a: [d]f32) (b: [d]f32): f32 = f32.sum (map2 (*) a b)

-- log (1 + e^z) - y z: the log-loss of the logit z, stable for large |z|.
def logloss (z: f32) (y: f32): f32 =
  f32.max z 0 + f32.log (1 + f32.exp (-(f32.abs z))) - y * z

def loss [n][d] (w: [d]f32, b: f32) (xs: [n][d]f32) (ys: [n]f32): f32 =
  f32.sum (map2 (\x y -> logloss (dot w x + b) y) xs ys) / f32.i64 n

entry mean_loss [n][d] (w: [d]f32) (b: f32) (xs: [n][d]f32) (ys: [n]f32): f32 =
  loss (w, b) xs ys

-- The loss and its gradient in one pass.
entry grad_loss [n][d] (w: [d]f32) (b: f32) (xs: [n][d]f32) (ys: [n]f32) =
  let (l, (gw, gb)) = vjp2 (\p -> loss p xs ys) (w, b) 1
  in (l, gw, gb)
