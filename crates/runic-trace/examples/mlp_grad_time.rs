//! The traced MLP gradient against the language version (`bench/apps/mlp.fut`, `mlp_grad`)
//! at the benchmark's sizes (batch 1024, 784-256-10, f32): both gradients are compared,
//! then timed alternately in one process (median of the runs after a warm-up).
//!
//! `cargo run --release -p runic-trace --example mlp_grad_time [RUNS]`

#[path = "../tests/common/mod.rs"]
mod common;

use common::*;
use runic_data::Value;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1e3
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(21);
    let args = mlp_args(1024, 784, 256, 10);
    let t0 = Instant::now();
    let lang = language(&mlp_source());
    let t_lang = t0.elapsed();
    let t0 = Instant::now();
    let g = runic_trace::grad(&mlp_params(), &[0, 1, 2, 3], mlp_loss).expect("traces");
    let traced = executor(&g);
    let t_traced = t0.elapsed();
    println!(
        "prepare: language {:.1} ms (front end, AD, passes, native code), traced {:.1} ms (trace, AD, passes, native code)",
        t_lang.as_secs_f64() * 1e3,
        t_traced.as_secs_f64() * 1e3
    );

    let want = run_lang(&lang, "mlp_grad", &args);
    let got = traced.run_entry("main", args.clone()).expect("runs");
    assert_close(
        &Value::Tuple(got.clone()),
        &Value::Tuple(want.clone()),
        1e-6,
        "gradient",
    );
    let (x, y) = (floats(&Value::Tuple(got)), floats(&Value::Tuple(want)));
    let max_diff = x
        .iter()
        .zip(&y)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    println!(
        "gradients: {} elements, max |traced - language| = {max_diff:e}",
        x.len()
    );

    let (mut tl, mut tt) = (Vec::new(), Vec::new());
    for k in 0..=runs {
        let t0 = Instant::now();
        lang.run_entry("mlp_grad", args.clone()).expect("runs");
        let a = t0.elapsed();
        let t0 = Instant::now();
        traced.run_entry("main", args.clone()).expect("runs");
        let b = t0.elapsed();
        if k > 0 {
            tl.push(a);
            tt.push(b);
        }
    }
    let (ml, mt) = (median(tl), median(tt));
    println!(
        "mlp_grad median of {runs}: language {ml:.2} ms, traced {mt:.2} ms, traced / language {:.2}",
        mt / ml
    );
}
