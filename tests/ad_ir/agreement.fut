-- Forward mode on the ir backend agrees with the interpreter's run-time forward mode
-- (dual numbers, an independent implementation) on larger programs: nested maps, loops
-- updating arrays in place, filter, sum types, records, higher-order functions, integer
-- and f32 rules, tuple scans, 2-D histograms, nested jvp over maps, tabulate.
-- ==
-- tags { autodiff }
-- entry: matmul
-- input { [[1.0, 2.0], [3.0, 4.0]] [[0.5, -1.0], [2.0, 1.5]] [[1.0, 0.0], [0.0, 1.0]] }
-- auto output
def mm [n][m][p] (a: [n][m]f64) (b: [m][p]f64) : [n][p]f64 =
  map (\row -> map (\col -> f64.sum (map2 (*) row col)) (transpose b)) a
entry matmul (a: [][]f64) (b: [][]f64) (da: [][]f64) = jvp (\a -> mm a b) a da

-- ==
-- entry: loop_update
-- input { [1.0, 2.0, 3.0] [1.0, 1.0, 1.0] }
-- auto output
entry loop_update (xs: []f64) (dxs: []f64) =
  jvp (\xs -> loop ys = copy xs for i < length xs - 1 do ys with [i + 1] = ys[i] * ys[i + 1]) xs dxs

-- ==
-- entry: filtered
-- input { [1.0, -2.0, 3.0, -4.0] [1.0, 2.0, 3.0, 4.0] }
-- auto output
entry filtered (xs: []f64) (dxs: []f64) = jvp (\xs -> f64.sum (map (\x -> x * x) (filter (> 0) xs))) xs dxs

-- ==
-- entry: concat_rot
-- input { [1.0, 2.0, 3.0] [1.0, 0.5, 0.25] }
-- auto output
entry concat_rot (xs: []f64) (dxs: []f64) = jvp (\xs -> rotate 1 (xs ++ map (* 2) xs)) xs dxs

-- ==
-- entry: while_arr
-- input { [1.5, 0.5] [1.0, 1.0] }
-- auto output
entry while_arr (xs: []f64) (dxs: []f64) =
  jvp (\xs -> (loop (ys, k) = (copy xs, 0) while k < 3 do (map (\y -> y * y + 0.1) ys, k + 1)).0) xs dxs

-- ==
-- entry: records
-- input { 2.0 3.0 } auto output
def rf (p: {x: f64, y: f64}) = {a = p.x * p.y, b = f64.sin p.x}
entry records (x: f64) (y: f64) = let r = jvp rf {x, y} {x = 1, y = 0.5} in (r.a, r.b)

-- ==
-- entry: sum_type
-- input { 0 2.0 } auto output
-- input { 1 2.0 } auto output
type shape = #circle f64 | #square f64
def area (s: shape) = match s case #circle r -> f64.pi * r * r case #square a -> a * a
entry sum_type (k: i32) (x: f64) = jvp (\x -> area (if k == 0 then #circle x else #square x)) x 1

-- ==
-- entry: hof
-- input { 2.0 } auto output
def twice (f: f64 -> f64) (x: f64) = f (f x)
entry hof (x: f64) = jvp (\x -> twice (\y -> y * x) 1.5) x 1

-- ==
-- entry: f32_mix
-- input { [0.5f32, 1.5f32] [1f32, 2f32] } auto output
entry f32_mix (xs: []f32) (dxs: []f32) =
  jvp (\xs -> map (\x -> f32.exp x / (1 + f32.sqrt x) + f32.atan2 x 1 + f32.max x 1 + f32.f64 (f64.f32 x ** 2.5)) xs) xs dxs

-- ==
-- entry: ints
-- input { [3i64, -2i64, 5i64] [1i64, 1i64, 2i64] } auto output
entry ints (xs: []i64) (dxs: []i64) =
  jvp (\xs -> map (\x -> x * x * 3 - x / 2 + (x << 2) + x % 3 + i64.abs x) xs) xs dxs

-- ==
-- entry: scan_tuple
-- input { [1.0, 2.0, 3.0] [1.0, -1.0, 0.5] } auto output
entry scan_tuple (xs: []f64) (dxs: []f64) =
  jvp (\xs -> unzip (scan (\(a, b) (c, d) -> (a + c, f64.max b d)) (0, f64.lowest) (zip xs (map f64.sin xs)))) xs dxs

-- ==
-- entry: hist2d
-- input { [0i64, 1i64, 0i64] [1i64, 0i64, 1i64] [1.0, 2.0, 3.0] [0.5, 1.0, 2.0] } auto output
entry hist2d (is: []i64) (js: []i64) (vs: []f64) (dvs: []f64) =
  jvp (\vs -> reduce_by_index_2d (replicate 2 (replicate 2 1.0)) (*) 1 (zip is js) vs) vs dvs

-- ==
-- entry: jvp_of_jvp_map
-- input { [1.0, 2.0] } auto output
entry jvp_of_jvp_map (xs: []f64) =
  jvp (\xs -> jvp (\ys -> map2 (*) xs (map f64.sin ys)) xs xs) xs (map (const 1) xs)

-- ==
-- entry: tabulate_idx
-- input { [1.0, 2.0, 3.0] [0.0, 1.0, 0.0] } auto output
entry tabulate_idx (xs: []f64) (dxs: []f64) =
  jvp (\xs -> tabulate_2d 3 3 (\i j -> xs[i] * xs[j])) xs dxs

-- Nesting with SOACs and the vector form (jmp, jmp2).
-- ==
-- entry: map_of_jvp
-- input { [1.0, 2.0, 3.0] } auto output
def cube3 (y: f64) = y * y * y
entry map_of_jvp (xs: []f64) = map (\x -> jvp (\x -> jvp cube3 x 1) x 1) xs

-- ==
-- entry: jac
-- input { 2.0 3.0 } auto output
def poly (p: (f64, f64)) : [3]f64 = let (a, b) = p in [a * b, a + b, f64.sin a]
entry jac (a: f64) (b: f64) = jmp poly (a, b) [(1, 0), (0, 1), (2, 1)]

-- ==
-- entry: jvp_of_jmp
-- input { 2.0 } auto output
entry jvp_of_jmp (x: f64) = jvp (\x -> jmp cube3 x [1, 2, x]) x 1

-- ==
-- entry: jmp_of_jvp
-- input { 2.0 } auto output
entry jmp_of_jvp (x: f64) = jmp (\x -> jvp cube3 x x) x [1, 2, 3]

-- ==
-- entry: jmp_arrays
-- input { [1.0, 2.0] } auto output
entry jmp_arrays (xs: []f64) = jmp (\xs -> scan (*) 1 (map f64.exp xs)) xs [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]

-- ==
-- entry: jmp2_loop
-- input { 1.5 3 } auto output
entry jmp2_loop (x: f64) (n: i32) = jmp2 (\x -> loop acc = x for _i < n do acc * x + 1) x [1, -1]
