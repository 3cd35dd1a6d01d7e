-- Reverse mode over code that reverse mode built: an inner `vjp` adjoins the free array
-- of its map through an accumulator (`with_acc`), which the outer `vjp` (or `jvp`)
-- differentiates again. Covers reverse over reverse (Hessian-vector products), forward
-- over reverse, reverse over forward, third order (also with jmp and mjp), a loop inside
-- the inner map, rows of a free matrix, and `mjp` of a gradient.
-- Expected values: JAX in tests/ad_nested/oracle_jax.py (never runic).
-- ==
-- tags { autodiff }
-- entry: ring_hessian
-- input { [1.0, 2.0, 3.0] } output { [2.0, 2.0, 2.0] }

-- Σ zs[i]·zs[i+1] around a ring: its Hessian is 1 on both off-diagonals (two ones per row).
entry ring_hessian (zs: []f64) =
  let n = length zs
  in vjp (\zs -> vjp (\zs -> f64.sum (map (\i -> zs[i] * zs[(i+1)%n]) (iota n))) zs 1.0) zs (replicate n 1.0)

def g [n] (zs: [n]f64) = f64.sum (map (\i -> f64.sin zs[i] * zs[(i+1)%n]) (iota n))
def grad [n] (zs: [n]f64) = vjp g zs 1.0

-- ==
-- entry: hvp fwd_rev rev_fwd
-- input { [0.5, -1.0, 2.0, 0.3] [1.0, 0.5, -0.25, 2.0] }
-- output { [2.828889798, 1.58397797, -0.493945213, 0.763852992] }

-- The Hessian of g times v, three ways.
entry hvp [n] (zs: [n]f64) (v: [n]f64) = vjp grad zs v
entry fwd_rev [n] (zs: [n]f64) (v: [n]f64) = jvp grad zs v
entry rev_fwd [n] (zs: [n]f64) (v: [n]f64) = vjp (\zs -> jvp g zs v) zs 1.0

-- ==
-- entry: rev_fwd_rev rev_rev_rev fwd_rev_rev
-- input { [0.5, -1.0, 2.0, 0.3] [1.0, 0.5, -0.25, 2.0] [0.1, 0.2, 0.3, -0.4] }
-- output { [0.204318037, -0.071855917, -0.561724404, 0.509435944] }

-- Third derivatives of g contracted with v and w.
entry rev_fwd_rev [n] (zs: [n]f64) (v: [n]f64) (w: [n]f64) = vjp (\zs -> jvp grad zs v) zs w
entry rev_rev_rev [n] (zs: [n]f64) (v: [n]f64) (w: [n]f64) = vjp (\zs -> vjp grad zs v) zs w
entry fwd_rev_rev [n] (zs: [n]f64) (v: [n]f64) (w: [n]f64) = jvp (\zs -> vjp grad zs v) zs w

-- ==
-- entry: jmp_rev_rev mjp_rev_rev
-- input { [0.5, -1.0, 2.0, 0.3] [1.0, 0.5, -0.25, 2.0] [0.1, 0.2, 0.3, -0.4] }
-- output { [[0.204318037, -0.071855917, -0.561724404, 0.509435944],
--           [-0.783923803, -0.959944438, 1.127467926, -3.149584894]] }

-- The same contracted with two seeds at once (w and v), forward and reverse.
entry jmp_rev_rev [n] (zs: [n]f64) (v: [n]f64) (w: [n]f64) = jmp (\zs -> vjp grad zs v) zs [w, v]
entry mjp_rev_rev [n] (zs: [n]f64) (v: [n]f64) (w: [n]f64) = mjp (\zs -> vjp grad zs v) zs [w, v]

-- ==
-- entry: loop_in_map
-- input { [0.5, -1.0, 2.0, 0.3] [1.0, 0.5, -0.25, 2.0] }
-- output { [5.045, -4.2475, 7.2, -0.825] }

-- The inner map reads the free array in a loop: its updates happen inside that loop.
def h [n] (zs: [n]f64) =
  f64.sum (map (\i -> loop a = zs[i] for j < 3 do a * zs[(i+j)%n] + 0.5) (iota n))
entry loop_in_map [n] (zs: [n]f64) (v: [n]f64) = vjp (\zs -> vjp h zs 1.0) zs v

-- ==
-- entry: rows
-- input { [[0.5, -1.0], [2.0, 0.3]] [1.0, 0.5] [[0.1, 0.2], [0.3, -0.4]] }
-- output { [[-0.087758256, -0.108060461], [0.062422025, 0.191067298]] }

-- The inner map reads whole rows of a free matrix (an update per element of the row).
def r [n][m] (a: [n][m]f64) (zs: [n]f64) =
  f64.sum (map (\i -> zs[i] * f64.sum (map f64.cos a[i])) (iota n))
entry rows [n][m] (a: [n][m]f64) (zs: [n]f64) (w: [n][m]f64) =
  vjp (\a -> vjp (\a -> r a zs) a 1.0) a w

-- ==
-- entry: mjp_hessian_rows
-- input { [0.5, -1.0, 2.0, 0.3] [[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]] }
-- output { [[0.479425539, 0.877582562, 0.0, 0.955336489], [0.0, 0.540302306, -0.272789228, -0.416146837]] }

-- Two rows of the Hessian of g at once: the return sweep over the accumulator, mapped.
entry mjp_hessian_rows [n][k] (zs: [n]f64) (seeds: [k][n]f64) = mjp grad zs seeds
