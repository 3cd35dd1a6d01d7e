-- Assorted losses with less common constructs: the Chamfer distance between two point
-- clouds (f64.minimum per row, gradient in both clouds), a one-pass log-sum-exp as a reduce
-- with a tuple operator containing an `if` (gradient = softmax), gradient clipping through a
-- custom derivative (with_vjp), and a trimmed mean of squared residuals through filter.
-- Expected values: Chamfer from JAX (f64, no ties in the data); the others by hand (softmax
-- with numpy/JAX, clip(2·w·x, −c, c), 2(x−y)/kept on the kept residuals).
-- ==
-- entry: chamfer_grad
-- input { [[1.1f64, 0.34f64], [-0.54f64, -1.26f64], [-1.89f64, 0.02f64]] [[-0.81f64, -0.87f64], [-0.22f64, -0.05f64], [-2.28f64, 0.93f64], [-2.03f64, 1.86f64]] }
-- output { [[2.64f64, 0.78f64], [0.43999999999999995f64, -3.98f64], [1.8399999999999994f64, -7.32f64]] [[-1.08f64, 1.56f64], [-2.0f64, 1.64f64], [-1.5599999999999996f64, 3.64f64], [-0.2799999999999998f64, 3.68f64]] }
-- input { [[0.59f64, -0.47f64], [1.34f64, 0.02f64], [0.69f64, 0.11f64], [1.1f64, 1.06f64], [-0.91f64, -0.61f64]] [[0.34f64, -0.21f64], [-2.28f64, 2.03f64]] }
-- output { [[0.9999999999999998f64, -1.04f64], [2.0f64, 0.45999999999999996f64], [0.6999999999999998f64, 0.64f64], [1.52f64, 2.54f64], [0.23999999999999932f64, -6.079999999999999f64]] [[-2.7199999999999998f64, -1.8f64], [-2.7399999999999993f64, 5.279999999999999f64]] }
-- ==
-- entry: lse_stream_grad
-- input { [1.0f64, 3.0f64, -2.0f64, 0.5f64] }
-- output { [0.11055375036173921f64, 0.8168878633700657f64, 0.005504147127583673f64, 0.06705423914061147f64] }
-- input { [10.0f64, 10.5f64, -30.0f64, 9.0f64, 11.0f64] }
-- output { [0.17437148764032925f64, 0.2874899806762354f64, 7.407918515183176e-19f64, 0.06414768542935739f64, 0.47399084625407806f64] }
-- ==
-- entry: clipped_grad
-- input { 1.0f64 [-2.17f64, -2.08f64, -1.28f64, 0.56f64, 1.8f64] [-0.24f64, -0.39f64, 0.17f64, -0.37f64, 0.08f64] }
-- output { [1.0f64, 1.0f64, -0.43520000000000003f64, -0.41440000000000005f64, 0.28800000000000003f64] }
-- input { 0.5f64 [-1.14f64, 0.44f64, 0.39f64, -2.44f64] [-0.11f64, 0.16f64, 0.56f64, -0.82f64] }
-- output { [0.25079999999999997f64, 0.1408f64, 0.4368000000000001f64, 0.5f64] }
-- ==
-- entry: trimmed_grad
-- input { 1.0f64 [-1.33f64, -0.95f64, 0.55f64, -0.85f64, -0.76f64, 1.14f64] [-0.79f64, -0.9f64, -0.09f64, 0.2f64, 1.04f64, -0.88f64] }
-- output { [-0.36000000000000004f64, -0.03333333333333329f64, 0.4266666666666667f64, 0.0f64, 0.0f64, 0.0f64] }
-- input { 0.5f64 [-1.57f64, -0.12f64, 0.64f64, -1.48f64, -0.49f64] [0.31f64, 0.23f64, 0.08f64, -0.26f64, -0.8f64] }
-- output { [0.0f64, -0.2333333333333333f64, 0.37333333333333335f64, 0.0f64, 0.2066666666666667f64] }

-- Chamfer distance between two 2-D point clouds: for every point, the squared distance to
-- the nearest point of the other cloud (f64.minimum over a row), summed both ways.
def d2 (a: [2]f64) (b: [2]f64) : f64 = (a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2

def chamfer [n] [m] (p: [n][2]f64) (q: [m][2]f64) : f64 =
  f64.sum (map (\a -> f64.minimum (map (d2 a) q)) p)
  + f64.sum (map (\b -> f64.minimum (map (\a -> d2 a b) p)) q)

entry chamfer_grad [n] [m] (p: [n][2]f64) (q: [m][2]f64) : ([n][2]f64, [m][2]f64) =
  vjp (\(p, q) -> chamfer p q) (p, q) 1

-- A streaming (one-pass) log-sum-exp as a reduce with a tuple operator on (max, scaled sum).
def lse_op (m1: f64, s1: f64) (m2: f64, s2: f64) : (f64, f64) =
  if m1 >= m2 then (m1, s1 + s2 * f64.exp (m2 - m1))
  else (m2, s2 + s1 * f64.exp (m1 - m2))

def lse_stream [n] (x: [n]f64) : f64 =
  let (mx, s) = reduce lse_op (-f64.inf, 0) (map (\v -> (v, 1)) x)
  in mx + f64.log s

entry lse_stream_grad [n] (x: [n]f64) : [n]f64 = vjp lse_stream x 1

-- Gradient clipping with a custom derivative: the forward value is the identity, the
-- reverse pass clips every cotangent component to [−c, c].
def clip_grad [n] (c: f64) (x: [n]f64) : [n]f64 =
  with_vjp (\x -> x) (\_ dy -> map (\g -> f64.max (-c) (f64.min c g)) dy) x

entry clipped_grad [n] (c: f64) (x: [n]f64) (w: [n]f64) : [n]f64 =
  vjp (\x -> f64.sum (map2 (\wi v -> wi * v * v) w (clip_grad c x))) x 1

-- A trimmed loss: only the residuals below a threshold count (filter), as in outlier
-- rejection.
entry trimmed_grad [n] (thr: f64) (x: [n]f64) (y: [n]f64) : [n]f64 =
  vjp (\x -> let r = map2 (\a b -> (a - b) * (a - b)) x y
             let kept = filter (< thr) r
             in f64.sum kept / f64.i64 (i64.max 1 (length kept)))
      x 1
