-- Iterative solvers differentiated through their iterations: Newton's method for sqrt in a
-- `while` loop run to convergence (vjp and jvp), Kepler's equation solved by Newton with an
-- iteration cap (a `while` with a tuple state and a compound condition; vjp in the pair
-- (M, e) and jvp), a fixed-point iteration in a `for` loop, and a least-squares loss through
-- the sqrt solver. Expected values from the implicit-function derivatives (by hand, evaluated
-- with numpy in f64 at the converged solutions), not from unrolled iterates.
-- ==
-- entry: sqrt_grad sqrt_jvp
-- input { [2.0f64, 0.25f64, 9.0f64, 0.001f64, 150.0f64] }
-- output { [0.35355339059327373f64, 1.0f64, 0.16666666666666666f64, 15.811388300841898f64, 0.040824829046386304f64] }
-- ==
-- entry: kepler_solve
-- input { [0.3f64, 1.0f64, 2.5f64, 5.0f64] [0.1f64, 0.5f64, 0.7f64, 0.2f64] }
-- output { [0.3326554004245759f64, 1.4987011335178484f64, 2.7604117874301304f64, 4.800780802854125f64] }
-- ==
-- entry: kepler_grad
-- input { [0.3f64, 1.0f64, 2.5f64, 5.0f64] [0.1f64, 0.5f64, 0.7f64, 0.2f64] }
-- output { [1.1043840068985222f64, 1.037362021893646f64, 0.6061494394527909f64, 1.0179726667468898f64] [0.3606410196776885f64, 1.0346672323734563f64, 0.22549779853953228f64, -1.0139984869288048f64] }
-- ==
-- entry: kepler_jvp
-- input { [0.3f64, 1.0f64, 2.5f64, 5.0f64] [0.1f64, 0.5f64, 0.7f64, 0.2f64] [1.0f64, -0.5f64, 0.25f64, 2.0f64] [0.5f64, 1.0f64, -1.0f64, 0.3f64] }
-- output { [1.2847045167373665f64, 0.5159862214266334f64, -0.07396043867633458f64, 1.7317457874151383f64] }
-- ==
-- entry: fix_grad
-- input { [0.5f64, 1.0f64, 0.8f64] }
-- output { [-0.32177126051365673f64, -0.29747434150983226f64, -0.3242050300312474f64] }
-- ==
-- entry: solver_loss_grad
-- input { [4.0f64, 2.0f64, 0.5f64] [1.0f64, 1.5f64, 0.2f64] }
-- output { [0.5f64, -0.06066017177982121f64, 0.7171572875253809f64] }

-- Square root by Newton's method in a while loop, run to convergence; the derivative of
-- the iterates converges to d sqrt(a)/da = 1/(2 sqrt a).
def newton_sqrt (a: f64) : f64 =
  loop y = a while f64.abs (y * y - a) > 1e-13 * a do 0.5 * (y + a / y)

entry sqrt_grad [n] (as: [n]f64) : [n]f64 = map (\a -> vjp newton_sqrt a 1) as
entry sqrt_jvp [n] (as: [n]f64) : [n]f64 = map (\a -> jvp newton_sqrt a 1) as

-- Kepler's equation E − e·sin E = M solved for the eccentric anomaly by Newton's method,
-- with an iteration cap. dE/dM = 1/(1 − e cos E), dE/de = sin E/(1 − e cos E).
def kepler (m: f64, e: f64) : f64 =
  let (ea, _) =
    loop (ea, i) = (m, 0i32)
    while i < 50 && f64.abs (ea - e * f64.sin ea - m) > 1e-14 do
      (ea - (ea - e * f64.sin ea - m) / (1 - e * f64.cos ea), i + 1)
  in ea

entry kepler_solve [n] (ms: [n]f64) (es: [n]f64) : [n]f64 = map2 (\m e -> kepler (m, e)) ms es

entry kepler_grad [n] (ms: [n]f64) (es: [n]f64) : ([n]f64, [n]f64) =
  unzip (map2 (\m e -> vjp kepler (m, e) 1) ms es)

entry kepler_jvp [n] (ms: [n]f64) (es: [n]f64) (dms: [n]f64) (des: [n]f64) : [n]f64 =
  map4 (\m e dm de -> jvp kepler (m, e) (dm, de)) ms es dms des

-- Fixed point x = cos(a·x) by plain iteration (200 steps of a `for` loop); implicit
-- differentiation gives dx/da = −x sin(a x)/(1 + a sin(a x)).
def fixpoint (a: f64) : f64 = loop x = 0.5 for _i < 200 do f64.cos (a * x)

entry fix_grad [n] (as: [n]f64) : [n]f64 = map (\a -> vjp fixpoint a 1) as

-- Implicit least squares: the gradient of Σ (x*(θ) − t)² with respect to θ where the
-- per-element solve x* = sqrt θ is the Newton loop above (a loss through a solver).
entry solver_loss_grad [n] (theta: [n]f64) (t: [n]f64) : [n]f64 =
  vjp (\th -> f64.sum (map2 (\a ti -> (newton_sqrt a - ti) ** 2) th t)) theta 1
