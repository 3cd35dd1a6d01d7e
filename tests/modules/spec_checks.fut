-- What signature matching accepts: parametric modules matched against parametric module
-- types, modules more liberal than their module type (in uniqueness and in the liftedness of
-- type parameters), size-lifted abstract types, and abstract types with size parameters.

module type num = { type t  val zero : t  val add : t -> t -> t }

-- A parametric module matched against a parametric module type whose result refers to the
-- parameter, and one whose parameter needs less than the type offers.
module type summer = (N: num) -> { type t  val sum [n] : [n]t -> t } with t = N.t

module mk_sum (N: num) = {
  type t = N.t
  def sum [n] (xs: [n]t) = reduce N.add N.zero xs
}

module mk_const (Z: { type t  val zero : t }) = {
  type t = Z.t
  def sum [n] (_: [n]t) = Z.zero
}

module sum_checked : summer = mk_sum
module const_checked : summer = mk_const

module i64_num = { type t = i64  def zero = 0i64  def add (x: i64) (y: i64) = x + y }
module s64 = sum_checked i64_num
module c64 = const_checked i64_num

-- 1 + 2 + 3 + 4 = 10; the constant summer always gives zero.
-- ==
-- entry: functor_types
-- input { [1i64, 2i64, 3i64, 4i64] } output { 10i64 0i64 }
entry functor_types (xs: []i64) = (s64.sum xs, c64.sum xs)

-- Curried parametric module types.
module type pairing = (A: num) -> (B: num) -> { val zeros : (A.t, B.t) }
module mk_pairing (A: num) (B: num) = { def zeros = (A.zero, B.zero) }
module pairing_checked : pairing = mk_pairing
module f32_num = { type t = f32  def zero = 0f32  def add (x: f32) (y: f32) = x + y }
module pz = pairing_checked i64_num f32_num

-- ==
-- entry: curried
-- input { } output { 0i64 0f32 }
entry curried = pz.zeros

-- The module type lets a function consume its argument; the module does not. It promises
-- a non-unique result; the module's is unique.
module type updater = { val bump [n] : *[n]i32 -> [n]i32 }
module copying : updater = {
  def bump [n] (xs: [n]i32) : *[n]i32 = map (+ 1) xs
}

-- ==
-- entry: uniqueness_liberal
-- input { [1, 2] } output { [2, 3] }
entry uniqueness_liberal (xs: *[]i32) = copying.bump xs

-- The same inside a tuple parameter and a record result: the module type lets the first
-- component be consumed and asks for a non-unique field; the module consumes nothing and
-- gives a unique field.
module type pair_updater = { val bump_first [n] : (*[n]i32, i32) -> {out: [n]i32, k: i32} }
module pair_copying : pair_updater = {
  def bump_first [n] ((xs: [n]i32, k: i32)) : {out: *[n]i32, k: i32} =
    {out = map (+ k) xs, k}
}

-- ==
-- entry: uniqueness_liberal_nested
-- input { [1, 2] 5 } output { [6, 7] 5 }
entry uniqueness_liberal_nested (xs: *[]i32) (k: i32) =
  let r = pair_copying.bump_first (xs, k) in (r.out, r.k)

-- A lifted type parameter in the module where the module type has a non-lifted one.
module type keeper = { val keep 'a : a -> a }
module keep_any : keeper = { def keep '^a (x: a) = x }

-- ==
-- entry: lifted_liberal
-- input { 5 } output { 5 }
entry lifted_liberal (x: i32) = keep_any.keep x

-- A size-lifted abstract type: its functions take arrays of any size and may return arrays
-- of sizes of their own; `with` may refine it to an array type with an anonymous size.
module type bag = {
  type~ bag
  val from [n] : [n]bool -> bag
  val split : bag -> (bag, bag)
  val count : bag -> i64
}

module bool_bag : bag with bag = []bool = {
  type~ bag = []bool
  def from [n] (xs: [n]bool) : bag = xs
  def split (xs: bag) = (take 1 xs, drop 1 xs)
  def count (xs: bag) = length (filter id xs)
}

-- ==
-- entry: size_lifted
-- input { [true, false, true] } output { 1i64 1i64 }
entry size_lifted (xs: []bool) =
  let (a, b) = bool_bag.split (bool_bag.from xs)
  in (bool_bag.count a, bool_bag.count b)

-- An abstract type whose size parameters are each a whole dimension of its definition.
module type grid = {
  type cells [n] [m]
  val make [n] [m] : [n][m]i32 -> cells [n] [m]
  val total [n] [m] : cells [n] [m] -> i32
}

module row_grid : grid = {
  type cells [n] [m] = ([n][m]i32, [n]bool)
  def make [n] [m] (g: [n][m]i32) : cells [n] [m] = (g, replicate n true)
  def total [n] [m] (c: cells [n] [m]) = i32.sum (flatten c.0)
}

-- ==
-- entry: constructive
-- input { [[1, 2], [3, 4]] } output { 10 }
entry constructive [n] [m] (g: [n][m]i32) = row_grid.total (row_grid.make g)

-- A lifted abbreviation may hold a lifted type parameter.
type^ tagged '^a = (a, i32)
def tag '^a (x: a) : tagged a = (x, 1)

-- ==
-- entry: lifted_abbreviation
-- input { 4 } output { 9 }
entry lifted_abbreviation (x: i32) = let (f, k) = tag (\y -> y * 2) in f x + k

-- A value spec's name is in scope in the specs after it: `xs` has `n` elements.
module type sized_table = { val n : i64  val xs : [n]i32 }
module three : sized_table = { def n = 3i64  def xs = map i32.i64 (iota n) }

-- ==
-- entry: spec_names_in_sizes
-- input { } output { [0, 1, 2] }
entry spec_names_in_sizes = copy three.xs :> [3]i32

-- A `with` refinement may make a type parameter more lifted than specified.
module type wraps = { type w 'a  val unwrap 'a : w a -> a }
module type fn_wraps = wraps with w '^a = a
module ident : fn_wraps = { type^ w '^a = a  def unwrap '^a (x: a) = x }

-- ==
-- entry: refinement_expands
-- input { 3 } output { 7 }
entry refinement_expands (x: i32) = ident.unwrap (\y -> y + 4) x

-- A module declared after a prelude function of the same name hides it in `name.x`.
module reverse = { def twice (x: i32) = 2 * x }

-- ==
-- entry: module_hides_prelude_value
-- input { 5 } output { 10 [3, 2, 1] }
entry module_hides_prelude_value (x: i32) = (reverse.twice x, reverse [1, 2, 3])

-- A definition with an anonymous parameter size matches a spec that names it.
module type folds = { val total [n] : [n]i32 -> i32 }
module folding : folds = { def total (xs: []i32) = i32.sum xs }

-- ==
-- entry: anonymous_param_size
-- input { [1, 2, 3] } output { 6 }
entry anonymous_param_size (xs: []i32) = folding.total xs
