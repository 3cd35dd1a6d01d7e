-- Strip-mined loops (checkpointing) give the same gradients as plain ones: `#[stripmine(k)]`
-- asks reverse mode for k + 1 nested loops and `#[stripmine(0)]` forbids it (the automatic
-- case is in stripmine_budget.fut). The entry compares four ways of computing the same
-- gradient, which the interpreter (no strip-mining) computes too.
-- ==
-- tags { autodiff }
-- entry: same_as_plain
-- input { [1.0, 2.0, 0.5] 7 } output { true }
-- input { [0.25, -1.0] 0 } output { true }
-- input { [0.25, -1.0, 3.0, 4.0] 1 } output { true }

def step (i: i32) (xs: []f64) = map (\x -> f64.sin x * 0.5 + x + f64.i32 i * 0.01) xs
def close (a: []f64) (b: []f64) = and (map2 (\x y -> f64.abs (x - y) <= 1e-12 * (1 + f64.abs x)) a b)

entry same_as_plain (xs: []f64) (n: i32) =
  let g0 = vjp (\xs -> f64.sum (#[stripmine(0)] loop ys = xs for i < n do step i ys)) xs 1
  let g1 = vjp (\xs -> f64.sum (#[stripmine(1)] loop ys = xs for i < n do step i ys)) xs 1
  let g2 = vjp (\xs -> f64.sum (#[stripmine(2)] loop ys = xs for i < n do step i ys)) xs 1
  let g3 = vjp (\xs -> f64.sum (loop ys = xs for i < n do step i ys)) xs 1
  in close g0 g1 && close g0 g2 && close g0 g3
