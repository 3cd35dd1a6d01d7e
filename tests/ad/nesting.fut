-- Nested differentiation in every combination, perturbation confusion, Hessian-vector
-- products, and full Jacobians with jmp and mjp (language.md §11.6, Appendix B.2, B.7).
-- ==
-- tags { autodiff }
-- entry: confusion
-- input { 5.0 } output { 1.0 1.0 1.0 1.0 }
-- input { -3.0 } output { 1.0 1.0 1.0 1.0 }

-- d/dx (x * d/dy (x + y)) is 1 everywhere; a tagging bug gives 2.
entry confusion (x: f64) =
  (jvp (\x -> x * jvp (\y -> x + y) 3.0 1.0) x 1.0,
   vjp (\x -> x * vjp (\y -> x + y) 3.0 1.0) x 1.0,
   jvp (\x -> x * vjp (\y -> x + y) 3.0 1.0) x 1.0,
   vjp (\x -> x * jvp (\y -> x + y) 3.0 1.0) x 1.0)

-- ==
-- entry: second
-- input { 2.0 } output { 12.0 12.0 12.0 12.0 }

def cube (y: f64) = y * y * y
entry second (x: f64) =
  (jvp (\x -> jvp cube x 1) x 1, vjp (\x -> vjp cube x 1) x 1,
   jvp (\x -> vjp cube x 1) x 1, vjp (\x -> jvp cube x 1) x 1)

-- ==
-- entry: third_int
-- input { 1i64 } output { 60i64 }
-- input { 2i64 } output { 240i64 }

def quint (x: i64) = x * x * x * x * x
entry third_int (x: i64) = vjp (\x -> vjp (\x -> vjp quint x 1) x 1) x 1

-- ==
-- entry: hvp
-- input { [1.0, 2.0] [1.0, 0.0] } output { [4.0, 2.0] }
-- input { [1.0, 2.0] [0.0, 1.0] } output { [2.0, 0.0] }

def f (v: [2]f64) : f64 = v[0] * v[0] * v[1]
def grad (v: [2]f64) : [2]f64 = vjp f v 1
entry hvp (v: [2]f64) (d: [2]f64) : [2]f64 = jvp grad v d

-- ==
-- entry: jac_fwd jac_rev jac_mjp
-- input { 2.0 3.0 } output { [[3.0, 2.0], [1.0, 1.0], [-0.4161468365471424, 0.0]] }

def poly (p: (f64, f64)) : [3]f64 =
  let (a, b) = p
  in [a * b, a + b, f64.sin a]

entry jac_fwd (a: f64) (b: f64) : [3][2]f64 =
  let cols = jmp poly (a, b) [(1, 0), (0, 1)]
  in transpose (map (\c -> c) cols)

entry jac_rev (a: f64) (b: f64) : [3][2]f64 =
  tabulate 3 (\i -> let (da, db) = vjp poly (a, b) (tabulate 3 (\j -> f64.bool (i == j)))
                    in [da, db])

entry jac_mjp (a: f64) (b: f64) : [3][2]f64 =
  map (\(da, db) -> [da, db]) (mjp poly (a, b) [[1, 0, 0], [0, 1, 0], [0, 0, 1]])

-- ==
-- entry: primal_too
-- input { 3.0 } output { 27.0 27.0 27.0 [27.0, 27.0] }

entry primal_too (x: f64) =
  let (y1, dy) = jvp2 cube x 1
  let (y2, dx) = vjp2 cube x 1
  let (y3, dys) = jmp2 cube x [1, 1]
  in (y1 + dy - dy, y2 + dx - dx, y3, dys)

-- ==
-- entry: grad_through_map_of_vjp
-- input { [1.0, 2.0] } output { [6.0, 12.0] }

entry grad_through_map_of_vjp (xs: []f64) = map (\x -> vjp (\x -> vjp cube x 1) x 1) xs
