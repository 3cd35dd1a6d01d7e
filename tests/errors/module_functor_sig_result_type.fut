-- A parametric module whose result has a value of another type than the parametric module
-- type gives it (it returns a count, the type promises an element).
-- ==
-- error: Value "first" has type .* in the module, but the module type requires

module type elem = { type t val zero : t }

module mk_first (E: elem) = {
  def first [n] (_: [n]E.t) : i64 = n
}

module f : (E: elem) -> { val first [n] : [n]E.t -> E.t } = mk_first
