-- Derivatives through loops, branches, matches, records, tuples and higher-order functions.
-- ==
-- tags { autodiff }
-- entry: grad_pow_loop
-- input { 2.0 5 } output { 80.0 }

def powi (x: f64) (n: i32) = loop acc = 1 for _i < n do acc * x
entry grad_pow_loop (x: f64) (n: i32) = vjp (\x -> powi x n) x 1

-- ==
-- entry: jvp_pow_loop
-- input { 2.0 5 } output { 80.0 }

entry jvp_pow_loop (x: f64) (n: i32) = jvp (\x -> powi x n) x 1

-- ==
-- entry: grad_while
-- input { 1.5 } output { 136.6875 }

entry grad_while (x: f64) =
  vjp (\x -> (loop (y, i) = (x, 0) while i < 3 do (y * y, i + 1)).0) x 1

-- ==
-- entry: grad_if
-- input { 3.0 } output { 6.0 }
-- input { -2.0 } output { -1.0 }

entry grad_if (x: f64) = vjp (\x -> if x > 0 then x * x else -x) x 1

-- ==
-- entry: grad_match
-- input { 0 2.0 } output { 12.566370614359172 }
-- input { 1 2.0 } output { 4.0 }

type shape = #circle f64 | #square f64
def area (s: shape) = match s case #circle r -> f64.pi * r * r case #square a -> a * a
entry grad_match (k: i32) (x: f64) =
  vjp (\x -> area (if k == 0 then #circle x else #square x)) x 1

-- ==
-- entry: grad_record
-- input { 3.0 4.0 } output { 4.0 4.0 }

def rf (p: {x: f64, y: f64}) = p.x * p.y + p.y
entry grad_record (x: f64) (y: f64) =
  let g = vjp rf {x, y} 1
  in (g.x, g.y)

-- ==
-- entry: grad_unused
-- input { 5.0 7.0 } output { 3.0 0.0 }

entry grad_unused (x: f64) (y: f64) = vjp (\(a, _b) -> a * 3) (x, y) 1

-- ==
-- entry: grad_hof
-- input { 2.0 } output { 6.0 }

def twice (f: f64 -> f64) (x: f64) = f (f x)
entry grad_hof (x: f64) = vjp (\x -> twice (\y -> y * x) 1.5) x 1

-- ==
-- entry: grad_with_vjp
-- input { 4.0 } output { 0.25 100.0 }

def my_sqrt (x: f64) : f64 = with_vjp f64.sqrt (\r dr -> dr / (2 * r)) x
entry grad_with_vjp (x: f64) =
  (vjp my_sqrt x 1, vjp (with_vjp (\x -> x * x) (\_ dy -> dy * 100)) 3.0 1)

-- ==
-- entry: grad_inplace
-- input { [1.0, 2.0, 3.0] } output { [0.0, 4.0, 3.0] }

entry grad_inplace (xs: []f64) =
  vjp (\xs -> let ys = copy xs
              let ys[0] = ys[1] * ys[2]
              in f64.sum ys) xs 1
