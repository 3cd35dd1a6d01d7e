-- A parametric module whose parameter is itself a parametric module: its body, checked on
-- its own, applies the parameter to modules of the parameter type's parameter type, and uses
-- the results through the result type (tests/errors/module_functor_param_application.fut and
-- module_functor_param_abstract.fut are the mistakes).

module type scalar = { type t  val one : t  val to_f64 : t -> f64 }
module type scaler = { type s  val make : f64 -> s  val get : s -> f64 }

module twice_of (Mk: (E: scalar) -> scaler) = {
  module A = Mk { type t = f32  def one = 1f32  def to_f64 = f64.f32 }
  module B = Mk { type t = f64  def one = 1f64  def to_f64 (x: f64) = x }
  def both (x: f64) = A.get (A.make x) + B.get (B.make x)
}

module scaled (E: scalar) = {
  type s = f64
  def make (x: f64) : s = x * E.to_f64 E.one * 2
  def get (v: s) = v
}

module T = twice_of scaled

-- ==
-- entry: main
-- input { 1.5 } output { 6.0 }
entry main (x: f64) = T.both x
