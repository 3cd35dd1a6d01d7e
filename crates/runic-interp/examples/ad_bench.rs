//! Timing harness for docs/PERFORMANCE.md: `vjp` time / primal time of a sum of squares and
//! a dot product. Run: `cargo run --release -p runic-interp --example ad_bench`.
use runic_data::{Buffer, Value};
use runic_interp::Interpreter;
use runic_syntax::SourceMap;
use std::sync::Arc;
use std::time::Instant;

const SRC: &str = "
entry sumsq (xs: []f64) = f64.sum (map (\\x -> x * x) xs)
entry sumsq_vjp (xs: []f64) = vjp (\\xs -> f64.sum (map (\\x -> x * x) xs)) xs 1
entry dot (xs: []f64) (ys: []f64) = f64.sum (map2 (*) xs ys)
entry dot_vjp (xs: []f64) (ys: []f64) = vjp (\\(xs, ys) -> f64.sum (map2 (*) xs ys)) (xs, ys) 1
";

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let mut sm = SourceMap::new();
    let pf = sm.add(runic_types::PRELUDE_NAME, runic_types::PRELUDE_SOURCE);
    let f = sm.add("bench.fut", SRC);
    let prog = runic_syntax::parse_program(f, SRC, runic_types::first_user_node_id()).unwrap();
    let checked = runic_types::check_program_with_prelude_file(prog, &sm, pf).unwrap();
    let interp = Interpreter::new(Arc::new(checked), Arc::new(sm));
    let runs = 9;
    println!("| program | n | primal (ms) | vjp (ms) | vjp / primal |");
    println!("|---|---|---|---|---|");
    for (name, arity) in [("sumsq", 1), ("dot", 2)] {
        for n in [10_000usize, 100_000, 1_000_000] {
            let arr = |k: f64| {
                Value::Array(runic_data::Array {
                    shape: vec![n],
                    data: Buffer::F64((0..n).map(|i| (i as f64 * k).sin()).collect()),
                })
            };
            let args: Vec<Value> = (0..arity).map(|k| arr(0.1 + k as f64)).collect();
            // Alternate primal and vjp runs so that load from other jobs hits both alike;
            // report medians and the median of the per-pair ratios.
            let once = |e: &str| {
                let t = Instant::now();
                interp.call_entry(e, args.clone()).unwrap();
                t.elapsed().as_secs_f64() * 1e3
            };
            let vname = format!("{name}_vjp");
            once(name);
            once(&vname);
            let (mut ps, mut vs, mut rs) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..runs {
                let p = once(name);
                let v = once(&vname);
                ps.push(p);
                vs.push(v);
                rs.push(v / p);
            }
            println!(
                "| {name} | {n} | {:.1} | {:.1} | {:.2} |",
                median(ps),
                median(vs),
                median(rs)
            );
        }
    }
}
