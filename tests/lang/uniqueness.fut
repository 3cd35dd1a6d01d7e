-- Programs that the uniqueness checks (language.md §5.6) must accept: consumption of unique
-- parameters, of fresh arrays and of loop parameters; each branch of an `if` may consume the
-- same variable; `copy` breaks aliasing; scalars read from an array do not alias it.
-- ==
-- entry: branches
-- input { true [1, 2, 3] } output { [7, 2, 3] }
-- input { false [1, 2, 3] } output { [1, 8, 3] }

entry branches (b: bool) (xs: *[]i32) =
  if b then xs with [0] = 7 else xs with [1] = 8

-- ==
-- entry: scalar_read
-- input { [5, 6] } output { [6, 6] }

entry scalar_read (xs: []i32) =
  let ys = copy xs
  let x = ys[1]
  let ys[0] = x
  in ys

-- ==
-- entry: fields
-- input { [1, 2] } output { [9, 2] [1, 2] }

entry fields (xs: []i32) =
  let (a, b) = (copy xs, xs)
  let a[0] = 9
  in (a, b)

-- ==
-- entry: loop_accumulator
-- input { 4i64 } output { [0i64, 1i64, 4i64, 9i64] 6i64 }

entry loop_accumulator (n: i64) =
  let (out, s) =
    loop (out, s) = (replicate n 0, 0) for i < n do
      let out[i] = i * i
      in (out, s + i)
  in (out, s)

def bump (xs: *[]i32) : *[]i32 = xs with [0] = xs[0] + 1

-- ==
-- entry: through_calls
-- input { [1, 2] } output { [3, 2] }

entry through_calls (xs: []i32) =
  let ys = bump (copy xs)
  let ys = bump ys
  in ys

-- ==
-- entry: scatter_fresh
-- input { 4i64 } output { [0, 10, 0, 30] }

entry scatter_fresh (n: i64) = scatter (replicate n 0i32) [1, 3] [10, 30]

-- ==
-- entry: map_then_update
-- input { [1, 2, 3] } output { [0, 4, 6] }

entry map_then_update (xs: []i32) =
  let ys = map (* 2) xs
  in ys with [0] = 0

-- ==
-- entry: loop_reads_parameter
-- input { [4, 5, 6] } output { [4, 5, 6] }

-- Only the consumed component of a tuple loop parameter consumes its initial value: `xs`
-- (not unique) is only read.
entry loop_reads_parameter (xs: []i32) =
  let (acc, _) =
    loop (acc, ys) = (replicate (length xs) 0, xs) for i < length xs do
      (acc with [i] = ys[i], ys)
  in acc
