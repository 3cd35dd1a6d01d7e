-- More programs that the uniqueness checks must accept (issue 17): the components of a
-- tuple variable are consumed separately, directly and through a tuple loop parameter; an
-- if whose branch consumed a variable returns a value that is still usable; updates of
-- a copy inside a branch; local functions and lambdas that read (not consume) what they
-- capture; a loop over one array filling a fresh one.
-- ==
-- entry: tuple_variable
-- input { 3i64 } output { [5i64, 0i64, 0i64] [0i64, 0i64, 6i64] }

entry tuple_variable (n: i64) =
  let pair = (replicate n 0i64, replicate n 0i64)
  let (p, q) = pair
  let p[0] = 5
  let q[n - 1] = 6
  in (p, q)

-- ==
-- entry: tuple_loop
-- input { 4i64 } output { [0i64, 1i64, 2i64, 3i64] [0i64, 2i64, 4i64, 6i64] }

entry tuple_loop (n: i64) =
  loop (us, vs) = (replicate n 0i64, replicate n 0i64) for i < n do
    let (us, vs) = (us, vs)
    let us[i] = i
    let vs[i] = 2 * i
    in (us, vs)

-- ==
-- entry: tuple_param
-- input { 2i64 } output { [1f32, 0f32] [0f32, 3f32] }

entry tuple_param (n: i64) =
  loop st = (replicate n 0f32, replicate n 0f32) for i < 1 do
    let (a, b) = st
    let a[0] = 1
    let b[1] = 3
    in (a, b)

def reset (xs: *[]i64) : *[]i64 = replicate (length xs) 0

-- ==
-- entry: branch_takes_over
-- input { true 3i64 } output { [0i64, 1i64, 2i64] }
-- input { false 3i64 } output { [0i64, 0i64, 0i64] }

entry branch_takes_over (c: bool) (n: i64) =
  let a = iota n
  let x = if c then a else reset a
  in x

-- ==
-- entry: branch_result_updated
-- input { false 2i64 } output { [9i64, 0i64] }
-- input { true 2i64 } output { [9i64, 1i64] }

entry branch_result_updated (c: bool) (n: i64) =
  let a = iota n
  let x = if c then a else reset a
  let x[0] = 9
  in x

-- ==
-- entry: reads_capture
-- input { [4, 5, 6] } output { [5, 6, 7] [9, 5, 6] }

entry reads_capture (tbl: *[]i32) =
  let bumped = map (\i -> tbl[i] + 1) (iota (length tbl))
  let look (i: i64) = tbl[i]
  let first = look 0
  let tbl[0] = first + 5
  in (bumped, tbl)

-- ==
-- entry: fill_from
-- input { [[1, 2], [3, 4], [5, 6]] } output { [3, 7, 11] }

entry fill_from [n] (rows: [n][2]i32) =
  loop acc = replicate n 0 for i < n do
    let acc[i] = rows[i, 0] + rows[i, 1]
    in acc

-- ==
-- entry: alias_then_update
-- input { true [1, 2] [3, 4] [5, 6] } output { [0, 2] [5, 6] }
-- input { false [1, 2] [3, 4] [5, 6] } output { [0, 4] [5, 6] }

entry alias_then_update (b: bool) (p: *[]i32) (q: *[]i32) (r: *[]i32) =
  let x = if b then p else q
  let x[0] = 0
  in (x, r)

-- ==
-- entry: update_with_own_map
-- input { 1i64 3i64 [2f32, 4f32, 6f32, 8f32] } output { [2f32, 2f32, 3f32, 8f32] }

entry update_with_own_map [n] (i: i64) (j: i64) (a: *[n]f32) =
  a with [i:j] = map (/ a[0]) a[i:j]

-- ==
-- entry: record_fields
-- input { [1, 2] } output { [0, 2] [1, 2] }

entry record_fields (xs: []i32) =
  let r = {a = copy xs, b = copy xs}
  let r.a[0] = 0
  in (r.a, r.b)

-- The fields of a record loop parameter are updated separately and come back distinct.
-- ==
-- entry: record_loop_fields
-- input { 3i64 } output { [5u8, 5u8, 5u8] [7u8, 7u8, 7u8] }
entry record_loop_fields (n: i64) =
  let r =
    loop {lo = lo: *[]u8, hi = hi: *[]u8} = {lo = replicate n 0, hi = replicate n 1}
    for i < n do
      let lo[i] = 5
      let hi[i] = 7
      in {lo = lo, hi = hi}
  in (r.lo, r.hi)

-- A record result with a unique field and a non-unique one that comes from a parameter:
-- only the unique field must be fresh (fields are checked one by one, like tuple
-- components).
def bumped [n] ((xs: [n]i32, k: i32)) : {out: *[n]i32, k: i32} = {out = map (+ k) xs, k}

-- ==
-- entry: record_fields_checked_apart
-- input { [1, 2] 3 } output { [4, 5] 3 }
entry record_fields_checked_apart (xs: []i32) (k: i32) =
  let r = bumped (xs, k) in (r.out, r.k)
