//! Native scans, histograms, scatters and accumulators (runic-jit kernels run by the
//! executor) against the evaluator (`RUNIC_JIT=0`) byte for byte, and against the
//! interpreter's results and error reports. Small inputs run as one chunk; inputs above
//! 16 384 elements are split across the workers, and their carries are combined in order
//! on both paths, so results stay bit-identical.

mod common;

use common::compile;
use common::data::{
    assert_near, cube, flat_numbers, floats, int_matrix, ints, matrix, numbers, picked_matrix,
};

const SCANS: &str = "
entry sq (xs: []f32) = scan (+) 0 (map (\\x -> x * x) xs)
entry mx (xs: []i64) = scan i64.max i64.lowest (map (\\x -> x % 1000 - 500) xs)
entry pair (xs: []f64) (ys: []i32) =
  unzip (scan (\\(a, i) (b, j) -> if a < b then (b, j) else (a, i)) (f64.lowest, -1)
              (zip xs ys))
entry mul (xs: []u8) = scan (*) 1u8 xs
entry idx (xs: []i64) (is: []i64) = scan (+) 0 (map (\\i -> xs[i] * 2) is)
entry dz (xs: []i32) (d: i32) = scan (+) 0 (map (\\x -> 100 / (x - d)) xs)
entry rows (m: [][]f32) = scan (+) 0 (map (\\r -> reduce (+) 0 r) m)
entry inner (m: [][]i32) = map (\\r -> scan (+) 0 r) m
entry inner2 (m: [][]f64) =
  map (\\r -> let s = scan (*) 1 (map (\\x -> x + 1) r) in reduce (+) 0 s + s[0]) m
entry innerix (m: [][]i32) (is: []i64) = map (\\r -> scan (+) 0 (map (\\i -> r[i]) is)) m
entry filt (xs: []i64) = filter (\\x -> x % 3 == 1) xs
";

#[test]
fn scans_run_native_and_agree() {
    let c = compile(SCANS);
    for e in [
        "sq", "mx", "pair", "mul", "idx", "dz", "rows", "inner", "inner2", "innerix", "filt",
    ] {
        c.assert_native(e);
    }
    let cases: &[(&str, &str)] = &[
        ("sq", "[1f32, 2, 3, -0.5]"),
        ("sq", "empty([0]f32)"),
        ("mx", "[3i64, 1700, -20, 999, 4]"),
        ("pair", "[1f64, 3, 2, 3, 5] [10, 11, 12, 13, 14]"),
        ("mul", "[2u8, 3, 200, 7]"),
        ("idx", "[5i64, 6, 7] [2i64, 0, 1, 1]"),
        // An index out of bounds inside the native scan: the interpreter's message and
        // location.
        ("idx", "[5i64, 6, 7] [2i64, 0, 3, 1]"),
        ("idx", "[5i64, 6, 7] [2i64, -1]"),
        ("dz", "[1, 2, 4] 3"),
        ("dz", "[1, 2, 3, 4] 3"),
        ("rows", "[[1f32, 2], [3, 4], [5, 6]]"),
        ("inner", "[[1, 2, 3], [4, 5, 6]]"),
        ("inner2", "[[1f64, 2, 3], [0.5, 0.25, 2]]"),
        ("innerix", "[[1, 2, 3], [4, 5, 6]] [2i64, 2, 0]"),
        ("innerix", "[[1, 2, 3], [4, 5, 6]] [2i64, 3]"),
        ("filt", "[1i64, 4, 7, 2, 10, 3]"),
    ];
    for (e, input) in cases {
        c.agree(e, input, true);
    }
    // (The interpreter gives an empty result of rows the shape [0][0], a known difference
    // of the backends with native code off too.)
    c.agree("inner", "empty([0][4]i32)", false);
    // Several chunks: the carries of the chunks combine in order on both paths.
    let n = 50_000;
    c.agree("sq", &floats(n, "f32", 7), false);
    c.agree("mx", &ints(n, 1 << 40, "i64", 3), false);
    c.agree(
        "pair",
        &format!("{} {}", floats(n, "f64", 5), ints(n, 1000, "i32", 9)),
        false,
    );
    c.agree("mul", &ints(n, 256, "u8", 11), false);
    c.agree(
        "idx",
        &format!("{} {}", ints(100, 1000, "i64", 2), ints(n, 100, "i64", 4)),
        false,
    );
    // A failure in a later chunk: the evaluator's report.
    let mut is: Vec<String> = (0..n).map(|k| format!("{}i64", k % 100)).collect();
    is[40_000] = "100i64".into();
    c.agree(
        "idx",
        &format!("{} [{}]", ints(100, 1000, "i64", 2), is.join(", ")),
        true,
    );
    c.agree("filt", &ints(n, 1000, "i64", 13), false);
}

#[test]
fn scan_values() {
    let c = compile(SCANS);
    let show = |e: &str, i: &str| {
        c.run(e, i)
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(show("sq", "[1f32, 2, 3]"), "[1.0f32, 5.0f32, 14.0f32]");
    assert_eq!(
        show("pair", "[1f64, 3, 2, 3, 5] [10, 11, 12, 13, 14]"),
        "[1.0f64, 3.0f64, 3.0f64, 3.0f64, 5.0f64] [10i32, 11i32, 11i32, 11i32, 14i32]"
    );
    assert_eq!(show("mul", "[2u8, 3, 200]"), "[2u8, 6u8, 176u8]");
    assert_eq!(
        show("inner", "[[1, 2, 3], [4, 5, 6]]"),
        "[[1i32, 3i32, 6i32],\n [4i32, 9i32, 15i32]]"
    );
    assert_eq!(
        show("filt", "[1i64, 4, 7, 2, 10, 3]"),
        "[1i64, 4i64, 7i64, 10i64]"
    );
}

const HISTS: &str = "
entry add (is: []i64) (vs: []f32) = hist (+) 0 1024 is vs
entry addi (is: []i32) (vs: []i64) = hist (+) 0 7 (map i64.i32 is) vs
entry mn (is: []i64) (vs: []f64) = hist f64.min f64.inf 5 is vs
entry arg (is: []i64) (vs: []f32) (js: []i32) =
  unzip (hist (\\(a, i) (b, j) -> if a < b || (a == b && i < j) then (a, i) else (b, j))
              (f32.inf, -1) 4 is (zip vs js))
entry dv (is: []i64) (vs: []i32) = hist (\\a b -> a / b + 1) 100 3 is vs
entry fr (is: []i64) (vs: []f32) (s: f32) (t: []f32) =
  hist (\\a b -> a * s + b * t[0]) 0 3 is vs
entry bad (is: []i64) (vs: []i64) (t: []i64) = hist (\\a b -> a + t[b]) 0 3 is vs
entry inner (m: [][]i64) = map (\\r -> hist (+) 0 4 (map (\\x -> x % 4) r) r) m
entry innermax (m: [][]f32) (is: []i64) = map (\\r -> hist f32.max f32.lowest 3 is r) m
entry sc (m: [][]i64) (is: []i64) = map (\\r -> scatter (copy r) is (map (* 10) r)) m
entry top (d: []f32) (is: []i64) (vs: []f32) = scatter (copy d) is vs
entry top2 (d: [][]u8) (is: []i32) (js: []i64) (vs: []u8) = scatter_2d (copy d) (zip (map i64.i32 is) js) vs
entry sc2 (m: [][]i32) (is: []i64) (js: []i64) =
  map (\\r -> let a = scatter (replicate 4 0) is r in scatter a js (map (+ 100) r)) m
";

#[test]
fn histograms_run_native_and_agree() {
    let c = compile(HISTS);
    for e in [
        "add", "addi", "mn", "arg", "dv", "fr", "bad", "inner", "innermax", "sc", "sc2", "top",
        "top2",
    ] {
        c.assert_native(e);
    }
    let cases: &[(&str, &str)] = &[
        ("add", "[1i64, 1023, 1, 5000, -1, 0] [1f32, 2, 3, 4, 5, 6]"),
        ("addi", "[1, 6, 1, 9, -1, 0] [1i64, 2, 3, 4, 5, 6]"),
        ("mn", "[1i64, 4, 1, 5, 0, 4] [3f64, -2, 1, 7, 8, -2.5]"),
        (
            "arg",
            "[0i64, 1, 0, 3, 3] [2f32, 1, 2, 5, 4] [7, 8, 6, 9, 10]",
        ),
        ("dv", "[0i64, 1, 0, 2] [3, 7, 2, -5]"),
        // Division by zero in the operator: the evaluator's report.
        ("dv", "[0i64, 1, 0, 2] [3, 7, 0, -5]"),
        ("fr", "[0i64, 1, 2, 0] [1f32, 2, 3, 4] 0.5f32 [2f32]"),
        ("fr", "[0i64, 1] [1f32, 2] 0.5f32 empty([0]f32)"),
        ("bad", "[0i64, 1, 2] [0i64, 1, 2] [10i64, 20, 30]"),
        // An index out of bounds inside the native histogram's operator.
        ("bad", "[0i64, 1, 2] [0i64, 3, 2] [10i64, 20, 30]"),
        ("inner", "[[1i64, 2, 5, 7], [4, 8, 3, 3]]"),
        ("innermax", "[[1f32, 2, 5], [4, 8, -3]] [0i64, 2, 0]"),
        ("sc", "[[1i64, 2, 3], [4, 5, 6]] [2i64, -1, 0]"),
        ("sc2", "[[1, 2, 3], [4, 5, 6]] [3i64, 0, 9] [1i64, 1, 2]"),
        (
            "top",
            "[1f32, 2, 3] [2i64, -1, 0, 2, 3] [10f32, 20, 30, 40, 50]",
        ),
        (
            "top2",
            "[[1u8, 2], [3, 4]] [1, 0, 1, 2] [0i64, 1, 0, 0] [7u8, 8, 9, 10]",
        ),
    ];
    for (e, input) in cases {
        c.agree(e, input, true);
    }
    // Index and value arrays of different sizes: both ir paths give the same (internal)
    // error, the interpreter a shape error — a difference of the backends with native
    // code off too.
    c.agree("innermax", "[[1f32, 2, 5], [4, 8, -3]] [0i64, 2]", false);
    // Large inputs: private histograms (+, few bins) and ranges of bins (any operator).
    let n = 100_000;
    c.agree(
        "add",
        &format!("{} {}", ints(n, 1100, "i64", 3), floats(n, "f32", 5)),
        false,
    );
    c.agree(
        "addi",
        &format!("{} {}", ints(n, 8, "i32", 7), ints(n, 1 << 50, "i64", 9)),
        false,
    );
    c.agree(
        "mn",
        &format!("{} {}", ints(n, 6, "i64", 1), floats(n, "f64", 2)),
        false,
    );
    c.agree(
        "arg",
        &format!(
            "{} {} {}",
            ints(n, 4, "i64", 4),
            floats(n, "f32", 6),
            ints(n, 1000, "i32", 8)
        ),
        false,
    );
    // Scatter over bin ranges, duplicates written in input order.
    c.agree(
        "top",
        &format!(
            "{} {} {}",
            floats(5000, "f32", 1),
            ints(n, 6000, "i64", 2),
            floats(n, "f32", 3)
        ),
        false,
    );
    let mut vs: Vec<String> = (0..n).map(|k| format!("{}i32", k % 7 + 1)).collect();
    vs[70_000] = "0i32".into();
    c.agree(
        "dv",
        &format!("{} [{}]", ints(n, 3, "i64", 12), vs.join(", ")),
        true,
    );
}

#[test]
fn histogram_values() {
    let c = compile(HISTS);
    let show = |e: &str, i: &str| {
        c.run(e, i)
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(
        show("mn", "[1i64, 4, 1, 5, 0, 4] [3f64, -2, 1, 7, 8, -2.5]"),
        "[8.0f64, 1.0f64, f64.inf, f64.inf, -2.5f64]"
    );
    assert_eq!(
        show("dv", "[0i64, 1, 0, 2] [3, 7, 2, -5]"),
        "[18i32, 15i32, -19i32]"
    );
    assert_eq!(
        show("sc2", "[[1, 2, 3]] [3i64, 0, 9] [1i64, 1, 2]"),
        "[[2i32, 102i32, 103i32, 1i32]]"
    );
}

const ACCS: &str = "
entry gather (xs: []f64) (is: []i64) (s: []f64) =
  vjp (\\xs -> map (\\i -> xs[i] * xs[i]) is) xs s
entry gather2 (xs: [][]f32) (is: []i64) (s: []f32) =
  vjp (\\xs -> map (\\i -> xs[i, 0] * xs[i, 1] + xs[0, i % 2]) is) xs s
entry conv (xs: []f64) (w: []f64) (s: []f64) =
  let n = length xs
  in vjp (\\(xs, w) -> map (\\i -> reduce (+) 0 (map (\\k -> xs[(i + k) % n] * w[k]) (iota 3)))
                          (iota n)) (xs, w) s
entry branchy (xs: []f64) (is: []i64) (s: []f64) =
  vjp (\\xs -> map (\\i -> if i % 2 == 0 then xs[i / 2] * 3 else f64.sin xs[i % 3]) is) xs s
";

#[test]
fn accumulators_run_native_and_agree() {
    let c = compile(ACCS);
    for e in ["gather", "gather2", "conv", "branchy"] {
        c.assert_native(e);
    }
    let cases: &[(&str, &str)] = &[
        (
            "gather",
            "[1f64, 2, 3] [2i64, 0, 2, 1] [1f64, 10, 100, 1000]",
        ),
        (
            "gather2",
            "[[1f32, 2], [3, 4], [5, 6]] [2i64, 0, 1] [1f32, 2, 3]",
        ),
        ("conv", "[1f64, 2, 3, 4] [0.5f64, -1, 2] [1f64, 1, 2, 3]"),
        (
            "branchy",
            "[1f64, 2, 3] [0i64, 1, 2, 3, 4, 5] [1f64, 2, 3, 4, 5, 6]",
        ),
    ];
    for (e, input) in cases {
        c.agree(e, input, true);
    }
    // An index out of bounds inside the native map that updates the accumulator.
    c.agree_message(
        "gather",
        "[1f64, 2, 3] [2i64, 0, 3, 1] [1f64, 10, 100, 1000]",
    );
    c.agree_message("gather2", "[[1f32, 2], [3, 4]] [2i64, 0] [1f32, 2]");
    // Large maps: private copies per worker, merged in order. The evaluator's own
    // parallel updates land in timing-dependent order, so floats are compared within a
    // relative 1e-9.
    let n = 60_000;
    let xs = floats(2_000, "f64", 3);
    let is = ints(n, 2_000, "i64", 5);
    let s = floats(n, "f64", 7);
    let input = format!("{xs} {is} {s}");
    let (a, b) = (
        numbers(&c, "gather", &input, true),
        numbers(&c, "gather", &input, false),
    );
    assert_near(&a, &b, 1e-9, "gather");
    // Deterministic on native code: the same bits every run.
    assert_eq!(
        c.agree_native_runs("gather", &input),
        c.agree_native_runs("gather", &input)
    );
}

const INPLACE: &str = "
entry upd (m: [][]i32) (i: i64) = map (\\r -> copy r with [i] = 99) m
entry fill (ns: []i64) =
  map (\\n -> let a = loop a = replicate 5 0i64 for i < n do a with [i % 5] = a[i % 5] + i
             in reduce (+) 0 a * 10 + a[0]) ns
entry swap (xs: []i32) =
  map (\\x -> let (a, b) = loop (a, b) = (replicate 3 x, replicate 3 (x + 1)) for i < 4 do
                            (copy b with [i % 3] = i, a)
             in a[0] * 1000 + a[1] * 100 + b[2] * 10 + b[0]) xs
entry rows (m: [][]f64) =
  map (\\r -> let acc = loop acc = r for i < 3 do map (\\x -> x * 2 + f64.i64 i) acc
             in acc) m
entry sizes (m: [][]i64) = map (\\r -> length r + r[length r - 1]) m
entry keep (xs: []i32) =
  map (\\x -> let a = replicate 3 x in let b = copy a with [0] = 1 in let r = a[1:] in
             let c = copy (if x > 0 then a else b) with [2] = 7 in a[0] * 1000 + b[0] * 100 + r[0] * 10 + c[2]) xs
entry wl (xs: []i64) =
  map (\\x -> let (_, a) = loop (k, a) = (x, replicate 2 0i64) while k > 0 do
                           (k / 2, a with [k % 2] = a[k % 2] + 1)
             in a[0] * 10 + a[1]) xs
entry branchy (ns: []i64) =
  map (\\n -> let a = loop a = replicate 4 0i64 for i < n do
                         if i % 3 == 0 then a with [i % 4] = a[i % 4] + i
                         else if i % 3 == 1 then a
                         else a with [(i + 1) % 4] = 7
             in a[0] * 1000 + a[1] * 100 + a[2] * 10 + a[3]) ns
";

#[test]
fn in_place_updates_and_array_loops_run_native_and_agree() {
    let c = compile(INPLACE);
    for e in [
        "upd", "fill", "swap", "rows", "sizes", "wl", "keep", "branchy",
    ] {
        c.assert_native(e);
    }
    let cases: &[(&str, &str)] = &[
        ("upd", "[[1, 2, 3], [4, 5, 6]] 1i64"),
        // An update out of bounds: the interpreter's message and location.
        ("upd", "[[1, 2, 3], [4, 5, 6]] 3i64"),
        ("fill", "[0i64, 1, 4, 7, 12]"),
        ("swap", "[1, 5, -3]"),
        ("rows", "[[1f64, 2], [0.5, -1]]"),
        ("sizes", "[[1i64, 2, 3], [4, 5, 6]]"),
        ("wl", "[0i64, 1, 6, 255, 1024]"),
        // Arrays read after an update of them, or through views and aliases, are not
        // updated in place.
        ("keep", "[5, -2]"),
        // A loop parameter updated in either branch of an `if` (each branch may consume
        // it: only one runs), or returned unchanged by one.
        ("branchy", "[0i64, 1, 2, 3, 7, 12]"),
    ];
    for (e, input) in cases {
        c.agree(e, input, true);
    }
    // Several chunks.
    c.agree("fill", &ints(40_000, 100, "i64", 3), false);
    c.agree("swap", &ints(40_000, 100, "i32", 5), false);
    let show = |e: &str, i: &str| {
        c.run(e, i)
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    // a = [0+5, 1+6, 2, 3, 4] for n = 7: sum 21, a[0] = 5.
    assert_eq!(show("fill", "[7i64]"), "[215i64]");
    // Iterations: (a, b) = ([x;3], [x+1;3]) → ([0,x+1,x+1], [x;3]) → ([x,1,x], [0,x+1,x+1])
    //   → ([0,x+1,2], [x,1,x]) → ([3,1,x], [0,x+1,2]); x = 5: 3*1000 + 1*100 + 2*10 + 0.
    assert_eq!(show("swap", "[5]"), "[3120i32]");
    // x = 5: a = [5, 5, 5], b = [1, 5, 5], r = [5, 5], c = a with [2] = 7.
    assert_eq!(show("keep", "[5]"), "[5157i32]");
    // n = 7: i = 0 → a[0] += 0; 2 → a[3] = 7; 3 → a[3] += 3 (10); 5 → a[2] = 7;
    // 6 → a[2] += 6 (13): a = [0, 0, 13, 10].
    assert_eq!(show("branchy", "[7i64]"), "[140i64]");
}

const ARRAY_OPS: &str = "
entry ranges (ns: []i32) = map (\\n -> reduce (+) 0 (1 .. 3 ... n) * 100 + i32.i64 (length (n ..> 0))) ns
entry downs (ns: []u8) = unzip (map (\\n -> let r = n .. n - 2 ..> 0 in (length r, reduce (+) 0 r)) ns)
entry tr (ms: [][][]i32) = map (\\m -> let t = transpose m in t[0, 1] * 10 + t[1, 0]) ms
entry lit (m: [][]f32) = map (\\r -> let a = [r, map (* 2) r] in a[1, 0] + a[0, 1]) m
";

#[test]
fn ranges_transpositions_and_literals_run_native_and_agree() {
    let c = compile(ARRAY_OPS);
    for e in ["ranges", "downs", "tr", "lit"] {
        c.assert_native(e);
    }
    let cases: &[(&str, &str)] = &[
        ("ranges", "[1, 3, 4, 9]"),
        // An invalid range inside the kernel: the interpreter's message and location.
        ("ranges", "[3, 0]"),
        ("downs", "[9u8, 4, 255]"),
        ("tr", "[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]"),
        ("tr", "[[[1, 2, 3]]]"),
        ("lit", "[[1f32, 2], [3, 4]]"),
    ];
    for (e, input) in cases {
        c.agree(e, input, true);
    }
}

const VECTOR_OPS: &str = "
entry vsum (m: [][]f32) = reduce (map2 (+)) (replicate 3 0) m
entry vmax (m: [][]i64) = reduce (\\a b -> map2 i64.max a b) (replicate 2 i64.lowest) (map (map (* 2)) m)
entry vscan (m: [][]i32) = scan (map2 (+)) (replicate 2 0) m
entry swapper (m: [][]i32) = reduce (\\a b -> if a[0] < b[0] then b else a) [0, 0] m
entry pairs (m: [][]f64) (xs: []f64) =
  reduce (\\(a, s) (b, t) -> (map2 (+) a b, s + t)) (replicate 2 0, 0) (zip m xs)
";

#[test]
fn vectorised_operators_run_native_and_agree() {
    let c = compile(VECTOR_OPS);
    for e in ["vsum", "vmax", "vscan", "swapper", "pairs"] {
        c.assert_native(e);
    }
    let cases: &[(&str, &str)] = &[
        ("vsum", "[[1f32, 2, 3], [4, 5, 6.5]]"),
        ("vsum", "empty([0][3]f32)"),
        ("vmax", "[[1i64, -2], [4, -5], [0, 7]]"),
        ("vscan", "[[1, 2], [3, 4], [5, 6]]"),
        ("swapper", "[[1, 2], [5, 0], [3, 9]]"),
        ("pairs", "[[1f64, 2], [3, 4]] [0.5f64, 0.25]"),
    ];
    for (e, input) in cases {
        c.agree(e, input, true);
    }
    // Rows of another size than the neutral element: both ir paths give the same
    // (internal) error, the interpreter a shape error — a difference of the backends with
    // native code off too.
    c.agree("vsum", "[[1f32, 2], [4, 5]]", false);
    // Several chunks: per-chunk accumulators combined in order.
    let rows = |n: usize, k: usize, t: &str| {
        let xs: Vec<String> = (0..n)
            .map(|i| {
                let r: Vec<String> = (0..k)
                    .map(|j| format!("{}{t}", (i * 7 + j * 13) % 100))
                    .collect();
                format!("[{}]", r.join(", "))
            })
            .collect();
        format!("[{}]", xs.join(", "))
    };
    c.agree("vscan", &rows(40_000, 2, "i32"), false);
    c.agree("vmax", &rows(40_000, 2, "i64"), false);
    c.agree("vsum", &rows(40_000, 3, "f32"), false);
}

const ROW_HISTS: &str = "
entry vh (is: []i64) (m: [][]f32) = hist (map2 (+)) (replicate 2 0) 3 is m
entry vmx (is: []i64) (m: [][]i32) = hist (\\a b -> if a[0] > b[0] then a else b) [-1, -1] 2 is m
entry mixed (is: []i64) (m: [][]f64) (xs: []f64) =
  unzip (hist (\\(a, s) (b, t) -> (map2 (*) a b, s + t)) (replicate 2 1, 0) 2 is (zip m xs))
entry wide [k] (is: []i64) (m: [][k]f64) = hist (map2 (\\x y -> x * 0.5 + y)) (replicate k 0) 50 is m
";

#[test]
fn histograms_of_rows_run_native_and_agree() {
    let c = compile(ROW_HISTS);
    for e in ["vh", "vmx", "mixed", "wide"] {
        c.assert_native(e);
    }
    let cases: &[(&str, &str)] = &[
        (
            "vh",
            "[0i64, 2, 0, 5, -1, 1] [[1f32, 2], [3, 4], [5, 6], [7, 8], [9, 10], [11, 12]]",
        ),
        ("vmx", "[0i64, 1, 0, 1] [[1, 2], [3, 4], [5, 0], [2, 9]]"),
        (
            "mixed",
            "[0i64, 1, 0] [[1f64, 2], [3, 4], [0.5, 0.25]] [1f64, 2, 3]",
        ),
    ];
    for (e, input) in cases {
        c.agree(e, input, true);
    }
    let n = 30_000;
    let rows: Vec<String> = (0..n)
        .map(|i| format!("[{}i32, {}i32]", i % 97, (i * 31) % 89))
        .collect();
    c.agree(
        "vmx",
        &format!("{} [{}]", ints(n, 3, "i64", 5), rows.join(", ")),
        false,
    );
    // Elementwise operators write over the bin's row: rows of 64, enough of them to split
    // the bins between workers, indices out of range included.
    let wide = format!("{} {}", ints(600, 53, "i64", 6), matrix(600, 64, "f64", 7));
    c.agree("wide", &wide, true);
    c.agree(
        "vh",
        &format!("{} {}", ints(600, 4, "i64", 8), matrix(600, 64, "f32", 9)),
        true,
    );
    let small = c.run(
        "wide",
        "[0i64, 1, 0, 0] [[1f64, 2], [3, 4], [5, 6], [7, 8]]",
    );
    // Bin 0: ((0·0.5 + 1)·0.5 + 5)·0.5 + 7 = 9.75 and ((0 + 2)·0.5 + 6)·0.5 + 8 = 11.5.
    let got = small[0].to_string().replace(['\n', ' '], "");
    assert!(
        got.starts_with("[[9.75f64,11.5f64],[3.0f64,4.0f64],[0.0f64"),
        "{got}"
    );
}

// Accumulators made inside a map's lambda (the reverse sweep of a `vjp` per row), and
// reshapes and concatenations of arrays in kernels.
const KERNEL_ACCS: &str = "
entry gathgrad (m: [][]f64) (is: []i64) =
  map (\\r -> vjp (\\v -> f64.sum (map (\\i -> v[i] * v[i]) is)) r 1) m
entry tri [k] (qs: [k][]f64) (ls: [k][]f64) =
  unzip (map2 (\\q l -> let d = length q in
                 vjp (\\(q, l) -> f64.sum (flatten (tabulate_2d d d (\\i j ->
                                   if i == j then f64.exp q[i]
                                   else if j < i then l[i * (i - 1) / 2 + j] * f64.i64 j
                                   else 0))))
                     (q, l) 1) qs ls)
entry maxgrad (m: [][]f32) = map (\\r -> vjp (\\v -> f32.maximum (map (\\x -> x * x) v)) r 1) m
entry unflat [n] (m: [][n]i32) (a: i64) (b: i64) =
  map (\\(r: [n]i32) -> let t = unflatten (r :> [a * b]i32) in t[a - 1, 0] * 100 + t[0, b - 1]) m
entry flat_t (ms: [][][]i32) = map (\\m -> let f = flatten (transpose m) in f[1] * 10 + f[2]) ms
entry cat (m: [][]i64) (xs: []i64) =
  map (\\r -> let c = r ++ xs ++ [r[0]] in reduce (+) 0 c * 100 + c[length r]) m
entry cat_rows (ms: [][][]f32) (m: [][]f32) =
  map (\\a -> let c = transpose (transpose a ++ transpose m) in c[0, length a[0]] + c[1, 0]) ms
entry cat_size [n] (m: [][n]i32) = map (\\(r: [n]i32) -> (r ++ r[1:]) :> [n]i32) m
";

#[test]
fn accumulators_reshapes_and_concatenations_in_kernels_run_native_and_agree() {
    let c = compile(KERNEL_ACCS);
    for e in [
        "gathgrad", "tri", "maxgrad", "unflat", "flat_t", "cat", "cat_rows", "cat_size",
    ] {
        c.assert_native(e);
    }
    let cases: &[(&str, &str)] = &[
        ("gathgrad", "[[1f64, 2, 3], [4, 5, 6]] [0i64, 2, 2, 1]"),
        // An index out of bounds in the primal of the per-row gradient.
        ("gathgrad", "[[1f64, 2, 3], [4, 5, 6]] [0i64, 3]"),
        (
            "tri",
            "[[0.5f64, 1, 2], [1, 1, 1]] [[1f64, 2, 3], [4, 5, 6]]",
        ),
        ("maxgrad", "[[1f32, -3, 2], [0.5, 0.25, 0]]"),
        (
            "unflat",
            "[[1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 12]] 2i64 3i64",
        ),
        ("unflat", "[[1, 2, 3, 4, 5, 6]] 3i64 2i64"),
        // An element count that does not match: unflatten's message.
        ("unflat", "[[1, 2, 3, 4, 5, 6]] 4i64 2i64"),
        (
            "flat_t",
            "[[[1, 2, 3], [4, 5, 6]], [[7, 8, 9], [10, 11, 12]]]",
        ),
        ("cat", "[[1i64, 2], [3, 4]] [10i64, 20, 30]"),
        ("cat", "[[1i64, 2], [3, 4]] empty([0]i64)"),
        ("cat_rows", "[[[1f32, 2], [3, 4]]] [[5f32], [6]]"),
        ("cat_size", "[[1, 2, 3], [4, 5, 6]]"),
        ("cat_size", "[[1], [4]]"),
    ];
    for (e, input) in cases {
        c.agree(e, input, true);
    }
    c.agree_message("gathgrad", "[[1f64, 2, 3], [4, 5, 6]] [0i64, 3]");
    c.agree_message("unflat", "[[1, 2, 3, 4, 5, 6]] 4i64 2i64");
    c.agree_message("cat_size", "[[1, 2, 3], [4, 5, 6]]");
    // By hand: d/dv Σ_i v[i]² over the indices [0, 2, 2, 1] is 2·v[i]·(times i occurs).
    let g = numbers(
        &c,
        "gathgrad",
        "[[1f64, 2, 3], [4, 5, 6]] [0i64, 2, 2, 1]",
        true,
    );
    assert_eq!(g, [2.0, 4.0, 12.0, 8.0, 10.0, 24.0]);
}

const COLUMNS: &str = "
entry cols [g][n][m] (a: [g][n][m]f32) : [g][m]f32 =
  map (\\x -> map (\\j -> f32.sum (map (\\i -> x[i, j]) (iota n))) (iota m)) a
entry gates [g][n][m] (a: [g][n][m]f64) : [n][m]f64 =
  map (\\r -> map (\\c -> reduce (+) 0 (map (\\k -> a[k, r, c]) (iota g))) (iota m)) (iota n)
entry maxes [n][m] (a: [n][m]i64) (w: [n]i64) : [2][m]i64 =
  map (\\s -> map (\\j -> reduce i64.max i64.lowest (map (\\i -> a[i, j] * w[i] + s) (iota n)))
                  (iota m))
      [0, 1]
entry shifted [n][m] (a: [n][m]f32) (d: i64) : [1][m]f32 =
  map (\\_ -> map (\\j -> f32.sum (map (\\i -> a[i, j + d]) (iota n))) (iota m)) [0]
entry picked [n][m] (a: [n][m]f32) (ks: [m]i64) (js: [m]i64) : [1][m]f32 =
  map (\\_ -> map (\\j -> let k = ks[js[j]] in f32.sum (map (\\i -> a[i, j] * f32.i64 k) (iota n)))
                  (iota m))
      [0]
entry tcols [n][m] (a: [n][m]f32) : [m]f32 =
  map (\\j -> f32.sum (map (\\i -> a[i, j]) (iota n))) (iota m)
entry trows [n][m] (a: [n][m]f32) : [m]f32 =
  map (\\j -> f32.sum (map (\\r -> r[j]) a)) (iota m)
entry tpicked [n][m] (a: [n][m]f64) (js: []i64) : []f64 =
  map (\\j -> f64.sum (map (\\i -> a[i, j] * f64.i64 i) (iota n))) js
entry maxf [n][m] (a: [n][m]f32) (s: [n]f32) : [1][m]f32 =
  map (\\_ -> map (\\j -> reduce f32.max (-f32.inf) (map (\\i -> a[i, j] * s[i]) (iota n)))
                  (iota m))
      [0]
entry wcols [n][m] (a: [n][m]f64) (v: []f64) : [m]f64 =
  map (\\j -> f64.sum (map (\\i -> let c = v[i] * 2 - 1 in a[i, j] * c + c) (iota n))) (iota m)
entry lsq_grad [n][m] (x: [n][m]f32) (y: [n]f32) (w: [m]f32) : [m]f32 =
  vjp (\\w -> f32.sum (map2 (\\xi yi -> let r = f32.sum (map2 (*) xi w) - yi in r * r) x y)) w 1
entry fixed [n] (a: [n][3]f32) (w: [3][5]f32) : [n][5]f32 =
  map (\\x -> map (\\j -> f32.maximum (map (\\l -> x[l] + w[l, j]) (iota 3))) (iota 5)) a
";

#[test]
fn column_reductions_run_native_and_agree() {
    let c = compile(COLUMNS);
    for e in [
        "cols", "gates", "maxes", "shifted", "maxf", "tcols", "trows", "tpicked", "wcols",
        "lsq_grad", "fixed",
    ] {
        c.assert_native(e);
        let swapped = c.native.explain().into_iter().filter(|r| r.entry == e);
        assert_eq!(
            swapped
                .filter(|r| r.how.contains("column reduction"))
                .count(),
            1,
            "{e}"
        );
    }
    c.agree("cols", &cube(3, 40, 17, "f32", 3), true);
    c.agree("cols", &cube(4, 1024, 24, "f32", 5), false);
    c.agree("gates", &cube(4, 6, 9, "f64", 7), true);
    c.agree("maxes", "[[1i64, -2, 3], [4, 5, -6]] [3i64, -1]", true);
    c.agree("maxes", "empty([0][3]i64) empty([0]i64)", true);
    c.agree("shifted", &format!("{} 0i64", matrix(8, 5, "f32", 9)), true);
    // An index past the rows' end: the slow path reports it, with the interpreter's message.
    c.agree("shifted", &format!("{} 1i64", matrix(8, 5, "f32", 9)), true);
    // No rows: no step of the reduction runs, but each element's own statements do, and
    // fail as they would.
    c.agree("picked", "empty([0][3]f32) [1i64, 0, 2] [0i64, 1, 5]", true);
    c.agree("picked", "empty([0][3]f32) [1i64, 0, 2] [0i64, 1, 2]", true);
    // Lanes where `max` chooses between 0 and -0 go to the scalar code.
    c.agree(
        "maxf",
        "[[0f32, -0, 1, -1, 0, 0, 2, 3, -0], [-0f32, 0, -1, 1, 0, -0, 1, 1, 1]] [1f32, -1]",
        true,
    );
    c.agree(
        "maxf",
        &format!("{} {}", matrix(30, 21, "f32", 4), floats(30, "f32", 6)),
        true,
    );
    // Top-level maps: a chunk of an iota runs in lanes; other indices, in any order and
    // out of bounds, one by one; wide maps are split across the workers (chunks that start
    // past 0).
    c.agree("tcols", &matrix(9, 37, "f32", 8), true);
    c.agree("tcols", &matrix(3, 40_000, "f32", 12), false);
    // The same sums with the rows as the reduction's own elements (`r[j]` of a row `r`,
    // bound step by step): its lanes once failed to compile.
    c.agree("trows", &matrix(9, 37, "f32", 8), true);
    c.agree("trows", "empty([0][5]f32)", true);
    assert_eq!(
        numbers(&c, "trows", "[[1f32, 2], [3, 4], [5, 6]]", true),
        vec![9.0, 12.0]
    );
    c.agree(
        "tpicked",
        &format!("{} [3i64, 0, 2, 2, 1]", matrix(5, 4, "f64", 3)),
        true,
    );
    c.agree(
        "tpicked",
        &format!("{} [0i64, 1, 2, 3]", matrix(5, 4, "f64", 3)),
        true,
    );
    c.agree(
        "tpicked",
        &format!("{} [1i64, 4]", matrix(5, 4, "f64", 3)),
        true,
    );
    // The sums are the same as a sequential sum down each column, in order.
    let got = numbers(&c, "cols", "[[[1f32, 2], [3, 4], [5, 6]]]", true);
    assert_eq!(got, vec![9.0, 12.0]);
    // A value per row (`v[i]`, the adjoint's `δ[i]` in `xᵀ·δ`) is computed once per step
    // and broadcast to the lanes: rows of every length around the vectors', and a row
    // past `v`'s end, which fails at the same step as in the scalar code, whether that
    // step is one of a group run together in lanes (steps 4..8, 8..12) or one of the
    // steps left after the groups (8, 9, 10 of 11 rows).
    for m in [1, 2, 3, 4, 5, 7, 8, 9, 33] {
        let a = matrix(11, m, "f64", m as u64);
        c.agree("wcols", &format!("{a} {}", floats(11, "f64", 3)), true);
        for short in [5, 9, 10] {
            c.agree_message("wcols", &format!("{a} {}", floats(short, "f64", 3)));
        }
        let a = matrix(12, m, "f64", m as u64);
        c.agree("wcols", &format!("{a} {}", floats(12, "f64", 3)), true);
        c.agree_message("wcols", &format!("{a} {}", floats(10, "f64", 3)));
        // The residuals' dot products are sums in lanes natively, so the gradient agrees
        // within rounding.
        let x = matrix(50, m, "f32", m as u64 + 1);
        let input = format!("{x} {} {}", floats(50, "f32", 4), floats(m, "f32", 5));
        let got = numbers(&c, "lsq_grad", &input, true);
        assert_eq!(got.len(), m);
        assert_near(
            &got,
            &numbers(&c, "lsq_grad", &input, false),
            1e-5,
            "lsq_grad",
        );
    }
    c.agree("wcols", "empty([0][5]f64) empty([0]f64)", true);
    // Sizes known at compile time: both `iota`s are hoisted out of the rows' lambda and
    // reach the kernel as free arrays, which its loops read as their counters.
    c.agree(
        "fixed",
        &format!("{} {}", matrix(7, 3, "f32", 2), matrix(3, 5, "f32", 5)),
        true,
    );
    let got = numbers(
        &c,
        "fixed",
        "[[0f32, 10, -5], [1, 1, 1]] [[1f32, 2, 3, 4, 5], [0, 0, 0, 0, 0], [20, 0, 0, 0, 0]]",
        true,
    );
    assert_eq!(
        got,
        vec![15.0, 10.0, 10.0, 10.0, 10.0, 21.0, 3.0, 4.0, 5.0, 6.0]
    );
    // By hand: c = 2v - 1 is [1, 3] for v = [1, 2]; column sums of a·c + c.
    let got = numbers(
        &c,
        "wcols",
        "[[1f64, 2, 3, 4, 5], [10, 20, 30, 40, 50]] [1f64, 2]",
        true,
    );
    assert_eq!(got, vec![35.0, 66.0, 97.0, 128.0, 159.0]);
    // 2·Σ_i (x_i·w − y_i)·x_i: residuals [1·1 + 2·1 − 1, 3 + 4 − 2] = [2, 5].
    let got = numbers(
        &c,
        "lsq_grad",
        "[[1f32, 2], [3, 4]] [1f32, 2] [1f32, 1]",
        true,
    );
    assert_eq!(got, vec![2.0 * (2.0 + 15.0), 2.0 * (4.0 + 20.0)]);
}

const ARRAY_FOLDS: &str = "
entry rowsum [n][m] (a: [n][m]f64) : [m]f64 = reduce_comm (map2 (+)) (replicate m 0) a
entry nested [n][k][m] (a: [n][k][m]f32) : [k][m]f32 =
  reduce (map2 (map2 (+))) (replicate k (replicate m 0)) a
entry shifted [n][m] (a: [n][m]i64) : [m]i64 =
  reduce (\\x y -> map (\\j -> x[(j + 1) % m] + y[j]) (iota m)) (replicate m 0) a
entry running [n][m] (a: [n][m]i32) : [n][m]i32 = scan (map2 (+)) (replicate m 0) a
entry maxes [n][m] (a: [n][m]f32) : [m]f32 =
  reduce (map2 (\\x y -> f32.max x (y * 2))) (replicate m (-f32.inf)) a
";

/// Folds and scans with array accumulators: an elementwise operator overwrites the
/// accumulator it reads (rows, nested rows, a scan's rows); one that reads the
/// accumulator elsewhere (a rotation) keeps a fresh array. Byte for byte against the
/// evaluator, and against the interpreter.
#[test]
fn array_accumulators_are_updated_in_place_when_elementwise() {
    let c = compile(ARRAY_FOLDS);
    for e in ["rowsum", "nested", "shifted", "running", "maxes"] {
        c.assert_native(e);
    }
    c.agree("rowsum", &matrix(7, 5, "f64", 1), true);
    c.agree("rowsum", &matrix(20_000, 3, "f64", 2), false);
    c.agree("nested", &cube(9, 3, 4, "f32", 3), true);
    c.agree("shifted", &int_matrix(6, 4, "i64", 4), true);
    c.agree("running", &int_matrix(8, 3, "i32", 5), true);
    c.agree("maxes", &matrix(10, 6, "f32", 6), true);
    let shifted = c.run("shifted", "[[1i64, 2, 3], [10, 20, 30]]");
    assert_eq!(shifted, common::values("[12i64, 23, 31]"));
    let running = c.run("running", "[[1i32, 2], [3, 4], [5, 6]]");
    assert_eq!(running, common::values("[[1i32, 2], [4, 6], [9, 12]]"));
}

const INNER_FOLDS: &str = "
entry rowmax [n][m] (a: [n][m]f32) : [n]f32 = map (\\r -> f32.maximum r) a
entry rowmin [n][m] (a: [n][m]f64) (s: f64) : [n]f64 =
  map (\\r -> reduce f64.min f64.inf (map (\\x -> x * s - 1) r)) a
entry colmax [n][m] (a: [n][m]f32) : [m]f32 = map (\\r -> f32.maximum r) (transpose a)
entry rowlse [n][m] (a: [n][m]f32) : [n]f32 =
  map (\\r -> let mx = f32.maximum r in mx + f32.log (f32.sum (map (\\x -> f32.exp (x - mx)) r))) a
entry rowsum [n][m] (a: [n][m]f32) : [n]f32 = map (\\r -> f32.sum r) a
entry tmax (xs: []f32) : f32 = reduce f32.max (-f32.inf) (map (\\x -> x * 2) xs)
entry firstmax [n][m] (a: [n][m]f32) : [n]i64 =
  map (\\r -> let mx = f32.maximum r
              in reduce_comm i64.min m (map2 (\\x j -> if x == mx then j else m) r (iota m))) a
entry ints [n][m] (a: [n][m]i32)
    : ([n]i32, [n]i32, [n]u8, [n]i32, [n]bool, [n]bool, [n]i32) =
  ( map (\\r -> i32.sum (map (\\x -> x * 3 - 7) r)) a
  , map (\\r -> reduce (^) 0 r) a
  , map (\\r -> reduce (*) 1u8 (map (\\x -> u8.i32 x + 1) r)) a
  , map (\\r -> reduce (&) (-1) (map (\\x -> x | 1) r)) a
  , map (\\r -> reduce (&&) true (map (\\x -> x % 5 != 0) r)) a
  , map (\\r -> reduce (||) false (map (\\x -> x == 7) r)) a
  , map (\\r -> reduce i32.max i32.lowest r) a )
";

/// Inner reductions (`+`, `min`, `max` over rows, with or without a mapped function) and
/// top-level `min`/`max` folds run in SIMD lanes first. `min` and `max` are exactly the
/// sequential fold's, byte for byte — NaNs, infinities, and `0` against `-0` (which sends
/// the row back to the scalar loop) included — for rows of every length around the
/// vectors' and in strided views; a sum is reassociated, so it agrees within rounding, and
/// shows its lanes on a row where the order matters.
#[test]
fn inner_folds_run_in_lanes() {
    let c = compile(INNER_FOLDS);
    // (`ints`' seven maps also run as parallel tasks, which `assert_native` counts.)
    for e in [
        "rowmax", "rowmin", "colmax", "rowlse", "rowsum", "tmax", "firstmax",
    ] {
        c.assert_native(e);
    }
    let specials = [
        "0f32", "-0f32", "1f32", "-1f32", "2.5f32", "f32.nan", "f32.inf", "-f32.inf",
    ];
    for m in [0, 1, 3, 7, 8, 9, 15, 16, 17, 31] {
        let plain = matrix(6, m.max(1), "f32", m as u64 + 1);
        let plain = if m == 0 {
            "empty([6][0]f32)".to_string()
        } else {
            plain
        };
        c.agree("rowmax", &plain, true);
        c.agree("colmax", &plain, true);
        let special = picked_matrix(40, m.max(1), &specials, m as u64 + 7);
        c.agree("rowmax", &special, true);
        c.agree("colmax", &special, true);
        let special64 = special.replace("f32", "f64");
        c.agree("rowmin", &format!("{special64} 2f64"), true);
        c.agree("rowmin", &format!("{special64} 0f64"), true);
    }
    // Only zeros of both signs: every row meets the choice and goes to the scalar loop.
    let zeros = picked_matrix(20, 12, &["0f32", "-0f32"], 5);
    c.agree("rowmax", &zeros, true);
    c.agree("rowmax", &picked_matrix(2, 9, &["f32.nan"], 1), true);
    c.agree("tmax", &floats(50_000, "f32", 3), false);
    let one_row = picked_matrix(1, 40_000, &specials, 9);
    c.agree("tmax", &one_row[1..one_row.len() - 1], false);
    for (e, input) in [
        ("rowlse", matrix(50, 37, "f32", 11)),
        ("rowsum", matrix(50, 37, "f32", 12)),
    ] {
        let native = numbers(&c, e, &input, true);
        assert_near(&native, &numbers(&c, e, &input, false), 1e-5, e);
    }
    // Integer and boolean folds (two chains, combined at the end), rows of every length
    // around the pairs, and the first position of a row's maximum: exactly as in order.
    for m in [1, 2, 3, 4, 5, 9, 16, 33] {
        c.agree(
            "firstmax",
            &picked_matrix(30, m, &specials, m as u64 + 3),
            true,
        );
        c.agree("ints", &int_matrix(25, m, "i32", m as u64 + 1), true);
    }
    c.agree("ints", "empty([3][0]i32)", true);
    let got = c.run("firstmax", "[[1f32, 3, 2, 3, 0], [-0f32, 0, -1, 0, -0]]");
    assert_eq!(got, common::values("[1i64, 0]"));
    let got = c.run("ints", "[[2i32, 7, 10, 4, 6]]");
    assert_eq!(
        got,
        common::values("[52i32] [13i32] [24u8] [1i32] [false] [true] [10i32]")
    );
    // 2²⁴ then 39 1s: in order, each 1 is lost to rounding (2²⁴ + 1 rounds to 2²⁴); in
    // lanes along the row (longer than 32, so not a row per lane, which sums in order) the
    // 1s add up first.
    let ones = ["1f32"; 39].join(", ");
    let row = format!("[[16777216f32, {ones}]]");
    assert_eq!(numbers(&c, "rowsum", &row, false), [16_777_216.0]);
    assert!(numbers(&c, "rowsum", &row, true)[0] > 16_777_216.0);
}

const ACC_ROWS: &str = "
def cost [n][k][d] (ps: [n][d]f32) (cs: [k][d]f32) : f32 =
  f32.sum (map (\\p -> f32.minimum (map (\\q -> f32.sum (map2 (\\x y -> (x - y) * (x - y)) p q)) cs)) ps)
entry grad [n][k][d] (ps: [n][d]f32) (cs: [k][d]f32) : [k][d]f32 = vjp (cost ps) cs 1
entry grad_t [n][k][d] (pst: [d][n]f32) (cs: [k][d]f32) : [k][d]f32 =
  vjp (cost (transpose pst)) cs 1
entry newton [n][k][d] (ps: [n][d]f32) (cs: [k][d]f32) =
  jvp2 (\\c -> vjp (cost ps) c 1) cs (replicate k (replicate d 1))
entry prefix [n][k][d] (ps: [n][]f64) (ts: [n]i64) (cs: [k][d]f64) (s: [n]f64) : [k][d]f64 =
  let m = length ps[0]
  in vjp (\\c -> map2 (\\p t -> f64.sum (map2 (*) p (c[t, :m] :> [m]f64))) ps ts) cs s
";

/// Native code and the evaluator give the same bytes, and the interpreter the same numbers
/// within a relative 1e-5 (it adds a gradient's contributions in another order).
fn agree_near_interpreter(c: &common::Compiled, e: &str, input: &str) {
    c.agree(e, input, false);
    let got = numbers(c, e, input, true);
    let interp = c.interp.call_entry(e, common::values(input));
    let want = flat_numbers(interp.expect("the interpreter runs it"));
    assert_near(&got, &want, 1e-5, e);
}

/// A nested map whose body ends in accumulator updates along a row (`acc[t, j] += v` for
/// each `j`: k-means' gradient, one or two accumulators, and the adjoint of a row's
/// prefix) adds its values to the row in SIMD lanes, then the scalar loop finishes it:
/// the same bytes as the evaluator and the interpreter for rows of every length around
/// the vectors', on rows shorter than the accumulator's, and on strided views (which keep
/// the scalar loop).
#[test]
fn accumulator_rows_are_updated_in_lanes() {
    let c = compile(ACC_ROWS);
    for e in ["grad", "grad_t", "newton", "prefix"] {
        c.assert_native(e);
    }
    for d in [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33] {
        let seed = d as u64;
        let ps = matrix(40, d, "f32", seed);
        let cs = matrix(5, d, "f32", seed + 1);
        agree_near_interpreter(&c, "grad", &format!("{ps} {cs}"));
        agree_near_interpreter(&c, "newton", &format!("{ps} {cs}"));
        let pst = matrix(d, 40, "f32", seed + 2);
        agree_near_interpreter(&c, "grad_t", &format!("{pst} {cs}"));
        let ps = matrix(30, d, "f64", seed + 3);
        let ts = ints(30, 4, "i64", seed + 4);
        let s = floats(30, "f64", seed + 5);
        for k in [d, d + 3] {
            let cs = matrix(4, k, "f64", seed + 6);
            agree_near_interpreter(&c, "prefix", &format!("{ps} {ts} {cs} {s}"));
        }
    }
    c.agree("grad", "empty([3][0]f32) empty([2][0]f32)", true);
    // By hand: one point [1, 2, 3, 4, 5] nearest to the centre 0 of [[0, 0, 0, 0, 0],
    // [9, 9, 9, 9, 9]] gives it -2·(p - c) = -2·p.
    let got = numbers(
        &c,
        "grad",
        "[[1f32, 2, 3, 4, 5]] [[0f32, 0, 0, 0, 0], [9f32, 9, 9, 9, 9]]",
        true,
    );
    assert_eq!(
        got,
        [-2.0, -4.0, -6.0, -8.0, -10.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    );
    // Each point adds s·p to row t's first m elements: rows 0 and 2 get [1, 2]·1 and
    // [3, 4]·10 + [5, 6]·100.
    let got = numbers(
        &c,
        "prefix",
        "[[1f64, 2], [3, 4], [5, 6]] [0i64, 2, 2] [[0f64, 0, 0], [0, 0, 0], [0, 0, 0]] [1f64, 10, 100]",
        true,
    );
    assert_eq!(got, [1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 530.0, 640.0, 0.0]);
}

/// A loop made a kernel (`loops-as-kernels`) is compiled where it first runs, not when the
/// executor is made: one behind a check of its widths that fails never is. Results are
/// those of the evaluator (and of the closed form a ← a/2 + i).
#[test]
fn loop_kernels_compile_where_they_first_run() {
    let c = compile(
        "entry scaled [n] (xs: [n]f64) (k: i64) : [n]f64 =
           loop a = copy xs for i < k do map (\\v -> v * 0.5 + f64.i64 i) a
         entry recurrence (x: f64) (k: i64) : [1]f64 = [loop y = x for _i < k do y * 0.5 + 1]",
    );
    let before = c.native.map_kernels();
    let same = |e: &str, input: &str| {
        let got = numbers(&c, e, input, true);
        assert_eq!(got, numbers(&c, e, input, false), "{e} {input}");
        got
    };
    // 100 elements: the loop as written runs (its inner map was compiled ahead).
    let wide = format!("{} 3i64", floats(100, "f64", 1));
    assert_eq!(same("scaled", &wide).len(), 100);
    assert_eq!(c.native.map_kernels(), before);
    // 3 elements: the loop runs as a kernel, compiled now.
    let runs = c.native.native_runs();
    assert_eq!(
        same("scaled", "[1f64, 2, 3] 4i64"),
        vec![4.3125, 4.375, 4.4375]
    );
    assert_eq!(c.native.map_kernels(), before + 1);
    assert!(c.native.native_runs() > runs, "the kernel ran");
    assert_eq!(same("recurrence", "1f64 3i64"), vec![1.875]);
    assert_eq!(c.native.map_kernels(), before + 2);
}
