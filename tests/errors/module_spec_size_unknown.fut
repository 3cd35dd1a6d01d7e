-- A module value whose size the module does not know (it is filtered), where the module type
-- promises the size of another specified value.
-- ==
-- error: Sizes "k" and "\[\]" do not match

module type evens = { val k : i64  val xs : [k]i64 }

module first_evens : evens = {
  def k = 4i64
  def xs : []i64 = filter (\x -> x % 2 == 0) (iota (2 * k))
}
