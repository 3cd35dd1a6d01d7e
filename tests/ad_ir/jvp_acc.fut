-- Forward over reverse (Hessian-vector products, language.md §11.6) where the reverse-mode
-- derivative goes through accumulators: the function given to `vjp` maps over `iota n` and
-- reads the differentiated array at computed indices, so its adjoint is built by adding each
-- read's cotangent into the array's adjoint (accumulator updates); `jvp`, `jvp2` and `jmp`
-- then differentiate that accumulation. Covered: one array read twice at different indices,
-- a 2-D array read by row and by element, reads inside a loop inside the map,
-- reduce_by_index (+ and *) and scatter inside the reverse-differentiated function, a pair of
-- arrays, an inner vjp closing over an array the outer jvp differentiates, f32, and a full
-- Hessian from jmp with identity seeds.
-- Expected values were computed outside runic: exact symbolic gradients and Hessians in sympy
-- of a Python transcription (the maps unrolled for the concrete indices), cross-checked with
-- central finite differences of a complex-step gradient in numpy.
-- ==
-- tags { autodiff }
-- entry: hvp_ring
-- input { [1.0, 2.0, -0.5, 3.0] [1.0, 0.0, 2.0, -1.0] } output { [-2.0, 10.0, 13.0, 2.0] }
-- input { [1.5, -2.0] [1.0, 1.0] } output { [-5.0, 2.0] }

-- g(x) = Σ x[i]² · x[(i+1) % n]: each element is read at i and at i+1 (mod n).
def ring [n] (xs: [n]f64) : f64 =
  f64.sum (map (\i -> xs[i] * xs[i] * xs[(i + 1) % n]) (iota n))

entry hvp_ring [n] (xs: [n]f64) (v: [n]f64) : [n]f64 = jvp (\xs -> vjp ring xs 1) xs v

-- ==
-- entry: hvp_two_reads
-- input { [0.5, 1.0, -2.0, 3.0, 0.25] [1.0, -1.0, 0.5, 0.0, 2.0] } output { [3.75773420682,
--   -1.78482595953, -2.33384899096, -8.06321242104, 0.662963597832] [-1.24023451627,
--   1.99534225952, -1.74396232245, 0.0, 3.94094322838] }

-- Two reads at different computed indices, neither of them i; jvp2 returns the gradient too.
def two_reads [n] (xs: [n]f64) : f64 =
  f64.sum (map (\i -> f64.sin xs[(2 * i + 1) % n] * xs[n - 1 - i] * xs[n - 1 - i]) (iota n))

entry hvp_two_reads [n] (xs: [n]f64) (v: [n]f64) : ([n]f64, [n]f64) =
  jvp2 (\xs -> vjp two_reads xs 1) xs v

-- ==
-- entry: hvp_2d
-- input { [[1.0, 2.0], [-1.0, 0.5], [3.0, -2.0]] [[1.0, 0.0], [0.5, -1.0], [0.0, 2.0]] }
-- output { [[-9.0, 2.0], [5.0, -6.0], [4.0, 0.0]] }

-- A 2-D array read by row (a[i]) and by element (a[(i+1) % r, 0]).
def rows_and_elems [r][c] (a: [r][c]f64) : f64 =
  f64.sum (map (\i -> f64.sum (map (\x -> x * x) a[i]) * a[(i + 1) % r, 0]) (iota r))

entry hvp_2d [r][c] (a: [r][c]f64) (da: [r][c]f64) : [r][c]f64 =
  jvp (\a -> vjp rows_and_elems a 1) a da

-- ==
-- entry: hvp_loop_in_map
-- input { [1.0, -0.5, 2.0, 0.75] [0.5, 1.0, -1.0, 2.0] } output { [9.0, 15.25, 6.75, 8.5] }

-- The reads happen inside a for loop inside the map.
def loop_reads [n] (xs: [n]f64) : f64 =
  f64.sum (map (\i -> loop acc = 1.0 for k < 3 do acc * xs[(i + k) % n] + xs[i]) (iota n))

entry hvp_loop_in_map [n] (xs: [n]f64) (v: [n]f64) : [n]f64 = jvp (\xs -> vjp loop_reads xs 1) xs v

-- ==
-- entry: hvp_hist_add
-- input { [0i64, 2, 0, 3, 2] [1.0, -2.0, 0.5, 3.0, 1.5] [1.0, 0.0, -1.0, 2.0, 0.5] }
-- output { [28.5, -6.0, -42.0, -3.0, 9.0] }

-- Gathered products summed into 3 bins by reduce_by_index (+) (index 3 is out of bounds),
-- then squared.
def hist_add_fn [n] (is: [n]i64) (xs: [n]f64) : f64 =
  let h = reduce_by_index (replicate 3 0.0) (+) 0 is (map (\i -> xs[i] * xs[(i + 1) % n]) (iota n))
  in f64.sum (map (\y -> y * y) h)

entry hvp_hist_add [n] (is: [n]i64) (xs: [n]f64) (v: [n]f64) : [n]f64 =
  jvp (\xs -> vjp (hist_add_fn is) xs 1) xs v

-- ==
-- entry: hvp_hist_mul
-- input { [0i64, 1, 0, 1, 0] [1.0, 2.0, -0.5, 3.0, 1.5] [1.0, -1.0, 0.5, 2.0, 0.0] }
-- output { [16.25, 10.75, 5.0, 2.5, 7.0] }

-- Gathered sums multiplied into 2 bins by reduce_by_index (*).
def hist_mul_fn [n] (is: [n]i64) (xs: [n]f64) : f64 =
  let sums = map (\i -> xs[i] + xs[(i + 1) % n]) (iota n)
  in f64.sum (reduce_by_index (replicate 2 1.0) (*) 1 is sums)

entry hvp_hist_mul [n] (is: [n]i64) (xs: [n]f64) (v: [n]f64) : [n]f64 =
  jvp (\xs -> vjp (hist_mul_fn is) xs 1) xs v

-- ==
-- entry: hvp_scatter
-- input { [2i64, 0, 5] [1.0, -2.0, 0.5] [1.0, 0.5, -1.0] } output { [-31.5, 30.0, -0.75] }

-- Gathered products scattered into 4 slots (distinct indices, 5 out of bounds), then cubed.
def scatter_fn [n] (is: [n]i64) (xs: [n]f64) : f64 =
  let s = scatter (replicate 4 1.0) is (map (\i -> xs[i] * xs[(i + 2) % n]) (iota n))
  in f64.sum (map (\y -> y * y * y) s)

entry hvp_scatter [n] (is: [n]i64) (xs: [n]f64) (v: [n]f64) : [n]f64 =
  jvp (\xs -> vjp (scatter_fn is) xs 1) xs v

-- ==
-- entry: hvp_pair
-- input { [1.0, 2.0, -1.0] [0.5, -1.5, 2.0] [1.0, 0.0, 0.5] [0.0, 1.0, -1.0] }
-- output { [3.21828182846, 3.5, -0.408030139707] [1.5, -1.31606027941, 4.96828182846] }

-- A pair of arrays, one read at i and i+1; the Hessian-vector product is a pair as well.
def pair_fn [n] ((xs, ys): ([n]f64, [n]f64)) : f64 =
  f64.sum (map (\i -> xs[i] * ys[(i + 1) % n] * ys[i] + f64.exp xs[(i + 1) % n] * ys[i]) (iota n))

entry hvp_pair [n] (xs: [n]f64) (ys: [n]f64) (dxs: [n]f64) (dys: [n]f64) : ([n]f64, [n]f64) =
  jvp (\p -> vjp pair_fn p 1) (xs, ys) (dxs, dys)

-- ==
-- entry: jvp_closure
-- input { [2.0, -1.0, 0.5] [1.0, 3.0, -2.0] [1.0, 0.5, 2.0] } output { [17.0, 4.5, -1.75] }

-- The inner vjp (over xs) closes over w, which the outer jvp differentiates: the mixed
-- second derivative Σ_k dw[k] · ∂/∂w[k] (∇_xs g).
entry jvp_closure [n] (w: [n]f64) (xs: [n]f64) (dw: [n]f64) : [n]f64 =
  let g (w: [n]f64) (xs: [n]f64) =
    f64.sum (map (\i -> w[i] * xs[i] * xs[(i + 1) % n] * w[(i + 2) % n]) (iota n))
  in jvp (\w -> vjp (g w) xs 1) w dw

-- ==
-- entry: jmp_hvp_f32
-- input { [1.0f32, -0.5, 2.0, 0.25] [[1.0f32, 0.0, 0.0, 0.0], [0.5f32, 1.0, -1.0, 2.0]] }
-- output { [[-0.555811069f32, 0.119856385f32, 0.0f32, 0.576413883f32], [0.994778616f32,
--   1.07559706f32, -1.5115759f32, 2.08694743f32]] }

-- Two Hessian-vector products at once (jmp of a gradient), in f32.
def tri [n] (xs: [n]f32) : f32 =
  f32.sum (map (\i -> xs[i] * xs[n - 1 - i] * f32.cos xs[(i + 1) % n]) (iota n))

entry jmp_hvp_f32 [n][k] (xs: [n]f32) (vs: [k][n]f32) : [k][n]f32 = jmp (\xs -> vjp tri xs 1) xs vs

-- ==
-- entry: hessian
-- input { [0.5, -1.0, 0.25] } output { [[0.0808108866115, 0.553803641499, -2.66012345248],
--   [0.553803641499, 0.062245690703, 1.16188985004], [-2.66012345248, 1.16188985004,
--   0.106113278269]] }
-- input { [1.0, 0.5, -0.5, 2.0] } output { [[14.572022039, 13.5415712448, 1.56011951769,
--   10.8996444278], [13.5415712448, -0.434960243814, 2.81692244531, 6.99965570739],
--   [1.56011951769, 2.81692244531, 1.86091815622, 0.389400391536], [10.8996444278, 6.99965570739,
--   0.389400391536, 3.78649790976]] }

-- The full Hessian: jmp of the gradient with identity seeds (row k = H · e_k).
def expo [n] (xs: [n]f64) : f64 =
  f64.sum (map (\i -> f64.exp (xs[i] * xs[(i + 1) % n]) * xs[(i + 2) % n]) (iota n))

entry hessian [n] (xs: [n]f64) : [n][n]f64 =
  let ids = tabulate n (\i -> tabulate n (\j -> f64.bool (i == j)))
  in jmp (\xs -> vjp expo xs 1) xs ids

-- jmp2 of a gradient built with an accumulator returns the gradient itself as its primal:
-- the accumulator's writes must happen once, not once per seed. f = Σ xᵢ·x₍ᵢ₊₁₎ mod n, so
-- ∇f = (x₍ᵢ₊₁₎ + x₍ᵢ₋₁₎)ᵢ and the Hessian's columns e₀ ↦ (0,1,0,1), e₁ ↦ (1,0,1,0) (by hand).
-- ==
-- entry: jmp2_grad_primal
-- input { [1.0, 2.0, 3.0, 4.0] [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]] }
-- output { [6.0, 4.0, 6.0, 4.0] [[0.0, 1.0, 0.0, 1.0], [1.0, 0.0, 1.0, 0.0]] }

def ring_pairs [n] (xs: [n]f64) : f64 =
  f64.sum (map (\i -> xs[i] * xs[(i + 1) % n]) (iota n))

entry jmp2_grad_primal [n][k] (xs: [n]f64) (seeds: [k][n]f64) =
  jmp2 (\ys -> vjp ring_pairs ys 1) xs seeds
