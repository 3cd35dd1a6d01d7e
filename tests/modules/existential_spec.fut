-- A value spec with existential sizes hides the sizes of the module's definition, as an
-- abstract type hides a type: uses see `?[n][m].([n]i32, [m]i32, [n + m]i32)`, and sizes
-- are read from the values (the reference suite's `shapes/letshape13`).

module pieces : {
  val split3 : i64 -> ?[n][m].([n]i32, [m]i32, [n + m]i32)
  val pad : i32 -> ?[k].[k]i32
} = {
  def split3 (k: i64) =
    (replicate 1 (i32.i64 k), replicate 2 (i32.i64 k), replicate (1 + 2) (i32.i64 k))
  def pad (x: i32) = [x, x, x, x]
}

-- ==
-- entry: sizes
-- input { 5i64 } output { 1i64 2i64 15i32 }
entry sizes (k: i64) =
  let [a][b] (_: [a]i32, _: [b]i32, whole: [a + b]i32) = pieces.split3 k
  in (a, b, reduce (+) 0 whole)

-- ==
-- entry: padded
-- input { 3 } output { 4i64 12i32 }
entry padded (x: i32) =
  let [k] (p: [k]i32) = pieces.pad x
  in (k, reduce (+) 0 p)
