-- A module value that consumes one component of a tuple parameter where the module type
-- promises callers that it leaves the whole tuple alone.
-- ==
-- error: consumes its parameter of type "\*\[n\]f64"

module type resettable = { val reset [n] : ([n]f64, i64) -> [n]f64 }

module zeroing : resettable = {
  def reset [n] ((xs: *[n]f64, i: i64)) : *[n]f64 = xs with [i] = 0
}
