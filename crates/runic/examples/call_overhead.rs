//! Call overhead from Rust: a dot product of two 1 000-element f32 arrays, per call, against
//! the same dot product in plain Rust measured in the same run.
//!
//! `cargo run --release -p runic --example call_overhead [-- CALLS RUNS]`
//!
//! Prints the median over RUNS (default 7) of the mean time per call over CALLS calls
//! (default 20 000), for: plain Rust; converting the arguments only (`IntoArgs`); the
//! argument check and the executor on values already converted (`Entry::call_values`);
//! and the whole `Entry::call` with the result taken out.

use ndarray::Array1;
use runic::{Entry, IntoArgs, Program};
use std::hint::black_box;
use std::time::Instant;

const N: usize = 1000;

fn main() -> Result<(), runic::Error> {
    let mut args = std::env::args().skip(1);
    let calls: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(20_000);
    let runs: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(7);
    let program = Program::from_source(
        "dot.fut",
        "entry dot [n] (a: [n]f32) (b: [n]f32): f32 = f32.sum (map2 (*) a b)",
    )?;
    let dot = program.entry("dot")?;
    let a = Array1::from_shape_fn(N, |i| (i % 7) as f32 * 0.5);
    let b = Array1::from_shape_fn(N, |i| (i % 5) as f32 - 2.0);
    let want: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
    let got = dot.call((&a, &b))?.get::<f32>(0)?;
    assert!(
        (got - want).abs() <= 1e-3 * want.abs().max(1.0),
        "{got} vs {want}"
    );

    let plain = median_us(runs, calls, || {
        let s: f32 = black_box(&a)
            .iter()
            .zip(black_box(&b))
            .map(|(x, y)| x * y)
            .sum();
        black_box(s);
    });
    let convert = median_us(runs, calls, || {
        black_box((&a, &b).into_args());
    });
    let prepared = (&a, &b).into_args();
    let exec = median_us(runs, calls, || {
        black_box(run_prepared(&dot, prepared.clone()));
    });
    let clone = median_us(runs, calls, || {
        black_box(prepared.clone());
    });
    let full = median_us(runs, calls, || {
        let out = dot.call((&a, &b)).expect("dot runs");
        black_box(out.get::<f32>(0).expect("an f32"));
    });
    println!("dot product of {N} f32, median of {runs} runs of {calls} calls (µs/call):");
    println!("  plain Rust (baseline)         {plain:8.3}");
    println!("  arguments to values           {convert:8.3}");
    println!("  check + executor (no convert)  {:8.3}", exec - clone);
    println!("  Entry::call, result taken     {full:8.3}");
    println!("  overhead / plain Rust         {:8.1}x", full / plain);
    Ok(())
}

/// The argument check and the executor, on values already converted.
fn run_prepared(entry: &Entry, args: Vec<runic::Value>) -> Vec<runic::Value> {
    entry.call_values(args).expect("dot runs")
}

/// Median over `runs` of the mean time of `f` over `calls` calls, in µs.
fn median_us(runs: usize, calls: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..calls.min(1000) {
        f();
    }
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let t0 = Instant::now();
            for _ in 0..calls {
                f();
            }
            t0.elapsed().as_secs_f64() * 1e6 / calls as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}
