-- Parameter fitting for the Lotka-Volterra ODE integrated with fixed-step RK4 in a `for`
-- loop over a 2-element state array: final state, the gradient of a fit loss with respect
-- to the parameter record {α, β, δ, γ}, and the 2×2 sensitivity matrix ∂s(T)/∂s0 with jmp
-- (forward mode, a batch of tangents: row j is column j of the Jacobian) and with mjp
-- (reverse mode, a batch of cotangents: row i is row i of the Jacobian). Covers array
-- literals built from scalars, map5, records, jmp/mjp. Expected values from JAX (f64).
-- ==
-- entry: lv_final
-- input { 0.1f64 20i64 [1.0f64, 0.5f64] 1.1f64 0.4f64 0.1f64 0.4f64 }
-- output { [6.486097582889827f64, 0.40264988197148993f64] }
-- input { 0.05f64 7i64 [2.0f64, 1.0f64] 0.6f64 0.3f64 0.2f64 0.8f64 }
-- output { [2.2365158730796213f64, 0.8763093444709891f64] }
-- ==
-- entry: lv_param_grad
-- input { 0.1f64 20i64 [1.0f64, 0.5f64] [0.8f64, 0.9f64] 1.1f64 0.4f64 0.1f64 0.4f64 }
-- output { 143.0402427533983f64 -58.96794298621553f64 -49.15132333293116f64 23.682926649480233f64 }
-- input { 0.05f64 7i64 [2.0f64, 1.0f64] [2.5f64, 0.7f64] 0.6f64 0.3f64 0.2f64 0.8f64 }
-- output { -0.4033948264199711f64 0.377183298932131f64 0.2690880940743281f64 -0.12767141857130565f64 }
-- ==
-- entry: lv_sens_jmp
-- input { 0.1f64 20i64 [1.0f64, 0.5f64] 1.1f64 0.4f64 0.1f64 0.4f64 }
-- output { [[6.073876740690244f64, 0.22848739364770237f64], [-4.157116814193459f64, 0.7035712780014115f64]] }
-- input { 0.05f64 7i64 [2.0f64, 1.0f64] 0.6f64 0.3f64 0.2f64 0.8f64 }
-- output { [[1.1104710972065848f64, 0.06467437205183575f64], [-0.21915734815805354f64, 0.869690366326115f64]] }
-- ==
-- entry: lv_sens_mjp
-- input { 0.1f64 20i64 [1.0f64, 0.5f64] 1.1f64 0.4f64 0.1f64 0.4f64 }
-- output { [[6.073876740690244f64, -4.157116814193459f64], [0.22848739364770237f64, 0.7035712780014115f64]] }
-- input { 0.05f64 7i64 [2.0f64, 1.0f64] 0.6f64 0.3f64 0.2f64 0.8f64 }
-- output { [[1.1104710972065848f64, -0.21915734815805354f64], [0.06467437205183575f64, 0.869690366326115f64]] }

-- Lotka-Volterra predator-prey model integrated with classic RK4 (fixed step), the state
-- a 2-element array and the parameters (α, β, δ, γ) a record.
type lv = {alpha: f64, beta: f64, delta: f64, gamma: f64}

def rhs (p: lv) (s: [2]f64) : [2]f64 =
  let (x, y) = (s[0], s[1])
  in [p.alpha * x - p.beta * x * y, p.delta * x * y - p.gamma * y]

def axpy [n] (a: f64) (x: [n]f64) (y: [n]f64) : [n]f64 = map2 (\xi yi -> a * xi + yi) x y

def rk4 (p: lv) (h: f64) (steps: i64) (s0: [2]f64) : [2]f64 =
  loop s = s0 for _i < steps do
    let k1 = rhs p s
    let k2 = rhs p (axpy (h / 2) k1 s)
    let k3 = rhs p (axpy (h / 2) k2 s)
    let k4 = rhs p (axpy h k3 s)
    in map5 (\si a b c d -> si + h / 6 * (a + 2 * b + 2 * c + d)) s k1 k2 k3 k4

-- Fit loss: squared error of the final state against an observation.
def loss (h: f64) (steps: i64) (s0: [2]f64) (obs: [2]f64) (p: lv) : f64 =
  f64.sum (map2 (\a b -> (a - b) * (a - b)) (rk4 p h steps s0) obs)

entry lv_final (h: f64) (steps: i64) (s0: [2]f64) (alpha: f64) (beta: f64) (delta: f64) (gamma: f64) : [2]f64 =
  rk4 {alpha, beta, delta, gamma} h steps s0

entry lv_param_grad (h: f64) (steps: i64) (s0: [2]f64) (obs: [2]f64)
                    (alpha: f64) (beta: f64) (delta: f64) (gamma: f64) : (f64, f64, f64, f64) =
  let g = vjp (loss h steps s0 obs) {alpha, beta, delta, gamma} 1
  in (g.alpha, g.beta, g.delta, g.gamma)

-- The 2×2 sensitivity matrix ∂s(T)/∂s0, row by row with jmp (forward mode, two tangents
-- at once) and column by column with mjp (reverse mode, two cotangents at once).
entry lv_sens_jmp (h: f64) (steps: i64) (s0: [2]f64) (alpha: f64) (beta: f64) (delta: f64) (gamma: f64)
                  : [2][2]f64 =
  jmp (rk4 {alpha, beta, delta, gamma} h steps) s0 [[1, 0], [0, 1]]

entry lv_sens_mjp (h: f64) (steps: i64) (s0: [2]f64) (alpha: f64) (beta: f64) (delta: f64) (gamma: f64)
                  : [2][2]f64 =
  mjp (rk4 {alpha, beta, delta, gamma} h steps) s0 [[1, 0], [0, 1]]
