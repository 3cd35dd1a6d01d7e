-- Matrix products written the ways users write them. On the ir backend these nests run
-- as a GEMM (runic dev --backend ir --explain-exec shows "a matrix product"); the
-- interpreter runs them as written. Expected values from numpy.

def dot [n] (a: [n]f32) (b: [n]f32): f32 = reduce (+) 0 (map2 (*) a b)

-- ==
-- entry: rows_by_rows
-- input { [[1.0f32, 2.0f32, 3.0f32], [4.0f32, 5.0f32, 6.0f32], [-1.0f32, 0.5f32, 2.0f32]]
--         [[1.0f32, 0.0f32, 1.0f32], [2.0f32, 1.0f32, 0.0f32], [0.25f32, -1.0f32, 3.0f32], [1.0f32, 1.0f32, 1.0f32]] }
-- output { [[4.0f32, 4.0f32, 7.25f32, 6.0f32], [10.0f32, 13.0f32, 14.0f32, 15.0f32], [1.0f32, -1.5f32, 5.25f32, 1.5f32]] }
-- input { [[1.0f32, 2.0f32, 3.0f32], [4.0f32, 5.0f32, 6.0f32], [-1.0f32, 0.5f32, 2.0f32]] empty([0][3]f32) } output { [empty([0]f32), empty([0]f32), empty([0]f32)] }
-- input { [[1f32, 2], [3, 4]] [[1f32, 2, 3]] } error: invalid sizes

entry rows_by_rows [m][k][p] (a: [m][k]f32) (b: [p][k]f32): [m][p]f32 =
  map (\r -> map (\c -> dot r c) b) a

-- ==
-- entry: by_indices
-- input { [[1.0f32, 2.0f32, 3.0f32], [4.0f32, 5.0f32, 6.0f32], [-1.0f32, 0.5f32, 2.0f32]]
--         [[1.0f32, 2.0f32, 0.5f32, -1.0f32], [0.0f32, 1.0f32, 2.0f32, 3.0f32], [1.0f32, 0.0f32, -2.0f32, 0.25f32]] }
-- output { [[4.0f32, 4.0f32, -1.5f32, 5.75f32], [10.0f32, 13.0f32, 0.0f32, 12.5f32], [1.0f32, -1.5f32, -3.5f32, 3.0f32]] }

entry by_indices [m][k][p] (a: [m][k]f32) (b: [k][p]f32): [m][p]f32 =
  map (\i -> map (\j -> reduce (+) 0 (map (\l -> a[i, l] * b[l, j]) (iota k))) (iota p)) (iota m)

-- ==
-- entry: transposed
-- input { [[1.0f32, 2.0f32, 3.0f32], [4.0f32, 5.0f32, 6.0f32], [-1.0f32, 0.5f32, 2.0f32]]
--         [[1.0f32, 2.0f32, 0.5f32, -1.0f32], [0.0f32, 1.0f32, 2.0f32, 3.0f32], [1.0f32, 0.0f32, -2.0f32, 0.25f32]] }
-- output { [[4.0f32, 4.0f32, -1.5f32, 5.75f32], [10.0f32, 13.0f32, 0.0f32, 12.5f32], [1.0f32, -1.5f32, -3.5f32, 3.0f32]] }

entry transposed [m][k][p] (a: [m][k]f32) (b: [k][p]f32): [m][p]f32 =
  let bt = transpose b in map (\r -> map (\c -> dot r c) bt) a

-- ==
-- entry: transposed_f64
-- input { [[1.0f64, 2.0f64, 3.0f64], [4.0f64, 5.0f64, 6.0f64], [-1.0f64, 0.5f64, 2.0f64]]
--         [[1.0f64, 2.0f64, 0.5f64, -1.0f64], [0.0f64, 1.0f64, 2.0f64, 3.0f64], [1.0f64, 0.0f64, -2.0f64, 0.25f64]] }
-- output { [[4.0f64, 4.0f64, -1.5f64, 5.75f64], [10.0f64, 13.0f64, 0.0f64, 12.5f64], [1.0f64, -1.5f64, -3.5f64, 3.0f64]] }

entry transposed_f64 [m][k][p] (a: [m][k]f64) (b: [k][p]f64): [m][p]f64 =
  map (\i -> map (\j -> f64.sum (map (\l -> a[i, l] * b[l, j]) (iota k))) (iota p)) (iota m)

-- ==
-- entry: layer
-- input { [[1.0f32, 2.0f32, 3.0f32], [4.0f32, 5.0f32, 6.0f32], [-1.0f32, 0.5f32, 2.0f32]]
--         [[1.0f32, 0.0f32, 1.0f32], [2.0f32, 1.0f32, 0.0f32], [0.25f32, -1.0f32, 3.0f32], [1.0f32, 1.0f32, 1.0f32]]
--         [0.5f32, -20.0f32, 1.0f32, 0.0f32] }
-- output { [[4.5f32, 0.0f32, 8.25f32, 6.0f32], [10.5f32, 0.0f32, 15.0f32, 15.0f32], [1.5f32, 0.0f32, 6.25f32, 1.5f32]] }

entry layer [m][k][p] (x: [m][k]f32) (w: [p][k]f32) (bias: [p]f32): [m][p]f32 =
  map (\r -> map2 (\c b -> f32.max 0 (dot r c + b)) w bias) x

-- ==
-- entry: unsized
-- input { [[1f32, 2], [3, 4]] [[1f32, 1], [0, 1], [2, 0]] } output { [[3f32, 2, 2], [7f32, 4, 6]] }
-- input { [[1f32, 2], [3, 4]] [[1f32, 2, 3]] } error: matmul_forms.fut:5:.*shape \[3\] cannot match shape of type "\[2\]f32"

entry unsized (a: [][]f32) (b: [][]f32) =
  map (\r -> map (\c -> dot r c) b) a

-- ==
-- entry: transpose_inside
-- input { [[1.0f32, 2.0f32, 3.0f32], [4.0f32, 5.0f32, 6.0f32], [-1.0f32, 0.5f32, 2.0f32]]
--         [[1.0f32, 2.0f32, 0.5f32, -1.0f32], [0.0f32, 1.0f32, 2.0f32, 3.0f32], [1.0f32, 0.0f32, -2.0f32, 0.25f32]] }
-- output { [[4.0f32, 4.0f32, -1.5f32, 5.75f32], [10.0f32, 13.0f32, 0.0f32, 12.5f32], [1.0f32, -1.5f32, -3.5f32, 3.0f32]] }

-- The transposition is invariant: pass `hoist` moves it out of the map.
entry transpose_inside [m][k][p] (a: [m][k]f32) (b: [k][p]f32): [m][p]f32 =
  map (\r -> map (\c -> dot r c) (transpose b)) a

-- ==
-- entry: batched
-- input { [[[1f32, 2f32], [3f32, 4f32], [0f32, 1f32]], [[-1f32, 0.5f32], [2f32, 2f32], [1f32, 1f32]]]
--         [[[1f32, 0f32], [0f32, 1f32]], [[2f32, 1f32], [1f32, -1f32]]] }
-- output { [[[1f32, 2f32], [3f32, 4f32], [0f32, 1f32]], [[-1.5f32, -1.5f32], [6f32, 0f32], [3f32, 0f32]]] }

-- A batch of products (one per g): a batched GEMM.
entry batched [g][m][k][p] (as: [g][m][k]f32) (bs: [g][p][k]f32): [g][m][p]f32 =
  map2 (\a b -> map (\r -> map (\c -> dot r c) b) a) as bs

-- ==
-- entry: batched_shared
-- input { [[[1f32, 2f32], [3f32, 4f32], [0f32, 1f32]], [[-1f32, 0.5f32], [2f32, 2f32], [1f32, 1f32]]]
--         [[1f32, 2f32], [0.5f32, -1f32], [3f32, 0f32]] }
-- output { [[[5f32, -1.5f32, 3f32], [11f32, -2.5f32, 9f32], [2f32, -1f32, 0f32]], [[0f32, -1f32, -3f32], [6f32, -1f32, 6f32], [3f32, -0.5f32, 3f32]]] }

-- Every product of the batch with the same right operand.
entry batched_shared [g][m][k][p] (as: [g][m][k]f32) (b: [p][k]f32): [g][m][p]f32 =
  map (\a -> map (\r -> map (\c -> dot r c) b) a) as

-- Columns taken by slices, `b[:, j]`: the slice's dimension is the summed one. A nest
-- of such slices ran element by element, slicing a column per element (a [256][1024] by
-- [1024][784] product: 545 ms against 4.9 as a GEMM).
-- ==
-- entry: columns
-- input { [[1.0f32, 2.0f32, 3.0f32], [4.0f32, 5.0f32, 6.0f32], [-1.0f32, 0.5f32, 2.0f32]]
--         [[1.0f32, 2.0f32, 0.5f32, -1.0f32], [0.0f32, 1.0f32, 2.0f32, 3.0f32], [1.0f32, 0.0f32, -2.0f32, 0.25f32]] }
-- output { [[4.0f32, 4.0f32, -1.5f32, 5.75f32], [10.0f32, 13.0f32, 0.0f32, 12.5f32], [1.0f32, -1.5f32, -3.5f32, 3.0f32]] }

entry columns [m][k][p] (a: [m][k]f32) (b: [k][p]f32): [m][p]f32 =
  map (\i -> map (\j -> dot a[i] b[:, j]) (iota p)) (iota m)

-- Both operands by columns: `aᵀ·b`, the weight adjoint `δᵀ·x` as a user writes it.
-- ==
-- entry: columns_both
-- input { [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [-1.0, 0.5, 2.0]]
--         [[1.0, 2.0, 0.5, -1.0], [0.0, 1.0, 2.0, 3.0], [1.0, 0.0, -2.0, 0.25]] }
-- output { [[0.0, 6.0, 10.5, 10.75], [2.5, 9.0, 10.0, 13.125], [5.0, 12.0, 9.5, 15.5]] }

entry columns_both [k][m][p] (a: [k][m]f64) (b: [k][p]f64): [m][p]f64 =
  map (\i -> map (\j -> f64.sum (map2 (*) a[:, i] b[:, j])) (iota p)) (iota m)

-- Slices shorter than their dimension (`0:k-1`): recognised as a product, they fail its
-- run-time shape check and run as written.
-- ==
-- entry: prefix_columns
-- input { [[1.0f32, 2.0f32, 3.0f32], [4.0f32, 5.0f32, 6.0f32], [-1.0f32, 0.5f32, 2.0f32]]
--         [[1.0f32, 2.0f32, 0.5f32, -1.0f32], [0.0f32, 1.0f32, 2.0f32, 3.0f32], [1.0f32, 0.0f32, -2.0f32, 0.25f32]] }
-- output { [[1.0f32, 4.0f32, 4.5f32, 5.0f32], [4.0f32, 13.0f32, 12.0f32, 11.0f32], [-1.0f32, -1.5f32, 0.5f32, 2.5f32]] }

entry prefix_columns [m][k][p] (a: [m][k]f32) (b: [k][p]f32): [m][p]f32 =
  map (\i -> map (\j -> f32.sum (map2 (*) a[i, 0:k-1] b[0:k-1, j])) (iota p)) (iota m)

-- A product written with indices and read only by a sum: it stays a product (with its
-- iota bound inside the map it was fused into the sum and ran as nested loops, 37 ms
-- for [256][1024] by [1024][784] against 3.4).
-- ==
-- entry: summed_by_indices
-- input { [[1.0f32, 2.0f32, 3.0f32], [4.0f32, 5.0f32, 6.0f32], [-1.0f32, 0.5f32, 2.0f32]]
--         [[1.0f32, 2.0f32, 0.5f32, -1.0f32], [0.0f32, 1.0f32, 2.0f32, 3.0f32], [1.0f32, 0.0f32, -2.0f32, 0.25f32]] }
-- output { 46.75f32 }

entry summed_by_indices [m][k][p] (a: [m][k]f32) (b: [k][p]f32): f32 =
  f32.sum (map f32.sum (map (\i -> map (\j -> f32.sum (map (\l -> a[i, l] * b[l, j]) (iota k))) (iota p)) (iota m)))

-- The weights one matrix of a stack, chosen by an argument or a constant (an LSTM's
-- gate, `w[g]`): the slice is read once, outside the rows, and the nest is a product
-- (the slice was stored once per row of `a`, a copy of the matrix each, and the nest ran
-- element by element: 57 ms for [1024][300] by [192][300], against 1.0 as a product).
-- ==
-- entry: one_of_a_stack
-- input { [[1.0f32, 2.0f32, 3.0f32], [4.0f32, 5.0f32, 6.0f32], [-1.0f32, 0.5f32, 2.0f32]]
--         [[[1.0f32, 0.0f32, 1.0f32], [2.0f32, 1.0f32, 0.0f32]],
--          [[0.25f32, -1.0f32, 3.0f32], [1.0f32, 1.0f32, 1.0f32]]] 1i64 }
-- output { [[7.25f32, 6.0f32], [14.0f32, 15.0f32], [5.25f32, 1.5f32]] }
-- input { [[1.0f32, 2.0f32, 3.0f32], [4.0f32, 5.0f32, 6.0f32], [-1.0f32, 0.5f32, 2.0f32]]
--         [[[1.0f32, 0.0f32, 1.0f32], [2.0f32, 1.0f32, 0.0f32]],
--          [[0.25f32, -1.0f32, 3.0f32], [1.0f32, 1.0f32, 1.0f32]]] 0i64 }
-- output { [[4.0f32, 4.0f32], [10.0f32, 13.0f32], [1.0f32, -1.5f32]] }
-- input { [[1.0f32, 2.0f32, 3.0f32], [4.0f32, 5.0f32, 6.0f32], [-1.0f32, 0.5f32, 2.0f32]]
--         [[[1.0f32, 0.0f32, 1.0f32], [2.0f32, 1.0f32, 0.0f32]],
--          [[0.25f32, -1.0f32, 3.0f32], [1.0f32, 1.0f32, 1.0f32]]] 2i64 }
-- error: out of bounds

entry one_of_a_stack [m][k][p] (a: [m][k]f32) (ws: [][p][k]f32) (g: i64): [m][p]f32 =
  map (\r -> map (\c -> dot r c) ws[g]) a

-- ==
-- entry: first_of_a_stack
-- input { [[1.0f32, 2.0f32, 3.0f32], [4.0f32, 5.0f32, 6.0f32], [-1.0f32, 0.5f32, 2.0f32]]
--         [[[1.0f32, 0.0f32, 1.0f32], [2.0f32, 1.0f32, 0.0f32]],
--          [[0.25f32, -1.0f32, 3.0f32], [1.0f32, 1.0f32, 1.0f32]]] }
-- output { [[4.0f32, 4.0f32], [10.0f32, 13.0f32], [1.0f32, -1.5f32]] }
-- input { empty([0][3]f32) [[[1.0f32, 0.0f32, 1.0f32], [2.0f32, 1.0f32, 0.0f32]]] }
-- output { empty([0][2]f32) }
-- input { empty([0][3]f32) empty([0][2][3]f32) }
-- output { empty([0][2]f32) }
-- input { [[1.0f32, 2.0f32, 3.0f32]] empty([0][2][3]f32) }
-- error: out of bounds

entry first_of_a_stack [m][k][p] (a: [m][k]f32) (ws: [][p][k]f32): [m][p]f32 =
  map (\r -> map (\c -> dot r c) ws[0]) a
