-- Causal attention whose masked score is not a plain dot product (`Σ q·k·2`, which no
-- rewrite takes out of the branch `if j <= i`): the keys' adjoint is built in the branch
-- and stays an accumulator, while the values' adjoint `Aᵀ·dO` of the same with_acc still
-- becomes a sum (crates/runic-cli/tests/acc_opt.rs). Expected values from JAX (f64,
-- `jnp.where` for the mask).
-- ==
-- entry: masked_grad
-- input { [[0.65f64, -0.02f64], [0.67f64, -0.34f64], [1.05f64, -0.01f64]] [[0.58f64, -1.29f64], [0.35f64, -1.69f64], [-2.04f64, -0.3f64]] [[-0.9f64, 0.16f64], [2.24f64, -0.83f64], [-0.62f64, 0.21f64]] [[0.49f64, -0.18f64], [-0.21f64, 0.7f64], [0.52f64, -1.03f64]] }
-- output { [[0.0f64, 0.0f64], [0.15547505925330304f64, 0.2703914073970489f64], [-0.276283385892304f64, -0.5056109108444877f64]] [[-0.8577992467873051f64, -0.21734979291437387f64], [0.8625542933454111f64, 0.21730450675667765f64], [-0.004755046558106296f64, 4.528615769625044e-05f64]] [[0.7029257811024103f64, -0.4571673374746426f64], [0.09579534831893327f64, -0.05029951503301861f64], [0.0012788705786564855f64, -0.0025331474923388077f64]] }

def softmax [n] (z: [n]f64) : [n]f64 =
  let e = map (\v -> f64.exp (v - f64.maximum z)) z
  in map (/ f64.sum e) e

def masked [n] [d] [dv] (q: [n][d]f64) (k: [n][d]f64) (v: [n][dv]f64) : [n][dv]f64 =
  map2 (\i qi -> let s = map2 (\j kj -> if j <= i then f64.sum (map2 (\a b -> a * b * 2) qi kj)
                                        else -f64.inf)
                              (iota n) k
                 let a = softmax s
                 in map (\col -> f64.sum (map2 (*) a col)) (transpose v))
       (iota n) q

entry masked_grad [n] [d] [dv] (q: [n][d]f64) (k: [n][d]f64) (v: [n][dv]f64) (dout: [n][dv]f64)
                  : ([n][d]f64, [n][d]f64, [n][dv]f64) =
  vjp (\(q, k, v) -> masked q k v) (q, k, v) dout
