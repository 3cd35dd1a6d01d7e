-- Reverse mode through loops whose carried arrays change shape: the tape stores each
-- iteration's value flattened at its own offset (growing, shrinking, 2-D, a while loop, a
-- strip-mined loop, and a loop whose result shape is not its input's).
-- Expected values: central finite differences in tests/ad_rev/oracle_gaps.py (section
-- loop_shapes); `doubling` also by hand: Σ = x(1+x)³, derivative (1+x)²(1+4x) = 81 at 2.
-- ==
-- tags { autodiff }
-- entry: doubling
-- input { 2.0 } output { 81.0 }
-- input { 1.0 } output { 20.0 }

-- xs ← xs ++ map (·x) xs three times from [x].
entry doubling (x: f64) =
  vjp (\x -> let xs = loop xs = [x] for i < 3 do concat xs (map (*x) xs) in f64.sum xs) x 1.0

-- ==
-- entry: doubling_stripmined
-- input { 1.2 } output { 74.536 }

-- Four doublings, strip-mined into three nested loops (each level keeps a flat tape).
entry doubling_stripmined (x: f64) =
  vjp (\x -> let xs = #[stripmine(2)] loop xs = [x] for i < 4 do concat xs (map (*x) xs)
             in f64.sum xs) x 1.0

-- ==
-- entry: grow
-- input { [0.5, -1.0] 0.7 } output { [9.775241, 1.623722] 12.282197 }

-- ys ← ys ++ map (λy. sin y·c + i) ys; the gradient w.r.t. the start and a free scalar.
entry grow [n] (xs: [n]f64) (c: f64) =
  vjp (\(xs, c) -> let ys = loop ys = xs for i < 3 do concat ys (map (\y -> f64.sin y * c + f64.i32 i) ys)
                   in f64.sum (map (\y -> y * y) ys)) (xs, c) 1.0

-- ==
-- entry: shrink
-- input { [0.5, -1.0, 2.0, 1.5] } output { [2.0, 4.0, -5.5, -4.0] }

-- Products of neighbours: one element fewer each time.
entry shrink [n] (xs: [n]f64) =
  vjp (\xs -> let ys = loop ys = xs for _i < 2 do map2 (*) (tail ys) (init ys) in f64.sum ys) xs 1.0

-- ==
-- entry: while_grow
-- input { 1.5 } output { 50.75 }

-- A while loop (its iterations are counted first) whose array doubles.
entry while_grow (x: f64) =
  vjp (\x -> let (ys, _) = loop (ys, k) = ([x], 0) while k < 3 do (concat ys (map (\y -> y * x + 1) ys), k + 1)
             in f64.sum ys) x 1.0

-- ==
-- entry: rows
-- input { [0.5, -1.0] } output { [0.967499, 1.396358] }

-- A matrix that gains rows (a 2-D value flattened on the tape).
entry rows [n] (xs: [n]f64) =
  vjp (\xs -> let m = loop m = [xs] for _i < 2 do concat m (map (\r -> map (*2) (map f64.cos r)) m)
              in f64.sum (flatten m)) xs 1.0

-- ==
-- entry: ring
-- input { [0.5, -1.0, 2.0] } output { [-5.5, 5.375, -3.4375] }

-- Each step is one longer than the last, and the result (of length n + 3) is seeded whole.
entry ring [n] (xs: [n]f64) =
  vjp (\xs -> loop ys = xs for _i < 3 do map (\j -> ys[j % length ys] * ys[(j + 1) % length ys]) (iota (length ys + 1)))
      xs (replicate (n + 3) 1.0)
