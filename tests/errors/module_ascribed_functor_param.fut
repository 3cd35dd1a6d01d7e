-- A parametric module ascribed `(P: has_zero) -> ...` takes only modules of type
-- `has_zero`, although the module itself asks for less.
-- ==
-- error: The module does not define the value "zero" that its module type specifies

module type has_zero = { type t  val zero : t }
module type box = { type b  val pack : i64 -> b }

module boxes (P: { type t }) = {
  type b = i64
  def pack (k: i64) : b = k
}

module G : (P: has_zero) -> box = boxes

module B = G { type t = bool }
