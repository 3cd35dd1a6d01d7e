-- A parametric module applied to a module that does not match its parameter's type.
-- ==
-- error: Value "x" has type "bool" in the module, but the module type requires "i32"

module add_one (P: { val x : i32 }) = {
  def y = P.x + 1
}

module A = add_one { def x = true }
