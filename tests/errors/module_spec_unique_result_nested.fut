-- A module value that returns an alias of its argument in one field of a record, where
-- the module type promises a fresh (unique) array there.
-- ==
-- error: returns the non-unique type "\[n\]i32" in the module, but the module type requires the unique type "\*\[n\]i32"

module type fresh = { val split [n] : [n]i32 -> {fresh: *[n]i32, count: i64} }

module passthrough : fresh = {
  def split [n] (xs: [n]i32) : {fresh: [n]i32, count: i64} = {fresh = xs, count = n}
}
