-- Losses through histograms: a weighted histogram (hist (+)) against targets with some
-- out-of-range bin indices (vjp in the pair (weights, values), and a jvp); segment
-- max-pooling with reduce_by_index f64.max into an existing destination (one empty bin, one
-- bin where the destination wins, one dropped index); per-bin products (hist (*)) under a
-- log; and a histogram of (x, x²) tuples. Expected values from JAX (f64, .at[].add/multiply
-- with out-of-range indices masked out); the max-pooling gradient by hand (no ties in the data).
-- ==
-- entry: hist_grad
-- input { [1i64, 4i64, -1i64, 2i64, 0i64, 0i64, 0i64] [1.62f64, -1.21f64, -0.63f64] [-1.32f64, -0.11f64, 1.0f64, -0.02f64, 0.5f64, -1.91f64, 0.15f64] [-0.91f64, 1.78f64, 0.89f64, 0.95f64, -0.06f64, 0.61f64, 0.66f64] }
-- output { [-4.388384f64, 0.0f64, 0.0f64, 1.1608999999999998f64, 0.325932f64, -3.3136419999999998f64, -3.585252f64] [-6.365568000000001f64, -0.0f64, 0.0f64, -0.02444f64, -2.7161f64, 10.375502f64, -0.8148299999999999f64] }
-- input { [2i64, 5i64, -1i64, 2i64, 2i64, 2i64, 3i64, 3i64, 1i64, 3i64] [-0.54f64, 1.23f64, 1.62f64, 1.08f64] [1.17f64, 1.1f64, 2.25f64, 0.19f64, 0.0f64, 0.6f64, -0.91f64, -1.55f64, -0.88f64, 0.37f64] [0.47f64, -1.54f64, -1.88f64, -0.32f64, -0.19f64, -0.05f64, 0.67f64, 1.23f64, 0.23f64, 0.61f64] }
-- output { [-1.0912460000000002f64, -0.0f64, -0.0f64, 0.7429760000000002f64, 0.4411420000000001f64, 0.11609000000000003f64, -4.516470000000001f64, -8.29143f64, -0.6589039999999999f64, -4.112010000000001f64] [-2.7165060000000003f64, 0.0f64, 0.0f64, -0.4411420000000001f64, -0.0f64, -1.3930800000000003f64, 6.134310000000001f64, 10.448550000000001f64, 2.5210239999999997f64, -2.49417f64] }
-- ==
-- entry: hist_jvp
-- input { [1i64, 4i64, -1i64, 2i64, 0i64, 0i64, 0i64] [1.62f64, -1.21f64, -0.63f64] [-1.32f64, -0.11f64, 1.0f64, -0.02f64, 0.5f64, -1.91f64, 0.15f64] [-0.91f64, 1.78f64, 0.89f64, 0.95f64, -0.06f64, 0.61f64, 0.66f64] [-0.34f64, -0.5f64, -0.11f64, -0.61f64, -0.59f64, -0.28f64, -0.73f64] }
-- output { 4.1366553999999995f64 }
-- input { [2i64, 5i64, -1i64, 2i64, 2i64, 2i64, 3i64, 3i64, 1i64, 3i64] [-0.54f64, 1.23f64, 1.62f64, 1.08f64] [1.17f64, 1.1f64, 2.25f64, 0.19f64, 0.0f64, 0.6f64, -0.91f64, -1.55f64, -0.88f64, 0.37f64] [0.47f64, -1.54f64, -1.88f64, -0.32f64, -0.19f64, -0.05f64, 0.67f64, 1.23f64, 0.23f64, 0.61f64] [-1.1f64, -1.18f64, 0.24f64, 0.66f64, 0.73f64, 0.59f64, 0.78f64, 0.81f64, -1.75f64, -0.73f64] }
-- output { -4.002794080000001f64 }
-- ==
-- entry: segmax_grad
-- input { [3i64, 1i64, 0i64, 1i64, 0i64, 1i64, 1i64] [-0.63f64, -0.55f64, -1.35f64] [5.0f64, -0.25f64, 0.19f64] [-0.91f64, 1.78f64, 0.89f64, 0.95f64, -0.06f64, 0.61f64, 0.66f64] }
-- output { [-0.63f64, 0.0f64, -1.35f64] [0.0f64, -0.55f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64] }
-- input { [4i64, 0i64, 2i64, 0i64, 1i64, 0i64, 1i64, 2i64, 0i64, 0i64] [-0.23f64, 0.27f64, 0.75f64, -1.43f64] [5.0f64, 0.08f64, -0.77f64, -0.28f64] [0.47f64, -1.54f64, -1.88f64, -0.32f64, -0.19f64, -0.05f64, 0.67f64, 1.23f64, 0.23f64, 0.61f64] }
-- output { [-0.23f64, 0.0f64, 0.0f64, -1.43f64] [0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.27f64, 0.75f64, 0.0f64, 0.0f64] }
-- ==
-- entry: segprod_grad
-- input { 3i64 [1i64, 2i64, 0i64, 2i64, 2i64, 1i64, 1i64] [1.92f64, 0.7f64, 1.4f64, 1.13f64, 0.99f64, 0.76f64, 1.67f64] }
-- output { [0.5208333333333333f64, 1.4285714285714284f64, 0.7142857142857143f64, 0.8849557522123893f64, 1.0101010101010102f64, 1.3157894736842104f64, 0.5988023952095808f64] }
-- input { 4i64 [3i64, 0i64, 0i64, 0i64, 2i64, 2i64, 3i64, 1i64, 2i64, 3i64] [1.79f64, 1.3f64, 1.66f64, 0.94f64, 0.73f64, 0.78f64, 0.51f64, 0.61f64, 1.63f64, 1.85f64] }
-- output { [0.5586592178770949f64, 0.7692307692307692f64, 0.6024096385542169f64, 1.0638297872340425f64, 1.3698630136986303f64, 1.2820512820512822f64, 1.9607843137254903f64, 1.639344262295082f64, 0.6134969325153375f64, 0.5405405405405406f64] }
-- ==
-- entry: hist_pair_grad
-- input { [1i64, 2i64, 0i64, 2i64, 2i64, 1i64, 1i64] [-0.91f64, 1.78f64, 0.89f64, 0.95f64, -0.06f64, 0.61f64, 0.66f64] [1.62f64, -1.21f64, -0.63f64] }
-- output { [-0.9488000000000001f64, 6.9242f64, -1.1036000000000004f64, 5.2642f64, 3.2441999999999998f64, 2.0911999999999997f64, 2.1912000000000003f64] }
-- input { [3i64, 0i64, 0i64, 0i64, 2i64, 2i64, 3i64, 1i64, 2i64, 3i64] [0.47f64, -1.54f64, -1.88f64, -0.32f64, -0.19f64, -0.05f64, 0.67f64, 1.23f64, 0.23f64, 0.61f64] [-0.54f64, 1.23f64, 1.62f64, 1.08f64] }
-- output { [-2.8400000000000003f64, -7.1192f64, -7.7992f64, -4.6792f64, -0.3476000000000001f64, -0.06760000000000006f64, -2.4400000000000004f64, -0.5657999999999999f64, 0.49239999999999995f64, -2.5600000000000005f64] }

-- A weighted histogram (e.g. a soft density estimate): bin b holds Σ w_j·v_j over the j
-- with bins[j] == b (out-of-range bins are dropped); squared error against a target.
def hist_loss [n] [k] (bins: [n]i64) (t: [k]f64) (w: [n]f64, v: [n]f64) : f64 =
  let h = hist (+) 0 k bins (map2 (*) w v)
  in f64.sum (map2 (\hb tb -> (hb - tb) * (hb - tb)) h t)

entry hist_grad [n] [k] (bins: [n]i64) (t: [k]f64) (w: [n]f64) (v: [n]f64) : ([n]f64, [n]f64) =
  vjp (hist_loss bins t) (w, v) 1

entry hist_jvp [n] [k] (bins: [n]i64) (t: [k]f64) (w: [n]f64) (v: [n]f64) (dw: [n]f64) : f64 =
  jvp (\w -> hist_loss bins t (w, v)) w dw

-- Segment max-pooling into existing values: out[b] = max(dest[b], max of the values sent
-- to b); loss Σ c_b·out[b]. The cotangent goes to the single winner (dest on a tie).
entry segmax_grad [n] [k] (bins: [n]i64) (c: [k]f64) (dest: [k]f64) (v: [n]f64)
                  : ([k]f64, [n]f64) =
  vjp (\(dest, v) -> f64.sum (map2 (*) c (reduce_by_index (copy dest) f64.max (-f64.inf) bins v)))
      (dest, v) 1

-- Per-bin products (a likelihood of independent events grouped by bin), log of each bin.
entry segprod_grad [n] (k: i64) (bins: [n]i64) (v: [n]f64) : [n]f64 =
  vjp (\v -> f64.sum (map f64.log (hist (*) 1 k bins v))) v 1

-- A histogram with tuple values: per-bin (count-weighted sum, sum of squares), then the
-- per-bin variance-like quantity Σ v² − (Σ v)²/k summed over bins.
entry hist_pair_grad [n] [k] (bins: [n]i64) (v: [n]f64) (t: [k]f64) : [n]f64 =
  vjp (\v -> let (s, q) = unzip (hist (\(a, b) (c, d) -> (a + c, b + d)) (0, 0) k bins
                                      (map (\x -> (x, x * x)) v))
             in f64.sum (map3 (\si qi ti -> qi - si * si * ti) s q t))
      v 1
