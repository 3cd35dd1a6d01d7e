-- Log-likelihood of a Gaussian mixture model with a Wishart prior, parameterised as in
-- ADBench and the SC22 Futhark AD paper: K weights `alphas` (log-space, unnormalised),
-- K means, and for each component the Cholesky-like factor Q of its inverse covariance,
-- given by its log-diagonal `q` and its strictly lower triangle `l`.
--
-- Layout of `l` (differs from ADBench, which packs column by column): row by row, the
-- element Q[i][j] with j < i is l[i*(i-1)/2 + j].
--
-- objective = -n·d/2·log(2π) + Σ_i logsumexp_k (alphas_k + Σ q_k − ½‖Q_k (x_i − μ_k)‖²)
--             − n·logsumexp(alphas)
--             + Σ_k (½γ²(‖exp q_k‖² + ‖l_k‖²) − m·Σ q_k) − K·C(d, γ, m)
-- where C(d, γ, m) = N·d·(log γ − ½ log 2) − log Γ_d(N/2), N = d + m + 1, is the Wishart
-- normalising constant (log Γ_d the multivariate log-gamma function).
--
-- Data (bench/apps/gen_data.py): n = 10 000 points, d = 16, K = 25, γ = 1, m = 0.
-- ==
-- entry: gmm_objective gmm_grad
-- input @ data/gmm.in

def logsumexp [n] (xs: [n]f64) : f64 =
  let m = f64.maximum xs
  in m + f64.log (f64.sum (map (\x -> f64.exp (x - m)) xs))

def sumsq [n] (xs: [n]f64) : f64 = f64.sum (map (\x -> x * x) xs)

def matvec [m] [n] (a: [m][n]f64) (v: [n]f64) : [m]f64 =
  map (\row -> f64.sum (map2 (*) row v)) a

-- The dense factor Q: exp q on the diagonal, l below it, zero above.
def qmat [d] [t] (q: [d]f64) (l: [t]f64) : [d][d]f64 =
  tabulate_2d d d (\i j ->
    if i == j then f64.exp q[i]
    else if j < i then l[i * (i - 1) / 2 + j]
    else 0)

-- log Γ_p(a), the multivariate log-gamma function.
def log_gamma_distrib (a: f64) (p: i64) : f64 =
  0.25 * f64.i64 (p * (p - 1)) * f64.log f64.pi
  + f64.sum (map (\j -> f64.lgamma (a + 0.5 * f64.i64 (1 - j))) (1...p))

def wishart_prior [k] [d] [t] (gamma: f64) (m: i64) (q: [k][d]f64) (l: [k][t]f64) : f64 =
  let nn = d + m + 1
  let c = f64.i64 (nn * d) * (f64.log gamma - 0.5 * f64.log 2)
          - log_gamma_distrib (0.5 * f64.i64 nn) d
  let per_comp qk lk =
    0.5 * gamma * gamma * (sumsq (map f64.exp qk) + sumsq lk) - f64.i64 m * f64.sum qk
  in f64.sum (map2 per_comp q l) - f64.i64 k * c

def objective [n] [d] [k] [t] (x: [n][d]f64) (gamma: f64) (m: i64)
                              (alphas: [k]f64, means: [k][d]f64, q: [k][d]f64, l: [k][t]f64)
                            : f64 =
  let qs = map2 qmat q l
  let sum_qs = map f64.sum q
  let point xi =
    logsumexp (map4 (\a mu qk sq -> a + sq - 0.5 * sumsq (matvec qk (map2 (-) xi mu)))
                    alphas means qs sum_qs)
  let slse = f64.sum (map point x)
  in -(f64.i64 (n * d)) * 0.5 * f64.log (2 * f64.pi)
     + slse
     - f64.i64 n * logsumexp alphas
     + wishart_prior gamma m q l

entry gmm_objective [n] [d] [k] [t] (alphas: [k]f64) (means: [k][d]f64) (q: [k][d]f64)
                                    (l: [k][t]f64) (x: [n][d]f64) (gamma: f64) (m: i64) : f64 =
  objective x gamma m (alphas, means, q, l)

entry gmm_grad [n] [d] [k] [t] (alphas: [k]f64) (means: [k][d]f64) (q: [k][d]f64)
                               (l: [k][t]f64) (x: [n][d]f64) (gamma: f64) (m: i64)
                             : ([k]f64, [k][d]f64, [k][d]f64, [k][t]f64) =
  vjp (objective x gamma m) (alphas, means, q, l) 1
