-- A size parameter that occurs only inside a function-typed parameter is known at a call
-- when the value it describes has a named size.

def f [n] (_: [n]i32 -> i32) : [n]i32 -> i64 = \_ -> n + 1

-- ==
-- entry: named
-- input { [1, -2, 3] } output { 3i64 }
-- input { [-1] } output { 1i64 }
entry named (xs: []i32) =
  let [k] ys = filter (> 0) xs
  in f (\_ -> 0) ys

-- A plain `let` names the sizes of what it binds, so the size is known at the call too.
-- ==
-- entry: let_bound
-- input { [4, -5, 6, 7] } output { 4i64 }
-- input { empty([0]i32) } output { 1i64 }
entry let_bound (xs: []i32) =
  let ys = filter (> 0) xs
  in f (\_ -> 0) ys

-- The left operand of `|>` is computed before the function it is passed to, so its size is
-- known when that function is partially applied.
-- ==
-- entry: piped
-- input { [1, 2, -3] } output { 3i64 }
entry piped (xs: []i32) = filter (> 0) xs |> f (\_ -> 0)

-- A pipe whose function is given in pieces and whose left operand is another pipe.
-- ==
-- entry: piped_twice
-- input { [5, -1, 5, 5] } output { [6i32, 6i32, 6i32] }
entry piped_twice (xs: []i32) = xs |> filter (> 0) |> map (+ 1)

-- A dependent function passed where its size becomes a plain array size, or where the other
-- side names the same parameter, keeps working.
type^ summer = {sum: (k: i64) -> [k]f64 -> f64}

def make_summer (_: bool) : summer = {sum = \(k: i64) (xs: [k]f64) -> f64.sum xs}

def apply_to 'a '^b (f: a -> b) (x: a) : b = f x

-- ==
-- entry: dependent_passed
-- input { 3i64 } output { [0i64, 1i64, 2i64] 3.0f64 }
entry dependent_passed (n: i64) = (apply_to iota n, (make_summer true).sum 2 [1, 2])

-- An array beside the function in the result tells the sizes the function's type needs.
def pair_of (n: i64) (m: i64) : ([n][m]i32, [n][m]i32 -> i32) =
  (replicate n (replicate m 1), \b -> b[0, 0] + i32.i64 (n * m))

-- ==
-- entry: witnessed_pair
-- input { 2i64 3i64 } output { 7 }
entry witnessed_pair (x: i64) (y: i64) =
  let (a, f) = uncurry pair_of (x, y)
  in f a

-- A section over a `let`-bound value of unknown size may be passed on: the size has a name
-- before the section is made (tests/errors/causality_section.fut is the unbound form).
-- ==
-- entry: section_bound
-- input { [1f32, -2, 3] [[5f32], [6f32]] } output { [[1f32, 3, 5], [1f32, 3, 6]] }
entry section_bound (xs: []f32) (rows: [][]f32) =
  let pos = filter (> 0) xs
  in map (pos ++) rows
