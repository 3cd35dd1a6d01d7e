-- A value spec of a size-lifted abstract type (arrays of any size) implemented by a value
-- of one fixed size.
-- ==
-- error: Value "origin" has type "\[3\]f32" in the module

module type point = {
  type~ pt
  val origin : pt
  val dims : pt -> i64
}

module p3 : point = {
  type~ pt = []f32
  def origin : [3]f32 = [0, 0, 0]
  def dims [n] (_: [n]f32) = n
}
