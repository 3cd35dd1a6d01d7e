//! Property tests: on random inputs, the ir backend's `jvp` (the forward transformation
//! followed by the usual optimisation passes) matches central finite differences of the
//! primal, also run on the ir backend.

mod common;
use common::*;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// Each program has an entry `f` over `k` arrays of equal length and an entry `df` taking
/// those arrays followed by one tangent per array.
fn check(src: &str, k: usize) {
    let r = Runner::new(src);
    let strategy = (1usize..9)
        .prop_flat_map(move |n| (vec(vec(-2.0f64..2.0, n), k), vec(vec(-1.0f64..1.0, n), k)));
    let mut runner = TestRunner::new(Config::with_cases(24));
    runner
        .run(&strategy, |(xs, ts)| {
            let h = 1e-6;
            let at = |s: f64| -> Vec<f64> {
                let args = xs
                    .iter()
                    .zip(&ts)
                    .map(|(x, t)| {
                        let v: Vec<f64> = x.iter().zip(t).map(|(a, b)| a + s * b).collect();
                        f64s(&v)
                    })
                    .collect();
                r.run("f", args).iter().flat_map(floats).collect()
            };
            let (hi, lo) = (at(h), at(-h));
            let fd: Vec<f64> = hi
                .iter()
                .zip(&lo)
                .map(|(a, b)| (a - b) / (2.0 * h))
                .collect();
            let mut args: Vec<_> = xs.iter().map(|x| f64s(x)).collect();
            args.extend(ts.iter().map(|t| f64s(t)));
            let got: Vec<f64> = r.run("df", args).iter().flat_map(floats).collect();
            prop_assert!(
                close(&got, &fd, 1e-5),
                "jvp {got:?}, finite differences {fd:?}, at {xs:?} along {ts:?}"
            );
            Ok(())
        })
        .unwrap();
}

#[test]
fn polynomial_map() {
    check(
        "entry f (xs: []f64) = map (\\x -> 3 * x * x * x - 2 * x + 1 + f64.sin x) xs
         entry df (xs: []f64) (dxs: []f64) = jvp f xs dxs",
        1,
    );
}

#[test]
fn map2_and_reduce() {
    check(
        "def g (a: []f64, b: []f64) : f64 = f64.sum (map2 (\\x y -> x * y + f64.exp (x - y)) a b)
         entry f (a: []f64) (b: []f64) = g (a, b)
         entry df (a: []f64) (b: []f64) (da: []f64) (db: []f64) = jvp g (a, b) (da, db)",
        2,
    );
}

#[test]
fn product_and_maximum_reductions() {
    check(
        "def g (xs: []f64) = (reduce (*) 1 (map (\\x -> 1 + 0.3 * x) xs), f64.maximum (map f64.sin xs))
         entry f (xs: []f64) = g xs
         entry df (xs: []f64) (dxs: []f64) = jvp g xs dxs",
        1,
    );
}

#[test]
fn scans() {
    check(
        "def g (xs: []f64) = (scan (+) 0 (map f64.sin xs), scan (*) 1 (map (\\x -> 1 + 0.2 * x) xs))
         entry f (xs: []f64) = g xs
         entry df (xs: []f64) (dxs: []f64) = jvp g xs dxs",
        1,
    );
}

#[test]
fn loops() {
    check(
        "def g (xs: []f64) = loop acc = copy xs for _i < 3 do map2 (\\a x -> a * x + f64.sin a) acc xs
         entry f (xs: []f64) = g xs
         entry df (xs: []f64) (dxs: []f64) = jvp g xs dxs",
        1,
    );
}

#[test]
fn branches() {
    check(
        "def g (xs: []f64) = map (\\x -> if x > 0 then x * x + 1 else f64.exp x) xs
         entry f (xs: []f64) = g xs
         entry df (xs: []f64) (dxs: []f64) = jvp g xs dxs",
        1,
    );
}

#[test]
fn reduce_by_index() {
    check(
        "def g (vs: []f64) =
           let is = map (\\i -> i % 3) (iota (length vs))
           in (reduce_by_index (replicate 3 0) (+) 0 is (map (\\x -> x * x) vs),
               reduce_by_index (replicate 3 1) (*) 1 is vs)
         entry f (vs: []f64) = g vs
         entry df (vs: []f64) (dvs: []f64) = jvp g vs dvs",
        1,
    );
}

/// The entry `jm xs seeds` of a jmp program: each output, flattened.
fn run_jmp_entry(r: &Runner, xs: &[f64], seeds: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let flat: Vec<f64> = seeds.iter().flatten().copied().collect();
    let arr = runic_data::Array::from_f64(vec![seeds.len(), xs.len()], flat).expect("shape");
    let got = r.run("jm", vec![f64s(xs), runic_data::Value::Array(arr)]);
    got.iter().map(floats).collect()
}

/// `jmp f x seeds` is `map (jvp f x) seeds` (language.md §11.1), with the primal computed once.
#[test]
fn jmp_equals_jvp_per_seed() {
    let r = Runner::new(
        "def g (xs: []f64) = (scan (*) 1 (map (\\x -> 1 + 0.2 * x) xs),
                              loop acc = f64.sum xs for _i < 2 do acc * f64.cos acc)
         entry jv (xs: []f64) (dxs: []f64) = jvp g xs dxs
         entry jm [k][n] (xs: [n]f64) (seeds: [k][n]f64) = unzip (jmp g xs seeds)",
    );
    let strategy = (1usize..6, 0usize..4)
        .prop_flat_map(|(n, k)| (vec(-2.0f64..2.0, n), vec(vec(-1.0f64..1.0, n), k)));
    let mut runner = TestRunner::new(Config::with_cases(16));
    runner
        .run(&strategy, |(xs, seeds)| {
            let n = xs.len();
            let got = run_jmp_entry(&r, &xs, &seeds);
            let (scans, loops) = (&got[0], &got[1]);
            for (s, seed) in seeds.iter().enumerate() {
                let want = r.run("jv", vec![f64s(&xs), f64s(seed)]);
                prop_assert!(close(&scans[s * n..(s + 1) * n], &floats(&want[0]), 1e-12));
                prop_assert!(close(&loops[s..s + 1], &floats(&want[1]), 1e-12));
            }
            Ok(())
        })
        .unwrap();
}

/// Every row of `jmp f x seeds` matches central finite differences of `f` along that seed,
/// through each kind of vector rule: a map holding a loop (tangents with a seed dimension
/// inside the map), SOACs without loops (a map over the seeds: scan, a histogram, a
/// product through its gradient), a branch and a top-level loop.
#[test]
fn jmp_rows_match_finite_differences() {
    let r = Runner::new(
        "def g [n] (xs: [n]f64) =
           let ys = map (\\x -> loop a = x for _i < 3 do f64.sin a * x + 0.5) xs
           let s = scan (+) 0 (map (\\y -> y * y) ys)
           let h = reduce_by_index (replicate 3 0) (+) 0 (map (\\i -> i % 3) (iota n)) ys
           let p = reduce (*) 1 (map (\\x -> 1 + 0.1 * x) xs)
           let q = if p > 1 then p * p else p - 1
           let t = loop acc = q for _i < 2 do acc * 0.5 + f64.cos acc
           in (s, h, t)
         entry f (xs: []f64) = g xs
         entry jm [k][n] (xs: [n]f64) (seeds: [k][n]f64) = unzip3 (jmp g xs seeds)",
    );
    let strategy = (1usize..7, 1usize..4)
        .prop_flat_map(|(n, k)| (vec(-2.0f64..2.0, n), vec(vec(-1.0f64..1.0, n), k)));
    let mut runner = TestRunner::new(Config::with_cases(24));
    runner
        .run(&strategy, |(xs, seeds)| {
            let n = xs.len();
            let got = run_jmp_entry(&r, &xs, &seeds);
            let (ss, hs, ts) = (&got[0], &got[1], &got[2]);
            let h = 1e-6;
            for (k, seed) in seeds.iter().enumerate() {
                let at = |s: f64| -> Vec<Vec<f64>> {
                    let v: Vec<f64> = xs.iter().zip(seed).map(|(a, b)| a + s * b).collect();
                    r.run("f", vec![f64s(&v)]).iter().map(floats).collect()
                };
                let (hi, lo) = (at(h), at(-h));
                let fd = |i: usize| -> Vec<f64> {
                    hi[i]
                        .iter()
                        .zip(&lo[i])
                        .map(|(a, b)| (a - b) / (2.0 * h))
                        .collect()
                };
                prop_assert!(close(&ss[k * n..(k + 1) * n], &fd(0), 1e-5), "scan row {k}");
                prop_assert!(close(&hs[k * 3..(k + 1) * 3], &fd(1), 1e-5), "hist row {k}");
                prop_assert!(close(&ts[k..k + 1], &fd(2), 1e-5), "loop row {k}");
            }
            Ok(())
        })
        .unwrap();
}

/// Each program has an entry `f` from one array of length `n` to an array of length
/// `out_len(n)`, and an entry `vf xs s` computing `vjp f xs s` on the ir backend: it must
/// match central finite differences of `⟨s, f(x)⟩` along every coordinate.
fn check_vjp(src: &str, out_len: fn(usize) -> usize) {
    let r = Runner::new(src);
    let strategy =
        (1usize..7).prop_flat_map(move |n| (vec(-1.5f64..1.5, n), vec(-1.0f64..1.0, out_len(n))));
    let mut runner = TestRunner::new(Config::with_cases(16));
    runner
        .run(&strategy, |(xs, s)| {
            let h = 1e-6;
            let dot = |x: &[f64]| -> f64 {
                let y: Vec<f64> = r.run("f", vec![f64s(x)]).iter().flat_map(floats).collect();
                y.iter().zip(&s).map(|(a, b)| a * b).sum()
            };
            let fd: Vec<f64> = (0..xs.len())
                .map(|i| {
                    let (mut up, mut down) = (xs.clone(), xs.clone());
                    up[i] += h;
                    down[i] -= h;
                    (dot(&up) - dot(&down)) / (2.0 * h)
                })
                .collect();
            let got: Vec<f64> = r
                .run("vf", vec![f64s(&xs), f64s(&s)])
                .iter()
                .flat_map(floats)
                .collect();
            prop_assert!(
                close(&got, &fd, 1e-5),
                "vjp {got:?}, finite differences {fd:?}, at {xs:?} with seed {s:?}"
            );
            Ok(())
        })
        .unwrap();
}

/// A loop that changes its array only by element updates (two per iteration, at times the
/// same element twice): the return sweep restores the array from the stored old elements.
#[test]
fn vjp_of_a_loop_of_element_updates() {
    check_vjp(
        "entry f [n] (xs: [n]f64) : [n]f64 =
           loop a = copy xs for i < n do
             let j = (i * 2 + 1) % n
             let a = a with [i] = a[i] * f64.cos a[j] + 0.5
             in a with [j] = a[j] + a[i] * a[i] * 0.25
         entry vf [n] (xs: [n]f64) (s: [n]f64) = vjp f xs s",
        |n| n,
    );
}

/// A product written with indices over an array computed from the input: the adjoint of
/// `a[i, l]` becomes a sum over the middle map inside the map over `l`, and the
/// accumulator a plain array (runic-opt's sums-before-updates).
#[test]
fn vjp_of_a_product_by_indices() {
    check_vjp(
        "entry f [n] (xs: [n]f64) : [n]f64 =
           let a = tabulate_2d 3 n (\\i l -> xs[l] * f64.i64 (i + 1) + f64.sin xs[(l + i) % n])
           let b = tabulate_2d n n (\\l j -> f64.cos (f64.i64 (l * 3 + j)))
           let c = map (\\i -> map (\\j -> f64.sum (map (\\l -> a[i, l] * b[l, j]) (iota n))) (iota n)) (iota 3)
           in map (\\j -> c[0, j] * c[1, j] + c[2, j]) (iota n)
         entry vf [n] (xs: [n]f64) (s: [n]f64) = vjp f xs s",
        |n| n,
    );
}

/// The same product differentiated through its right operand: the adjoint of `b[l, j]`
/// is updated under all three maps, and sums-before-updates swaps the outer two before
/// making the map over `i` a sum.
#[test]
fn vjp_of_a_product_by_indices_through_its_right_operand() {
    check_vjp(
        "entry f [n] (xs: [n]f64) : [n]f64 =
           let a = tabulate_2d 3 n (\\i l -> f64.cos (f64.i64 (i * 5 + l)))
           let b = tabulate_2d n n (\\l j -> xs[l] * xs[j] + f64.sin xs[(l + 2 * j) % n])
           let c = map (\\i -> map (\\j -> f64.sum (map (\\l -> a[i, l] * b[l, j]) (iota n))) (iota n)) (iota 3)
           in map (\\j -> c[0, j] * c[1, j] + c[2, j]) (iota n)
         entry vf [n] (xs: [n]f64) (s: [n]f64) = vjp f xs s",
        |n| n,
    );
}

/// A stack of matrices built from the input, two of them read by index inside the maps
/// over the rows (one at an index computed at run time): runic-opt's acc-to-reduce
/// narrows each adjoint's updates to the matrix's row of the stack and makes it a sum
/// over the rows.
#[test]
fn vjp_of_matrices_read_from_a_stack() {
    check_vjp(
        "entry f [n] (xs: [n]f64) : [n]f64 =
           let w = tabulate_3d 3 n n (\\g j k -> xs[(j + k + g) % n] * f64.i64 (g + 1) + f64.cos xs[k])
           let x = tabulate_2d n n (\\b k -> f64.sin xs[(b * 2 + k) % n] + xs[b])
           let g = i64.f64 (f64.abs xs[0]) % 3
           let y = map (\\r -> map (\\c -> f64.sum (map2 (*) r c)) w[1]) x
           let z = map (\\r -> map (\\c -> f64.sum (map2 (*) r c)) w[g]) x
           in map2 (\\a b -> f64.sum (map2 (\\u v -> f64.tanh u * v) a b)) y z
         entry vf [n] (xs: [n]f64) (s: [n]f64) = vjp f xs s",
        |n| n,
    );
}

/// Two matrices of a stack read in one map, one at a run-time index that is at times the
/// other's: the adjoint's row accumulators add into their rows one after another.
#[test]
fn vjp_of_two_matrices_of_a_stack_in_one_map() {
    check_vjp(
        "entry f [n] (xs: [n]f64) : [n]f64 =
           let w = tabulate_3d 3 n n (\\g j k -> xs[(j * 2 + k + g) % n] * f64.i64 (g + 2) + f64.sin xs[j])
           let g = i64.f64 (f64.abs xs[0] * 2) % 3
           in map (\\i -> let r = map (\\k -> xs[(i + k) % n] + f64.i64 k) (iota n)
                          let y = map (\\c -> f64.sum (map2 (*) r c)) w[1]
                          let z = map (\\c -> f64.sum (map2 (*) r c)) w[g]
                          in f64.sum (map2 (\\u v -> f64.tanh u * v) y z)) (iota n)
         entry vf [n] (xs: [n]f64) (s: [n]f64) = vjp f xs s",
        |n| n,
    );
}

/// dᵀ·x written with columns sliced out, differentiated through both operands: the
/// columns become reads at the elements of the map over them before the updates move.
#[test]
fn vjp_of_a_product_of_columns() {
    check_vjp(
        "entry f [n] (xs: [n]f64) : [n]f64 =
           let d = tabulate_2d n 3 (\\b j -> xs[b] * f64.i64 (j + 1) + f64.cos (f64.i64 (b + j)))
           let x = tabulate_2d n n (\\b k -> f64.sin xs[(b + k) % n] + xs[k])
           let c = map (\\j -> map (\\k -> f64.sum (map2 (*) d[:, j] x[:, k])) (iota n)) (iota 3)
           in map (\\k -> c[0, k] * c[2, k] + c[1, k]) (iota n)
         entry vf [n] (xs: [n]f64) (s: [n]f64) = vjp f xs s",
        |n| n,
    );
}

/// Layers of `max` and `min` whose results the next layer reads: their adjoints read the
/// layers' outputs (residuals kept in the maps' own results), not their inputs.
#[test]
fn vjp_of_max_and_min_layers() {
    check_vjp(
        "def layer [n] (zs: [n]f64) : [n]f64 = map (f64.max 0) (map (\\z -> z * 1.5 - 0.25) zs)
         entry f [n] (zs: [n]f64) = map (\\h -> h * f64.min h 0.5) (map (f64.min 0.8) (layer zs))
         entry vf [n] (zs: [n]f64) (s: [n]f64) = vjp f zs s",
        |n| n,
    );
}

/// Rows whose return sweeps run their maps again (a log-sum-exp and a sum of `tanh`s per
/// row): the adjoints of `exp` and `tanh` read the re-executed maps' own results.
#[test]
fn vjp_of_rows_of_exps_and_tanhs() {
    check_vjp(
        "def lse [m] (r: [m]f64) : f64 =
           let top = f64.maximum r
           in top + f64.log (f64.sum (map (\\x -> f64.exp (x - top)) r))
         entry f [n] (zs: [n]f64) =
           map (\\i -> let r = map (\\j -> zs[(i + j) % n] * (1 + f64.i64 j)) (iota 3)
                      in lse r + f64.sum (map f64.tanh r)) (iota n)
         entry vf [n] (zs: [n]f64) (s: [n]f64) = vjp f zs s",
        |n| n,
    );
}

/// Histograms of pairs whose operator works component by component ((+, max) and
/// (*, +)): each component differentiated by its own histogram rule.
#[test]
fn vjp_of_histograms_of_pairs() {
    check_vjp(
        "entry f [n] (zs: [n]f64) =
           let bins = map (\\i -> i % 3) (iota n)
           let (s, m) = unzip (hist (\\(a, b) (c, d) -> (a + c, f64.max b d)) (0, -f64.inf) 3 bins
                                    (map (\\z -> (z * z, f64.sin z)) zs))
           let (p, t) = unzip (hist (\\(a, b) (c, d) -> (a * c, b + d)) (1, 0) 3 bins
                                    (map (\\z -> (z + 2, z * 0.5)) zs))
           in map4 (\\si mi pi ti -> si + (if mi == -f64.inf then 0 else mi) + pi * ti) s m p t
         entry vf [n] (zs: [n]f64) (s: [3]f64) = vjp f zs s",
        |_| 3,
    );
}

/// `check_vjp` of an attention program over queries, keys and values built from the input
/// (`mat`, so that all three depend on it), whose rows `f_rows` maps to its `[n][2]`
/// outputs (with `dot` at hand), flattened.
fn check_attention_vjp(f_rows: &str) {
    check_vjp(
        &format!(
            "def dot [m] (a: [m]f64) (b: [m]f64) = f64.sum (map2 (*) a b)
             def mat [n] (zs: [n]f64) (c: i64) (s: f64) : [n][c]f64 =
               map (\\i -> map (\\k -> zs[(i + k) % n] * (s + f64.i64 k)) (iota c)) (iota n)
             entry f [n] (zs: [n]f64) =
               let (q, k, v) = (mat zs 3 0.5, mat zs 3 (-0.7), mat zs 2 1.3)
               in flatten ({f_rows})
             entry vf [n] (zs: [n]f64) (s: []f64) = vjp f zs (s :> [n * 2]f64)"
        ),
        |n| n * 2,
    );
}

/// Attention: the adjoint of the values is the transpose of a per-query outer product
/// (`transpose v` in the primal), which acc-to-reduce turns into a matrix product, as it
/// does the keys' adjoint.
#[test]
fn vjp_of_attention_with_transposed_adjoints() {
    check_attention_vjp(
        "map (\\qi -> let s = map (\\kj -> dot qi kj) k
                      let e = map (\\x -> f64.exp (x - f64.maximum s)) s
                      let a = map (/ f64.sum e) e
                      in map (\\col -> dot a col) (transpose v)) q",
    );
}

/// Causal attention: the masked scores' dot products are taken out of their branch
/// (`runic_ir::dots`) before differentiation, and the mask's `-inf` enters `exp`.
#[test]
fn vjp_of_causal_attention() {
    check_attention_vjp(
        "map2 (\\i qi -> let s = map2 (\\j kj -> if j <= i then dot qi kj else -f64.inf)
                                       (iota n) k
                           let e = map (\\x -> f64.exp (x - f64.maximum s)) s
                           let a = map (/ f64.sum e) e
                           in map (\\col -> dot a col) (transpose v)) (iota n) q",
    );
}

/// Message passing: the weights' adjoint is a sum over the edges (a matrix product),
/// while the gathered rows' adjoint stays a scatter through an accumulator of the same
/// `with_acc`, which acc-to-reduce splits.
#[test]
fn vjp_of_message_passing_with_a_scatter_and_a_sum() {
    check_vjp(
        "def mv [a] [b] (m: [a][b]f64) (v: [b]f64) : [a]f64 = map (\\r -> f64.sum (map2 (*) r v)) m
         entry f [n] (zs: [n]f64) =
           let h = map (\\i -> map (\\k -> zs[(i + k) % n] * (0.4 + f64.i64 k)) (iota 3)) (iota n)
           let w = map (\\i -> map (\\k -> zs[(i * 3 + k) % n] - 0.1 * f64.i64 i) (iota 3)) (iota 3)
           let src = map (\\i -> (i * 2 + 1) % n) (iota n)
           let dst = map (\\i -> (i * 5) % n) (iota n)
           let msgs = map (\\s -> map f64.tanh (mv w h[s])) src
           let agg = reduce_by_index (replicate n (replicate 3 0)) (map2 (+)) (replicate 3 0) dst msgs
           in flatten (map2 (map2 (+)) h agg)
         entry vf [n] (zs: [n]f64) (s: []f64) = vjp f zs (s :> [n * 3]f64)",
        |n| n * 3,
    );
}

/// Reverse over reverse: the inner gradient adjoins its free array through an accumulator,
/// which the outer vjp differentiates (Hessian-vector products).
#[test]
fn vjp_of_a_gradient_with_accumulators() {
    check_vjp(
        "def g [n] (zs: [n]f64) = f64.sum (map (\\i -> f64.sin zs[i] * zs[(i + 1) % n] + zs[i] * zs[i]) (iota n))
         entry f [n] (zs: [n]f64) = vjp g zs 1
         entry vf [n] (zs: [n]f64) (s: [n]f64) = vjp (\\zs -> vjp g zs 1) zs s",
        |n| n,
    );
}

/// The same with a loop inside the inner map (updates inside that loop) and rows of the
/// free array read whole.
#[test]
fn vjp_of_a_gradient_through_loops_and_rows() {
    check_vjp(
        "def g [n] (zs: [n]f64) =
           let m = map (\\i -> [zs[i], zs[(i + 1) % n]]) (iota n)
           let a = f64.sum (map (\\i -> loop a = zs[i] for j < 2 do a * f64.cos zs[(i + j) % n]) (iota n))
           in a + f64.sum (map (\\i -> f64.sum (map f64.sin m[i])) (iota n))
         def grad [n] (zs: [n]f64) = vjp g zs 1
         entry f [n] (zs: [n]f64) = grad zs
         entry vf [n] (zs: [n]f64) (s: [n]f64) = vjp grad zs s",
        |n| n,
    );
}

/// Forward over reverse on the same kind of gradient, against finite differences.
#[test]
fn jvp_of_a_gradient_with_accumulators() {
    check(
        "def g [n] (zs: [n]f64) = f64.sum (map (\\i -> f64.sin zs[i] * zs[(i + 1) % n]) (iota n))
         def grad [n] (zs: [n]f64) = vjp g zs 1
         entry f (zs: []f64) = grad zs
         entry df (zs: []f64) (dzs: []f64) = jvp grad zs dzs",
        1,
    );
}

/// Loops whose carried arrays change shape: growing (a for and a while loop), shrinking,
/// and a 2-D value gaining rows.
#[test]
fn vjp_of_loops_whose_arrays_change_shape() {
    check_vjp(
        "entry f (xs: []f64) = loop ys = xs for i < 3 do concat ys (map (\\y -> f64.sin y * 0.5 + y * f64.i32 i) ys)
         entry vf (xs: []f64) (s: []f64) = vjp f xs s",
        |n| 8 * n,
    );
    check_vjp(
        "def g (xs: []f64) =
           let (ys, _) = loop (ys, k) = (xs, 0) while k < 2 do (concat ys (map f64.cos ys), k + 1)
           let zs = loop zs = ys for _i < 3 do map2 (*) (tail zs) (init zs)
           in [f64.sum zs]
         entry f (xs: []f64) = g xs
         entry vf (xs: []f64) (s: []f64) = vjp g xs s",
        |_| 1,
    );
    check_vjp(
        "def g (xs: []f64) =
           let m = loop m = [xs] for _i < 2 do concat m (map (\\r -> map2 (*) r (map f64.sin r)) m)
           in flatten m
         entry f (xs: []f64) = g xs
         entry vf (xs: []f64) (s: []f64) = vjp g xs s",
        |n| 4 * n,
    );
}

/// Maps whose return sweep reads the forward sweep's transcendental values (residuals):
/// scalars, a result that is itself the residual, nested maps, and a batch of gates in a
/// loop (the residuals in the tape), on random inputs against finite differences.
#[test]
fn vjp_of_maps_with_residuals() {
    let defs = "def sigmoid (x: f64) = 1 / (1 + f64.exp (-x))
         def scalars [n] (xs: [n]f64) =
           map (\\x -> f64.exp x * f64.log (2 + f64.sin x) + f64.tanh (x * x) + (1.5 ** x)) xs
         def nested [n] (xs: [n]f64) =
           let m = map (\\i -> map (\\j -> xs[i] - xs[j]) (iota n)) (iota n)
           let g = map (map (\\x -> sigmoid x * f64.tanh (x / 2))) m
           in map (\\r -> f64.sum r + f64.exp r[0]) g
         def gates [n] (xs: [n]f64) =
           let m = map (\\i -> map (\\j -> xs[i] * f64.i64 (j + 1) / 4) (iota n)) (iota n)
           let c = loop c = m for _i < 3 do
                     map2 (map2 (\\x c -> sigmoid x * c + sigmoid (-c) * f64.tanh x)) m c
           in map f64.sum c";
    for body in ["scalars xs", "nested xs", "gates xs"] {
        check_vjp(
            &format!(
                "{defs}
         entry f [n] (xs: [n]f64) = {body}
         entry vf [n] (xs: [n]f64) (s: [n]f64) = vjp (\\xs -> {body}) xs s"
            ),
            |n| n,
        );
    }
}

/// Loops whose tapes store their bodies' products (`W h`, read back instead of recomputed)
/// and give their next states from the tape's next row: an RNN, an LSTM-like cell carrying
/// two states, and reverse over reverse through the RNN.
#[test]
fn vjp_of_loops_with_stored_products() {
    let defs =
        "def matvec [n] [m] (w: [n][m]f64) (h: [m]f64) = map (\\row -> f64.sum (map2 (*) row h)) w
         def weights [n] (xs: [n]f64) (k: f64) =
           map (\\i -> map (\\j -> f64.sin (xs[i] * (f64.i64 j + k))) (iota n)) (iota n)
         def rnn [n] (xs: [n]f64) =
           let w = weights xs 1
           in loop h = xs for _i < 3 do map f64.tanh (matvec w h)
         def cell [n] (xs: [n]f64) =
           let (a, b) = (weights xs 1, weights xs 0.5)
           let (h, c) = loop (h, c) = (map (* 0.5) xs, xs) for _i < 3 do
                          let c' = map3 (\\f g c -> c / (1 + f64.exp (-f)) + f64.tanh g)
                                        (matvec a h) (matvec b h) c
                          in (map f64.tanh c', c')
           in map2 (+) h c";
    for f in ["rnn", "cell"] {
        check_vjp(
            &format!(
                "{defs}
         entry f [n] (xs: [n]f64) = {f} xs
         entry vf [n] (xs: [n]f64) (s: [n]f64) = vjp {f} xs s"
            ),
            |n| n,
        );
    }
    check_vjp(
        &format!(
            "{defs}
         def grad [n] (xs: [n]f64) = vjp (\\xs -> f64.sum (rnn xs)) xs 1
         entry f [n] (xs: [n]f64) = grad xs
         entry vf [n] (xs: [n]f64) (s: [n]f64) = vjp grad xs s"
        ),
        |n| n,
    );
}
