-- Chains of concatenations (`a ++ b ++ c` is `(a ++ b) ++ c`): the optimiser makes one
-- concatenation of all the parts, which must give what the chain gives — also when the
-- inner concatenation is used on its own, when a part is updated in place between the two,
-- for rows, and for empty parts.
-- ==
-- entry: ends
-- input { [1f32, 2f32, 3f32, 4f32] } output { [1f32, 2f32, 3f32, 4f32] }
-- input { [1f32, 4f32, 2f32, 8f32, 5f32] } output { [1f32, -1f32, 10f32, -1f32, 5f32] }
-- input { [7f32] } output { [7f32] }

entry ends [n] (a: [n]f32) : [n]f32 =
  if n < 2 then a
  else let inner = map (\i -> a[i] + a[i + 2] - a[i + 1]) (iota (n - 2))
       in [a[0]] ++ inner ++ [a[n - 1]] :> [n]f32

-- ==
-- entry: shared_inner
-- input { [1, 2] [3] [4, 5] } output { [1, 2, 3, 4, 5] [1, 2, 3] [4, 5, 1, 2, 3] }

entry shared_inner (a: []i32) (b: []i32) (c: []i32) =
  let ab = a ++ b
  in (ab ++ c, ab, c ++ ab)

-- ==
-- entry: consumed_part
-- input { [1, 2] [3] [4] } output { [1, 2, 3, 4] [5, 2] }

entry consumed_part (a: *[]i32) (b: []i32) (z: []i32) =
  let c1 = a ++ b
  let a[0] = 5
  in (c1 ++ z, a)

-- ==
-- entry: rows
-- input { [[1, 2]] [[3, 4], [5, 6]] empty([0][2]i32) [[7, 8]] }
-- output { [[1, 2], [3, 4], [5, 6], [7, 8]] }

entry rows [m] (a: [][m]i32) (b: [][m]i32) (c: [][m]i32) (d: [][m]i32) =
  a ++ b ++ c ++ d

-- ==
-- entry: empty_parts
-- input { empty([0]f64) [2.5] empty([0]f64) } output { [2.5, 2.5] }

entry empty_parts (a: []f64) (b: []f64) (c: []f64) =
  a ++ b ++ c ++ b ++ a
