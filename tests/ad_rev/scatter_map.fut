-- Reverse mode through scatter (w.r.t. destination and values, duplicate indices where the
-- largest position wins, negative and too-large indices, values computed from the
-- destination itself, whole rows) and through map: free scalars and free arrays gathered
-- inside the lambda with repeated indices, nested maps, maps over 2-D arrays, a circular
-- convolution, `if` and `match` inside map, tuple results.
-- Expected values: by hand (comments) and central finite differences in
-- tests/ad_rev/oracle.py (section scatter_map).
-- ==
-- tags { autodiff }
-- entry: scatter_dup
-- input { [1.0, 2.0, 3.0, 4.0, 5.0] [3i64, -1, 0, 3, 9, 1, 3] [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0] [1.0, 2.0, 3.0, 4.0, 5.0] }
-- output { [30.0, 60.0, 3.0, 70.0, 5.0] [0.0, 0.0, 3.0, 0.0, 5.0] [0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 4.0] }

-- Position 3 is written three times: only the last write (j = 6) gets its cotangent 4;
-- j = 1 (−1) and j = 4 (9) are out of range; written destination positions get 0.
entry scatter_dup (dest: []f64) (is: []i64) (vs: []f64) (s: []f64) =
  let (r, (gd, gv)) = vjp2 (\(d, v) -> scatter (copy d) is v) (dest, vs) s
  in (r, gd, gv)

-- ==
-- entry: scatter_self
-- input { [1.0, 2.0, 3.0, 4.0] } output { [3.0, 4.0, 2.0, 1.0] }

-- Result [d1·d2, d1, 3·d0, d3]: the written values depend on the destination itself.
entry scatter_self (d: []f64) =
  vjp (\d -> scatter (copy d) [0, 2] [d[1] * d[2], d[0] * 3]) d (map (const 1) d)

-- ==
-- entry: scatter_rows
-- input { [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]] [2i64, 0, 2] [[7.0, 8.0], [9.0, 10.0], [11.0, 12.0]] [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]] }
-- output { [[0.0, 0.0], [3.0, 4.0], [0.0, 0.0]] [[0.0, 0.0], [1.0, 2.0], [5.0, 6.0]] }

-- Scatter of whole rows; row 2 is written twice and the later write (j = 2) wins.
entry scatter_rows [k][m] (dest: [k][m]f64) (is: []i64) (vss: [][m]f64) (s: [k][m]f64) =
  vjp (\(d, v) -> scatter (copy d) is v) (dest, vss) s

-- ==
-- entry: gather
-- input { [1.0, 2.0, 3.0] 2.0 [0i64, 2, 0, 1, 0] [1.0, 2.0, 3.0, 4.0, 5.0] } output { [18.0, 8.0, 4.0] 23.0 }

-- map (\i -> xs[i] * c) is: xs_0 is read three times (c·(1+3+5)), c collects Σ s_j·xs[is_j].
entry gather (xs: []f64) (c: f64) (is: []i64) (s: []f64) =
  vjp (\(xs, c) -> map (\i -> xs[i] * c) is) (xs, c) s

-- ==
-- entry: outer
-- input { [0.5, -1.0] [2.0, 3.0, -0.5] [[1.0, 0.0, 2.0], [-1.0, 1.0, 0.5]] } output { [3.632748, 1.020151] [1.5, -1.0, 0.5] }

-- Nested maps: r_ij = a_i·b_j + sin a_i; both a and b are captured by the inner lambda.
entry outer (a: []f64) (b: []f64) (s: [][]f64) =
  vjp (\(a, b) -> map (\x -> map (\y -> x * y + f64.sin x) b) a) (a, b) s

-- ==
-- entry: normalise
-- input { [[1.0, 3.0], [2.0, 2.0], [0.5, 1.5]] [[1.0, 0.0], [0.0, 1.0], [2.0, -1.0]] }
-- output { [[0.1875, -0.0625], [-0.125, 0.125], [1.125, -0.375]] }

-- Map over the rows of a 2-D array: each row divided by its own sum.
entry normalise [n][m] (xss: [n][m]f64) (s: [n][m]f64) =
  vjp (map (\row -> let t = f64.sum row in map (/ t) row)) xss s

-- ==
-- entry: conv
-- input { [1.0, -2.0, 0.5, 3.0] [0.25, 0.5, 2.0] [1.0, 2.0, 3.0, 4.0] } output { [8.25, 9.0, 3.75, 6.5] [10.5, 12.0, 1.5] }

-- Circular convolution: r_i = Σ_j x[(i+j) mod n]·w_j, both arrays free in the inner map.
entry conv [n] (xs: [n]f64) (w: [3]f64) (s: [n]f64) =
  vjp (\(xs, w) -> map (\i -> f64.sum (map (\j -> xs[(i + j) % n] * w[j]) (iota 3))) (iota n)) (xs, w) s

-- ==
-- entry: if_map
-- input { [2.0, -1.0, 0.0, 3.0] [1.0, 2.0, 3.0, -1.0] } output { [4.0, 6.0, 9.0, -6.0] }

-- x² for x > 0, 3x otherwise (0 takes the else branch).
entry if_map (xs: []f64) (s: []f64) = vjp (map (\x -> if x > 0 then x * x else 3 * x)) xs s

-- ==
-- entry: match_map
-- input { [0, 1, 2, 7] [2.0, -1.0, 0.5, 3.0] } output { [4.0, 0.540302, 0.75, 1.0] }

-- match on an integer tag per element: x², sin x, x³, x.
entry match_map (ks: []i32) (xs: []f64) =
  vjp (\xs -> f64.sum (map2 (\k x -> match k
                                     case 0 -> x * x
                                     case 1 -> f64.sin x
                                     case 2 -> x * x * x
                                     case _ -> x) ks xs)) xs 1

-- ==
-- entry: tuple_results
-- input { [1.0, 2.0, -3.0] [1.0, 0.0, 2.0] [0.5, 1.0, 1.0] } output { [2.5, 1.0, -11.0] }

-- map with a tuple result, unzipped; each component has its own seed: 2x·s1 + s2.
entry tuple_results (xs: []f64) (s1: []f64) (s2: []f64) =
  vjp (\xs -> unzip (map (\x -> (x * x, x + 1)) xs)) xs (s1, s2)
