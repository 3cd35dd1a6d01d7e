-- A function that does not declare its result unique may return a value whose arrays are
-- one and the same (here hidden behind an abstract type), so the value is not unique.
-- ==
-- error: may have internal aliases

module Twins : {
  type pr [n]
  val twin : (n: i64) -> pr [n]
} = {
  type pr [n] = ([n]f32, [n]f32)
  def twin n : pr [n] = let a = replicate n 1f32 in (a, a)
}

entry fresh_pair (k: i64) : *Twins.pr [] = Twins.twin k
