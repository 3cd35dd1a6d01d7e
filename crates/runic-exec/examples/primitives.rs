//! Primal throughput of the ir executor on map / reduce (+) / scan (+) / reduce_by_index (+)
//! over n f32, next to a plain Rust copy and sum of the same bytes (the machine's memory
//! bandwidth baselines), measured in one run. The IR is built by hand (the same shapes lowering emits).
//!
//! cargo run --release -p runic-exec --example primitives -- 10000000 [runs] [entry]
//! (RAYON_NUM_THREADS=1 for one core.)

use runic_data::{Array, Buffer, Store, Value};
use runic_exec::Executor;
use runic_ir::*;
use std::sync::Arc;
use std::time::Instant;

fn main() {
    let mut a = std::env::args().skip(1);
    let n: usize = a.next().and_then(|s| s.parse().ok()).unwrap_or(10_000_000);
    let runs: usize = a.next().and_then(|s| s.parse().ok()).unwrap_or(5);
    // An optional entry name measures that entry alone (for profiling).
    let only: Option<String> = a.next();
    let bins = 1024i64;
    let xs: Vec<f32> = (0..n)
        .map(|i| ((i * 7919) % 1000) as f32 / 1000.0)
        .collect();
    let is: Vec<i64> = (0..n as i64).map(|i| (i * 2654435761) % bins).collect();
    // The arguments are read in place (as a host's arrays are), so that a run neither copies
    // nor frees them: what is timed is the executor's work alone, like the baselines'.
    let xs = Arc::new(xs);
    let is = Arc::new(is);
    // SAFETY: the vectors are never written, and each store keeps its vector alive.
    let xs_v = Value::Array(
        Array::new(
            vec![n],
            Buffer::F32(unsafe { Store::borrowed(xs.as_ptr(), n, xs.clone()) }),
        )
        .unwrap(),
    );
    let is_v = Value::Array(
        Array::new(
            vec![n],
            Buffer::I64(unsafe { Store::borrowed(is.as_ptr(), n, is.clone()) }),
        )
        .unwrap(),
    );
    let ex = Executor::new(Arc::new(program(bins)));
    let median = |f: &mut dyn FnMut() -> f64| {
        let mut t: Vec<f64> = (0..runs).map(|_| f()).collect();
        t.sort_by(|a, b| a.partial_cmp(b).unwrap());
        t[t.len() / 2]
    };
    let gb = |bytes: usize, t: f64| bytes as f64 / t / 1e9;
    let copy_t = median(&mut || {
        let s = Instant::now();
        let c = Vec::clone(&xs);
        let t = s.elapsed().as_secs_f64();
        std::hint::black_box(&c);
        t
    });
    let sum_t = median(&mut || {
        let s = Instant::now();
        let total: f32 = std::hint::black_box(&xs).iter().sum();
        let t = s.elapsed().as_secs_f64();
        std::hint::black_box(total);
        t
    });
    println!("n={n} threads={} runs={runs}", rayon::current_num_threads());
    let copy_bw = gb(8 * n, copy_t);
    let sum_bw = gb(4 * n, sum_t);
    println!(
        "copy    {:8.2} ms  {:6.2} GB/s  (baseline: a Rust clone, one thread)",
        copy_t * 1e3,
        copy_bw
    );
    println!(
        "sum     {:8.2} ms  {:6.2} GB/s  (baseline: a Rust iter().sum(), one thread)",
        sum_t * 1e3,
        sum_bw
    );
    for (entry, bytes, args, base) in [
        ("map", 8 * n, vec![xs_v.clone()], ("copy", copy_bw)),
        ("reduce", 4 * n, vec![xs_v.clone()], ("sum", sum_bw)),
        ("scan", 8 * n, vec![xs_v.clone()], ("copy", copy_bw)),
        (
            "hist",
            12 * n,
            vec![is_v.clone(), xs_v.clone()],
            ("copy", copy_bw),
        ),
    ] {
        if only.as_deref().is_some_and(|o| o != entry) {
            continue;
        }
        let t = median(&mut || {
            let a = args.clone();
            let s = Instant::now();
            let r = ex.run_entry(entry, a).unwrap();
            let t = s.elapsed().as_secs_f64();
            std::hint::black_box(&r);
            t
        });
        println!(
            "{entry:7} {:8.2} ms  {:6.2} GB/s  {:5.2}x of {} bandwidth",
            t * 1e3,
            gb(bytes, t),
            gb(bytes, t) / base.1,
            base.0
        );
    }
}

fn program(bins: i64) -> Prog {
    let mut names = NameSource::default();
    let f32t = Type::Prim(PrimType::F32);
    let arr = |t: PrimType, n: VName| Type::Array {
        elem: t,
        shape: vec![SubExp::Var(n)],
    };
    let p = |name, ty| Param { name, ty };
    let st = |pat, exp| Stm {
        pat,
        exp,
        src: SrcInfo::default(),
    };
    let entry = |name: &str, params: Vec<Param>, body| FunDef {
        entry: Some(EntryInfo {
            name: name.into(),
            params: vec![EntryParam::data(""); params.len()],
            results: vec![EntryResult {
                type_text: String::new(),
                num_values: 1,
                opaque: false,
                layout: None,
            }],
        }),
        name: name.into(),
        params,
        ret: vec![],
        body,
        src: SrcInfo::default(),
    };
    let zero = SubExp::Const(Prim::F32(0.0));
    let mut funs = Vec::new();
    // map (\x -> x * 2 + 1)
    {
        let (n, xs, x, t, u, r) = (
            names.fresh("n"),
            names.fresh("xs"),
            names.fresh("x"),
            names.fresh("t"),
            names.fresh("u"),
            names.fresh("r"),
        );
        let lam = Lambda {
            id: runic_ir::LamId::fresh(),
            params: vec![p(x, f32t.clone())],
            body: Body {
                stms: vec![
                    st(
                        vec![p(t, f32t.clone())],
                        Exp::Basic(BasicOp::BinOp(
                            BinOp::Mul,
                            SubExp::Var(x),
                            SubExp::Const(Prim::F32(2.0)),
                        )),
                    ),
                    st(
                        vec![p(u, f32t.clone())],
                        Exp::Basic(BasicOp::BinOp(
                            BinOp::Add,
                            SubExp::Var(t),
                            SubExp::Const(Prim::F32(1.0)),
                        )),
                    ),
                ],
                result: vec![SubExp::Var(u)],
            },
            ret: vec![f32t.clone()],
        };
        let body = Body {
            stms: vec![st(
                vec![p(r, arr(PrimType::F32, n))],
                Exp::Soac(Soac::Map {
                    w: SubExp::Var(n),
                    lam,
                    arrs: vec![xs],
                }),
            )],
            result: vec![SubExp::Var(r)],
        };
        funs.push(entry("map", vec![p(xs, arr(PrimType::F32, n))], body));
    }
    // reduce (+) 0 and scan (+) 0
    for kind in ["reduce", "scan"] {
        let (n, xs, r) = (names.fresh("n"), names.fresh("xs"), names.fresh("r"));
        let lam = builder::binop_lambda(&mut names, BinOp::Add, PrimType::F32);
        let exp = if kind == "reduce" {
            Exp::Soac(Soac::Reduce {
                w: SubExp::Var(n),
                arrs: vec![xs],
                pre: None,
                lam,
                neutral: vec![zero.clone()],
                commutative: true,
            })
        } else {
            Exp::Soac(Soac::Scan {
                w: SubExp::Var(n),
                arrs: vec![xs],
                pre: None,
                lam,
                neutral: vec![zero.clone()],
            })
        };
        let ty = if kind == "reduce" {
            f32t.clone()
        } else {
            arr(PrimType::F32, n)
        };
        let body = Body {
            stms: vec![st(vec![p(r, ty)], exp)],
            result: vec![SubExp::Var(r)],
        };
        funs.push(entry(kind, vec![p(xs, arr(PrimType::F32, n))], body));
    }
    // reduce_by_index (replicate bins 0) (+) 0 is xs
    {
        let (n, is, xs, z, r) = (
            names.fresh("n"),
            names.fresh("is"),
            names.fresh("xs"),
            names.fresh("z"),
            names.fresh("r"),
        );
        let lam = builder::binop_lambda(&mut names, BinOp::Add, PrimType::F32);
        let bt = Type::Array {
            elem: PrimType::F32,
            shape: vec![SubExp::i64(bins)],
        };
        let body = Body {
            stms: vec![
                st(
                    vec![p(z, bt.clone())],
                    Exp::Basic(BasicOp::Replicate(vec![SubExp::i64(bins)], zero.clone())),
                ),
                st(
                    vec![p(r, bt)],
                    Exp::Soac(Soac::Hist {
                        w: SubExp::Var(n),
                        dests: vec![z],
                        lam,
                        neutral: vec![zero.clone()],
                        is: vec![is],
                        vals: vec![xs],
                    }),
                ),
            ],
            result: vec![SubExp::Var(r)],
        };
        funs.push(entry(
            "hist",
            vec![p(is, arr(PrimType::I64, n)), p(xs, arr(PrimType::F32, n))],
            body,
        ));
    }
    Prog { funs, names }
}
