-- Operator precedence and associativity (language.md §3.4) and user-defined operator
-- fixity (by the longest built-in prefix).
-- ==
-- entry: table
-- input { 2 3 } output { 64 true -4 14 }

entry table (a: i32) (b: i32) =
  (2 ** 3 ** 2, a & 1 == 0, -a ** 2 - 8, a + b * 4)

-- ==
-- entry: pipes_bind_loosely
-- input { 1 2 } output { 3 false }

entry pipes_bind_loosely (a: i32) (b: i32) = (a + b |> id, false || false |> not |> not)

-- ==
-- entry: minus_rules
-- input { 10 } output { 9 9 9 -10 }

def g (x: i32) = x
entry minus_rules (x: i32) = (g x -1, g x - 1, g x-1, g (-x))

-- ==
-- entry: user_fixity
-- input { 2 3 } output { 11 7 }

def (+^) (a: i32) (b: i32) = a + b
def (**.) (a: i32) (b: i32) = a * b
entry user_fixity (a: i32) (b: i32) = (a +^ b **. 3, a **. 2 +^ b)

-- ==
-- entry: comparison_ops
-- input { 1.0 1.0000000001 } output { true false }

def (u: f64) =!= (v: f64) : bool = f64.abs (u - v) > 1e-12
entry comparison_ops (u: f64) (v: f64) = (u =!= v, u =!= u)

-- ==
-- entry: with_precedence
-- input { [1, 2] [3] } output { [1, 2, 9] [1, 11] }

entry with_precedence (xs: *[]i32) (ys: []i32) =
  (xs ++ ys with [2] = 9, xs with [1] = 10 + 1)

-- ==
-- entry: range_arith
-- input { 4i64 } output { [0i64, 1i64, 2i64] }

entry range_arith (n: i64) = 0..<n-1

-- ==
-- entry: not_app
-- input { true } output { false }

def ident (b: bool) = b
entry not_app (p: bool) = !ident p
