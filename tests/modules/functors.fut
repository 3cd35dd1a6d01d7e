-- Parametric modules: several parameters, applied to module expressions, to numeric
-- modules, to other applications, and their results ascribed; a module lambda.

module type ordered = {
  type t
  val <= : t -> t -> bool
}

module pair_ord (A: ordered) (B: ordered) = {
  type t = (A.t, B.t)
  def (x: t) <= (y: t) : bool =
    if x.0 A.<= y.0 && y.0 A.<= x.0 then x.1 B.<= y.1 else x.0 A.<= y.0
}

module mk_sort (O: ordered) = {
  -- Insertion sort, enough for a test.
  def sort [n] (xs: [n]O.t) : [n]O.t =
    loop xs = copy xs for i in 1..<n do
      let (xs, _) =
        loop (xs, j) = (xs, i) while j > 0 && !(xs[j - 1] O.<= xs[j]) do
          let a = xs[j - 1]
          let b = xs[j]
          let xs[j - 1] = b
          let xs[j] = a
          in (xs, j - 1)
      in xs
}

module int_sort = mk_sort i32
module rev_f32 = mk_sort { type t = f32  def (a: f32) <= (b: f32) = a >= b }
module lex = mk_sort (pair_ord i32 f32)

-- ==
-- entry: sort_ints
-- input { [3, 1, 2, 5, 4] } output { [1, 2, 3, 4, 5] }
entry sort_ints (xs: []i32) = int_sort.sort xs

-- ==
-- entry: sort_desc
-- input { [0.5f32, 2f32, -1f32] } output { [2f32, 0.5f32, -1f32] }
entry sort_desc (xs: []f32) = rev_f32.sort xs

-- Pairs sorted by the first component, then the second: (1,0.5) (1,2) (2,-1).
-- ==
-- entry: sort_pairs
-- input { [2, 1, 1] [-1f32, 2f32, 0.5f32] } output { [1, 1, 2] [0.5f32, 2f32, -1f32] }
entry sort_pairs [n] (a: [n]i32) (b: [n]f32) = unzip (lex.sort (zip a b))

module type accum = { type t  val zero : t  val add : t -> t -> t }

-- The result's type is refined by the parameter's.
module summer (N: numeric) : accum with t = N.t = {
  type t = N.t
  def zero = N.i32 0
  def add (a: t) (b: t) = a N.+ b
}

module twice_applied = (\(A: accum) -> { def double (x: A.t) = A.add x x }) (summer i64)

-- ==
-- entry: lambda_module
-- input { 21i64 } output { 42i64 }
entry lambda_module (x: i64) = twice_applied.double x

-- The same parametric module applied twice gives independent modules.
module s32 = summer i32
module s64 = summer f64

-- ==
-- entry: two_instances
-- input { 2 1.5 } output { 4 3.0 }
entry two_instances (a: i32) (b: f64) = (s32.add a a, s64.add b b)
