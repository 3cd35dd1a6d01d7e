//! A call runs on the caller's thread (no thread per call), so evaluation must not need a
//! large stack: nested bodies grow the stack on demand. Here a deeply nested program runs
//! on a thread with a small stack.

mod common;

use common::*;

/// `depth` branches nested inside each other, each adding one: `x + depth` for `x >= 0`.
fn nested_body(depth: usize) -> String {
    let mut body = "x".to_string();
    for _ in 0..depth {
        body = format!("(if x >= 0 then {body} + 1 else 0)");
    }
    body
}

fn nested_branches(depth: usize) -> String {
    format!("entry main (x: i64) : i64 = {}", nested_body(depth))
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

/// The same depth with an array argument large enough that the call moves onto a rayon
/// worker (`runic_exec::POOL_ARGUMENTS`): the worker's stack grows on demand as the
/// caller's does. Called from a small-stack thread and from inside a rayon job (where it
/// runs in place: no second move, no deadlock waiting on its own pool).
#[test]
fn deeply_nested_bodies_run_on_a_worker() {
    let body = nested_body(150);
    let src = format!("entry main [n] (xs: [n]i64) (x: i64) : (i64, i64) = ({body}, i64.sum xs)");
    let c = std::sync::Arc::new(compile(&src));
    let n = runic_exec::POOL_ARGUMENTS as i64;
    let list: Vec<String> = (0..n).map(|i| format!("{i}i64")).collect();
    let text = format!("[{}] 5i64", list.join(","));
    let args = move || values(&text);
    let want = values(&format!("155i64 {}i64", n * (n - 1) / 2));
    let (c2, args2) = (c.clone(), args.clone());
    let from_thread = std::thread::Builder::new()
        .stack_size(32 << 10)
        .spawn(move || c2.evaluator.run_entry("main", args2()))
        .unwrap()
        .join()
        .expect("no stack overflow")
        .unwrap_or_else(|e| panic!("{}", e.message));
    assert_eq!(from_thread, want);
    let in_job = rayon::scope(|_| c.native.run_entry("main", args()))
        .unwrap_or_else(|e| panic!("{}", e.message));
    assert_eq!(in_job, want);
}
