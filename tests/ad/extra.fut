-- Rules added on top of the staged programs: per-bin reduce_by_index in reverse mode with a
-- non-neutral operator, scatter with duplicate indices, iota/tabulate sizes, seed shape
-- errors, jmp/mjp full Jacobians of a map, and reverse-over-forward nesting.
-- Expected values worked out by hand (comments give the derivation).

-- Saturating addition min(a + b, 10) with ne = 0 (not neutral above 10). Bin 0 has dest
-- 12 and receives nothing: reverse mode differentiates min(12 + 0, 10) = 10, the left
-- operand loses the tie rule (12 > 10), so dest[0] gets 0. Bin 1: dest 1, values 2 and 3:
-- min(1 + min(min(0 + 2, 10) + 3, 10), 10) = 6, all derivatives 1.
-- ==
-- entry: grad_rbi_saturating
-- input { [12.0, 1.0] [1i64, 1i64] [2.0, 3.0] } output { [0.0, 1.0] [1.0, 1.0] }

def sat (a: f64) (b: f64) = f64.min (a + b) 10
entry grad_rbi_saturating (dest: []f64) (is: []i64) (vs: []f64) =
  vjp (\(d, v) -> reduce_by_index (copy d) sat 0 is v) (dest, vs) (map (const 1) dest)

-- Duplicate index 0: the later write (vs[2]) wins and alone receives the cotangent 5;
-- dest positions 0 and 1 are overwritten and get 0, position 2 keeps its cotangent 7.
-- ==
-- entry: grad_scatter_dup
-- input { [1f32, 2, 3] [0i64, 1, 0] [4f32, 5, 6] } output { [0f32, 0, 7] [0f32, 6, 5] }

entry grad_scatter_dup (dest: []f32) (is: []i64) (vs: []f32) =
  vjp (\(d, v) -> scatter (copy d) is v) (dest, vs) [5, 6, 7]

-- tabulate n f = map f (iota n): f uses its index as a number, i64.sum (map (*2) (iota n));
-- each element's cotangent 1 reaches the index times 2, so n receives 2 * n = 6 at n = 3.
-- ==
-- entry: grad_tabulate
-- input { 3i64 } output { 6i64 }

entry grad_tabulate (n: i64) = vjp (\k -> i64.sum (tabulate k (\i -> i * 2))) n 1

-- A cotangent of the wrong shape is a size error.
-- ==
-- entry: bad_seed
-- input { [1.0, 2.0] } error: Value of \(desugared\) shape \[3\] cannot match shape of type "\[2\]f64"

entry bad_seed (xs: []f64) = vjp (map (* 2)) xs [1.0, 2.0, 3.0]

-- ==
-- entry: bad_tangent
-- input { [1.0, 2.0] } error: Value of \(desugared\) shape \[1\] cannot match shape of type "\[2\]f64"

entry bad_tangent (xs: []f64) = jvp (map (* 2)) xs [1.0]

-- f (a, b) = [a*b, a + b]: Jacobian rows [b, a] and [1, 1]; at (2, 3): [[3, 2], [1, 1]].
-- jmp with the identity directions gives the columns, mjp the rows.
-- ==
-- entry: jacobians
-- input { 2.0 3.0 } output { [[3.0, 1.0], [2.0, 1.0]] [[3.0, 2.0], [1.0, 1.0]] }

def g (a: f64, b: f64) : [2]f64 = [a * b, a + b]
entry jacobians (a: f64) (b: f64) =
  (map (\(r: [2]f64) -> r) (jmp g (a, b) [(1, 0), (0, 1)]),
   map (\(p: (f64, f64)) -> [p.0, p.1]) (mjp g (a, b) [[1, 0], [0, 1]]))

-- Reverse over forward: the inner jvp gives 2y·x at y = x, i.e. 2x²; its derivative is 4x.
-- ==
-- entry: rev_over_fwd
-- input { 2.0 } output { 8.0 }

entry rev_over_fwd (x: f64) = vjp (\x -> jvp (\y -> y * y * x) x 1) x 1

-- While loop: x is doubled until it exceeds 10; from 1.5 (3, 6, 12) that is three
-- doublings, so the derivative is 2^3 = 8.
-- ==
-- entry: grad_while_doubling
-- input { 1.5 } output { 8.0 }

entry grad_while_doubling (x: f64) = vjp (\x -> loop y = x while y <= 10 do y * 2) x 1

-- with_vjp_tape: f returns (tape, y) = (2x, x²); the derivative function multiplies the
-- cotangent by the tape, giving 2x·dy = 6 at x = 3. Its derivative function re-evaluates
-- `f x` on the argument captured from the closed reverse level, which must act as a
-- constant there.
-- ==
-- entry: grad_with_vjp_tape
-- input { 3.0 } output { 9.0 6.0 }

def sq_tape (x: f64) : f64 = with_vjp_tape (\x -> (2 * x, x * x)) (\(t, dy) -> dy * t) x
entry grad_with_vjp_tape (x: f64) = vjp2 sq_tape x 1
