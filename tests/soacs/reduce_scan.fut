-- reduce, reduce_comm, scan and exscan with built-in and user-defined operators, tuple
-- operators, array operands, and the numeric-module reductions.
-- ==
-- entry: reductions
-- input { [3, 1, 4, 1, 5] } output { 14 60 5 1 14 }
-- input { empty([0]i32) } output { 0 1 -2147483648 2147483647 0 }

entry reductions (xs: []i32) =
  (reduce (+) 0 xs, reduce (*) 1 xs, reduce i32.max i32.lowest xs, i32.minimum xs,
   reduce_comm (+) 0 xs)

-- ==
-- entry: float_sums
-- input { [1.5f32, 2.5, -1] } output { 3f32 -3.75f32 2.5f32 }

entry float_sums (xs: []f32) = (f32.sum xs, f32.product xs, f32.maximum xs)

-- ==
-- entry: tuple_op
-- input { [4, 7, 1, 7] } output { 7 1 }

-- Maximum with its index; ties go to the lowest index.
def argmax (a: (i32, i64)) (b: (i32, i64)) =
  if a.0 > b.0 then a else if b.0 > a.0 then b else if a.1 < b.1 then a else b
entry tuple_op (xs: []i32) = reduce argmax (i32.lowest, -1) (zip xs (iota (length xs))) |> \(v, i) -> (v, i)

-- ==
-- entry: rows
-- input { [[1, 2], [3, 4], [5, 6]] } output { [9, 12] }

entry rows (m: [][]i32) = reduce (map2 (+)) [0, 0] m

-- ==
-- entry: scans
-- input { [1, 2, 3, 4] } output { [1, 3, 6, 10] [1, 2, 6, 24] [0, 1, 3, 6] [1, 2, 3, 4] }

entry scans (xs: []i32) = (scan (+) 0 xs, scan (*) 1 xs, exscan (+) 0 xs, scan i32.max i32.lowest xs)

-- ==
-- entry: linear_recurrence
-- input { [2.0, 3.0] [1.0, 1.0] } output { [1.0, 4.0] }

-- y[i] = a[i] * y[i-1] + b[i] as a scan over affine maps (a, b).
def compose_affine (a1: f64, b1: f64) (a2: f64, b2: f64) = (a1 * a2, b1 * a2 + b2)
entry linear_recurrence (as: []f64) (bs: []f64) =
  map (.1) (scan compose_affine (1, 0) (zip as bs))

-- ==
-- entry: iota_sum_reads_hoisted_values
-- input { [1f32, 2, 3] } output { 18f32 }
-- input { empty([0]f32) } output { 6f32 }

-- A reduction over an iota whose function reads a histogram that does not depend on the
-- index: the optimiser hoists the histogram out, between the iota and the reduction, and
-- the chunked reduction that replaces the iota must come after it. By hand: h[1] is
-- 1 + 2 + 3 = 6 (0 when xs is empty), and Σ_{i<4} (h[1]/2 + i) = 4·3 + 6 = 18 (or 6).
entry iota_sum_reads_hoisted_values (xs: []f32) =
  reduce (+) 0 (map (\i -> let h = hist (+) 0 2 (map (\_ -> 1i64) xs) xs
                           in h[1] / 2 + f32.i64 i)
                    (iota 4))
