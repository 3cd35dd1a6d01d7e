-- Inside a parametric module, a parameter that is a parametric module takes only modules of
-- its parameter type.
-- ==
-- error: The module does not define the value "one" that its module type specifies

module type scalar = { type t  val one : t }
module type scaler = { type s  val make : f64 -> s }

module use_it (Mk: (E: scalar) -> scaler) = {
  module A = Mk { type t = f32 }
}
