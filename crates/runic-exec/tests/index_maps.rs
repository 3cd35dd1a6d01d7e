//! Maps over `iota n`: their kernels bind the parameter to the element's index
//! (`MapKernel::index_params`) and the executor leaves the iota unbuilt when only such
//! maps read it (`Val::Iota`). Results and error reports against the evaluator
//! (`RUNIC_JIT=0`) and the interpreter; which iotas get built after all.

mod common;

use common::compile;

const PROG: &str = "
entry halves (n: i64) : []f32 = map (\\i -> f32.i64 i * 0.5 + 1) (iota n)
entry weighted [n] (xs: [n]f32) : [n]f32 = map2 (\\i x -> x * f32.i64 i) (iota n) xs
entry wraps [n] (xs: [n]i32) : [n]i32 = map (\\i -> xs[(2 * i) % (n + 1)]) (iota n)
entry in_loop (k: i64) : []f64 =
  loop acc = replicate 5 0f64 for t < k do map2 (\\i a -> a + f64.i64 (i * t)) (iota 5) acc
entry columns [n] [m] (xs: [n][m]f32) : [m]f32 =
  map (\\j -> f32.sum (map (\\r -> r[j]) xs)) (iota m)
entry returned (n: i64) = let is = iota n in (is, map (\\i -> i + 1) is)
entry wsum [n] (xs: [n]f64) : f64 = f64.sum (map2 (\\i x -> x * f64.i64 i) (iota n) xs)
entry fsum [n] (xs: [n]f32) : f32 = f32.sum (map2 (\\i x -> x + f32.i64 i) (iota n) xs)
entry dsum [n] (xs: [n]i64) : i64 = i64.sum (map2 (\\i x -> x / (i - 3)) (iota n) xs)
entry prefix (n: i64) : []i64 = scan (+) 0 (map (\\i -> i * 2 - 1) (iota n))
entry grid (n: i64) (m: i64) : [n][m]f32 =
  map (\\i -> map (\\j -> f32.i64 i * 0.5 + f32.i64 j / 3) (iota m)) (iota n)
";

/// `n` floats `k/8` as a text array.
fn eighths(n: usize) -> String {
    if n == 0 {
        return "empty([0]f32)".into();
    }
    let xs: Vec<String> = (0..n).map(|k| format!("{}f32", k as f64 / 8.0)).collect();
    format!("[{}]", xs.join(", "))
}

/// How the executor runs each top-level SOAC of `entry` (its task schedule aside).
fn top_level(c: &common::Compiled, entry: &str) -> Vec<String> {
    (c.native.explain().into_iter())
        .filter(|r| r.entry == entry && r.depth == 0 && r.kind != "tasks")
        .map(|r| r.how)
        .collect()
}

#[test]
fn maps_over_iotas_take_the_index_and_build_no_iota() {
    let c = compile(PROG);
    for e in ["halves", "weighted", "wraps", "in_loop"] {
        c.assert_native(e);
        let how = top_level(&c, e);
        assert_eq!(
            how,
            ["native (runic-jit map kernel, the index from its counter)"],
            "{e}"
        );
    }
    // Sizes below and above the split between the workers, and tails of every length
    // after the SIMD groups.
    for n in [0, 1, 3, 4, 5, 17, 16_385, 100_003] {
        c.agree("halves", &format!("{n}i64"), n < 20);
    }
    for n in [0, 6, 40_001] {
        c.agree("weighted", &eighths(n), n < 20);
    }
    // The kernel fails at element 2 (index 4 of 4): the evaluator redoes the elements
    // with their indices and reports the interpreter's error.
    c.agree("wraps", "[10i32, 20, 30, 40]", true);
    c.agree("wraps", "[10i32, 20, 30]", true);
    c.agree("in_loop", "3i64", true);
    // A nested map over its own iota, in lanes: rows of every length around a group of
    // four, and enough rows to split.
    c.assert_native("grid");
    for (n, m) in [(3, 1), (3, 4), (5, 7), (2, 9), (4_000, 13)] {
        c.agree("grid", &format!("{n}i64 {m}i64"), n < 10);
    }
    assert_eq!(c.native.iotas_built_late(), 0, "no map above read an iota");
}

#[test]
fn folds_and_scans_over_iotas_take_the_index_and_build_no_iota() {
    let c = compile(PROG);
    for e in ["wsum", "fsum", "dsum", "prefix"] {
        c.assert_native(e);
        let how = top_level(&c, e);
        assert!(
            how[0].ends_with("the index from its counter)")
                || how[0].ends_with("the index from their counter)"),
            "{e}: {how:?}"
        );
    }
    // Sums of integers, exact in any order (the native f32 sum adds in SIMD lanes, the
    // evaluator in order): below 2^24 in f32, below 2^53 in f64.
    let ones = |n: usize, t: &str| match n {
        0 => format!("empty([0]{t})"),
        _ => format!("[{}]", vec![format!("1{t}"); n].join(", ")),
    };
    for n in [0, 1, 5, 16_385, 100_003] {
        c.agree("wsum", &ones(n, "f64"), n < 20);
        c.agree("fsum", &ones(n.min(5_000), "f32"), n < 20);
        c.agree("prefix", &format!("{n}i64"), n < 20);
    }
    let got = c.run("wsum", &ones(100_003, "f64"));
    assert_eq!(
        format!("{}", got[0]),
        "5.000250003e9f64",
        "Σ i for i < 100 003"
    );
    c.agree("dsum", "[4i64, 6, 8]", true);
    assert_eq!(
        c.native.iotas_built_late(),
        0,
        "no kernel above read an iota"
    );
    // A chunk whose kernel fails (division by zero at i = 3) is redone on the evaluator,
    // which reads the iota.
    c.agree("dsum", "[4i64, 6, 8, 10]", true);
    assert_eq!(c.native.iotas_built_late(), 1);
}

#[test]
fn iotas_are_built_for_kernels_that_read_them() {
    let c = compile(PROG);
    // A column reduction reads its input as a column: the iota is built where it runs.
    c.agree("columns", "[[1f32, 2, 3], [4, 5, 6]]", true);
    assert_eq!(c.native.iotas_built_late(), 1);
    // An iota that is also a result is built where it is bound, as any array.
    c.agree("returned", "4i64", true);
    assert_eq!(c.native.iotas_built_late(), 1);
}
