-- A module that lacks a type its module type specifies.
-- ==
-- error: does not define the type "t"

module M : { type t  val x : i32 } = {
  def x = 1i32
}
