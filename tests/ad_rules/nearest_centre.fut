-- The adjoint of `reduce min` is one-hot (the cotangent goes to the position of the
-- minimum), so the compiled path runs the adjoint code after it at that one position
-- (runic-opt's `sparse-adjoints`): per point, the gradient of the nearest centre only.
-- Expected values by hand: the nearest centre c of a point p gets 2·(c − p); ties go to
-- the smaller index; with no centres the minimum is infinite and nothing is added.
-- ==
-- tags { autodiff }
-- input { [[0f64, 0], [4, 4]] [[1f64, 0], [3, 5], [10, 10]] }
-- output { [[2f64, 0], [-2, 2], [0, 0]] }
-- input { [[0f64, 0], [0, 2]] [[1f64, 0], [-1, 0]] }
-- output { [[4f64, -4], [0, 0]] }
-- input { [[0f64, 0]] empty([0][2]f64) }
-- output { empty([0][2]f64) }

def sqdist [d] (a: [d]f64) (b: [d]f64) : f64 =
  f64.sum (map2 (\x y -> (x - y) * (x - y)) a b)

def cost [n] [k] [d] (points: [n][d]f64) (centres: [k][d]f64) : f64 =
  f64.sum (map (\p -> f64.minimum (map (sqdist p) centres)) points)

entry main [n] [k] [d] (points: [n][d]f64) (centres: [k][d]f64) : [k][d]f64 =
  vjp (cost points) centres 1
