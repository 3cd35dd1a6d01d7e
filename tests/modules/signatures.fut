-- Module types: abstract types behind opaque ascription, transparent ascription, `with`
-- refinements, `include` in module types, size-parametric abstract types, and numeric
-- modules matched against numeric, integral and real.

module type stack = {
  type t
  val empty : t
  val push : i32 -> t -> t
  val top : t -> i32
  val depth : t -> i64
}

-- A stack of at most 4 values kept in a record; its representation is hidden.
module fixed_stack : stack = {
  type t = {xs: [4]i32, n: i64}
  def empty : t = {xs = replicate 4 0, n = 0}
  def push (x: i32) (s: t) : t = {xs = copy s.xs with [s.n] = x, n = s.n + 1}
  def top (s: t) : i32 = s.xs[s.n - 1]
  def depth (s: t) = s.n
}

-- push 1, 2, x: the top is x and the depth 3.
-- ==
-- entry: abstract_stack
-- input { 7 } output { 7 3i64 }
entry abstract_stack (x: i32) =
  let s = fixed_stack.(push x (push 2 (push 1 empty)))
  in (fixed_stack.top s, fixed_stack.depth s)

module type has_zero = { type t  val zero : t }
module type monoid = {
  include has_zero
  val op : t -> t -> t
}

module sum_monoid : monoid with t = i32 = {
  type t = i32
  def zero = 0i32
  def op (a: t) (b: t) = a + b
}

-- `with t = i32` keeps the type visible: sum_monoid.t values are i32s.
-- ==
-- entry: refined
-- input { 5 } output { 8 }
entry refined (x: i32) : i32 = sum_monoid.op x 3 + sum_monoid.zero

-- Transparent ascription (:>) hides values but not type definitions.
module counter = { type t = i64  def start : t = 10  def hidden = 1i64 } :> { type t  val start : t }

-- ==
-- entry: transparent
-- input { 5i64 } output { 15i64 }
entry transparent (x: i64) : i64 = counter.start + x

-- A size-parametric abstract type.
module type vector = {
  type vec [n]
  val fill [n] : i64 -> f32 -> vec [n]
  val total [n] : vec [n] -> f32
}

module arr_vector : vector = {
  type vec [n] = [n]f32
  def fill [n] (k: i64) (x: f32) : vec [n] = replicate n x |> map (* f32.i64 k)
  def total [n] (v: vec [n]) : f32 = f32.sum v
}

-- fill with n = 3, k = 2, x = 1.5 gives [3,3,3]; the total is 9.
-- ==
-- entry: sized_abstract
-- input { 1.5f32 } output { 9f32 }
entry sized_abstract (x: f32) : f32 =
  let v : arr_vector.vec [3] = arr_vector.fill 2 x
  in arr_vector.total v

-- Numeric modules are modules: they can be aliased, ascribed and passed to parametric
-- modules.
module I : integral = i32
module R = f64

-- ==
-- entry: numeric_modules
-- input { 7 2 } output { 3 1 9 2.0 }
entry numeric_modules (a: i32) (b: i32) =
  (I.(a / b), I.(a % b), I.max a (b + 7), R.sqrt 4)
