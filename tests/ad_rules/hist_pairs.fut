-- Histograms of pairs whose operator combines each component on its own: (+, +) for a
-- sum and a sum of squares, (+, max) for a sum and a maximum. Each component gets its own
-- rule (a gather for +, the winner of each bin for max), not the general rule's sort and
-- segmented scans (crates/runic-cli/tests/ad_rules.rs). Indices -1 and 5 are out of
-- range and contribute nothing. Expected values by hand:
--   sums:  ∂/∂v_i of Σ_b q_b − s_b²·t_b is 2·v_i − 2·s_b·t_b, b = bins[i];
--   mixed: ∂/∂v_i of Σ_b t_b·s_b + c_b·m_b, with m the max of 2·v, is t_b + 2·c_b for the
--          element holding its bin's maximum, t_b otherwise.
-- ==
-- entry: pair_sums_grad
-- input { [0i64, 2i64, 1i64, 0i64, 5i64, 2i64, -1i64] [1.0f64, -2.0f64, 0.5f64, 3.0f64, 4.0f64, 0.25f64, 7.0f64] [0.5f64, 2.0f64, -1.0f64] }
-- output { [-2.0f64, -7.5f64, -1.0f64, 2.0f64, 0.0f64, -3.0f64, 0.0f64] }
-- ==
-- entry: sum_and_max_grad
-- input { [0i64, 2i64, 1i64, 0i64, 5i64, 2i64, -1i64] [1.0f64, -2.0f64, 0.5f64, 3.0f64, 4.0f64, 0.25f64, 7.0f64] [0.5f64, 2.0f64, -1.0f64] [1.0f64, -1.0f64, 3.0f64] }
-- output { [0.5f64, -1.0f64, 0.0f64, 2.5f64, 0.0f64, 5.0f64, 0.0f64] }

entry pair_sums_grad [n] [k] (bins: [n]i64) (v: [n]f64) (t: [k]f64) : [n]f64 =
  vjp (\v -> let (s, q) = unzip (hist (\(a, b) (c, d) -> (a + c, b + d)) (0, 0) k bins
                                      (map (\x -> (x, x * x)) v))
             in f64.sum (map3 (\si qi ti -> qi - si * si * ti) s q t))
      v 1

entry sum_and_max_grad [n] [k] (bins: [n]i64) (v: [n]f64) (t: [k]f64) (c: [k]f64) : [n]f64 =
  vjp (\v -> let (s, m) = unzip (hist (\(a, b) (x, y) -> (a + x, f64.max b y)) (0, -f64.inf) k bins
                                      (map (\x -> (x, 2 * x)) v))
             in f64.sum (map2 (*) t s) + f64.sum (map2 (*) c m))
      v 1
