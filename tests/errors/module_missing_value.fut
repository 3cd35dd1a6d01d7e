-- A module that lacks a value its module type specifies.
-- ==
-- error: does not define the value "y"

module M : { val x : i32  val y : i32 } = {
  def x = 1i32
}
