-- Reverse mode through loops: loop-carried scalar pairs, in-place updates of a carried
-- array (also at data-dependent positions), while loops carrying arrays, map inside a
-- loop, loop inside a map, loops over the rows of a 2-D array, a power iteration with a
-- reduction in every step, and `if` inside a loop body.
-- Expected values: central finite differences in tests/ad_rev/oracle.py (section loops),
-- except the closed forms stated in comments.
-- ==
-- tags { autodiff }
-- entry: pair_loop
-- input { 0.5 1.5 [1.0, -0.5] } output { -1.296875 -4.453125 }

-- (a, b) ← (a·b + i, a − b), four times; both outputs seeded.
entry pair_loop (x: f64) (y: f64) (s: [2]f64) =
  vjp (\(x, y) -> let (a, b) = loop (a, b) = (x, y) for i < 4 do (a * b + f64.i64 i, a - b)
                  in [a, b]) (x, y) s

-- ==
-- entry: inplace
-- input { [0.5, -1.0, 2.0, 0.25] [1.0, 0.0, 2.0, -1.0] } output { [-2.5, 5.25, -0.875, 0.0] }

-- ys[i+1] ← ys[i]·ys[i+1] + ys[i+1] inside a for loop over a copy of the input.
entry inplace [n] (xs: [n]f64) (s: [n]f64) =
  vjp (\xs -> loop ys = copy xs for i < n - 1 do ys with [i + 1] = ys[i] * ys[i + 1] + ys[i + 1]) xs s

-- ==
-- entry: while_doubling
-- input { [1.0, 2.0, 3.0] [1.0, -1.0, 0.5] } output { 5i32 [32.0, -32.0, 16.0] }

-- Doubling the array until its sum reaches 100 takes 5 iterations from sum 6 (6 → 192):
-- the gradient is 2⁵·s. The iteration count is an integer output that does not depend on
-- xs, so its seed (7) is ignored.
entry while_doubling (xs: []f64) (s: []f64) =
  let ((_, k), g) = vjp2 (\xs -> loop (ys, k) = (xs, 0i32) while f64.sum ys < 100 do (map (* 2) ys, k + 1)) xs (s, 7i32)
  in (k, g)

-- ==
-- entry: map_in_loop
-- input { [0.3, -1.2, 2.0] [1.0, 2.0, -1.0] } output { [2.640669, 0.285029, -0.002516] }

-- y ← sin y + y/2 applied to the whole array three times.
entry map_in_loop (xs: []f64) (s: []f64) =
  vjp (\xs -> loop ys = xs for _i < 3 do map (\y -> f64.sin y + 0.5 * y) ys) xs s

-- ==
-- entry: loop_in_map
-- input { [0.5, -2.0, 1.5] [1.0, 1.0, 2.0] } output { [3.5, -34.0, 37.0] }

-- Horner-style acc ← acc·x + i four times per element: p(x) = x⁴ + x² + 2x + 3,
-- p'(x) = 4x³ + 2x + 2.
entry loop_in_map (xs: []f64) (s: []f64) =
  vjp (map (\x -> loop acc = 1 for i < 4 do acc * x + f64.i64 i)) xs s

-- ==
-- entry: rows_loop
-- input { [2.0, 0.5] [[1.0, 3.0], [-2.0, 0.5], [0.25, 4.0]] [1.0, -1.0] }
-- output { [-0.5, -6.0] [[-1.0, -1.0], [0.75, -10.0], [-5.0, -2.25]] }

-- for row in xss: acc ← acc·row + 1; gradient w.r.t. the initial accumulator and every row.
entry rows_loop [n][m] (init: [m]f64) (xss: [n][m]f64) (s: [m]f64) =
  vjp (\(init, xss) -> loop acc = init for row in xss do map2 (\a r -> a * r + 1) acc row) (init, xss) s

-- ==
-- entry: power_iter
-- input { [[2.0, 1.0], [0.5, 3.0]] [1.0, 0.5] [1.0, 2.0] }
-- output { [[-0.161704, -0.140648], [0.153876, 0.12904]] [-0.039924, 0.079847] }

-- Three steps of v ← A·v / ‖A·v‖; gradient w.r.t. the matrix and the start vector.
def matvec [n][m] (a: [n][m]f64) (v: [m]f64) : [n]f64 = map (\row -> f64.sum (map2 (*) row v)) a
entry power_iter [n] (a: [n][n]f64) (v0: [n]f64) (s: [n]f64) =
  vjp (\(a, v0) -> loop v = v0 for _i < 3 do
                     let w = matvec a v
                     let nrm = f64.sqrt (f64.sum (map (\x -> x * x) w))
                     in map (/ nrm) w) (a, v0) s

-- ==
-- entry: perm_update
-- input { [1.5, -0.5, 2.0, 0.75, 1.25] } output { [3.0, 7.125, -1.59375, -1.75, -1.75] }

-- ys[2i mod n] ← ys[2i mod n]·ys[i]: positions are revisited after being updated.
entry perm_update [n] (xs: [n]f64) =
  vjp (\xs -> loop ys = copy xs for i < n do
                let j = (i * 2) % n
                in ys with [j] = ys[j] * ys[i]) xs (replicate n 1)

-- ==
-- entry: branchy
-- input { 0.7 } output { 1.604526 0.810946 }
-- input { 3.0 } output { 1.610352 0.292969 }

-- Five steps of x ← (x > 1 ? x/2 : x² + 1); only the branches taken are differentiated.
entry branchy (x: f64) =
  vjp2 (\x -> loop x for _i < 5 do if x > 1 then x * 0.5 else x * x + 1) x 1
