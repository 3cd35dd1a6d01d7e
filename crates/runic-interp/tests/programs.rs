//! Whole programs: entry points, sizes, error reports, performance limits.
mod common;
use common::*;
use runic_data::Value;

#[test]
fn entry_point_sizes() {
    let src = "entry f [n] (xs: [n]i32) (ys: [n]i32) : [n]i32 = map2 (+) xs ys\n";
    assert_eq!(
        print(&run1(src, "f", vec![i32s(&[1, 2]), i32s(&[3, 4])])),
        "[4i32, 6i32]"
    );
    // The message names the size the first argument fixed and the one that disagrees.
    let e = run(src, "f", vec![i32s(&[1, 2]), i32s(&[3])]).unwrap_err();
    assert_eq!(
        e.message,
        "entry point arguments have invalid sizes: expected size 2, but an argument has size 1."
    );
    let src3 = "entry g (xs: [3]f64) : f64 = f64.sum xs\n";
    assert_eq!(
        run(src3, "g", vec![f64s(&[1.0, 2.0])]).unwrap_err().message,
        "entry point arguments have invalid sizes: expected size 3, but an argument has size 2."
    );
    // A scalar parameter used as a later parameter's size.
    let src4 = "entry h n (xs: [n]i32) = xs\n";
    assert_eq!(
        run(src4, "h", vec![i32v(2), i32s(&[1, 2, 3])])
            .unwrap_err()
            .message,
        "entry point arguments have invalid sizes: expected size 2, but an argument has size 3."
    );
    assert_eq!(
        print(&run1(src3, "g", vec![f64s(&[1.0, 2.0, 3.5])])),
        "6.5f64"
    );
}

#[test]
fn eta_expanded_entry_and_tuple_results() {
    let src = "entry diff = map2 (i64.-)\nentry two (x: i32) = (x, x + 1)\n";
    assert_eq!(
        print(&run1(src, "diff", vec![i64s(&[5, 7]), i64s(&[1, 2])])),
        "[4i64, 5i64]"
    );
    let r = run(src, "two", vec![i32v(1)]).unwrap();
    assert_eq!(r, vec![i32v(1), i32v(2)]);
}

#[test]
fn declared_return_size_is_checked() {
    // `iota (n + 1)` against `[n]` would be a static error; a filter's size is known only
    // when it runs.
    let src = "def f (n: i64) : [n]i64 = filter (>= 0) (iota (n + 1))\nentry main = f 2\n";
    assert_eq!(
        run(src, "main", vec![]).unwrap_err().message,
        "Value of (desugared) shape [3] cannot match shape of type \"[2]i64\"."
    );
}

#[test]
fn size_parameters_from_context() {
    let src = "def zeros [n] : [n]f32 = rep 0\nentry main (k: i64) : [k]f32 = zeros\n";
    assert_eq!(
        print(&run1(src, "main", vec![i64v(3)])),
        "[0.0f32, 0.0f32, 0.0f32]"
    );
    let src2 = "entry main (xs: []f64) = let [n] (ys: [n]f64) = xs in n\n";
    assert_eq!(print(&run1(src2, "main", vec![f64s(&[1.0, 2.0])])), "2i64");
    let src3 =
        "entry m (rows: i64) (cols: i64) = unflatten (iota (rows * cols) :> [rows*cols]i64)\n";
    assert_eq!(
        print(&run1(src3, "m", vec![i64v(2), i64v(2)])),
        "[[0i64, 1i64], [2i64, 3i64]]"
    );
}

#[test]
fn appendix_b_examples() {
    let b4 = "def prefix_max [n] (xs: [n]i32) : [n]i32 =
  let out = copy xs
  let (out, _) =
    loop (out, best) = (out, i32.lowest) for i < n do
      let best = i32.max best xs[i]
      let out[i] = best
      in (out, best)
  in out
entry main (xs: []i32) = prefix_max xs
";
    assert_eq!(
        print(&run1(b4, "main", vec![i32s(&[3, 1, 4, 1, 5])])),
        "[3i32, 3i32, 4i32, 4i32, 5i32]"
    );
    let b5 = "type pt = {x: f64, y: f64}
def (a: pt) <+> (b: pt) : pt = {x = a.x + b.x, y = a.y + b.y}
def len (p: pt) = f64.(sqrt (p.x * p.x + p.y * p.y))
entry walk (n: i64) : f64 =
  let step = {x = 0.5, y = 1.0}
  in len (loop p = {x = 0, y = 0} for _i < n do p <+> step)
";
    // 8 steps: (4, 8), length sqrt(80)
    assert_eq!(run1(b5, "walk", vec![i64v(8)]), f64v(80f64.sqrt()));
    let b6 = "entry picks (xs: []i64) : []i64 =
  let ys = filter (\\x -> x % 3 == 1) xs
  let k = length ys
  in map2 (+) (ys :> [k]i64) (iota k)
";
    assert_eq!(
        print(&run1(b6, "picks", vec![i64s(&[1, 4, 5, 7, 9])])),
        "[1i64, 5i64, 9i64]"
    );
    let b3 = "def weighted_hist [n] (bins: [n]i64) (w: f32) (xs: [n]f32) : [4]f32 =
  hist (+) 0 4 bins (map (* w) xs)
entry h (bins: []i64) (w: f32) (xs: []f32) = weighted_hist bins w xs
";
    assert_eq!(
        print(&run1(
            b3,
            "h",
            vec![i64s(&[0, 3, 3, 9]), f32v(2.0), f32s(&[1.0, 2.0, 3.0, 4.0])]
        )),
        "[2.0f32, 0.0f32, 0.0f32, 10.0f32]"
    );
}

#[test]
fn error_report_with_backtrace() {
    let src = "\n\n\n\n\n\ndef f (xs: []i32) (i: i32) = xs[i]\n\ndef g (xs: []i32) (i: i32) = f xs i\n\n\n\nentry main (xs: []i32) = g xs 5\n";
    let p = load(src);
    let e = p
        .interp
        .call_entry("main", vec![i32s(&[1, 2, 3, 4])])
        .unwrap_err();
    assert_eq!(
        e.render(&p.sources),
        "prog.fut:7:30-35: Error: Index [5] out of bounds for array of shape [4].
   7 | def f (xs: []i32) (i: i32) = xs[i]
     |                              ^^^^^

Backtrace:
-> #0  prog.fut:7:30-35
   #1  prog.fut:9:30-36
   #2  prog.fut:13:26-32
"
    );
}

#[test]
fn hole_and_trace() {
    let e = run(
        "entry main (x: i32) : i32 = if x > 0 then ??? else x\n",
        "main",
        vec![i32v(1)],
    )
    .unwrap_err();
    assert_eq!(e.message, "Reached hole of type: i32");
    assert_eq!(ev("#[trace] (1i32 + 1)"), "2i32");
}

#[test]
fn ten_million_iterations() {
    let src = "entry main (n: i64) = loop acc = 0i64 for i < n do acc + i\n";
    assert_eq!(
        run1(src, "main", vec![i64v(10_000_000)]),
        i64v(49_999_995_000_000)
    );
}

#[test]
fn in_place_updates_are_not_quadratic() {
    let src = "entry main (n: i64) = let a = replicate n 0i64 in (loop a for i < n do let a[i] = i * 2 in a)[n - 1]\n";
    assert_eq!(run1(src, "main", vec![i64v(200_000)]), i64v(399_998));
    let src2 = "entry main (n: i64) = let a = replicate n 0i64 in (loop a for i < n do a with [i] = i)[n - 1]\n";
    assert_eq!(run1(src2, "main", vec![i64v(200_000)]), i64v(199_999));
}

#[test]
fn deep_nesting() {
    let depth = 300; // the parser bounds nesting (about 390 lets)
    let mut e = String::new();
    for k in 0..depth {
        e.push_str(&format!("let x{} = x{k} + 1\n", k + 1));
    }
    let src = format!("entry main (x0: i32) =\n{e} in x{depth}\n");
    assert_eq!(
        run1(&src, "main", vec![i32v(0)]),
        Value::Scalar(runic_data::Prim::I32(depth))
    );
}

#[test]
fn interrupt_flag_stops_evaluation() {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    let mut p = load("entry main (n: i64) = loop x = 0i64 while x >= 0 do x + n\n");
    p.interp.set_interrupt(Arc::new(AtomicBool::new(true)));
    assert_eq!(
        p.interp
            .call_entry("main", vec![i64v(0)])
            .unwrap_err()
            .message,
        "interrupted"
    );
}

#[test]
fn constants_and_shadowing() {
    let src = "def k = 10i32\ndef f x = x + k\ndef length (x: i32) = x * 2\nentry main = (f 1, length k)\n";
    assert_eq!(run(src, "main", vec![]).unwrap(), vec![i32v(11), i32v(20)]);
    let p = load("def c = [1i32, 2] |> map (* 2)\n");
    assert_eq!(print(&p.interp.eval_constant("c").unwrap()), "[2i32, 4i32]");
}
