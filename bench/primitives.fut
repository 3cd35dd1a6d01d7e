-- Primal throughput of the SOACs over f32 (see docs/PERFORMANCE.md, "ir executor").
-- `copy_f32` is the memory-bandwidth baseline of the same bytes. (Not named `copy`: lowering
-- recurses forever on an entry that shadows a prelude function it calls.)
-- ==
-- entry: copy_f32 map_f32 reduce_add scan_add
-- random input { [10000000]f32 }
-- random input { [100000000]f32 }

entry copy_f32 (xs: []f32) = copy xs
entry map_f32 (xs: []f32) = map (\x -> x * 2 + 1) xs
entry reduce_add (xs: []f32) = reduce (+) 0 xs
entry scan_add (xs: []f32) = scan (+) 0 xs

-- ==
-- entry: hist_add
-- random input { [10000000]u16 [10000000]f32 }
-- random input { [100000000]u16 [100000000]f32 }

entry hist_add [n] (is: [n]u16) (xs: [n]f32) =
  reduce_by_index (replicate 1024 0f32) (+) 0 (map (\i -> i64.u16 i % 1024) is) xs

-- A map fused into a reduce (`reduce (+) 0 (map pre xs)`): the fold kernel of runic-jit.
-- ==
-- entry: sum_squares
-- random input { [10000000]f32 }

entry sum_squares (xs: []f32) = reduce (+) 0 (map (\x -> x * x) xs)

-- Nested SOACs (issue 13, second slice): a map over rows with an inner reduction (row
-- sums of squares), and k-means' distance computation (each point's nearest squared
-- distance to k centres, d = 16).
-- ==
-- entry: row_sums
-- random input { [10000][1000]f32 }

entry row_sums (m: [][]f32) = map (\r -> reduce (+) 0 (map (\x -> x * x) r)) m

-- ==
-- entry: kmeans_dist
-- random input { [100000][16]f32 [32][16]f32 }

entry kmeans_dist (ps: [][]f32) (cs: [][]f32) =
  map (\p -> reduce f32.min f32.inf
                    (map (\c -> reduce (+) 0 (map2 (\x y -> (x - y) * (x - y)) p c)) cs))
      ps

-- Issue 13, third slice: loops and intermediate arrays in map kernels. `loop_poly`: a
-- `for` loop with scalar parameters in a map's lambda (Horner, 16 steps); `kmeans_dists`:
-- the distance matrix (a 2-D map result: each point's row of k distances); `kmeans_both`:
-- the row of distances is an intermediate array consumed twice (nearest distance and the
-- sum), which fusion cannot remove; `scale_rows`: a map over rows returning rows.
-- ==
-- entry: loop_poly
-- random input { [10000000]f32 }

entry loop_poly (xs: []f32) =
  map (\x -> loop acc = 0f32 for i < 16 do acc * x + f32.i64 i) xs

-- ==
-- entry: kmeans_dists kmeans_both
-- random input { [100000][16]f32 [32][16]f32 }

entry kmeans_dists (ps: [][]f32) (cs: [][]f32) =
  map (\p -> map (\c -> reduce (+) 0 (map2 (\x y -> (x - y) * (x - y)) p c)) cs) ps

entry kmeans_both (ps: [][]f32) (cs: [][]f32) =
  map (\p -> let ds = map (\c -> reduce (+) 0 (map2 (\x y -> (x - y) * (x - y)) p c)) cs
             in reduce f32.min f32.inf ds + reduce (+) 0 ds)
      ps

-- ==
-- entry: scale_rows
-- random input { [10000][1000]f32 }

entry scale_rows (m: [][]f32) = map (\r -> map (\x -> x * 2 + 1) r) m

-- A map over few indices whose elements each run a long loop (or build a row of sums): the
-- elements' own work decides the chunks, so it runs on all cores although it has only 1 000
-- elements (it ran on one core before session 9).
-- ==
-- entry: loop_per_index
-- input { 1000i64 }

entry loop_per_index (n: i64) : []f64 =
  map (\i -> loop acc = f64.i64 i for j < 20000 do acc * 0.999 + f64.i64 j * 1e-6) (iota n)
