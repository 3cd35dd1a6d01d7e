-- Lennard-Jones energy of a small cluster summed over all pairs i < j (a full n×n map with an
-- `if` on iota indices), forces (minus the gradient), a Hessian-vector product both as
-- forward-over-reverse and reverse-over-forward, and a steepest-descent relaxation in a
-- `while` loop with a tuple state (array, energy, counter, flag) whose body calls vjp.
-- In 2-D and 3-D. Expected values from JAX (f64).
-- ==
-- entry: lj_energy
-- input { [[0.0f64, 0.0f64], [1.1f64, 0.1f64], [0.3f64, 1.2f64]] }
-- output { -2.326688917577005f64 }
-- input { [[0.0f64, 0.0f64, 0.0f64], [1.2f64, 0.0f64, 0.1f64], [0.1f64, 1.05f64, 0.0f64], [0.2f64, 0.3f64, 1.3f64]] }
-- output { -3.0714487637168797f64 }
-- ==
-- entry: lj_forces
-- input { [[0.0f64, 0.0f64], [1.1f64, 0.1f64], [0.3f64, 1.2f64]] }
-- output { [[-0.6283346458057799f64, 2.2109598321056665f64], [0.0871687485183521f64, 1.6517548765355605f64], [0.5411658972874278f64, -3.862714708641227f64]] }
-- input { [[0.0f64, 0.0f64, 0.0f64], [1.2f64, 0.0f64, 0.1f64], [0.1f64, 1.05f64, 0.0f64], [0.2f64, 0.3f64, 1.3f64]] }
-- output { [[1.8242705890335336f64, -7.006462418062737f64, 2.086975177272271f64], [-3.516907325192477f64, 0.8818740518720373f64, 0.3600491102362259f64], [1.5473248242101514f64, 6.148818964792879f64, 1.0543932176758952f64], [0.14531191194879228f64, -0.024230598602177966f64, -3.501417505184392f64]] }
-- ==
-- entry: lj_hvp lj_hvp_rf
-- input { [[0.0f64, 0.0f64], [1.1f64, 0.1f64], [0.3f64, 1.2f64]] [[1.83f64, -3.08f64], [0.96f64, 0.07f64], [1.32f64, 0.39f64]] }
-- output { [[47.187988768450616f64, 3.490314885753441f64], [-46.28149086622782f64, -7.860401957703995f64], [-0.9064979022227923f64, 4.370087071950554f64]] }
-- input { [[0.0f64, 0.0f64, 0.0f64], [1.2f64, 0.0f64, 0.1f64], [0.1f64, 1.05f64, 0.0f64], [0.2f64, 0.3f64, 1.3f64]] [[1.83f64, 0.03f64, -0.52f64], [0.58f64, 0.43f64, -0.36f64], [-0.25f64, 0.72f64, 0.7f64], [-0.49f64, -0.37f64, -1.81f64]] }
-- output { [[-11.921495593103032f64, -92.2230649512888f64, -0.9582335259665515f64], [-10.289639073318707f64, 2.949936333741034f64, -2.1627497050479967f64], [25.273091529787063f64, 92.14827733432652f64, -13.041057545228918f64], [-3.0619568633653254f64, -2.8751487167787664f64, 16.162040776243465f64]] }
-- ==
-- entry: lj_relax
-- input { [[0.0f64, 0.0f64], [1.1f64, 0.1f64], [0.3f64, 1.2f64]] 0.002f64 6i64 }
-- output { -2.5961063776926134f64 6i64 }
-- input { [[0.0f64, 0.0f64, 0.0f64], [1.2f64, 0.0f64, 0.1f64], [0.1f64, 1.05f64, 0.0f64], [0.2f64, 0.3f64, 1.3f64]] 0.002f64 6i64 }
-- output { -3.6547358110493833f64 6i64 }

def dist2 [d] (a: [d]f64) (b: [d]f64) : f64 = f64.sum (map2 (\x y -> (x - y) * (x - y)) a b)

-- Lennard-Jones pair potential in units σ = ε = 1, as a function of the squared distance.
def lj (r2: f64) : f64 =
  let s6 = 1 / (r2 * r2 * r2)
  in 4 * (s6 * s6 - s6)

-- Total energy over all pairs i < j (the full n×n map with an `if`).
def energy [n] [d] (pos: [n][d]f64) : f64 =
  f64.sum (map2 (\i pi -> f64.sum (map2 (\j pj -> if j > i then lj (dist2 pi pj) else 0)
                                        (iota n) pos))
                (iota n) pos)

entry lj_energy [n] [d] (pos: [n][d]f64) : f64 = energy pos

-- Forces are minus the gradient of the energy.
entry lj_forces [n] [d] (pos: [n][d]f64) : [n][d]f64 =
  map (map f64.neg) (vjp energy pos 1)

-- Hessian-vector product (forward over reverse), as used by a Newton-Krylov minimiser.
entry lj_hvp [n] [d] (pos: [n][d]f64) (v: [n][d]f64) : [n][d]f64 =
  jvp (\p -> vjp energy p 1) pos v

-- The same product as reverse over forward: the gradient of the directional derivative.
entry lj_hvp_rf [n] [d] (pos: [n][d]f64) (v: [n][d]f64) : [n][d]f64 =
  vjp (\p -> jvp energy p v) pos 1

-- A few steps of steepest descent in a `while` loop (stops after `steps` steps or when
-- the energy no longer decreases), returning the final energy and step count.
entry lj_relax [n] [d] (pos: [n][d]f64) (lr: f64) (steps: i64) : (f64, i64) =
  let (p, _, i, _) =
    loop (p, e, i, go) = (pos, energy pos, 0i64, true) while go && i < steps do
      let g = vjp energy p 1
      let p' = map2 (map2 (\x gx -> x - lr * gx)) p g
      let e' = energy p'
      in if e' < e then (p', e', i + 1, true) else (p, e, i, false)
  in (energy p, i)
