-- The caller chooses the size of `weights`; the body cannot make it the local `k`.
-- ==
-- error: "k".*scope violation

def scaled (weights: []f32) =
  let k = 4
  in map2 (\i w -> f32.i64 i * w) (iota k) weights
