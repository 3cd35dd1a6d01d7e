-- Forward-mode AD overhead on the ir backend: each `*_jvp` entry computes the primal and
-- its tangent (jvp2) for the same inputs as its primal entry (both take the seed so that
-- argument passing costs the same). See docs/PERFORMANCE.md, "ir backend: forward-mode AD".
-- ==
-- entry: map_primal map_jvp sum_primal sum_jvp prod_primal prod_jvp prod_underflow_primal prod_underflow_jvp scan_primal scan_jvp
-- random input { [10000000]f32 [10000000]f32 }

def poly (x: f32) = ((3 * x - 2) * x + 1) * x - 5
entry map_primal (xs: []f32) (_dxs: []f32) = map poly xs
entry map_jvp (xs: []f32) (dxs: []f32) = jvp2 (map poly) xs dxs
entry sum_primal (xs: []f32) (_dxs: []f32) = reduce (+) 0 xs
entry sum_jvp (xs: []f32) (dxs: []f32) = jvp2 (reduce (+) 0) xs dxs
-- The product runs over values mapped close to 1 (near1), so that 10⁷ factors neither
-- underflow nor overflow (a product that does takes the exact but slower pair rule).
def near1 (x: f32) = 1 + (x - 0.5) * 1e-3
entry prod_primal (xs: []f32) (_dxs: []f32) = reduce (*) 1 (map near1 xs)
entry prod_jvp (xs: []f32) (dxs: []f32) = jvp2 (\xs -> reduce (*) 1 (map near1 xs)) xs dxs
entry prod_underflow_primal (xs: []f32) (_dxs: []f32) = reduce (*) 1 xs
entry prod_underflow_jvp (xs: []f32) (dxs: []f32) = jvp2 (reduce (*) 1) xs dxs
entry scan_primal (xs: []f32) (_dxs: []f32) = scan (+) 0 xs
entry scan_jvp (xs: []f32) (dxs: []f32) = jvp2 (scan (+) 0) xs dxs

-- ==
-- entry: hist_primal hist_jvp
-- random input { [10000000]u16 [10000000]f32 [10000000]f32 }

def hist [n] (is: [n]u16) (xs: [n]f32) =
  reduce_by_index (replicate 1024 0f32) (+) 0 (map (\i -> i64.u16 i % 1024) is) xs
entry hist_primal [n] (is: [n]u16) (xs: [n]f32) (_dxs: [n]f32) = hist is xs
entry hist_jvp [n] (is: [n]u16) (xs: [n]f32) (dxs: [n]f32) = jvp2 (hist is) xs dxs

-- jmp (vector tangents, 4 seeds) against a map of jvp over the seeds (the primal runs once
-- per seed) and against the primal: map of a polynomial, sum, and a map whose body is a
-- loop (the primal of the loop is the expensive part).
-- ==
-- entry: jmp_map_primal jmp_map jmp_map_each jmp_sum_primal jmp_sum jmp_sum_each
-- random input { [1000000]f32 [4][1000000]f32 }

-- ==
-- entry: jmp_loop_primal jmp_loop jmp_loop_each
-- random input { [100000]f32 [4][100000]f32 }

def iterate (x: f32) = loop acc = x for _i < 32 do f32.sin acc * x + 0.5
entry jmp_map_primal [k][n] (xs: [n]f32) (_ss: [k][n]f32) = map poly xs
entry jmp_map [k][n] (xs: [n]f32) (ss: [k][n]f32) = jmp (map poly) xs ss
entry jmp_map_each [k][n] (xs: [n]f32) (ss: [k][n]f32) = map (\s -> jvp (map poly) xs s) ss
entry jmp_sum_primal [k][n] (xs: [n]f32) (_ss: [k][n]f32) = f32.sum xs
entry jmp_sum [k][n] (xs: [n]f32) (ss: [k][n]f32) = jmp f32.sum xs ss
entry jmp_sum_each [k][n] (xs: [n]f32) (ss: [k][n]f32) = map (\s -> jvp f32.sum xs s) ss
entry jmp_loop_primal [k][n] (xs: [n]f32) (_ss: [k][n]f32) = map iterate xs
entry jmp_loop [k][n] (xs: [n]f32) (ss: [k][n]f32) = jmp (map iterate) xs ss
entry jmp_loop_each [k][n] (xs: [n]f32) (ss: [k][n]f32) = map (\s -> jvp (map iterate) xs s) ss
