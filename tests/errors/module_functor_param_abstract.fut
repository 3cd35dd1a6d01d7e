-- Inside a parametric module, the result of applying a parameter that is a parametric module
-- has the abstract types of that parameter's result type.
-- ==
-- error: Cannot unify "A.s" with "f64"

module type scalar = { type t  val one : t }
module type scaler = { type s  val make : f64 -> s  val get : s -> f64 }

module use_it (Mk: (E: scalar) -> scaler) = {
  module A = Mk { type t = f32  def one = 1f32 }
  def wrong (x: f64) = A.get x
}
