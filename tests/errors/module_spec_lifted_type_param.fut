-- A value spec with a lifted type parameter (it may be a function type) implemented by a
-- definition whose type parameter is not lifted.
-- ==
-- error: lifted type parameter "'\^a", but the module defines it with the non-lifted "'a"

module type applier = { val twice '^a : (a -> a) -> a -> a  val keep '^a : a -> a }

module m : applier = {
  def twice '^a (f: a -> a) (x: a) = f (f x)
  def keep 'a (x: a) = x
}
