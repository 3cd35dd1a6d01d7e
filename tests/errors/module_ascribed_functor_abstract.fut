-- A type that the result of a parametric module type leaves abstract is abstract in the
-- applications of a parametric module ascribed that type.
-- ==
-- error: Cannot unify "B.b" with "i64"

module type box = { type b  val pack : i64 -> b  val unpack : b -> i64 }

module boxes (P: { type t }) = {
  type b = i64
  def pack (k: i64) : b = k
  def unpack (x: b) : i64 = x
}

module G : (P: { type t }) -> box = boxes

module B = G { type t = bool }

entry main (k: i64) = B.unpack (k + 1)
