-- Objective of a single-layer LSTM run over a batch of sequences, with a linear readout
-- at every step compared with targets by squared error.
--
-- Shapes: xs [T][B][D] (time-major inputs), ys [T][B][O] (targets); the weights are
-- w [4][H][D] (input to the four gates i, f, g, o), u [4][H][H] (recurrent), b [4][H],
-- wy [O][H] and by [O] (readout). With h₀ = c₀ = 0, for each step t:
--   i = σ(W_i x + U_i h + b_i),  f = σ(W_f x + U_f h + b_f),  o = σ(W_o x + U_o h + b_o),
--   g = tanh(W_g x + U_g h + b_g),  c' = f·c + i·g,  h' = o·tanh c',
--   loss += Σ (W_y h' + b_y − y_t)²   (summed over the batch and the outputs).
-- Per step and sequence, every gate is a matrix-vector product; over the batch they are
-- matrix products, written as the map-map-reduce nests a user would write.
--
-- Data (bench/apps/gen_data.py): B = 1024, T = 20, D = 300, H = 192, O = D.
-- ==
-- entry: lstm_objective lstm_grad
-- input @ data/lstm.in

def dot [n] (a: [n]f32) (b: [n]f32) : f32 = f32.sum (map2 (*) a b)

def sigmoid (x: f32) : f32 = 1 / (1 + f32.exp (-x))

-- Rows of `xs` times the transpose of `w`, plus `b`: a dense layer on a batch.
def linear [bs] [i] [o] (w: [o][i]f32) (b: [o]f32) (xs: [bs][i]f32) : [bs][o]f32 =
  map (\x -> map2 (\wr bv -> dot wr x + bv) w b) xs

type weights [h] [d] [o] =
  ([4][h][d]f32, [4][h][h]f32, [4][h]f32, [o][h]f32, [o]f32)

def step [bs] [h] [d] (w: [4][h][d]f32) (u: [4][h][h]f32) (b: [4][h]f32)
                      (x: [bs][d]f32) (hprev: [bs][h]f32) (cprev: [bs][h]f32)
                    : ([bs][h]f32, [bs][h]f32) =
  -- gates[g][s][j]: pre-activation of gate g for sequence s and unit j
  let gates = map3 (\wg ug bg -> map2 (\xs hs -> map3 (\wr ur bv -> dot wr xs + dot ur hs + bv)
                                                      wg ug bg)
                                      x hprev)
                   w u b
  let c = map4 (map4 (\i f g c -> sigmoid f * c + sigmoid i * f32.tanh g))
               gates[0] gates[1] gates[2] cprev
  let hnew = map2 (map2 (\o c -> sigmoid o * f32.tanh c)) gates[3] c
  in (hnew, c)

def objective [t] [bs] [d] [h] [o] (xs: [t][bs][d]f32) (ys: [t][bs][o]f32)
                                   ((w, u, b, wy, by): weights [h] [d] [o]) : f32 =
  let zeros = replicate bs (replicate h 0)
  let (_, _, loss) =
    loop (hs, cs, loss) = (zeros, zeros, 0f32) for i < t do
      let (hs', cs') = step w u b xs[i] hs cs
      let pred = linear wy by hs'
      let err = f32.sum (map2 (\pr yr -> f32.sum (map2 (\p y -> (p - y) * (p - y)) pr yr))
                              pred ys[i])
      in (hs', cs', loss + err)
  in loss

entry lstm_objective [t] [bs] [d] [h] [o] (w: [4][h][d]f32) (u: [4][h][h]f32) (b: [4][h]f32)
                                          (wy: [o][h]f32) (by: [o]f32)
                                          (xs: [t][bs][d]f32) (ys: [t][bs][o]f32) : f32 =
  objective xs ys (w, u, b, wy, by)

entry lstm_grad [t] [bs] [d] [h] [o] (w: [4][h][d]f32) (u: [4][h][h]f32) (b: [4][h]f32)
                                     (wy: [o][h]f32) (by: [o]f32)
                                     (xs: [t][bs][d]f32) (ys: [t][bs][o]f32)
                                   : ([4][h][d]f32, [4][h][h]f32, [4][h]f32, [o][h]f32, [o]f32) =
  vjp (objective xs ys) (w, u, b, wy, by) 1
