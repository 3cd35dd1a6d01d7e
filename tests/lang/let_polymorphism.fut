-- A local function without type annotations is polymorphic: each use instantiates its
-- type afresh, as a top-level definition's would.

-- ==
-- entry: swap_both
-- input { 1 true } output { true 1 1 true }
entry swap_both (x: i32) (y: bool) =
  let swap a b = (b, a)
  let (p, q) = swap x y
  let (r, s) = swap y x
  in (p, q, r, s)

-- ==
-- entry: apply_twice
-- input { 5 } output { 10 }
entry apply_twice (x: i32) =
  let apply f v = f v
  in apply (apply (i32.+) x) x

-- ==
-- entry: pairs_of_arrays
-- input { [1, 2] [1.5f32, 2.5f32] } output { [1, 2, 1, 2] [1.5f32, 2.5f32, 1.5f32, 2.5f32] }
entry pairs_of_arrays (xs: []i32) (ys: []f32) =
  let twice zs = zs ++ zs
  in (twice xs, twice ys)

-- A local function that uses an outer variable stays tied to its type.
-- ==
-- entry: tied
-- input { 3 } output { 7 }
entry tied (k: i32) =
  let add_k v = v + k
  in add_k (add_k 1)

-- A local function over a record whose full type is not known yet keeps that type open
-- until its use.
-- ==
-- entry: open_record
-- input { 2 3 } output { 2 }
entry open_record (x: i32) (y: i32) =
  let first v = v.0
  in first (x, y)
