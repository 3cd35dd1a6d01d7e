//! Task parallelism across independent statements (seed 000 §4.4): the parallel schedule
//! gives the results and the first error of sequential evaluation.

mod common;

use common::*;
use std::time::Instant;

const PROG: &str = "
def branches [n] (x: [n]f64) (y: [n]f64) : f64 =
  let a = loop acc = 0 for i < n do f64.sin (acc + x[i])
  let b = loop acc = 0 for i < n do f64.cos (acc * 0.5 + y[i])
  in a * b
entry value [n] (x: [n]f64) (y: [n]f64) : f64 = branches x y
entry grad [n] (x: [n]f64) (y: [n]f64) : ([n]f64, [n]f64) =
  vjp (\\(x, y) -> branches x y) (x, y) 1
-- The first loop fails late, the second early: the first's error is the one reported.
entry fails (k: i64) (n: i64) (xs: []f64) : (f64, f64) =
  let a = loop acc = 0 for i < k do acc + xs[i / 1000]
  let b = loop acc = 0 for i < n do acc + xs[i]
  in (a, b)
-- The update consumes xs, which both loops read: it must wait for them (cheap statements
-- run first otherwise, and the update is in place).
entry consume [n] (xs: *[n]f64) : (f64, f64, [n]f64) =
  let a = loop acc = 0 for i < n do acc + xs[i]
  let b = loop acc = 1 for i < n do acc * 0.5 + xs[i]
  let ys = xs with [0] = 100
  in (a, b, ys)
-- The first loop fails at once; the second would run for minutes and is cancelled.
entry cancelled (xs: []f64) : (f64, f64) =
  let a = loop acc = 0 for i < 10 do acc + xs[i]
  let b = loop acc = 0 for i < 10000000000i64 do acc + 1
  in (a, b)
";

fn vec_text(n: usize, seed: u64) -> String {
    let mut s = seed;
    let xs: Vec<String> = (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            format!("{:.6}f64", ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5)
        })
        .collect();
    format!("[{}]", xs.join(", "))
}

/// A compiled program whose executors run with task parallelism `on` or off.
fn compiled(on: bool) -> Compiled {
    let mut c = compile(PROG);
    c.native.set_tasks(on);
    c.evaluator.set_tasks(on);
    c
}

#[test]
fn independent_loops_and_their_adjoints_are_planned_as_tasks() {
    let c = compiled(true);
    let tasks: Vec<_> = c
        .native
        .explain()
        .into_iter()
        .filter(|r| r.kind == "tasks")
        .collect();
    for entry in ["value", "grad", "fails", "cancelled", "consume"] {
        let r = tasks.iter().find(|r| r.entry == entry);
        let r = r.unwrap_or_else(|| panic!("{entry}: no task report in {tasks:?}"));
        assert!(r.how.contains("up to 2 independent"), "{entry}: {}", r.how);
    }
}

#[test]
fn the_parallel_schedule_gives_the_sequential_results() {
    let (par, seq) = (compiled(true), compiled(false));
    let input = format!("{} {}", vec_text(300, 1), vec_text(300, 2));
    for entry in ["value", "grad"] {
        let p = par.agree_native_runs(entry, &input);
        let s = seq.agree_native_runs(entry, &input);
        assert!(p.is_ok(), "{entry}: {p:?}");
        assert_eq!(p, s, "{entry}: tasks on and off differ");
        // And both agree with the evaluator and the interpreter.
        par.agree(entry, &input, true);
    }
}

#[test]
fn the_first_error_in_program_order_is_reported() {
    let (par, seq) = (compiled(true), compiled(false));
    // xs has 3 elements: the first loop fails at i = 3000, the second at i = 3.
    let input = "4000i64 10i64 [1f64, 2f64, 3f64]";
    let p = par.agree_native_runs("fails", input);
    let s = seq.agree_native_runs("fails", input);
    let e = p.clone().unwrap_err();
    assert!(e.contains("xs[i / 1000]"), "{e}");
    assert_eq!(p, s);
    par.agree("fails", input, true);
}

#[test]
fn tasks_after_a_failure_are_cancelled() {
    let par = compiled(true);
    let t0 = Instant::now();
    let e = par
        .agree_native_runs("cancelled", "[1f64, 2f64]")
        .unwrap_err();
    assert!(e.contains("xs[i]"), "{e}");
    // Sequential evaluation stops at the first loop; the second, started beside it, is
    // cancelled instead of running 10¹⁰ iterations.
    assert!(t0.elapsed().as_secs() < 30, "took {:?}", t0.elapsed());
    let seq = compiled(false);
    assert_eq!(
        seq.agree_native_runs("cancelled", "[1f64, 2f64]")
            .unwrap_err(),
        e
    );
}

#[test]
fn a_consumer_waits_for_the_readers_of_what_it_consumes() {
    let (par, seq) = (compiled(true), compiled(false));
    let input = "[1f64, 2f64, 3f64, 4f64]";
    let p = par.run("consume", input);
    assert_eq!(p, seq.run("consume", input));
    assert_eq!(
        format!("{p:?}"),
        format!("{:?}", values("10f64 6.1875f64 [100f64, 2f64, 3f64, 4f64]"))
    );
    par.agree("consume", input, true);
}

/// Loops move in the initial arrays nothing reads after them (so that they update them in
/// place from the first iteration), in sequential and task-parallel bodies alike, and keep
/// sharing the others: an array the loop's body reads, or that is read after the loop.
#[test]
fn loops_move_in_the_arrays_nothing_reads_after_them() {
    let src = "
entry moved (n: i64) : ([n]i64, [n]i64) =
  let a = replicate n 0
  let b = replicate n 5
  let x = loop a for i < n do a with [i] = i
  let y = loop b for i < n do b with [i] = b[i] * i
  in (x, y)
entry kept (n: i64) : ([n]i64, [n]i64, [n]i64) =
  let a = replicate n 1
  let c = iota n
  let x = loop d = a for i < n do map (+ i) d
  let y = loop e = c for _i < 2 do map2 (+) e c
  in (x, a, y)
";
    for on in [true, false] {
        let mut c = compile(src);
        c.native.set_tasks(on);
        c.evaluator.set_tasks(on);
        let out = c.run("moved", "4i64");
        assert_eq!(
            out,
            values("[0i64, 1, 2, 3] [0i64, 5, 10, 15]"),
            "tasks {on}"
        );
        let out = c.run("kept", "3i64");
        assert_eq!(
            out,
            values("[4i64, 4, 4] [1i64, 1, 1] [0i64, 3, 6]"),
            "tasks {on}"
        );
        c.agree("moved", "5i64", true);
        c.agree("kept", "5i64", true);
    }
}
