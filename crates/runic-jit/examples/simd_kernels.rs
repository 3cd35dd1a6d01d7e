//! Map kernels of elementwise math on one thread, timed directly (no executor, no CLI):
//! `cargo run --release -p runic-jit --example simd_kernels [N] [RUNS]`, once as is and
//! once with `RUNIC_SIMD=0` (the scalar kernels), in the same session. Prints the median
//! time per call and ns per element, and a plain Rust loop of the same function (std, one
//! element at a time) as a baseline measured in the same run.

use runic_ir::*;
use runic_jit::{compile_map, to_raw};
use std::time::Instant;

fn p(k: u32, t: PrimType) -> Param {
    Param {
        name: VName(k),
        ty: Type::Prim(t),
    }
}

fn unop_lam(op: UnOp, t: PrimType) -> Lambda {
    Lambda::new(
        vec![p(0, t)],
        Body {
            stms: vec![Stm {
                pat: vec![p(1, t)],
                exp: Exp::Basic(BasicOp::UnOp(op, SubExp::Var(VName(0)))),
                src: SrcInfo::default(),
            }],
            result: vec![SubExp::Var(VName(1))],
        },
        vec![Type::Prim(t)],
    )
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n = args.first().copied().unwrap_or(1_000_000);
    let runs = args.get(1).copied().unwrap_or(11);
    let simd = std::env::var("RUNIC_SIMD").map_or(true, |v| v != "0");
    println!(
        "n = {n}, {runs} runs, SIMD {}",
        if simd { "on" } else { "off" }
    );
    for t in [PrimType::F32, PrimType::F64] {
        for (op, f) in [
            (UnOp::Exp, f64::exp as fn(f64) -> f64),
            (UnOp::Log, f64::ln),
            (UnOp::Tanh, f64::tanh),
            (UnOp::Sqrt, f64::sqrt),
        ] {
            let k = compile_map(&unop_lam(op, t), &|_| None).expect("compiles");
            let size = t.size_bytes();
            let xs: Vec<f64> = (0..n).map(|i| (i % 2000) as f64 / 100.0 - 9.99).collect();
            let xs: Vec<f64> = if op == UnOp::Log || op == UnOp::Sqrt {
                xs.iter().map(|x| x.abs() + 0.01).collect()
            } else {
                xs
            };
            let data: Vec<u8> = xs
                .iter()
                .flat_map(|&x| to_raw(Prim::float(t, x)).to_le_bytes()[..size].to_vec())
                .collect();
            let mut out = vec![0u8; n * size];
            let dims = [n as i64, n as i64];
            let ins = [data.as_ptr(), dims.as_ptr() as *const u8];
            let mut times = Vec::new();
            for _ in 0..runs {
                let outs = [out.as_mut_ptr()];
                let t0 = Instant::now();
                // SAFETY: the input and output hold n elements of type t.
                let code = unsafe { k.run(0, n, &ins, &outs) };
                times.push(t0.elapsed().as_secs_f64());
                assert_eq!(code, 0);
            }
            let mut base = Vec::new();
            let mut sink = vec![0f64; n];
            for _ in 0..runs {
                let t0 = Instant::now();
                if t == PrimType::F32 {
                    for (o, x) in sink.iter_mut().zip(&xs) {
                        *o = f(*x as f32 as f64) as f32 as f64;
                    }
                } else {
                    for (o, x) in sink.iter_mut().zip(&xs) {
                        *o = f(*x);
                    }
                }
                base.push(t0.elapsed().as_secs_f64());
                std::hint::black_box(&sink);
            }
            let (m, b) = (median(times), median(base));
            println!(
                "{t} {op:?}: kernel {:.2} ms ({:.2} ns/elem, lanes {}), std loop {:.2} ms, kernel/std {:.2}",
                m * 1e3,
                m * 1e9 / n as f64,
                k.simd_lanes,
                b * 1e3,
                m / b
            );
        }
    }
}
