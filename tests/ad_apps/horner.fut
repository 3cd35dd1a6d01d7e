-- Polynomial evaluation by Horner's rule in a sequential loop (`for i < n` with a computed
-- index, and `for c in reverse cs`): values, the gradient with respect to the coefficients,
-- first derivatives in x (jvp and vjp, inside a map), second derivatives (forward-over-
-- reverse, reverse-over-reverse, forward-over-forward), and a mixed derivative (vjp in the
-- coefficients of a jvp in x). Includes a constant polynomial (n = 1). Expected values from
-- JAX (f64).
-- ==
-- entry: poly_vals
-- input { [-0.8f64, 0.24f64, -1.66f64, 0.66f64] [1.14f64, -0.45f64, 0.43f64] }
-- output { [-1.7059169599999997f64, -1.3042925f64, -0.95125938f64] }
-- input { [-2.03f64, 1.41f64, -0.05f64, 2.52f64, 0.83f64, 0.28f64] [-0.66f64, 1.39f64, -0.51f64, 1.57f64, -0.4f64] }
-- output { [-3.584444923328f64, 11.152341171871997f64, -3.0498950587279996f64, 17.526334719896003f64, -2.7448992f64] }
-- input { [0.81f64] [-0.89f64, 0.77f64] }
-- output { [0.81f64, 0.81f64] }
-- ==
-- entry: poly_grad_coeffs
-- input { [-0.8f64, 0.24f64, -1.66f64, 0.66f64] [1.14f64, -0.45f64, 0.43f64] [0.25f64, -0.39f64, -0.86f64] }
-- output { [-1.0f64, 0.09070000000000006f64, 0.08691099999999996f64, 0.33754872999999996f64] }
-- input { [-2.03f64, 1.41f64, -0.05f64, 2.52f64, 0.83f64, 0.28f64] [-0.66f64, 1.39f64, -0.51f64, 1.57f64, -0.4f64] [0.19f64, -1.52f64, 2.34f64, -0.09f64, -0.39f64] }
-- output { [0.5299999999999998f64, -3.4169f64, -2.529635f64, -4.770498829999998f64, -6.036618002299998f64, -8.846141954938997f64] }
-- input { [0.81f64] [-0.89f64, 0.77f64] [-1.17f64, 0.55f64] }
-- output { [-0.6199999999999999f64] }
-- ==
-- entry: poly_deriv
-- input { [-0.8f64, 0.24f64, -1.66f64, 0.66f64] [1.14f64, -0.45f64, 0.43f64] }
-- output { [-0.9715919999999997f64, 2.1349499999999995f64, -0.8214979999999998f64] [-0.9715919999999997f64, 2.1349499999999995f64, -0.8214979999999998f64] }
-- input { [-2.03f64, 1.41f64, -0.05f64, 2.52f64, 0.83f64, 0.28f64] [-0.66f64, 1.39f64, -0.51f64, 1.57f64, -0.4f64] }
-- output { [4.080295584f64, 30.020145653999993f64, 3.0816674940000004f64, 41.24171357400001f64, 2.4829600000000003f64] [4.080295584f64, 30.020145653999993f64, 3.0816674940000004f64, 41.24171357400001f64, 2.4829600000000003f64] }
-- input { [0.81f64] [-0.89f64, 0.77f64] }
-- output { [0.0f64, 0.0f64] [0.0f64, 0.0f64] }
-- ==
-- entry: poly_second
-- input { [-0.8f64, 0.24f64, -1.66f64, 0.66f64] [1.14f64, -0.45f64, 0.43f64] }
-- output { [1.1944f64, -5.102f64, -1.6171999999999995f64] [1.1944f64, -5.102f64, -1.6171999999999995f64] [1.1944f64, -5.102f64, -1.6171999999999995f64] }
-- input { [-2.03f64, 1.41f64, -0.05f64, 2.52f64, 0.83f64, 0.28f64] [-0.66f64, 1.39f64, -0.51f64, 1.57f64, -0.4f64] }
-- output { [-7.350601600000001f64, 55.19998239999999f64, -5.9634496000000015f64, 69.86020480000002f64, -4.912800000000001f64] [-7.350601600000001f64, 55.19998239999999f64, -5.9634496000000015f64, 69.86020480000002f64, -4.912800000000001f64] [-7.350601600000001f64, 55.19998239999999f64, -5.9634496000000015f64, 69.86020480000002f64, -4.912800000000001f64] }
-- input { [0.81f64] [-0.89f64, 0.77f64] }
-- output { [0.0f64, 0.0f64] [0.0f64, 0.0f64] [0.0f64, 0.0f64] }
-- ==
-- entry: poly_mixed
-- input { [-0.8f64, 0.24f64, -1.66f64, 0.66f64] 1.14f64 }
-- output { [0.0f64, 1.0f64, 2.28f64, 3.8987999999999996f64] }
-- input { [-2.03f64, 1.41f64, -0.05f64, 2.52f64, 0.83f64, 0.28f64] -0.66f64 }
-- output { [0.0f64, 1.0f64, -1.32f64, 1.3068000000000002f64, -1.1499840000000001f64, 0.9487368000000002f64] }
-- input { [0.81f64] -0.89f64 }
-- output { [0.0f64] }

-- p(x) = cs[0] + cs[1]·x + … + cs[n−1]·x^(n−1), by Horner's rule from the top coefficient.
def horner [n] (cs: [n]f64) (x: f64) : f64 =
  loop acc = 0 for i < n do acc * x + cs[n - 1 - i]

-- The same with a `for … in` loop over the reversed coefficients.
def horner' [n] (cs: [n]f64) (x: f64) : f64 =
  loop acc = 0 for c in reverse cs do acc * x + c

entry poly_vals [n] [m] (cs: [n]f64) (xs: [m]f64) : [m]f64 =
  map (horner cs) xs

-- Gradient of a weighted sum of values with respect to the coefficients.
entry poly_grad_coeffs [n] [m] (cs: [n]f64) (xs: [m]f64) (w: [m]f64) : [n]f64 =
  vjp (\cs -> f64.sum (map2 (*) w (map (horner' cs) xs))) cs 1

-- p'(x) in forward and in reverse mode, per point.
entry poly_deriv [n] [m] (cs: [n]f64) (xs: [m]f64) : ([m]f64, [m]f64) =
  (map (\x -> jvp (horner cs) x 1) xs, map (\x -> vjp (horner' cs) x 1) xs)

-- p''(x) as forward-over-reverse, reverse-over-reverse and forward-over-forward.
entry poly_second [n] [m] (cs: [n]f64) (xs: [m]f64) : ([m]f64, [m]f64, [m]f64) =
  (map (\x -> jvp (\x -> vjp (horner cs) x 1) x 1) xs,
   map (\x -> vjp (\x -> vjp (horner cs) x 1) x 1) xs,
   map (\x -> jvp (\x -> jvp (horner' cs) x 1) x 1) xs)

-- Mixed second derivative ∂²/∂x∂cs of p(x): the gradient with respect to the coefficients
-- of p'(x), i.e. [0, 1, 2x, 3x², …].
entry poly_mixed [n] (cs: [n]f64) (x: f64) : [n]f64 =
  vjp (\cs -> jvp (horner cs) x 1) cs 1
