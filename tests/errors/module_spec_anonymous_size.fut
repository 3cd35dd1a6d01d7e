-- Sizes to the left of an arrow in a value specification must be named.
-- ==
-- error: sizes in parameter types must be named

module type summable = {
  val total : []f32 -> f32
}
