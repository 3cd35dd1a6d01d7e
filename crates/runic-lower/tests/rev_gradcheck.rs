//! Property tests of reverse-mode AD on the ir backend: for each rule, a scalar function
//! `f` of an array, random inputs, and `vjp f xs 1` compared with central finite
//! differences of `f` (both computed by the compiled path: lowering, the `ad` pass, the
//! optimisations and the executor).

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use runic_data::Value;
use std::sync::Arc;

/// Compile a program for the ir backend.
fn compile(src: &str) -> runic_exec::Executor {
    let mut sources = runic_syntax::SourceMap::new();
    let file = sources.add("gradcheck.fut", src.to_string());
    let program = runic_syntax::parse_program(file, src, runic_types::first_user_node_id())
        .unwrap_or_else(|_| panic!("does not parse:\n{src}"));
    let prelude = sources.add(runic_types::PRELUDE_NAME, runic_types::PRELUDE_SOURCE);
    let checked = runic_types::check_program_with_prelude_file(program, &sources, prelude)
        .unwrap_or_else(|_| panic!("does not type-check:\n{src}"));
    let prog = runic_lower::lower_with_sources(&checked, Some(&sources)).expect("lowers");
    let (prog, errors) = runic_ad::eliminate_where_possible(prog);
    assert!(errors.is_empty(), "{src}: {}", errors[0]);
    runic_ir::verify(&prog).expect("valid IR after ad");
    let prog = runic_opt::pipeline()
        .iter()
        .fold(prog, |p, (_, pass)| pass(p));
    runic_exec::Executor::new(Arc::new(prog))
}

fn array(xs: &[f64]) -> Value {
    let text = format!(
        "[{}]",
        xs.iter()
            .map(|x| format!("{x:?}f64"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    runic_data::read_all(text.as_bytes(), "input", &[])
        .unwrap()
        .remove(0)
}

fn floats(v: &Value) -> Vec<f64> {
    match v {
        Value::Scalar(_) => vec![v.as_f64().unwrap()],
        Value::Array(a) => (0..a.len())
            .map(|i| a.data.get(i).as_float().unwrap())
            .collect(),
        _ => panic!("not data: {v}"),
    }
}

/// `f (xs: []f64) : f64` and `grad xs = vjp f xs 1` agree with central differences at
/// random points whose coordinates lie in `lo..hi`.
fn check(name: &str, body: &str, lo: f64, hi: f64) {
    let src =
        format!("{body}\nentry grad (xs: []f64) = vjp f xs 1\nentry value (xs: []f64) = f xs\n");
    let exec = compile(&src);
    let mut runner = TestRunner::new(Config {
        cases: 24,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = proptest::collection::vec(lo..hi, 1..9);
    runner
        .run(&strategy, |xs| {
            let got = floats(&exec.run_entry("grad", vec![array(&xs)]).unwrap()[0]);
            prop_assert_eq!(got.len(), xs.len());
            let f = |ys: &[f64]| floats(&exec.run_entry("value", vec![array(ys)]).unwrap()[0])[0];
            for i in 0..xs.len() {
                let h = 1e-6 * xs[i].abs().max(1.0);
                let (mut up, mut down) = (xs.clone(), xs.clone());
                up[i] += h;
                down[i] -= h;
                let fd = (f(&up) - f(&down)) / (2.0 * h);
                let tol = 1e-5 * (1.0 + fd.abs().max(got[i].abs()));
                prop_assert!(
                    (fd - got[i]).abs() <= tol,
                    "{}: d/dx{} at {:?}: vjp {} but finite differences {}",
                    name,
                    i,
                    xs,
                    got[i],
                    fd
                );
            }
            Ok(())
        })
        .unwrap();
}

/// Weights 1, 2, 3, … so that every output gets a different cotangent.
const W: &str = "def w [n] (_: [n]f64) : [n]f64 = map (\\i -> f64.i64 i + 1) (iota n)\n";

#[test]
fn map_with_free_scalar_and_free_array() {
    check(
        "map",
        "def f [n] (xs: [n]f64) = let c = xs[0] in f64.sum (map (\\i -> xs[(i * 3 + 1) % n] * c + f64.sin xs[i]) (iota n))",
        -2.0,
        2.0,
    );
}

#[test]
fn slices_of_free_arrays_in_map() {
    // A 2-D array built from xs, read inside a map by column (`a[:, i]`), by a strided row
    // slice with a start (`a[i, 1::2]`), and by a down-going vector slice (`xs[i::-1]`).
    let outer =
        "def outer [n] (xs: [n]f64) : [n][n]f64 = map (\\x -> map (\\y -> x * f64.cos y) xs) xs\n";
    check(
        "column and row slices",
        &format!("{W}{outer}def f [n] (xs: [n]f64) = let a = outer xs in f64.sum (map2 (*) (map (\\i -> f64.sum (map f64.sin a[:, i]) + f64.sum (map (\\x -> x * x) a[i, i::2]) * f64.sum xs[i::-1]) (iota n)) (w xs))"),
        -1.5,
        1.5,
    );
}

#[test]
fn reduce_plus_times_min_max() {
    check(
        "reduce +",
        "def f (xs: []f64) = reduce (+) 0 (map (\\x -> x * x) xs)",
        -2.0,
        2.0,
    );
    check("reduce *", "def f (xs: []f64) = reduce (*) 1 xs", -2.0, 2.0);
    check(
        "reduce min max",
        "def f (xs: []f64) = reduce f64.max (-f64.inf) xs * 2 + reduce f64.min f64.inf (map f64.sin xs)",
        -2.0,
        2.0,
    );
}

/// The adjoint of `reduce min`/`max` is one-hot, and runic-opt's `sparse-adjoints` runs
/// the adjoint code after it at the extremum only: the nearest centre of each point (a
/// map over the centres and the accumulator updates after it), and max-pooling windows
/// (updates of a slice of a free array).
#[test]
fn adjoint_code_after_an_extremum() {
    check(
        "nearest centre",
        "def f [n] (xs: [n]f64) =
           let cs = map (\\i -> map (\\j -> xs[(i + j) % n] * 0.5) (iota 2)) (iota 3)
           let ps = map (\\i -> map (\\j -> f64.sin xs[(2 * i + j) % n]) (iota 2)) (iota 4)
           let d p c = f64.sum (map2 (\\a b -> (a - b) * (a - b)) p c)
           in f64.sum (map (\\p -> f64.minimum (map (d p) cs)) ps)",
        -2.0,
        2.0,
    );
    check(
        "max pooling",
        "def f [n] (xs: [n]f64) =
           f64.sum (map (\\i -> f64.i64 (i + 1) * f64.maximum (map f64.sin xs[i:i + 2])) (iota (n - 1)))",
        -2.0,
        2.0,
    );
}

#[test]
fn reduce_general_operator() {
    check(
        "reduce affine",
        "def f (xs: []f64) = let (a, b) = reduce (\\(a1, b1) (a2, b2) -> (a2 * a1, a2 * b1 + b2)) (1, 0) (zip xs (map f64.cos xs)) in a + 2 * b",
        -1.5,
        1.5,
    );
}

#[test]
fn scan_plus_times_general() {
    check(
        "scan +",
        &format!(
            "{W}def f (xs: []f64) = f64.sum (map2 (*) (scan (+) 0 (map (\\x -> x * x) xs)) (w xs))"
        ),
        -2.0,
        2.0,
    );
    check(
        "scan *",
        &format!("{W}def f (xs: []f64) = f64.sum (map2 (*) (scan (*) 1 xs) (w xs))"),
        -1.5,
        1.5,
    );
    check(
        "scan affine",
        &format!("{W}def f (xs: []f64) = let (a, b) = unzip (scan (\\(a1, b1) (a2, b2) -> (a2 * a1, a2 * b1 + b2)) (1, 0) (zip xs (map f64.sin xs))) in f64.sum (map2 (*) a (w xs)) + f64.sum b"),
        -1.5,
        1.5,
    );
}

#[test]
fn scan_with_independent_components() {
    check(
        "scan blocks",
        &format!("{W}def f (xs: []f64) = let (a, b) = unzip (scan (\\(a1, b1) (a2, b2) -> (a1 * a2, b1 + b2 * b2)) (1, 0) (zip xs (map f64.sin xs))) in f64.sum (map2 (*) a (w xs)) + f64.sum (map2 (*) b (w xs))"),
        -1.5,
        1.5,
    );
}

#[test]
fn reduce_by_index_every_rule() {
    let bins = "def bins [n] (_: [n]f64) : [n]i64 = map (\\i -> (i * 7) % 4 - 1) (iota n)\n";
    check("hist +", &format!("{W}{bins}def f [n] (xs: [n]f64) = f64.sum (map2 (*) (reduce_by_index (map f64.cos xs[:0] ++ [1, 2, 3]) (+) 0 (bins xs) (map (\\x -> x * x) xs)) [1, 2, 3])"), -2.0, 2.0);
    check("hist *", &format!("{bins}def f [n] (xs: [n]f64) = f64.sum (map2 (*) (reduce_by_index [1.5, xs[0], 2] (*) 1 (bins xs) xs) [1, 2, 3])"), -2.0, 2.0);
    check("hist max", &format!("{bins}def f [n] (xs: [n]f64) = f64.sum (map2 (*) (reduce_by_index [-1.5, -1, -2] f64.max (-f64.inf) (bins xs) xs) [1, 2, 3])"), -2.0, 2.0);
    check("hist min", &format!("{bins}def f [n] (xs: [n]f64) = f64.sum (map2 (*) (reduce_by_index [1.5, xs[0] + 3, 2] f64.min f64.inf (bins xs) xs) [1, 2, 3])"), -2.0, 2.0);
    check("hist general", &format!("{bins}def f [n] (xs: [n]f64) = f64.sum (map2 (*) (reduce_by_index [0.5, 0.25, xs[0]] (\\a b -> a + b + a * b) 0 (bins xs) (map (\\x -> x * 0.3) xs)) [1, 2, 3])"), -2.0, 2.0);
}

#[test]
fn scatter_values_and_destination() {
    check(
        "scatter",
        &format!("{W}def f [n] (xs: [n]f64) = f64.sum (map2 (*) (scatter (map f64.sin xs) (map (\\i -> (i * 5) % (n + 1) - 1) (iota n)) (map (\\x -> x * x) xs)) (w xs))"),
        -2.0,
        2.0,
    );
}

#[test]
fn loops_and_branches() {
    check(
        "for loop",
        "def f [n] (xs: [n]f64) = f64.sum (loop acc = xs for i < 3 do map (\\x -> x * acc[i % n] * 0.5 + f64.sin x) acc)",
        -1.5,
        1.5,
    );
    check(
        "while loop",
        "def f (xs: []f64) = f64.sum (loop (y, i) = (xs, 0) while i < 3 do (map (\\x -> f64.sin x * 1.5 + x) y, i + 1)).0",
        -2.0,
        2.0,
    );
    check(
        "strip-mined loop",
        "def f [n] (xs: [n]f64) = f64.sum (#[stripmine(2)] loop acc = xs for i < 7 do map (\\x -> x * acc[i % n] * 0.5 + f64.sin x) acc)",
        -1.5,
        1.5,
    );
    check(
        "if",
        "def f (xs: []f64) = f64.sum (map (\\x -> if x > 0 then x * x else -3 * x) xs)",
        -2.0,
        2.0,
    );
    check(
        "in-place updates in a loop",
        "def f [n] (xs: [n]f64) = f64.sum (loop ys = copy xs for i < n do let ys[i] = ys[i] * ys[(i + 1) % n] + 1 in ys)",
        -1.2,
        1.2,
    );
}

#[test]
fn vectorised_operators() {
    let rows = "def rows [n] (xs: [n]f64) : [n][3]f64 = map (\\i -> map (\\j -> xs[(i + j) % n] * f64.i64 (j + 1)) (iota 3)) (iota n)\n";
    check(
        "reduce (map2 (*))",
        &format!("{rows}def f (xs: []f64) = f64.sum (reduce (map2 (*)) (replicate 3 1) (rows xs))"),
        -1.5,
        1.5,
    );
    check("scan (map2 (+))", &format!("{rows}def f (xs: []f64) = f64.sum (map (\\r -> r[0] * r[1] + r[2]) (scan (map2 (+)) (replicate 3 0) (rows xs)))"), -1.5, 1.5);
}

/// Means read by every point through a product with per-component matrices (the GMM's
/// `Q_k·(x_i − μ_k)`): the accumulator optimisation sums the points' adjoints of the
/// product before multiplying once by `Q_kᵀ` (runic-opt's linear tails), while `Q`'s
/// adjoint stays a sum of outer products. Both build on values taken from `xs`.
#[test]
fn linear_tail_of_a_product_with_free_matrices() {
    let matvec = "def matvec [m] [n] (a: [m][n]f64) (v: [n]f64) : [m]f64 = map (\\row -> f64.sum (map2 (*) row v)) a\n";
    check(
        "sum before Qᵀ",
        &format!("{matvec}def f [n] (xs: [n]f64) =
           let qs = tabulate_3d 2 3 3 (\\k i j -> xs[(k * 9 + i * 3 + j) % n] + f64.i64 (i - j))
           let mus = tabulate_2d 2 3 (\\k j -> xs[(k * 3 + j + 1) % n] * 0.5)
           let pts = tabulate_2d 4 3 (\\i j -> f64.sin (f64.i64 (i * 3 + j)))
           in f64.sum (map (\\p -> f64.sum (map2 (\\q mu -> f64.sum (map (\\y -> y * y * y) (matvec q (map2 (-) p mu)))) qs mus)) pts)"),
        -1.5,
        1.5,
    );
}

#[test]
fn mjp_full_jacobian() {
    let src = "def g [n] (xs: [n]f64) : [n]f64 = map (\\i -> xs[i] * f64.sin xs[(i + 1) % n]) (iota n) |> scan (+) 0\n\
               entry jac [n] (xs: [n]f64) = mjp g xs (tabulate_2d n n (\\i j -> if i == j then 1 else 0))\n\
               entry value [n] (xs: [n]f64) = g xs\n";
    let exec = compile(src);
    let mut runner = TestRunner::new(Config {
        cases: 16,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&proptest::collection::vec(-2.0..2.0f64, 1..7), |xs| {
            let n = xs.len();
            // Row i of the result is the vjp with the i-th unit cotangent: ∂gᵢ/∂xⱼ.
            let jac = floats(&exec.run_entry("jac", vec![array(&xs)]).unwrap()[0]);
            prop_assert_eq!(jac.len(), n * n);
            let g = |ys: &[f64]| floats(&exec.run_entry("value", vec![array(ys)]).unwrap()[0]);
            for j in 0..n {
                let h = 1e-6;
                let (mut up, mut down) = (xs.clone(), xs.clone());
                up[j] += h;
                down[j] -= h;
                let (gu, gd) = (g(&up), g(&down));
                for i in 0..n {
                    let fd = (gu[i] - gd[i]) / (2.0 * h);
                    let got = jac[i * n + j];
                    prop_assert!(
                        (fd - got).abs() <= 1e-5 * (1.0 + fd.abs()),
                        "J[{}][{}] at {:?}: {} vs {}",
                        i,
                        j,
                        xs,
                        got,
                        fd
                    );
                }
            }
            Ok(())
        })
        .unwrap();
}
