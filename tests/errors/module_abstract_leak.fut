-- An abstract type used as the type it is defined as: outside the module, "M.t" is not
-- "i32".
-- ==
-- error: Cannot unify "M.t" with a numeric type

module M : { type t  val mk : i32 -> t  val get : t -> i32 } = {
  type t = i32
  def mk (x: i32) = x
  def get (x: t) = x
}

def main (x: i32) : i32 = M.mk x + 1
