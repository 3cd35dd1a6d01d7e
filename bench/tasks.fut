-- Task parallelism across independent statements (seed 000 §4.4; runic-exec/src/tasks.rs).
-- Two independent sequential loops (recurrences: data parallelism cannot split them), and
-- their gradient, whose forward loops and reverse sweeps are independent too. With
-- RUNIC_TASKS=0 the loops run one after the other; with it on, each is a task of its own.
-- ==
-- entry: branches branches_grad
-- random input { [1000000]f64 [1000000]f64 }

def two_loops [n] (x: [n]f64) (y: [n]f64) : f64 =
  let a = loop acc = 0 for i < n do f64.sin (acc + x[i])
  let b = loop acc = 0 for i < n do f64.cos (acc * 0.5 + y[i])
  in a * b

entry branches [n] (x: [n]f64) (y: [n]f64) : f64 = two_loops x y

entry branches_grad [n] (x: [n]f64) (y: [n]f64) : ([n]f64, [n]f64) =
  vjp (\(x, y) -> two_loops x y) (x, y) 1
