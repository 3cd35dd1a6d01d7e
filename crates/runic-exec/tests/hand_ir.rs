//! Hand-built IR programs run through the executor; expected values computed by hand.

use runic_data::{Array, Prim, Value};
use runic_exec::{run_entry, Executor};
use runic_ir::*;
use std::sync::Arc;

struct B {
    names: NameSource,
}

impl B {
    fn v(&mut self, h: &str) -> VName {
        self.names.fresh(h)
    }
}

fn p(name: VName, ty: Type) -> Param {
    Param { name, ty }
}
fn f32s() -> Type {
    Type::Prim(PrimType::F32)
}
fn arr(elem: PrimType, n: SubExp) -> Type {
    Type::Array {
        elem,
        shape: vec![n],
    }
}
fn stm(pat: Vec<Param>, exp: Exp) -> Stm {
    Stm {
        pat,
        exp,
        src: SrcInfo::default(),
    }
}
fn var(v: VName) -> SubExp {
    SubExp::Var(v)
}
fn bin_lam(b: &mut B, op: BinOp, t: PrimType) -> Lambda {
    let (x, y, r) = (b.v("x"), b.v("y"), b.v("r"));
    Lambda {
        id: runic_ir::LamId::fresh(),
        params: vec![p(x, Type::Prim(t)), p(y, Type::Prim(t))],
        body: Body {
            stms: vec![stm(
                vec![p(r, Type::Prim(t))],
                Exp::Basic(BasicOp::BinOp(op, var(x), var(y))),
            )],
            result: vec![var(r)],
        },
        ret: vec![Type::Prim(t)],
    }
}

fn entry(name: &str, params: Vec<Param>, body: Body, nres: usize) -> FunDef {
    let nparams = params.len();
    FunDef {
        name: name.into(),
        params,
        ret: vec![],
        body,
        entry: Some(EntryInfo {
            name: name.into(),
            params: vec![EntryParam::data(""); nparams],
            results: (0..nres)
                .map(|_| EntryResult {
                    type_text: String::new(),
                    num_values: 1,
                    opaque: false,
                    layout: None,
                })
                .collect(),
        }),
        src: SrcInfo::default(),
    }
}

/// main (xs: [n]f32) (is: [n]i64) = let ys = map (\x -> x * 2 + 1) xs
///   in (ys, reduce (+) 0 ys, scan (+) 0 ys, hist (+) 0 (replicate 4 0) is ys,
///       scatter (replicate 4 -1) is ys)
fn soacs_prog(b: &mut B) -> Prog {
    let (n, xs, is) = (b.v("n"), b.v("xs"), b.v("is"));
    let (x, t, u) = (b.v("x"), b.v("t"), b.v("u"));
    let ys = b.v("ys");
    let map_lam = Lambda {
        id: runic_ir::LamId::fresh(),
        params: vec![p(x, f32s())],
        body: Body {
            stms: vec![
                stm(
                    vec![p(t, f32s())],
                    Exp::Basic(BasicOp::BinOp(
                        BinOp::Mul,
                        var(x),
                        SubExp::Const(Prim::F32(2.0)),
                    )),
                ),
                stm(
                    vec![p(u, f32s())],
                    Exp::Basic(BasicOp::BinOp(
                        BinOp::Add,
                        var(t),
                        SubExp::Const(Prim::F32(1.0)),
                    )),
                ),
            ],
            result: vec![var(u)],
        },
        ret: vec![f32s()],
    };
    let (sum, sc, z, h, d, sct) = (
        b.v("sum"),
        b.v("sc"),
        b.v("z"),
        b.v("h"),
        b.v("d"),
        b.v("sct"),
    );
    let add = bin_lam(b, BinOp::Add, PrimType::F32);
    let add2 = bin_lam(b, BinOp::Add, PrimType::F32);
    let add3 = bin_lam(b, BinOp::Add, PrimType::F32);
    let four = SubExp::i64(4);
    let body = Body {
        stms: vec![
            stm(
                vec![p(ys, arr(PrimType::F32, var(n)))],
                Exp::Soac(Soac::Map {
                    w: var(n),
                    lam: map_lam,
                    arrs: vec![xs],
                }),
            ),
            stm(
                vec![p(sum, f32s())],
                Exp::Soac(Soac::Reduce {
                    w: var(n),
                    arrs: vec![ys],
                    pre: None,
                    lam: add,
                    neutral: vec![SubExp::Const(Prim::F32(0.0))],
                    commutative: true,
                }),
            ),
            stm(
                vec![p(sc, arr(PrimType::F32, var(n)))],
                Exp::Soac(Soac::Scan {
                    w: var(n),
                    arrs: vec![ys],
                    pre: None,
                    lam: add2,
                    neutral: vec![SubExp::Const(Prim::F32(0.0))],
                }),
            ),
            stm(
                vec![p(z, arr(PrimType::F32, four.clone()))],
                Exp::Basic(BasicOp::Replicate(
                    vec![four.clone()],
                    SubExp::Const(Prim::F32(0.0)),
                )),
            ),
            stm(
                vec![p(h, arr(PrimType::F32, four.clone()))],
                Exp::Soac(Soac::Hist {
                    w: var(n),
                    dests: vec![z],
                    lam: add3,
                    neutral: vec![SubExp::Const(Prim::F32(0.0))],
                    is: vec![is],
                    vals: vec![ys],
                }),
            ),
            stm(
                vec![p(d, arr(PrimType::F32, four.clone()))],
                Exp::Basic(BasicOp::Replicate(
                    vec![four.clone()],
                    SubExp::Const(Prim::F32(-1.0)),
                )),
            ),
            stm(
                vec![p(sct, arr(PrimType::F32, four.clone()))],
                Exp::Soac(Soac::Scatter {
                    w: var(n),
                    dests: vec![d],
                    is: vec![is],
                    vals: vec![ys],
                }),
            ),
        ],
        result: vec![var(ys), var(sum), var(sc), var(h), var(sct)],
    };
    Prog {
        funs: vec![entry(
            "main",
            vec![
                p(xs, arr(PrimType::F32, var(n))),
                p(is, arr(PrimType::I64, var(n))),
            ],
            body,
            5,
        )],
        names: b.names.clone(),
    }
}

fn f32v(xs: Vec<f32>) -> Value {
    Value::Array(Array::from_f32(vec![xs.len()], xs).unwrap())
}

#[test]
fn soacs_small() {
    let mut b = B {
        names: NameSource::default(),
    };
    let prog = soacs_prog(&mut b);
    let xs = f32v(vec![1.0, 2.0, 3.0]);
    let is = Value::Array(Array::from_i64(vec![3], vec![2, 7, 2]).unwrap());
    let r = run_entry(&prog, "main", vec![xs, is]).unwrap();
    assert_eq!(r[0], f32v(vec![3.0, 5.0, 7.0]));
    assert_eq!(r[1], Value::Scalar(Prim::F32(15.0)));
    assert_eq!(r[2], f32v(vec![3.0, 8.0, 15.0]));
    assert_eq!(r[3], f32v(vec![0.0, 0.0, 10.0, 0.0]));
    assert_eq!(r[4], f32v(vec![-1.0, -1.0, 7.0, -1.0]));
}

/// Large enough for the parallel paths; integers keep float sums exact.
#[test]
fn soacs_parallel_match_sequential_formulas() {
    let mut b = B {
        names: NameSource::default(),
    };
    let prog = soacs_prog(&mut b);
    let n = 200_000usize;
    let xs: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let is: Vec<i64> = (0..n as i64).map(|i| i % 5).collect(); // bin 4 is out of bounds
    let ex = Executor::new(Arc::new(prog));
    let r = ex
        .run_entry(
            "main",
            vec![
                f32v(xs.clone()),
                Value::Array(Array::from_i64(vec![n], is.clone()).unwrap()),
            ],
        )
        .unwrap();
    let ys: Vec<f32> = xs.iter().map(|x| x * 2.0 + 1.0).collect();
    assert_eq!(r[0], f32v(ys.clone()));
    let total: f64 = ys.iter().map(|&y| y as f64).sum();
    assert_eq!(r[1], Value::Scalar(Prim::F32(total as f32)));
    let mut acc = 0f64;
    let scan: Vec<f32> = ys
        .iter()
        .map(|&y| {
            acc += y as f64;
            acc as f32
        })
        .collect();
    assert_eq!(r[2], f32v(scan));
    let mut h = [0f64; 4];
    let mut s = [-1f32; 4];
    for (j, &i) in is.iter().enumerate() {
        if i < 4 {
            h[i as usize] += ys[j] as f64;
            s[i as usize] = ys[j];
        }
    }
    assert_eq!(r[3], f32v(h.iter().map(|&x| x as f32).collect()));
    assert_eq!(r[4], f32v(s.to_vec()));
}

/// An out-of-bounds index inside a map body reports the interpreter's message.
#[test]
fn index_error_in_map() {
    let mut b = B {
        names: NameSource::default(),
    };
    let (n, xs, i, r) = (b.v("n"), b.v("xs"), b.v("i"), b.v("r"));
    let out = b.v("out");
    let lam = Lambda {
        id: runic_ir::LamId::fresh(),
        params: vec![p(i, Type::Prim(PrimType::I64))],
        body: Body {
            stms: vec![Stm {
                pat: vec![p(r, f32s())],
                exp: Exp::Basic(BasicOp::Index(xs, vec![DimIndex::Fix(var(i))])),
                src: SrcInfo {
                    loc: Some(Loc {
                        file: 0,
                        start: 3,
                        end: 8,
                    }),
                    inlined_from: vec![],
                    stripmine: None,
                },
            }],
            result: vec![var(r)],
        },
        ret: vec![f32s()],
    };
    let (io, is) = (b.v("io"), b.v("is"));
    let body = Body {
        stms: vec![
            stm(
                vec![p(io, arr(PrimType::I64, SubExp::i64(4)))],
                Exp::Basic(BasicOp::Range {
                    start: SubExp::i64(0),
                    second: None,
                    end: SubExp::i64(4),
                    kind: RangeKind::UpToExclusive,
                    elem: PrimType::I64,
                }),
            ),
            stm(
                vec![p(is, arr(PrimType::I64, SubExp::i64(4)))],
                Exp::Basic(BasicOp::SubExp(var(io))),
            ),
            stm(
                vec![p(out, arr(PrimType::F32, SubExp::i64(4)))],
                Exp::Soac(Soac::Map {
                    w: SubExp::i64(4),
                    lam,
                    arrs: vec![is],
                }),
            ),
        ],
        result: vec![var(out)],
    };
    let prog = Prog {
        funs: vec![entry(
            "main",
            vec![p(xs, arr(PrimType::F32, var(n)))],
            body,
            1,
        )],
        names: b.names.clone(),
    };
    let e = run_entry(&prog, "main", vec![f32v(vec![1.0, 2.0, 3.0])]).unwrap_err();
    assert_eq!(e.message, "Index [3] out of bounds for array of shape [3].");
    assert_eq!(
        e.loc,
        Some(Loc {
            file: 0,
            start: 3,
            end: 8
        })
    );
    // The backtrace starts at the failing operation.
    assert_eq!(e.backtrace.first(), e.loc.as_ref());
}
