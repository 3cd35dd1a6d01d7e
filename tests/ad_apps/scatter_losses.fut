-- Losses through scatter and in-place updates: a sparse overwrite of an embedding table
-- (a duplicated index whose last write wins, an out-of-range index, a negative index; vjp
-- in (base, vals) and jvp), a row permutation scattered into a zero 2-D table, and an
-- in-place recurrence a[i] += 0.5·a[i−1]² in a `for i in 1..<n` loop with `with`.
-- Expected values: scatter gradients by hand (numpy, following the spec's rule that the
-- destination's written positions get zero and only the winning write receives the
-- cotangent), the recurrence from JAX (f64).
-- ==
-- entry: scatter_grad
-- input { [-2i64, 0i64, 3i64] [-1.43f64, -0.94f64, 0.39f64, -0.52f64, 0.53f64] [0.81f64, -1.44f64, 1.02f64, -0.6f64, 2.09f64] [0.73f64, -0.54f64, 0.2f64] }
-- output { [0.0f64, -0.12259828621385681f64, 0.20411272098814331f64, 0.0f64, -0.2629801237341794f64] [0.0f64, -1.2265234143502686f64, -0.5096346204774457f64] }
-- input { [6i64, 2i64, 10i64, 5i64, 2i64] [-0.61f64, 0.08f64, -0.81f64, -0.42f64, -2.28f64, 0.74f64, -0.72f64] [-0.07f64, 0.45f64, 0.34f64, -1.31f64, 1.52f64, 0.76f64, 0.5f64] [-0.66f64, -1.6f64, -1.63f64, -0.21f64, 0.16f64] }
-- output { [-0.6085061101545005f64, 0.07203576818821415f64, 0.0f64, -0.10829701366372121f64, -0.11576582564856053f64, 0.0f64, 0.0f64] [-0.5687944066781029f64, 0.0f64, 0.0f64, 0.7237428768958697f64, -0.7996540995342578f64] }
-- ==
-- entry: scatter_jvp
-- input { [-2i64, 0i64, 3i64] [-1.43f64, -0.94f64, 0.39f64, -0.52f64, 0.53f64] [0.81f64, -1.44f64, 1.02f64, -0.6f64, 2.09f64] [0.73f64, -0.54f64, 0.2f64] [0.21f64, 0.33f64, 1.39f64, 0.53f64, 1.66f64] [0.63f64, -0.18f64, -1.52f64] }
-- output { 0.8021310800329745f64 }
-- input { [6i64, 2i64, 10i64, 5i64, 2i64] [-0.61f64, 0.08f64, -0.81f64, -0.42f64, -2.28f64, 0.74f64, -0.72f64] [-0.07f64, 0.45f64, 0.34f64, -1.31f64, 1.52f64, 0.76f64, 0.5f64] [-0.66f64, -1.6f64, -1.63f64, -0.21f64, 0.16f64] [-0.7f64, 1.83f64, 0.3f64, 1.0f64, 0.91f64, -1.07f64, 0.99f64] [0.45f64, -1.27f64, 0.72f64, 1.07f64, 0.98f64] }
-- output { 0.07892219561853253f64 }
-- ==
-- entry: permute_rows_grad
-- input { [2i64, 1i64, 0i64] [[-1.41f64, -0.25f64], [-0.55f64, 0.05f64], [0.11f64, 1.13f64]] [[0.75f64, -0.83f64], [0.9f64, 1.63f64], [0.31f64, -1.51f64]] }
-- output { [[0.165f64, -1.8757999999999997f64], [-0.9900000000000001f64, 0.163f64], [-0.8742f64, 0.755f64]] }
-- input { [1i64, 3i64, 2i64, 0i64] [[-1.62f64, -0.14f64, -1.27f64], [0.79f64, 0.68f64, -0.08f64], [-1.25f64, 0.29f64, -0.64f64], [-0.69f64, 1.11f64, -0.76f64]] [[-1.38f64, 0.79f64, 1.78f64], [1.61f64, 0.78f64, 2.09f64], [-0.36f64, 2.18f64, 2.1f64], [-0.34f64, 0.41f64, -1.29f64]] }
-- output { [[-2.1804f64, 1.0744f64, -0.2848f64], [-2.2218f64, 1.7316000000000003f64, -3.1767999999999996f64], [0.8999999999999999f64, 1.2644f64, -2.688f64], [1.1016000000000001f64, -0.1148f64, 3.2766f64]] }
-- ==
-- entry: smooth_grad
-- input { [-1.03f64, 0.57f64, -1.16f64, 0.21f64] [0.46f64, 0.14f64, 0.98f64, 1.96f64] }
-- output { [0.4368874540764683f64, 0.022439364974302656f64, -0.10682960154999988f64, 1.96f64] }
-- input { [0.2f64, 1.02f64, 1.51f64, -0.44f64, -0.65f64, -2.41f64] [0.45f64, 1.08f64, 0.46f64, 2.13f64, 1.56f64, 0.85f64] }
-- output { [3.2185362354168876f64, 13.842681177084437f64, 12.27180882411965f64, 5.7596103101812215f64, 2.182711791948624f64, 0.85f64] }

-- Sparse update of an embedding table: rows idx[j] of the table are overwritten by new
-- values (a duplicated index: the last write wins; an out-of-range index is ignored), then
-- a loss reads the whole table.
def table_loss [k] [n] (idx: [n]i64) (w: [k]f64) (base: [k]f64, vals: [n]f64) : f64 =
  let t = scatter (copy base) idx vals
  in f64.sum (map2 (\wi ti -> wi * f64.sin ti) w t)

entry scatter_grad [k] [n] (idx: [n]i64) (w: [k]f64) (base: [k]f64) (vals: [n]f64)
                   : ([k]f64, [n]f64) =
  vjp (table_loss idx w) (base, vals) 1

entry scatter_jvp [k] [n] (idx: [n]i64) (w: [k]f64) (base: [k]f64) (vals: [n]f64)
                  (dbase: [k]f64) (dvals: [n]f64) : f64 =
  jvp (table_loss idx w) (base, vals) (dbase, dvals)

-- Scatter of computed values into a zero table of 2-D rows: a permutation of the rows of
-- a matrix followed by a weighted sum.
entry permute_rows_grad [n] [d] (perm: [n]i64) (w: [n][d]f64) (x: [n][d]f64) : [n][d]f64 =
  vjp (\x -> let y = scatter (replicate n (replicate d 0)) perm (map (map (\v -> v * v)) x)
             in f64.sum (map2 (\yr wr -> f64.sum (map2 (*) yr wr)) y w))
      x 1

-- An in-place recurrence in a loop: a[i] += 0.5·a[i−1]², updated with `with`.
def smooth [n] (x: [n]f64) : [n]f64 =
  loop a = copy x for i in 1..<n do a with [i] = a[i] + 0.5 * a[i - 1] * a[i - 1]

entry smooth_grad [n] (x: [n]f64) (w: [n]f64) : [n]f64 =
  vjp (\x -> f64.sum (map2 (*) w (smooth x))) x 1
