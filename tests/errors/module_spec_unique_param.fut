-- A module value that consumes its argument where the module type promises callers that it
-- does not.
-- ==
-- error: consumes its parameter of type "\*\[n\]f64"

module type resettable = { val reset [n] : [n]f64 -> [n]f64 }

module zeroing : resettable = {
  def reset [n] (xs: *[n]f64) : *[n]f64 = xs with [0] = 0
}
