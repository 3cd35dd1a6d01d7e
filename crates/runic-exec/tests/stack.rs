//! A call runs on the caller's thread (no thread per call), so evaluation must not need a
//! large stack: nested bodies grow the stack on demand. Here a deeply nested program runs
//! on a thread with a small stack.

mod common;

use common::*;

/// `depth` branches nested inside each other, each adding one: `x + depth` for `x >= 0`.
fn nested_branches(depth: usize) -> String {
    let mut body = "x".to_string();
    for _ in 0..depth {
        body = format!("(if x >= 0 then {body} + 1 else 0)");
    }
    format!("entry main (x: i64) : i64 = {body}")
}

#[test]
fn deeply_nested_bodies_run_on_a_small_stack() {
    let depth = 150;
    let c = compile(&nested_branches(depth));
    let got = std::thread::Builder::new()
        .stack_size(32 << 10)
        .spawn(move || c.evaluator.run_entry("main", values("5i64")))
        .unwrap()
        .join()
        .expect("no stack overflow")
        .unwrap_or_else(|e| panic!("{}", e.message));
    assert_eq!(got, values("155i64"));
}
