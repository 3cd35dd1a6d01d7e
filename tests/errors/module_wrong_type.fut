-- A module value whose type differs from the one its module type specifies.
-- ==
-- error: Value "x" has type "f32" in the module, but the module type requires "i32"

module type has_x = { val x : i32 }

module M : has_x = {
  def x = 1.5f32
}
