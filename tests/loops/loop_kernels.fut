-- Sequential `for` loops run as native kernels (runic-opt `loops-as-kernels`): a scalar
-- recurrence, an RK4 integrator over a `[2]` state and its gradient, a loop over a map
-- whose width is known only at run time (a kernel when it is at most 64, the loop as
-- written otherwise), in-place updates, and an update past the end, reported as before.
-- Expected values: numpy (tests/loops/oracle.py), the gradient by central
-- finite differences.
-- ==
-- entry: logistic
-- input { 3.7 0.2 50i64 } output { 0.3784296846914294 }
-- input { 3.7 0.2 0i64 } output { 0.2 }

entry logistic (r: f64) (x0: f64) (n: i64) : f64 =
  loop x = x0 for _i < n do r * x * (1 - x)

def rhs (p: [4]f64) (s: [2]f64) : [2]f64 =
  [p[0] * s[0] - p[1] * s[0] * s[1], p[2] * s[0] * s[1] - p[3] * s[1]]

def axpy [n] (a: f64) (x: [n]f64) (y: [n]f64) : [n]f64 = map2 (\xi yi -> a * xi + yi) x y

def rk4 (p: [4]f64) (h: f64) (steps: i64) (s0: [2]f64) : [2]f64 =
  loop s = s0 for _i < steps do
    let k1 = rhs p s
    let k2 = rhs p (axpy (h / 2) k1 s)
    let k3 = rhs p (axpy (h / 2) k2 s)
    let k4 = rhs p (axpy h k3 s)
    in map5 (\si a b c d -> si + h / 6 * (a + 2 * b + 2 * c + d)) s k1 k2 k3 k4

-- ==
-- entry: lotka_volterra
-- input { [1.1, 0.4, 0.1, 0.4] 0.01 500i64 [10.0, 10.0] }
-- output { [0.024175274403702065, 1.895689740530833] }

entry lotka_volterra (p: [4]f64) (h: f64) (steps: i64) (s0: [2]f64) : [2]f64 =
  rk4 p h steps s0

-- ==
-- entry: lotka_volterra_grad
-- input { [1.1, 0.4, 0.1, 0.4] 0.01 200i64 [10.0, 10.0] }
-- output { [0.7346163718169318, -6.325211961422106, -6.017372785854791, 1.8393265869554032] }

entry lotka_volterra_grad (p: [4]f64) (h: f64) (steps: i64) (s0: [2]f64) : [4]f64 =
  vjp (\p -> let s = rk4 p h steps s0 in s[0] * s[1]) p 1

-- ==
-- entry: halving
-- input { [1.0, 2.0, 3.0] 4i64 } output { [4.3125, 4.375, 4.4375] }

-- a ← a/2 + i, k times: a map over the array's width inside the loop.
entry halving [n] (xs: [n]f64) (k: i64) : [n]f64 =
  loop a = copy xs for i < k do map (\v -> v * 0.5 + f64.i64 i) a

-- ==
-- entry: halving_sum
-- input { 3i64 4i64 } output { 10.921875 }
-- input { 64i64 4i64 } output { 263.5 }
-- input { 100i64 4i64 } output { 439.84375 }

-- The same over i/4 − 10 for i < n, summed: 64 elements run in the kernel, 100 as written.
entry halving_sum (n: i64) (k: i64) : f64 =
  f64.sum (halving (map (\i -> f64.i64 i * 0.25 - 10) (iota n)) k)

-- ==
-- entry: running_sum
-- input { [1.0, 2.0, 3.0, 4.0] } output { [1.0, 3.0, 6.0, 10.0] }

entry running_sum [n] (xs: [n]f64) : [n]f64 =
  loop a = copy xs for i in 1..<n do a with [i] = a[i] + a[i - 1]

-- ==
-- entry: past_the_end
-- input { [1.0, 2.0, 3.0] }
-- error: Index \[3\] out of bounds for array of shape \[3\]

entry past_the_end [n] (xs: [n]f64) : [n]f64 =
  loop a = copy xs for i < n do a with [i + 1] = a[i] * 2
