-- A parametric module whose result lacks a value the parametric module type promises.
-- ==
-- error: does not define the value "norm"

module type vec = { type t val dot : t -> t -> f64 }

module mk_metric (V: vec) = {
  def dist2 (a: V.t) (b: V.t) = V.dot a a - 2 * V.dot a b + V.dot b b
}

module metric : (V: vec) -> { val dist2 : V.t -> V.t -> f64  val norm : V.t -> f64 } = mk_metric
