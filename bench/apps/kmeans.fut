-- k-means clustering as an optimisation problem (the SC22 Futhark AD paper's k-means):
-- the objective is the sum over points of the squared distance to the nearest centre,
-- a function of the centres; its gradient comes from vjp, and since its Hessian is
-- diagonal (constant within each cluster), one Newton step needs only the gradient and the
-- Hessian diagonal, which is jvp of the gradient in the direction of all ones.
--
-- Data (bench/apps/gen_data.py): 100 000 points of dimension 16 and 32 initial centres,
-- the first 32 points (so that no cluster is empty and the Newton step is finite).
-- ==
-- entry: kmeans_cost kmeans_grad kmeans_newton
-- input @ data/kmeans.in

def sqdist [d] (a: [d]f32) (b: [d]f32) : f32 =
  f32.sum (map2 (\x y -> (x - y) * (x - y)) a b)

def cost [n] [k] [d] (points: [n][d]f32) (centres: [k][d]f32) : f32 =
  f32.sum (map (\p -> f32.minimum (map (sqdist p) centres)) points)

entry kmeans_cost [n] [k] [d] (points: [n][d]f32) (centres: [k][d]f32) : f32 =
  cost points centres

entry kmeans_grad [n] [k] [d] (points: [n][d]f32) (centres: [k][d]f32) : [k][d]f32 =
  vjp (cost points) centres 1

-- One Newton step: jvp2 of the gradient gives the gradient and the Hessian diagonal in one
-- pass (the Hessian is diagonal, so H·1 is its diagonal).
entry kmeans_newton [n] [k] [d] (points: [n][d]f32) (centres: [k][d]f32) : [k][d]f32 =
  let grad c = vjp (cost points) c 1
  let (g, h) = jvp2 grad centres (replicate k (replicate d 1))
  in map3 (map3 (\c gi hi -> c - gi / hi)) centres g h
