//! Regressions for the cost of lowered programs on runic-exec (lower → opt → exec).

mod common;

use runic_data::{Prim, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn run(text: &str, entry: &str, args: Vec<Value>) -> Result<Vec<Value>, String> {
    let prog = common::lower_text(text).map_err(|e| e.to_string())?;
    let prog = runic_opt::pipeline()
        .iter()
        .fold(prog, |p, (_, pass)| pass(p));
    let exec = runic_exec::Executor::new(Arc::new(prog));
    exec.run_entry(entry, args).map_err(|e| e.to_string())
}

/// An in-place update of a loop parameter must not copy the array: 3·10^5 updates of a
/// 3·10^5-element array are linear (a copy per update would move 720 GB).
#[test]
fn loop_updating_its_parameter_in_place_is_linear() {
    let text = "entry main (n: i64) = let a = replicate n 0i64 \
                let a = loop a for i < n do a with [i] = i in i64.sum a";
    let t0 = Instant::now();
    let r = run(text, "main", vec![Value::Scalar(Prim::I64(300_000))]).unwrap();
    // sum of 0..3*10^5-1
    assert_eq!(r, vec![Value::Scalar(Prim::I64(44_999_850_000))]);
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
}

/// The same through a branch inside the loop body (the branch's result slot must not keep
/// a second reference either, and in the loop's native kernel one branch consuming the
/// array must not make the other copy it: that copy took 15–24 s here, linear 0.05 s).
#[test]
fn loop_updating_through_a_branch_is_linear() {
    let text = "entry main (n: i64) = let a = replicate n 0i64 \
                let a = loop a for i < n do if i % 2 == 0 then a with [i] = i else a with [i] = 1 \
                in i64.sum a";
    let t0 = Instant::now();
    let r = run(text, "main", vec![Value::Scalar(Prim::I64(100_000))]).unwrap();
    // evens 0..99998 sum to 2499950000, plus 50000 ones
    assert_eq!(r, vec![Value::Scalar(Prim::I64(2_499_950_000 + 50_000))]);
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
}
