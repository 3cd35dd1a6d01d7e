-- Reverse mode through loops whose return sweep reads values back from the tape instead of
-- recomputing them: a matrix-vector product in the body (stored per iteration), the next
-- state computed by an elementwise map (the tape's next row, or the loop's result in the
-- last iteration), a stored product that the body then updates in place, a pair of
-- carried states (an LSTM-like cell), a while loop, and a loop long enough to be
-- strip-mined into chunks.
-- Expected values: central finite differences in tests/ad_rev/oracle.py (section
-- loop_stored).
-- ==
-- tags { autodiff }
-- entry: rnn
-- input { [[0.5, -0.3, 0.1], [0.2, 0.8, -0.4], [-0.6, 0.1, 0.3]] [1.0, -1.0, 0.5] 4i64 }
-- output { [[0.45534, -0.036227, -0.494136], [0.799854, -0.314318, -0.767959], [0.012791, 0.354181, -0.41819]] [0.153024, 0.061418, -0.079507] }

def matvec [n] [m] (w: [n][m]f64) (x: [m]f64) : [n]f64 =
  map (\row -> f64.sum (map2 (*) row x)) w

-- The initial state, of the size `n` of the rows of `W` (so that the state keeps one
-- shape across iterations, as the tape of stored values needs).
def start [m] (n: i64) (h0: [m]f64) : [n]f64 = map (\i -> h0[i]) (iota n)

-- h ← tanh (W h), k times; the loss is Σ h. The state starts as `h0` passed through a
-- filter that keeps every element, whose size the loop cannot tell from that of `W h`
-- (the coercion checks it each iteration): its tape is flat, but the products are stored.
entry rnn [n] (w: [n][n]f64) (h0: [n]f64) (k: i64) =
  vjp (\(w, h0) -> f64.sum (loop h = filter (\_ -> true) h0 for _i < k do
                              let z = matvec w (h :> [n]f64)
                              in map f64.tanh z)) (w, h0) 1

-- ==
-- entry: consumed
-- input { [[0.5, -0.3], [0.2, 0.8]] [1.0, -1.0] 3i64 }
-- output { [[0.0, 0.0], [0.764775, -1.067947]] [0.074619, 0.298478] }

-- As `rnn`, but the product's first element is overwritten in place before the tanh (the
-- stored product must be the one before the update).
entry consumed [n] (w: [n][n]f64) (h0: [n]f64) (k: i64) =
  vjp (\(w, h0) -> f64.sum (loop h = start n h0 for _i < k do
                              let z = matvec w h
                              let z = copy z with [0] = 0.25
                              in map f64.tanh z)) (w, h0) 1

-- ==
-- entry: cell
-- input { [[0.4, -0.2], [0.3, 0.5]] [[0.1, 0.7], [-0.5, 0.2]] [0.5, -0.5] 3i64 }
-- output { [[-0.016946, 0.125025], [-0.015771, 0.29579]] [[-1.105388, -0.071325], [-0.14102, -2.342055]] }

-- An LSTM-like cell carrying (h, c): c ← σ(A h)·c + tanh(B h), h ← tanh c; the loss is
-- Σ (h + c).
entry cell [n] (a: [n][n]f64) (b: [n][n]f64) (h0: [n]f64) (k: i64) =
  vjp (\(a, b) ->
         let sigmoid x = 1 / (1 + f64.exp (-x))
         let (h, c) = loop (h, c) = (start n h0, start n h0) for _i < k do
                        let f = matvec a h
                        let g = matvec b h
                        let c' = map3 (\f g c -> sigmoid f * c + f64.tanh g) f g c
                        in (map f64.tanh c', c')
         in f64.sum h + f64.sum c) (a, b) 1

-- ==
-- entry: while_rnn
-- input { [[0.5, -0.3], [0.2, 0.8]] [1.0, -1.0] }
-- output { 3i64 [[0.951959, -0.734017], [0.917709, -0.692976]] }

-- `rnn` until the sum of the state falls below −0.2 or after 3 steps; the iteration count
-- is an integer output.
entry while_rnn [n] (w: [n][n]f64) (h0: [n]f64) =
  let f (w: [n][n]f64) =
    let (h, i) = loop (h, i) = (start n h0, 0i64) while i < 3 && f64.sum h > -0.2 do
                   (map f64.tanh (matvec w h), i + 1)
    in (f64.sum h, i)
  let ((_, i), gw) = vjp2 f w (1, 0)
  in (i, gw)

-- ==
-- entry: long
-- input { [[0.9, -0.6], [0.7, 1.1]] [1.0, -1.0] 40i64 }
-- output { [[5.176299, 11.515746], [-11.34633, 8.857454]] [-0.538381, -0.708887] [[5.176299, 11.515746], [-11.34633, 8.857454]] [-0.538381, -0.708887] }

-- Forty steps of `rnn`, strip-mined into chunks of ⌈√40⌉ = 7 steps, and with two levels
-- of chunks: the return sweep reads the stored products of each chunk it re-runs.
entry long [n] (w: [n][n]f64) (h0: [n]f64) (k: i64) =
  let (gw1, gh1) = vjp (\(w, h0) -> f64.sum (#[stripmine(1)] loop h = start n h0 for _i < k do
                                               let z = matvec w h
                                               in map f64.tanh z)) (w, h0) 1
  let (gw2, gh2) = vjp (\(w, h0) -> f64.sum (#[stripmine(2)] loop h = start n h0 for _i < k do
                                               let z = matvec w h
                                               in map f64.tanh z)) (w, h0) 1
  in (gw1, gh1, gw2, gh2)
