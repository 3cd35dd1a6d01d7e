-- A type whose definition differs from the one the module type gives.
-- ==
-- error: Type "t" is "f32" in the module, but the module type requires "i32"

module M : { type t = i32 } = {
  type t = f32
}
