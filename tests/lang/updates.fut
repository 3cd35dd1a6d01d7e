-- In-place updates (`let a[i] = v`), functional updates (`with`), slices and nested paths
-- (language.md Appendix B.4).
-- ==
-- entry: prefix_max
-- input { [3, 1, 4, 1, 5, 9, 2, 6] } output { [3, 3, 4, 4, 5, 9, 9, 9] }

def prefix_max_of [n] (xs: [n]i32) : [n]i32 =
  let out = copy xs
  let (out, _) =
    loop (out, best) = (out, i32.lowest) for i < n do
      let best = i32.max best xs[i]
      let out[i] = best
      in (out, best)
  in out

entry prefix_max = prefix_max_of

-- ==
-- entry: with_update
-- input { [1, 2, 3, 4] } output { [1, 20, 3, 4] [1, 2, 3, 4] [0, 0, 3, 4] }

entry with_update (xs: []i32) =
  let ys = copy xs with [1] = 20
  let zs = copy xs with [0:2] = [0, 0]
  in (ys, xs, zs)

-- ==
-- entry: nested
-- input { [[1, 2], [3, 4]] } output { [[1, 2], [3, 9]] }

entry nested (m: [][]i32) =
  let m = copy m
  let m[1, 1] = 9
  in m

-- ==
-- entry: many_updates
-- input { 1000000i64 } output { 499999500000i64 }

entry many_updates (n: i64) =
  let a = replicate n 0i64
  let a = loop a for i < n do a with [i] = i
  in i64.sum a

-- ==
-- entry: bad_update
-- input { [1, 2, 3] 3i64 } error: Index \[3\] out of bounds for array of shape \[3\]

entry bad_update (xs: *[]i32) (i: i64) = xs with [i] = 0

-- ==
-- entry: bad_slice_update
-- input { [1, 2, 3] } error: Shape of slice does not match shape of value

-- (A slice of a statically known size, `[0:2]` or `[1:3]`, against a literal of 3 would be
-- a static size error; `length xs - 1` is a size the checker leaves to the run time.)
entry bad_slice_update (xs: *[]i32) = xs with [0:length xs - 1] = [7, 8, 9]
