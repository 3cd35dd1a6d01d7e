-- A parametric module ascribed a parametric module type (`module G : (P: A) -> B = F`)
-- takes modules of type `A` (even where `F` asks for less) and gives modules whose types
-- `B` leaves abstract are abstract (tests/errors/module_ascribed_functor_param.fut and
-- module_ascribed_functor_abstract.fut are the mistakes).

module type has_zero = { type t  val zero : t }
module type tally = { type c  val start : c  val bump : c -> c  val count : c -> i64 }

-- Asks only for a module with a type.
module counting (P: { type t }) = {
  type c = (i64, [1]P.t)
  def start (z: P.t) : c = (0, [z])
  def bump ((k, z): c) : c = (k + 1, z)
  def count ((k, _): c) = k
}

module with_zero (P: has_zero) = {
  module C = counting P
  type c = C.c
  def start : c = C.start P.zero
  def bump = C.bump
  def count = C.count
}

module G : (P: has_zero) -> tally = with_zero

module ints = G { type t = i32  def zero = 0i32 }
module floats = G { type t = f64  def zero = 0f64 }

-- ==
-- entry: main
-- input { 3i64 } output { 3i64 4i64 }
entry main (n: i64) =
  (ints.count (loop c = ints.start for _i < n do ints.bump c),
   floats.count (loop c = floats.start for _i < n + 1 do floats.bump c))
