-- A module value that returns an alias of its argument where the module type promises a
-- fresh (unique) array.
-- ==
-- error: returns the non-unique type "\[n\]i32" in the module, but the module type requires the unique type "\*\[n\]i32"

module type fresh = { val same [n] : [n]i32 -> *[n]i32 }

module passthrough : fresh = {
  def same [n] (xs: [n]i32) : [n]i32 = xs
}
