-- An in-place update through a record field keeps the other fields, so the updated array
-- may not be one of them too.
-- ==
-- error: The in-place update of "cfg.lo" shares memory with "cfg.hi"

def clamp (bounds: *[2]f64) =
  let cfg = {lo = bounds, hi = bounds}
  let cfg.lo[0] = 0
  in cfg.hi[1]
