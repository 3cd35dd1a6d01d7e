-- Reverse mode through loops whose carried arrays change only by element updates: the
-- loop rule restores such an array from the next iteration's value (writing back the
-- elements the updates overwrote) instead of storing it whole on the tape
-- (crates/runic-ad/src/rev/restore.rs). Several updates per iteration, one element
-- updated twice, a 2-D array, positions computed from the array, a while loop, a scalar
-- carried beside the array, an array carried unchanged, a whole-array read in the body,
-- loops inside a map, and an update past the end (an error, as in the primal).
-- Expected values: central finite differences in tests/ad_rev/oracle.py (section restore).
-- ==
-- tags { autodiff }
-- entry: two_updates
-- input { [0.5, -1.0, 2.0, 0.25, 1.5] [1.0, 0.5, -2.0, 1.0, 0.25] } output { [-9.455695, -17.16139, 21.546053, 11.818533, 3.338898] }

-- a[i] ← a[i] + a[i−1]²/2, then a[i−1] ← a[i−1]·a[i] (the new a[i]).
entry two_updates [n] (xs: [n]f64) (s: [n]f64) =
  vjp (\xs -> loop a = copy xs for i in 1..<n do
                let a = a with [i] = a[i] + a[i - 1] * a[i - 1] * 0.5
                in a with [i - 1] = a[i - 1] * a[i]) xs s

-- ==
-- entry: same_twice
-- input { [0.5, -1.0, 2.0, 0.25] [1.0, -0.5, 2.0, 1.5] } output { [0.400348, -0.799642, 5.655201, 0.008101] }

-- The same element twice in one iteration: a[i] ← sin(a[i]² + 1/2 + a[0]).
entry same_twice [n] (xs: [n]f64) (s: [n]f64) =
  vjp (\xs -> loop a = copy xs for i < n do
                let b = a with [i] = a[i] * a[i] + 0.5
                in b with [i] = f64.sin (b[i] + b[0])) xs s

-- ==
-- entry: grid
-- input { [[0.5, -1.0, 2.0], [0.25, 1.5, -0.5]] [[1.0, 0.5, -1.0], [2.0, -0.5, 0.25]] }
-- output { [[1.705078, -0.175781, -0.396484], [2.441406, -0.09375, 0.125]] }

-- Row-major sweep of a matrix: m[i, j] ← m[i, j]/2 + (m[i−1, j] or 1)·m[i, j−1 or j].
entry grid [r] [c] (ms: [r][c]f64) (s: [r][c]f64) =
  vjp (\ms -> loop m = copy ms for k < r * c do
                let i = k / c
                let j = k % c
                let up = if i > 0 then m[i - 1, j] else 1
                let left = if j > 0 then m[i, j - 1] else m[i, j]
                in m with [i, j] = m[i, j] * 0.5 + up * left) ms s

-- ==
-- entry: data_index
-- input { [0.4, 1.1, 0.7, 2.2, 0.1] [1.0, -1.0, 0.5, 2.0, 0.25] } output { [-2.25, -5.625, 1.25, 1.0, 1.25] }

-- The position updated comes from the array: k = ⌊3·|a[i]|⌋ mod n.
entry data_index [n] (xs: [n]f64) (s: [n]f64) =
  vjp (\xs -> loop a = copy xs for i < n do
                let k = i64.f64 (f64.floor (f64.abs a[i] * 3)) % n
                in a with [k] = a[k] * 1.5 + a[i]) xs s

-- ==
-- entry: while_update
-- input { [0.5, -1.0, 2.0, 0.25] [1.0, 0.5, -2.0, 1.0] } output { [-1.470577, -1.465525, -1.161023, 0.089143] }

entry while_update [n] (xs: [n]f64) (s: [n]f64) =
  vjp (\xs -> let (a, _) = loop (a, i) = (copy xs, 0) while i < n - 1 do
                             (a with [i + 1] = a[i + 1] * f64.cos a[i] + a[i], i + 1)
              in a) xs s

-- ==
-- entry: with_scalar
-- input { [0.5, -1.0, 2.0, 0.25] [1.0, 0.5, -2.0, 1.0] } output { [-0.828125, 6.96875, -19.25, 0.25] }

-- A running sum of squares carried beside the array it overwrites.
entry with_scalar [n] (xs: [n]f64) (s: [n]f64) =
  vjp (\xs -> let (a, t) = loop (a, t) = (copy xs, 0) for i < n do
                             let t = t + a[i] * a[i] in (a with [i] = t * 0.5, t)
              in map (* t) a) xs s

-- ==
-- entry: unchanged
-- input { [0.5, -1.0, 2.0, 0.25] 2.0 } output { [-1.875, 3.75, -0.75, -2.5] }

-- The array is carried but never updated: nothing to store, nothing to restore.
entry unchanged [n] (xs: [n]f64) (s: f64) =
  vjp (\xs -> let (_, t) = loop (a, t) = (xs, 1) for i < n do (a, t * 0.5 + a[i] * t)
              in t) xs s

-- ==
-- entry: whole_read
-- input { [0.5, -1.0, 2.0, 0.25] [1.0, 0.5, -2.0, 1.0] } output { [0.094641, -0.269883, -0.223191, 0.022101] }

-- Each update reads the whole array: a[i] ← Σ a² / 10.
entry whole_read [n] (xs: [n]f64) (s: [n]f64) =
  vjp (\xs -> loop a = copy xs for i < n do
                a with [i] = f64.sum (map (\v -> v * v) a) * 0.1) xs s

-- ==
-- entry: rows
-- input { [[0.5, -1.0, 2.0], [0.25, 1.5, -0.5]] [[1.0, 0.5, -1.0], [2.0, -0.5, 0.25]] }
-- output { [[1.242187, 0.96875, -1.0], [1.961182, -0.310547, 0.25]] }

entry rows [k] [m] (xss: [k][m]f64) (s: [k][m]f64) =
  vjp (map (\r -> loop a = copy r for i < m - 1 do
                    a with [i + 1] = a[i + 1] + a[i] * a[i] * 0.25)) xss s

-- ==
-- entry: past_the_end
-- input { [0.5, -1.0, 2.0] [1.0, 1.0, 1.0] }
-- error: out of bounds

entry past_the_end [n] (xs: [n]f64) (s: [n]f64) =
  vjp (\xs -> loop a = copy xs for i < n do a with [i + 1] = a[i] * 2) xs s

-- ==
-- entry: slice_update
-- input { [0.5, -1.0, 2.0, 0.25] [1.0, 0.5, -2.0, 1.0] } output { [0.5, 2.0, 0.25, -2.0] }

-- A slice update is not an element update: this array is stored whole on the tape.
entry slice_update [n] (xs: [n]f64) (s: [n]f64) =
  vjp (\xs -> loop a = copy xs for i < n - 1 do
                a with [i:i + 2] = ([a[i] * a[i + 1], a[i + 1] + a[i]] :> [i + 2 - i]f64)) xs s
