-- Reverse mode through slices of a free array read inside a map (the adjoint is an
-- accumulator update per element of the slice): columns `a[:, i]`, row slices `a[i, 1:3]`
-- with an i32 index, strided slices `xs[i::2]`, down-going slices `xs[i::-1]` (start
-- defaulting to the end), 2-D slices mixing a stride and a start, and windows whose stride
-- is only known at run time.
-- Expected values: by hand (comments) and central finite differences in plain Python in
-- tests/ad_rev/oracle_gaps.py (section slices).
-- ==
-- tags { autodiff }
-- entry: colsum
-- input { [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] [1.0, 2.0, 3.0] }
-- output { [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]] }

-- r_i = Σ_j a[j, i]: every element of column i gets s_i.
entry colsum [n][m] (a: [n][m]f64) (s: [m]f64) =
  vjp (\a -> map (\i -> f64.sum a[:, i]) (iota m)) a s

-- ==
-- entry: col_row
-- input { [[0.5, -1.0, 2.0, 1.5], [1.0, 0.25, -0.5, 3.0], [2.0, 1.0, 0.5, -2.0]] [1.0, -2.0, 0.5, 3.0] }
-- output { [[5.265495, 0.0, -2.496881, 0.0], [0.037967, -0.724091, -1.499595, 4.166169], [1.388723, -0.724091, 0.694361, 4.166169]] }

-- r_i = Σ sin a[i % 3, ::2] · Σ a[1:, i]: a strided row slice times a column slice that
-- starts at 1; odd columns of the first row are never read.
entry col_row [n][m] (a: [n][m]f64) (s: [m]f64) =
  vjp (\a -> map (\i -> f64.sum (map f64.sin a[i % n, ::2]) * f64.sum a[1:, i]) (iota m)) a s

-- ==
-- entry: rowslice
-- input { [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] [[1.0, 2.0], [3.0, 4.0]] }
-- output { [[0.0, 4.0, 12.0], [0.0, 30.0, 48.0]] }

-- Squares of a[i, 1:3] (an i32 row index): 2·a·s on columns 1 and 2, 0 on column 0.
entry rowslice [n] (a: [n][3]f64) (s: [n][2]f64) =
  vjp (\a -> map (\i -> map (\x -> x * x) a[i32.i64 i, 1:3]) (iota n)) a s

-- ==
-- entry: strided
-- input { [1.0, 2.0, 3.0, 4.0, 5.0] [1.0, 10.0] } output { [2.0, 40.0, 6.0, 80.0, 10.0] }

-- r_i = Σ xs[i::2]²: even positions get 2x·1, odd ones 2x·10.
entry strided (xs: []f64) (s: [2]f64) =
  vjp (\xs -> map (\i -> f64.sum (map (\x -> x * x) xs[i::2])) (iota 2)) xs s

-- ==
-- entry: reversed
-- input { [1.0, 2.0, 3.0, 4.0] [1.0, 10.0, 100.0] } output { [111.0, 110.0, 100.0, 0.0] }

-- r_i = Σ xs[i::-1] = x_0 + … + x_i: x_0 is in all three sums, x_3 in none.
entry reversed (xs: []f64) (s: [3]f64) =
  vjp (\xs -> map (\i -> f64.sum xs[i::-1]) (iota 3)) xs s

-- ==
-- entry: windows
-- input { [0.5, -1.0, 2.0, 1.5, 3.0, -0.25] [1.0, -1.0, 2.0] }
-- output { [1.0, 10.571006, 41.721288, 44.69039, 86.040108, 0.0] }

-- r_k = Σ up² · Σ down + exp (Σ down / 4) with up = xs[k:k+3:s] (s = 1 + k % 2, known at
-- run time) and down = xs[k+2:k:-1].
entry windows (xs: []f64) (s: [3]f64) =
  vjp (\xs -> map (\k -> let st = 1 + k % 2
                         let up = xs[k:k + 3:st]
                         let down = xs[k + 2:k:-1]
                         in f64.sum (map (\x -> x * x) up) * f64.sum down + f64.exp (f64.sum down / 4))
                  (iota 3)) xs s
