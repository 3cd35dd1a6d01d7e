//! Native kernels whose SIMD lanes run across rows or down columns (runic-jit's
//! `simd/rows/` and `columns.rs`) against the evaluator (`RUNIC_JIT=0`) and the
//! interpreter: which maps take the lanes (as `explain` reports them), and that the lanes
//! give the scalar code's results, failures and special values included.

mod common;

use common::compile;
use common::data::{assert_near, floats, matrix, numbers, picked_matrix};

/// Whether runic-jit generates SIMD code here (SSE4.1 on x86_64, NEON on aarch64, and
/// `RUNIC_SIMD` not `0`).
fn simd_on() -> bool {
    if std::env::var("RUNIC_SIMD").is_ok_and(|v| v == "0") {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("sse4.1")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        cfg!(target_arch = "aarch64")
    }
}

const BRANCHED_COLUMNS: &str = "
entry plain [n][m] (a: [n][m]f32) : [m]f32 =
  map (\\j -> f32.sum (map (\\i -> a[i, j]) (iota n))) (iota m)
entry relu [n][m] (a: [n][m]f64) : [m]f64 =
  map (\\j -> f64.sum (map (\\i -> if a[i, j] > 0 then a[i, j] else 0) (iota n))) (iota m)
entry masked [n][m][k] (r: [n][m]f32) (a: [k][m]f32) : [m]f32 =
  map (\\j -> f32.sum (map (\\i -> if r[i, j] == 0 then 0 else a[i, j]) (iota n))) (iota m)
entry nested [n][m] (r: [n][m]f32) (a: [n][m]f32) : [m]f32 =
  map (\\j -> f32.sum (map (\\i -> if r[i, j] > 0 then (if r[i, j] > 2 then a[i, j] * 2 else a[i, j])
                                  else -a[i, j]) (iota n))) (iota m)
entry guarded [n][m] (k: i64) (a: [n][m]f32) : [m]f32 =
  map (\\j -> f32.sum (map (\\i -> if i < n then a[i, j] else 1) (iota k))) (iota m)
entry by_column [n][m] (a: [n][m]f32) : [m]f32 =
  map (\\j -> f32.sum (map (\\i -> if j % 2 == 0 then a[i, j] else 0) (iota n))) (iota m)
";

/// Column sums whose summand reads rows inside a branch run in SIMD lanes (the reads made
/// before the branch, both sides computed) wherever the plain column sum does; a branch
/// on the element itself does not. Reads a branch would skip must not fail: rows past an
/// array's end send the step to the scalar loop, which fails only when the branch is taken.
#[test]
fn column_reductions_with_branches_run_in_lanes() {
    let c = compile(BRANCHED_COLUMNS);
    let explained = |e: &str| {
        let rows: Vec<_> = c.native.explain();
        let rows: Vec<_> = rows
            .iter()
            .filter(|r| r.entry == e && r.depth == 0)
            .collect();
        assert_eq!(rows.len(), 1, "{e}: {rows:?}");
        assert!(
            rows[0].how.contains("column reduction"),
            "{e}: {}",
            rows[0].how
        );
        rows[0].how.contains("in SIMD lanes")
    };
    let lanes = explained("plain");
    assert_eq!(lanes, simd_on());
    for e in ["relu", "masked", "nested", "guarded"] {
        assert_eq!(explained(e), lanes, "{e}");
    }
    assert!(!explained("by_column"));
    for (n, m) in [(9, 13), (1, 4), (33, 40)] {
        let a = matrix(n, m, "f32", n as u64);
        let r = picked_matrix(n, m, &["0f32", "1f32", "2f32", "3f32"], m as u64);
        c.agree("relu", &a.replace("f32", "f64"), true);
        c.agree("masked", &format!("{r} {a}"), true);
        c.agree("nested", &format!("{r} {a}"), true);
        c.agree("guarded", &format!("{}i64 {a}", n + 3), true);
        c.agree("guarded", &format!("{}i64 {a}", n / 2), true);
        c.agree("by_column", &a, true);
    }
    // `a` has 2 rows and the mask 5: zero past them (no error), then not.
    let a = matrix(2, 9, "f32", 3);
    let r = |last: &str| {
        let row = |v: &str| format!("[{}]", [v; 9].join(", "));
        let rows = [
            row("1f32"),
            row("2f32"),
            row("0f32"),
            row("0f32"),
            row(last),
        ];
        format!("[{}]", rows.join(", "))
    };
    c.agree("masked", &format!("{} {a}", r("0f32")), true);
    c.agree_message("masked", &format!("{} {a}", r("1f32")));
    let got = numbers(&c, "masked", &format!("{} {a}", r("0f32")), true);
    let plain = numbers(&c, "plain", &a, true);
    assert_eq!(got, plain);
}

const ROW_LANES: &str = "
entry rowmax [n][m] (a: [n][m]f32) : [n]f32 = map (\\r -> f32.maximum r) a
entry lse [n][m] (a: [n][m]f64) : [n]f64 =
  map (\\r -> let mx = f64.maximum r in mx + f64.log (f64.sum (map (\\x -> f64.exp (x - mx)) r))) a
entry scaled [n][m] (a: [n][m]f32) (s: [n]f32) : [n]f32 =
  map2 (\\r k -> f32.sum (map (\\x -> x * k) r) + k) a s
entry dots [n][m] (a: [n][m]f32) (b: [n][m]f32) : [n]f32 =
  map2 (\\r q -> f32.sum (map2 (*) r q)) a b
entry extremes [n][m] (a: [n][m]f32) : ([n]f32, [n]f32) =
  unzip (map (\\r -> (f32.maximum r, f32.minimum r)) a)
entry product [n][m] (a: [n][m]f64) : [n]f64 = map (\\r -> reduce (*) 1 r) a
entry branchy [n][m] (a: [n][m]f32) (flag: bool) : [n]f32 =
  map (\\r -> let s = f32.sum r in if flag && s > 0 then f32.sqrt s else -s) a
entry norms_t [n][m] (a: [m][n]f32) : [n]f32 =
  map (\\r -> f32.sqrt (f32.sum (map (\\x -> x * x) r))) (transpose a)
entry picked [n][m] (a: [n][m]f32) (ks: [n]i64) : [n]f32 =
  map2 (\\r k -> f32.maximum r - r[k]) a ks
entry softmax [n][m] (a: [n][m]f32) : [n][m]f32 =
  map (\\r -> let mx = f32.maximum r
             let e = map (\\x -> f32.exp (x - mx)) r
             let s = f32.sum e
             in map (/ s) e) a
entry mixed_lse [n][m] (a: [n][m]f64) (c: [n][m]f64) : [n]f64 =
  map2 (\\r q -> let v = map2 (\\x y -> x - 0.5 * y) r q
                 let mx = f64.maximum v
                 in mx + f64.log (f64.sum (map (\\x -> f64.exp (x - mx)) v))) a c
entry xent [n][m] (z: [n][m]f32) (b: [m]f32) (labels: [n]i64) : [n]f32 =
  map2 (\\r l -> let v = map2 (+) r b
                 let mx = f32.maximum v
                 in mx + f32.log (f32.sum (map (\\x -> f32.exp (x - mx)) v)) - v[l]) z labels
entry pick_free [n][m][k] (a: [n][m]f32) (b: [k]f32) (ks: [n]i64) : [n]f32 =
  map2 (\\r i -> f32.sum r * b[i]) a ks
entry centred [n][m] (a: [n][m]f32) : ([n][m]f32, [n]f32) =
  unzip (map (\\r -> let mu = f32.sum r / f32.i64 m in (map (\\x -> x - mu) r, mu)) a)
";

/// Maps folding short rows to scalars run a row per lane (`simd/rows/`): on `f32` and
/// `f64`, with scalars beside the rows, two rows in one fold, several results, any
/// operator the lanes compute, a branch after the folds, rows strided in memory, maps
/// whose rows the lambda returns, free vectors, and a row read at each lane's own index
/// (one outside sends the group to the scalar code, which reports it). Every lane folds its row in order from the neutral
/// element, so the results are the scalar code's byte for byte (within rounding where
/// `exp` and `log` are polynomials), for row counts around the lanes and rows around the
/// longest that take them (32), with `0` against `-0` and NaNs in `max`/`min` (a group of
/// rows that meets the choice between the zeros goes back to the scalar loop).
#[test]
fn short_rows_run_a_row_per_lane() {
    let c = compile(ROW_LANES);
    let how = |e: &str| -> String {
        let rows = c.native.explain();
        let top: Vec<_> = rows
            .iter()
            .filter(|r| r.entry == e && r.depth == 0)
            .collect();
        top.iter()
            .map(|r| r.how.clone())
            .collect::<Vec<_>>()
            .join("; ")
    };
    let lanes = how("rowmax").contains("a row per SIMD lane");
    assert_eq!(lanes, simd_on(), "{}", how("rowmax"));
    for e in [
        "lse",
        "scaled",
        "dots",
        "extremes",
        "product",
        "branchy",
        "norms_t",
        "softmax",
        "mixed_lse",
        "centred",
        "picked",
        "xent",
        "pick_free",
    ] {
        assert_eq!(
            how(e).contains("a row per SIMD lane"),
            lanes,
            "{e}: {}",
            how(e)
        );
    }
    let specials = [
        "0f32", "-0f32", "1f32", "-1f32", "2.5f32", "f32.nan", "f32.inf", "-f32.inf",
    ];
    for n in [0, 1, 3, 4, 5, 9, 33] {
        for m in [0, 1, 7, 10, 32, 33] {
            let shape = |t: &str| match (n, m) {
                (0, _) => format!("empty([0][{m}]{t})"),
                (_, 0) => format!("empty([{n}][0]{t})"),
                _ => matrix(n, m, t, (n * 40 + m) as u64),
            };
            let (a32, a64) = (shape("f32"), shape("f64"));
            let s = match n {
                0 => "empty([0]f32)".to_string(),
                _ => floats(n, "f32", m as u64 + 3),
            };
            // Exact everywhere: `max`, `min` and `*` fold in order on every path.
            c.agree("rowmax", &a32, true);
            c.agree("extremes", &a32, true);
            c.agree("product", &a64, true);
            // Sums: the rows left to the scalar loop have lanes along them (reassociated).
            let near = |e: &str, input: &str, rel: f64| {
                let native = numbers(&c, e, input, true);
                assert_near(&native, &numbers(&c, e, input, false), rel, e);
            };
            near("scaled", &format!("{a32} {s}"), 1e-5);
            near("dots", &format!("{a32} {a32}"), 1e-5);
            near("branchy", &format!("{a32} true"), 1e-5);
            near("branchy", &format!("{a32} false"), 1e-5);
            near("lse", &a64, 1e-14);
            near("mixed_lse", &format!("{a64} {a64}"), 1e-14);
            near("softmax", &a32, 1e-6);
            near("centred", &a32, 1e-6);
            // Each row at its own index (a row, a free vector, a map's row), then the first
            // outside (the scalar code reports it, as the interpreter does).
            let b = match m {
                0 => "empty([0]f32)".to_string(),
                _ => floats(m, "f32", 9),
            };
            let indices = |last: usize| {
                let mut ks: Vec<String> = (0..n)
                    .map(|i| format!("{}i64", (i * 7 + 3) % m.max(1)))
                    .collect();
                if let Some(k) = ks.first_mut() {
                    *k = format!("{last}i64");
                }
                match n {
                    0 => "empty([0]i64)".to_string(),
                    _ => format!("[{}]", ks.join(", ")),
                }
            };
            if m > 0 {
                let ks = indices(m - 1);
                c.agree("picked", &format!("{a32} {ks}"), true);
                near("pick_free", &format!("{a32} {b} {ks}"), 1e-5);
                near("xent", &format!("{a32} {b} {ks}"), 1e-5);
            }
            if n > 0 {
                let ks = indices(m + 1);
                c.agree_message("picked", &format!("{a32} {ks}"));
                c.agree_message("pick_free", &format!("{a32} {b} {ks}"));
                c.agree_message("xent", &format!("{a32} {b} {ks}"));
            }
            if n > 0 && m > 0 {
                let t = matrix(m, n, "f32", 5);
                near("norms_t", &t, 1e-5);
                let special = picked_matrix(n, m, &specials, (n + m) as u64);
                c.agree("rowmax", &special, true);
                c.agree("extremes", &special, true);
            }
        }
    }
    // 2²⁴ then fifteen 1s, five rows (`branchy` negates their sums): in order each 1 is
    // lost to rounding (2²⁴ + 1 rounds to 2²⁴). Four rows run a row per lane, in order;
    // the fifth, left to the scalar loop, must be summed in order too, not in lanes along
    // the row (which add the 1s up first: 2²⁴ + 14), or its bits would depend on where
    // it falls. A single row of 40 has lanes along it.
    let row = format!("[16777216f32, {}]", ["1f32"; 15].join(", "));
    let input = format!("[{}] false", [row.as_str(); 5].join(", "));
    assert_eq!(numbers(&c, "branchy", &input, false), [-16_777_216.0; 5]);
    assert_eq!(numbers(&c, "branchy", &input, true), [-16_777_216.0; 5]);
    let long = format!("[[16777216f32, {}]] false", ["1f32"; 39].join(", "));
    if lanes {
        assert!(numbers(&c, "branchy", &long, true)[0] < -16_777_216.0);
    }
    // Rows of zeros of both signs: each group meets the choice and goes to the scalar loop.
    let zeros = picked_matrix(9, 5, &["0f32", "-0f32"], 2);
    c.agree("extremes", &zeros, true);
    let got = c.run(
        "extremes",
        "[[0f32, -0], [-0f32, 0], [1f32, 2], [-0f32, -0], [3f32, 0]]",
    );
    assert_eq!(
        got,
        common::values("[0f32, -0f32, 2f32, -0f32, 3f32] [0f32, -0f32, 1f32, -0f32, 0f32]")
    );
}

/// A random scalar expression of `f32` over a row's element `x` and the row's scalar `k`.
fn elementwise(choices: &mut impl Iterator<Item = u64>, x: &str, depth: u32) -> String {
    let mut pick = |n: u64| choices.next().unwrap_or(0) % n;
    let leaf = [
        x.to_string(),
        "k".into(),
        "1.5f32".into(),
        format!("({x} * {x})"),
    ];
    if depth == 0 {
        return leaf[pick(leaf.len() as u64) as usize].clone();
    }
    let a = elementwise(choices, x, depth - 1);
    let b = elementwise(choices, x, depth - 1);
    let forms = [
        format!("({a} + {b})"),
        format!("({a} - {b})"),
        format!("({a} * {b})"),
        format!("(f32.max {a} {b})"),
        format!("(f32.min {a} {b})"),
        format!("(f32.exp (f32.min {a} 3))"),
        format!("(if {a} > {b} then {a} else -{b})"),
        format!("(f32.abs {a})"),
    ];
    let k = choices.next().unwrap_or(0) % forms.len() as u64;
    forms[k as usize].clone()
}

/// A random fold of the row `row` through a random elementwise function.
fn fold(choices: &mut impl Iterator<Item = u64>, row: &str) -> String {
    let f = elementwise(choices, "x", 2);
    let ops = ["f32.sum", "f32.maximum", "f32.minimum", "f32.product"];
    let op = ops[(choices.next().unwrap_or(0) % 4) as usize];
    format!("{op} (map (\\x -> {f}) {row})")
}

/// Random row lambdas (folds of elementwise functions combined, a map of the row by a
/// fold's value, or the row with its first element past a fold's value replaced, returned
/// as rows) on random data with special values, run natively and
/// on the evaluator: the same numbers (within rounding: sums left to the scalar loop are
/// reassociated, `exp` is a polynomial in the lanes). Most of them must take the lanes.
#[test]
fn random_row_lambdas_agree_with_the_evaluator() {
    let mut seeds = 0x9e37_79b9_7f4a_7c15u64..;
    let mut took = 0;
    let programs = 60;
    for case in 0..programs {
        let mut choices = std::iter::repeat_with(|| {
            let mut x = seeds
                .next()
                .unwrap_or(1)
                .wrapping_mul(0x2545_f491_4f6c_dd1d);
            x ^= x >> 29;
            x
        });
        let (f1, f2) = (fold(&mut choices, "r"), fold(&mut choices, "r"));
        let g = elementwise(&mut choices, "y", 1);
        let h = elementwise(&mut choices, "x", 1);
        let body = match case % 4 {
            0 => format!("let s = {f1} in {f2} + s * k"),
            1 => format!("let s = {f1} in if s > k then {f2} else s"),
            2 => format!("let s = {f1} in map (\\y -> {g} - s) r"),
            // The first element where `h` passes `s`, replaced by `f2` (an `i64` fold
            // over an `iota`, a row from an `if`, an update at each lane's index).
            _ => format!(
                "let s = {f1} \
                 let j = reduce_comm i64.min i64.highest \
                           (map2 (\\x i -> if {h} > s then i else i64.highest) r (iota m)) \
                 in if j < m then copy r with [j] = {f2} else map (\\y -> {g}) r"
            ),
        };
        let ret = if case % 4 >= 2 { "[n][m]f32" } else { "[n]f32" };
        let src = format!(
            "entry main [n][m] (a: [n][m]f32) (s: [n]f32) : {ret} = map2 (\\r k -> {body}) a s"
        );
        let c = compile(&src);
        let how: Vec<String> = (c.native.explain().iter())
            .filter(|r| r.depth == 0)
            .map(|r| r.how.clone())
            .collect();
        took += how.iter().any(|h| h.contains("a row per SIMD lane")) as usize;
        let specials = [
            "0.5f32", "-1f32", "2f32", "0f32", "-0f32", "f32.nan", "f32.inf",
        ];
        for (n, m) in [(9, 10), (4, 32), (5, 1), (6, 33), (0, 3), (3, 0)] {
            let a = match (n, m) {
                (0, _) | (_, 0) => format!("empty([{n}][{m}]f32)"),
                _ if case % 5 == 3 => picked_matrix(n, m, &specials, case as u64 + 1),
                _ => matrix(n, m, "f32", (case * 100 + n * 10 + m) as u64),
            };
            let s = match n {
                0 => "empty([0]f32)".to_string(),
                _ => floats(n, "f32", case as u64 + 7),
            };
            let input = format!("{a} {s}");
            let native = numbers(&c, "main", &input, true);
            let evaluator = numbers(&c, "main", &input, false);
            assert_near(&native, &evaluator, 1e-3, &format!("{src}\n{input}"));
        }
    }
    if simd_on() {
        assert!(
            took * 2 >= programs,
            "only {took} of {programs} took the row lanes"
        );
    }
}

const ROW_UPDATES: &str = "
def lse32 [m] (r: [m]f32) : f32 =
  let mx = f32.maximum r in mx + f32.log (f32.sum (map (\\x -> f32.exp (x - mx)) r))
def lse64 [m] (r: [m]f64) : f64 =
  let mx = f64.maximum r in mx + f64.log (f64.sum (map (\\x -> f64.exp (x - mx)) r))
entry xent_grad [n][m] (z: [n][m]f32) (ls: [n]i64) : [n][m]f32 =
  vjp (\\z -> f32.sum (map2 (\\r l -> lse32 r - r[l]) z ls)) z 1
entry xent_grad64 [n][m] (z: [n][m]f64) (ls: [n]i64) : [n][m]f64 =
  vjp (\\z -> f64.sum (map2 (\\r l -> lse64 r - r[l]) z ls)) z 1
entry onehot [n][m] (a: [n][m]f32) (ls: [n]i64) : [n][m]f32 =
  map2 (\\r l -> map2 (+) r (replicate m 0f32 with [l] = 1)) a ls
entry zero_max [n][m] (a: [n][m]f64) (lim: i64) : [n][m]f64 =
  map (\\r -> let mx = f64.maximum r
             let k = reduce_comm i64.min i64.highest
                       (map2 (\\x i -> if x == mx then i else i64.highest) r (iota m))
             in if k < lim then copy r with [k] = 0 else r) a
entry zero_max32 [n][m] (a: [n][m]f32) (lim: i64) : [n][m]f32 =
  map (\\r -> let mx = f32.maximum r
             let k = reduce_comm i64.min i64.highest
                       (map2 (\\x i -> if x == mx then i else i64.highest) r (iota m))
             in if k < lim then copy r with [k] = 0 else r) a
entry guarded [n][m] (a: [n][m]f32) (ks: [n]i64) : [n][m]f32 =
  map2 (\\r k -> if k >= 0 then copy r with [k] = r[k] * 2 else map (+ 1) r) a ks
entry far [n][m] (a: [n][m]f32) (ks: [n]i64) : [n][m]f32 =
  map2 (\\r k -> let j = if r[0] > 0 then k else 0
                 in if j < m then copy r with [j] = 5 else r) a ks
entry two_ends [n][m] (a: [n][m]f32) : [n][m]f32 =
  map (\\r -> let k = reduce_comm i64.min i64.highest
                       (map2 (\\x i -> if x > 0 then i else i64.highest) r (iota m))
             in if k == 9223372036854775806 then map (+ 1) r else map (+ 2) r) a
";

/// Row lambdas with what a softmax cross-entropy's gradient needs run a row per lane too:
/// a row replaced at one index per lane (`with`, from a `replicate` or a copy), `if`s
/// whose results are rows or `i64`s, and `i64` reductions over an `iota` (the arg-max
/// the adjoint of `maximum` finds), in `i32` lanes beside `f32` rows. Their results are the
/// scalar code's; an index outside its row, or a free size beyond `i32` in `i32` lanes,
/// sends the group to the scalar code (which reports the first, and decides the second
/// as it always does); two constants that `i32` lanes would not tell apart keep the
/// scalar code.
#[test]
fn row_updates_branches_and_integer_folds_run_a_row_per_lane() {
    let c = compile(ROW_UPDATES);
    let how = |e: &str| -> String {
        let rows = c.native.explain();
        (rows.iter().filter(|r| r.entry == e && r.depth == 0))
            .map(|r| r.how.clone())
            .collect::<Vec<_>>()
            .join("; ")
    };
    let lanes = simd_on();
    for e in [
        "xent_grad",
        "xent_grad64",
        "onehot",
        "zero_max",
        "zero_max32",
        "guarded",
        "far",
    ] {
        assert_eq!(
            how(e).contains("a row per SIMD lane"),
            lanes,
            "{e}: {}",
            how(e)
        );
    }
    assert!(
        !how("two_ends").contains("a row per SIMD lane"),
        "{}",
        how("two_ends")
    );
    let near = |e: &str, input: &str, rel: f64| {
        let native = numbers(&c, e, input, true);
        assert_near(&native, &numbers(&c, e, input, false), rel, e);
    };
    let specials = [
        "0f32", "-0f32", "1f32", "-1f32", "2.5f32", "f32.nan", "-f32.inf",
    ];
    for n in [1, 3, 4, 5, 9, 33] {
        for m in [1, 4, 10, 32, 33] {
            let a32 = matrix(n, m, "f32", (n * 40 + m) as u64);
            let a64 = a32.replace("f32", "f64");
            let ks = |first: usize| {
                let ks: Vec<String> = (0..n)
                    .map(|i| format!("{}i64", if i == 0 { first } else { (i * 7 + 3) % m }))
                    .collect();
                format!("[{}]", ks.join(", "))
            };
            near("xent_grad", &format!("{a32} {}", ks(m - 1)), 1e-5);
            near("xent_grad64", &format!("{a64} {}", ks(0)), 1e-13);
            c.agree("onehot", &format!("{a32} {}", ks(m - 1)), true);
            c.agree_message("onehot", &format!("{a32} {}", ks(m)));
            c.agree_message("xent_grad", &format!("{a32} {}", ks(m + 5)));
            for lim in [0, 3, m as i64, 1 << 40, -(1 << 40)] {
                c.agree("zero_max", &format!("{a64} {lim}i64"), true);
                c.agree("zero_max32", &format!("{a32} {lim}i64"), true);
            }
            let special = picked_matrix(n, m, &specials, (n + m) as u64);
            c.agree("zero_max32", &format!("{special} {m}i64"), true);
            c.agree("two_ends", &special, true);
            near("xent_grad", &format!("{special} {}", ks(0)), 1e-5);
        }
    }
    // Updates guarded by an `if`: `-1` (not taken) in most rows, an index outside the row
    // where the branch is taken fails as the scalar code fails.
    for (n, m) in [(9, 10), (33, 4), (5, 32)] {
        let a = matrix(n, m, "f32", n as u64);
        // Every third row an index, the others `-1`; the last row `last`.
        let ks = |last: String| {
            let mut ks: Vec<String> = (0..n)
                .map(|i| match i % 3 {
                    0 => format!("{}i64", i % m),
                    _ => "-1i64".to_string(),
                })
                .collect();
            ks[n - 1] = last;
            format!("[{}]", ks.join(", "))
        };
        c.agree("guarded", &format!("{a} {}", ks("-1i64".into())), true);
        c.agree_message("guarded", &format!("{a} {}", ks(format!("{m}i64"))));
    }
    // An `i64` parameter beyond `i32` in `i32` lanes, as the result of a branch taken (the
    // group goes to the scalar code: `j < m` is false there) and of one not taken.
    let a = "[[1f32, 2], [-1f32, 2], [3f32, 4], [-5f32, 6], [7f32, 8]]";
    for k in [1i64 << 32, -(1 << 32), 1 << 40] {
        let ks = format!("[{k}i64, 0i64, 1i64, {k}i64, {k}i64]");
        c.agree("far", &format!("{a} {ks}"), true);
    }
    let got = c.run(
        "far",
        &format!("{a} [4294967296i64, 0i64, 1i64, 0i64, 0i64]"),
    );
    let want = "[[1f32, 2], [5f32, 2], [3f32, 5], [5f32, 6], [5f32, 8]]";
    assert_eq!(got, common::values(want));
    // Rows without a positive element: `k` is `i64.highest`, not the constant below it.
    let got = c.run("two_ends", "[[-1f32, 0], [1f32, 2], [0f32, 0], [-2f32, 3]]");
    assert_eq!(
        got,
        common::values("[[1f32, 2], [3f32, 4], [2f32, 2], [0f32, 5]]")
    );
}
