-- Inside a parametric module, the parameter's abstract type is not a number, even if every
-- argument it is ever applied to would make it one.
-- ==
-- error: P.t

module bump (P: { type t  val x : t }) = {
  def y = P.x + 1
}
