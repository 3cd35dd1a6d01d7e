//! Native kernels against runic_prim, bit for bit: every scalar operation family on every
//! type, on edge cases (0, -0.0, NaN, ±inf, MIN/MAX, shift widths, division by zero) and
//! random inputs.

mod common;

use common::{param, stm, var, Rng};
use runic_ir::*;
use runic_jit::shims::{scalar_binop, scalar_ternop, BINOPS, TERNOPS, UNOPS};
use runic_jit::{compile_fold, compile_map, from_raw, to_raw, MapKernel, VarType};
use runic_prim::{convert, unop};

/// Edge cases and random values of type `t`.
fn values(t: PrimType, rng: &mut Rng, n_random: usize) -> Vec<Prim> {
    let mut v: Vec<Prim> = Vec::new();
    if t == PrimType::Bool {
        return vec![Prim::Bool(false), Prim::Bool(true)];
    }
    if t.is_int() {
        let bits = t.bits() as i128;
        let min = Prim::lowest(t).as_int().unwrap();
        let max = Prim::highest(t).as_int().unwrap();
        for x in [
            0,
            1,
            -1,
            2,
            -2,
            3,
            -3,
            7,
            -7,
            min,
            max,
            min + 1,
            max - 1,
            bits - 1,
            bits,
            bits + 1,
            100,
            -100,
        ] {
            v.push(Prim::int(t, x));
        }
    } else {
        for x in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            -0.5,
            1.5,
            2.5,
            -2.5,
            3.0,
            f64::NAN,
            -f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            1e-40,
            1e10,
            -1e10,
            3e9,
            1e19,
            -1e19,
            1e20,
            9.3e18,
            255.9,
            -128.5,
            65536.7,
            4294967296.5,
            0.1,
            std::f64::consts::PI,
        ] {
            v.push(Prim::float(t, x));
        }
    }
    for _ in 0..n_random {
        let r = rng.next();
        if t.is_float() && r.is_multiple_of(3) {
            // Values of ordinary magnitude too, not only random bit patterns.
            let x = ((r >> 8) % 20001) as f64 / 64.0 - 150.0;
            v.push(Prim::float(t, x));
        } else {
            v.push(from_raw(t, r));
        }
    }
    v
}

/// `\x0 x1 … -> op` with one result of type `rt` (bound to variable 100).
fn lam_of(params: &[PrimType], op: BasicOp, rt: PrimType) -> Lambda {
    Lambda::new(
        params
            .iter()
            .enumerate()
            .map(|(k, t)| param(k as u32, *t))
            .collect(),
        Body {
            stms: vec![stm(100, rt, op)],
            result: vec![var(100)],
        },
        vec![Type::Prim(rt)],
    )
}

/// A column of elements in their natural size.
fn column(t: PrimType, xs: &[Prim]) -> Vec<u8> {
    let size = t.size_bytes();
    let mut out = Vec::with_capacity(xs.len() * size + 8);
    for x in xs {
        assert_eq!(x.ty(), t);
        out.extend_from_slice(&to_raw(*x).to_le_bytes()[..size]);
    }
    out
}

fn uncolumn(t: PrimType, bytes: &[u8], n: usize) -> Vec<Prim> {
    let size = t.size_bytes();
    (0..n)
        .map(|i| {
            let mut w = [0u8; 8];
            w[..size].copy_from_slice(&bytes[i * size..(i + 1) * size]);
            from_raw(t, u64::from_le_bytes(w))
        })
        .collect()
}

/// Run a map kernel over whole columns; `Err(code)` on failure.
fn run_map(k: &MapKernel, cols: &[Vec<Prim>], frees: &[Prim]) -> Result<Vec<Vec<Prim>>, i32> {
    let n = cols.first().map(|c| c.len()).unwrap_or(0);
    let ins_data: Vec<Vec<u8>> = cols
        .iter()
        .zip(&k.params)
        .map(|(c, t)| column(*t, c))
        .collect();
    let free_data: Vec<u64> = frees.iter().map(|p| to_raw(*p)).collect();
    let mut outs_data: Vec<Vec<u8>> = k
        .results
        .iter()
        .map(|t| vec![0u8; n * t.size_bytes() + 8])
        .collect();
    let mut ins: Vec<*const u8> = ins_data.iter().map(|c| c.as_ptr()).collect();
    ins.extend(free_data.iter().map(|w| w as *const u64 as *const u8));
    // The dimensions of the inputs (vectors of n elements).
    let dims: Vec<i64> = cols
        .iter()
        .map(|_| n as i64)
        .chain(k.results.iter().map(|_| n as i64))
        .collect();
    ins.push(dims.as_ptr() as *const u8);
    let outs: Vec<*mut u8> = outs_data.iter_mut().map(|c| c.as_mut_ptr()).collect();
    // SAFETY: every column holds n elements of its type; free values are raw words whose
    // low bytes hold the value (little-endian).
    let code = unsafe { k.run(0, n, &ins, &outs) };
    if code != 0 {
        return Err(code);
    }
    Ok(k.results
        .iter()
        .zip(&outs_data)
        .map(|(t, d)| uncolumn(*t, d, n))
        .collect())
}

fn same(a: Prim, b: Prim) -> bool {
    a.ty() == b.ty() && to_raw(a) == to_raw(b)
}

/// Checks a one-result kernel against `reference` on all rows: the whole range at once, and
/// element by element (for the failure codes).
fn check(
    what: &str,
    lam: &Lambda,
    cols: &[Vec<Prim>],
    reference: impl Fn(&[Prim]) -> Result<Prim, i32>,
) {
    let k = compile_map(lam, &|_| None).unwrap_or_else(|e| panic!("{what}: not compiled: {e}"));
    let n = cols[0].len();
    let rows: Vec<Vec<Prim>> = (0..n)
        .map(|i| cols.iter().map(|c| c[i]).collect())
        .collect();
    let expected: Vec<Result<Prim, i32>> = rows.iter().map(|r| reference(r)).collect();
    let whole = run_map(&k, cols, &[]);
    let any_fail = expected.iter().any(|e| e.is_err());
    match (&whole, any_fail) {
        (Err(_), true) => {}
        (Ok(out), false) => {
            for (i, e) in expected.iter().enumerate() {
                let e = *e.as_ref().unwrap();
                assert!(
                    same(out[0][i], e),
                    "{what}{:?}: native {:?}, runic_prim {:?}",
                    rows[i],
                    out[0][i],
                    e
                );
            }
        }
        (w, _) => panic!("{what}: whole-range run gave {w:?}, expected failure: {any_fail}"),
    }
    if any_fail {
        for (i, e) in expected.iter().enumerate() {
            let one: Vec<Vec<Prim>> = rows[i].iter().map(|x| vec![*x]).collect();
            let got = run_map(&k, &one, &[]);
            match (got, e) {
                (Ok(o), Ok(e)) => assert!(
                    same(o[0][0], *e),
                    "{what}{:?}: native {:?}, runic_prim {e:?}",
                    rows[i],
                    o[0][0]
                ),
                (Err(c), Err(ec)) => assert_eq!(c, *ec, "{what}{:?}: failure code", rows[i]),
                (g, e) => panic!("{what}{:?}: native {g:?}, runic_prim {e:?}", rows[i]),
            }
        }
    }
}

/// All pairs of `xs` × `ys` as two columns (capped by sampling).
fn pairs(xs: &[Prim], ys: &[Prim]) -> Vec<Vec<Prim>> {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for x in xs {
        for y in ys {
            a.push(*x);
            b.push(*y);
        }
    }
    vec![a, b]
}

fn binop_result_type(op: BinOp, a: Prim, b: Prim) -> PrimType {
    scalar_binop(op, a, b).map(|p| p.ty()).unwrap_or(a.ty())
}

fn check_binop_family(t: PrimType, seed: u64) {
    let mut rng = Rng(seed);
    let xs = values(t, &mut rng, 24);
    let ys = values(t, &mut rng, 24);
    let cols = pairs(&xs, &ys);
    for op in BINOPS {
        if op == BinOp::GetBit || op == BinOp::Ldexp {
            continue;
        }
        let rt = binop_result_type(op, Prim::one(t), Prim::one(t));
        let lam = lam_of(&[t, t], BasicOp::BinOp(op, var(0), var(1)), rt);
        check(&format!("{t} {op:?}"), &lam, &cols, |r| {
            scalar_binop(op, r[0], r[1])
        });
    }
    // Mixed operand types: `get_bit i x` (index first) and `ldexp x n`.
    let is = values(PrimType::I32, &mut rng, 8);
    let lam = lam_of(
        &[PrimType::I32, t],
        BasicOp::BinOp(BinOp::GetBit, var(0), var(1)),
        PrimType::I32,
    );
    check(&format!("{t} get_bit"), &lam, &pairs(&is, &xs), |r| {
        scalar_binop(BinOp::GetBit, r[0], r[1])
    });
    if t.is_float() {
        let lam = lam_of(
            &[t, PrimType::I32],
            BasicOp::BinOp(BinOp::Ldexp, var(0), var(1)),
            t,
        );
        check(&format!("{t} ldexp"), &lam, &pairs(&xs, &is), |r| {
            scalar_binop(BinOp::Ldexp, r[0], r[1])
        });
    }
}

fn check_unop_family(t: PrimType, seed: u64) {
    let mut rng = Rng(seed);
    let xs = values(t, &mut rng, 400);
    for op in UNOPS {
        let rt = unop(op, Prim::one(t)).ty();
        let lam = lam_of(&[t], BasicOp::UnOp(op, var(0)), rt);
        // Vector exp, log and tanh are polynomials within a few ulp, not std's bits: see
        // tests/simd.rs.
        let poly = matches!(op, UnOp::Exp | UnOp::Log | UnOp::Tanh);
        if poly && compile_map(&lam, &|_| None).is_ok_and(|k| k.simd_lanes > 0) {
            continue;
        }
        check(
            &format!("{t} {op:?}"),
            &lam,
            std::slice::from_ref(&xs),
            |r| Ok(unop(op, r[0])),
        );
    }
}

fn check_convert_family(from: PrimType, seed: u64) {
    let mut rng = Rng(seed);
    let xs = values(from, &mut rng, 400);
    for to in PrimType::ALL {
        let lam = lam_of(&[from], BasicOp::Convert(to, var(0)), to);
        check(
            &format!("{from} -> {to}"),
            &lam,
            std::slice::from_ref(&xs),
            |r| Ok(convert(r[0], to)),
        );
    }
}

fn check_ternop_family(t: PrimType, seed: u64) {
    let mut rng = Rng(seed);
    let xs = values(t, &mut rng, 6);
    let mut cols = vec![Vec::new(), Vec::new(), Vec::new()];
    for a in &xs {
        for b in &xs {
            for c in xs.iter().step_by(3) {
                cols[0].push(*a);
                cols[1].push(*b);
                cols[2].push(*c);
            }
        }
    }
    for op in TERNOPS {
        let one = Prim::one(t);
        let rt = scalar_ternop(op, one, one, one)
            .map(|p| p.ty())
            .unwrap_or(t);
        let lam = lam_of(&[t, t, t], BasicOp::TernOp(op, var(0), var(1), var(2)), rt);
        check(&format!("{t} {op:?}"), &lam, &cols, |r| {
            scalar_ternop(op, r[0], r[1], r[2])
        });
    }
}

macro_rules! per_type {
    ($($name:ident: $t:ident),* $(,)?) => {
        mod binops {
            use super::*;
            $( #[test] fn $name() { check_binop_family(PrimType::$t, 0x9e37_79b9_7f4a_7c15 ^ PrimType::$t as u64); } )*
        }
        mod unops {
            use super::*;
            $( #[test] fn $name() { check_unop_family(PrimType::$t, 0x2545_f491_4f6c_dd1d ^ PrimType::$t as u64); } )*
        }
        mod conversions {
            use super::*;
            $( #[test] fn $name() { check_convert_family(PrimType::$t, 0x1234_5678_9abc_def1 ^ PrimType::$t as u64); } )*
        }
        mod ternops {
            use super::*;
            $( #[test] fn $name() { check_ternop_family(PrimType::$t, 0x0f0f_1234_4321_f0f1 ^ PrimType::$t as u64); } )*
        }
    };
}

per_type!(
    i8: I8,
    i16: I16,
    i32: I32,
    i64: I64,
    u8: U8,
    u16: U16,
    u32: U32,
    u64: U64,
    f16: F16,
    f32: F32,
    f64: F64,
    bool: Bool,
);

/// `\x -> if x < 0 then (let q = 100 / x in q + a) else x * 2`, with `a` free: a branch
/// with statements (one that can fail, but only when taken), constants and a free scalar.
#[test]
fn branches_constants_and_free_variables() {
    let t = PrimType::I32;
    let a = VName(50);
    let then_body = Body {
        stms: vec![
            stm(
                10,
                t,
                BasicOp::BinOp(BinOp::Div, SubExp::Const(Prim::I32(100)), var(0)),
            ),
            stm(11, t, BasicOp::BinOp(BinOp::Add, var(10), SubExp::Var(a))),
        ],
        result: vec![var(11)],
    };
    let else_body = Body {
        stms: vec![stm(
            12,
            t,
            BasicOp::BinOp(BinOp::Mul, var(0), SubExp::Const(Prim::I32(2))),
        )],
        result: vec![var(12)],
    };
    let lam = Lambda::new(
        vec![param(0, t)],
        Body {
            stms: vec![
                stm(
                    1,
                    PrimType::Bool,
                    BasicOp::BinOp(BinOp::Lt, var(0), SubExp::Const(Prim::I32(0))),
                ),
                Stm {
                    pat: vec![param(2, t)],
                    exp: Exp::If {
                        cond: var(1),
                        then_body,
                        else_body,
                        ret: vec![Type::Prim(t)],
                    },
                    src: SrcInfo::default(),
                },
            ],
            result: vec![var(2), var(1)],
        },
        vec![Type::Prim(t), Type::Prim(PrimType::Bool)],
    );
    let k = compile_map(&lam, &|v| (v == a).then_some(VarType::Scalar(t))).expect("compiles");
    assert_eq!(k.frees, vec![(a, t)]);
    let xs: Vec<Prim> = (-50..50).map(Prim::I32).collect();
    let out = run_map(&k, std::slice::from_ref(&xs), &[Prim::I32(7)]).expect("no failure");
    for (i, x) in xs.iter().enumerate() {
        let x = x.as_int().unwrap() as i32;
        // Floor division, as runic_prim defines it.
        let want = if x < 0 {
            (100f64 / x as f64).floor() as i32 + 7
        } else {
            x * 2
        };
        assert_eq!(out[0][i], Prim::I32(want), "x = {x}");
        assert_eq!(out[1][i], Prim::Bool(x < 0));
    }
    // The failing branch fails only where taken: x = 0 takes the else branch.
    assert!(run_map(&k, &[vec![Prim::I32(0)]], &[Prim::I32(7)]).is_ok());
}

/// `reduce op ne (map pre xs)`: folds of chunks, combined in order, equal the sequential
/// fold; a failing element gives a failure code and leaves the accumulator unchanged.
/// The dimensions argument of a kernel call (leaked: a test's few words).
fn dims(ds: &[i64]) -> *const u8 {
    Box::leak(ds.to_vec().into_boxed_slice()).as_ptr() as *const u8
}

#[test]
fn fold_kernels() {
    // pre: \x -> x * 2 + 1 (i64), op: (+).
    let t = PrimType::I64;
    let pre = Lambda::new(
        vec![param(0, t)],
        Body {
            stms: vec![
                stm(
                    1,
                    t,
                    BasicOp::BinOp(BinOp::Mul, var(0), SubExp::Const(Prim::I64(2))),
                ),
                stm(
                    2,
                    t,
                    BasicOp::BinOp(BinOp::Add, var(1), SubExp::Const(Prim::I64(1))),
                ),
            ],
            result: vec![var(2)],
        },
        vec![Type::Prim(t)],
    );
    let plus = lam_of(&[t, t], BasicOp::BinOp(BinOp::Add, var(0), var(1)), t);
    let k = compile_fold(Some(&pre), &plus, &|_| None).expect("compiles");
    let xs: Vec<i64> = (0..10_000).map(|i| i * 7919 % 1000 - 500).collect();
    let col = column(t, &xs.iter().map(|&x| Prim::I64(x)).collect::<Vec<_>>());
    let mut total = 0i64;
    for (lo, hi) in [(0, 3000), (3000, 3001), (3001, 10_000)] {
        let mut acc = [to_raw(Prim::I64(0))];
        // SAFETY: the column holds 10 000 i64.
        let code = unsafe { k.run(lo, hi, &[col.as_ptr(), dims(&[10_000])], &mut acc) };
        assert_eq!(code, 0);
        total = total.wrapping_add(from_raw(t, acc[0]).as_int().unwrap() as i64);
    }
    let want: i64 = xs.iter().map(|x| x * 2 + 1).sum();
    assert_eq!(total, want);

    // min over f32 with NaNs and signed zeros, no pre: sequential runic_prim fold.
    let f = PrimType::F32;
    let min = lam_of(&[f, f], BasicOp::BinOp(BinOp::Min, var(0), var(1)), f);
    let k = compile_fold(None, &min, &|_| None).expect("compiles");
    let mut rng = Rng(77);
    let ys = values(f, &mut rng, 500);
    let col = column(f, &ys);
    let mut acc = [to_raw(Prim::F32(f32::INFINITY))];
    // SAFETY: the column holds ys.len() f32.
    assert_eq!(
        unsafe {
            k.run(
                0,
                ys.len(),
                &[col.as_ptr(), dims(&[ys.len() as i64])],
                &mut acc,
            )
        },
        0
    );
    let want = ys.iter().fold(Prim::F32(f32::INFINITY), |a, &y| {
        scalar_binop(BinOp::Min, a, y).unwrap()
    });
    assert!(same(from_raw(f, acc[0]), want));

    // An operator of two values: (min value, its index), with an `if`.
    let i = PrimType::I64;
    let arg_min = Lambda::new(
        vec![param(0, f), param(1, i), param(2, f), param(3, i)],
        Body {
            stms: vec![
                stm(4, PrimType::Bool, BasicOp::BinOp(BinOp::Le, var(0), var(2))),
                Stm {
                    pat: vec![param(5, f), param(6, i)],
                    exp: Exp::If {
                        cond: var(4),
                        then_body: Body {
                            stms: vec![],
                            result: vec![var(0), var(1)],
                        },
                        else_body: Body {
                            stms: vec![],
                            result: vec![var(2), var(3)],
                        },
                        ret: vec![Type::Prim(f), Type::Prim(i)],
                    },
                    src: SrcInfo::default(),
                },
            ],
            result: vec![var(5), var(6)],
        },
        vec![Type::Prim(f), Type::Prim(i)],
    );
    let k = compile_fold(None, &arg_min, &|_| None).expect("compiles");
    let vals: Vec<Prim> = [3.0f32, 1.0, 2.0, 1.0, 5.0]
        .iter()
        .map(|&x| Prim::F32(x))
        .collect();
    let idx: Vec<Prim> = (0..5).map(Prim::I64).collect();
    let (cv, ci) = (column(f, &vals), column(i, &idx));
    let mut acc = [to_raw(Prim::F32(f32::INFINITY)), to_raw(Prim::I64(-1))];
    // SAFETY: both columns hold 5 elements.
    assert_eq!(
        unsafe { k.run(0, 5, &[cv.as_ptr(), ci.as_ptr(), dims(&[5, 5])], &mut acc) },
        0
    );
    assert_eq!(from_raw(f, acc[0]), Prim::F32(1.0));
    assert_eq!(from_raw(i, acc[1]), Prim::I64(1));

    // Division by zero inside the fold: failure code, accumulator untouched.
    let div = lam_of(&[t, t], BasicOp::BinOp(BinOp::Div, var(0), var(1)), t);
    let k = compile_fold(None, &div, &|_| None).expect("compiles");
    let zs = column(t, &[Prim::I64(2), Prim::I64(0), Prim::I64(3)]);
    let mut acc = [to_raw(Prim::I64(1000))];
    // SAFETY: the column holds 3 i64.
    let code = unsafe { k.run(0, 3, &[zs.as_ptr(), dims(&[3])], &mut acc) };
    assert_ne!(code, 0);
    assert_eq!(from_raw(t, acc[0]), Prim::I64(1000));
}

#[test]
fn unsupported_lambdas_give_a_reason() {
    let t = PrimType::F32;
    // Indexing a free array.
    let idx = lam_of(
        &[PrimType::I64],
        BasicOp::Index(VName(9), vec![DimIndex::Fix(var(0))]),
        t,
    );
    let e = compile_map(&idx, &|_| None).err().expect("not compiled");
    assert!(e.contains("neither a scalar nor an array"), "{e}");
    // A free variable that is not a scalar.
    let free = lam_of(&[t], BasicOp::BinOp(BinOp::Add, var(0), var(9)), t);
    let e = compile_map(&free, &|_| None).err().expect("not compiled");
    assert!(e.contains("free variable"), "{e}");
    // A fold's operator whose parameters are not of its results' types.
    let arrs = Lambda::new(
        vec![
            Param {
                name: VName(0),
                ty: Type::Array {
                    elem: t,
                    shape: vec![SubExp::Const(Prim::I64(2))],
                },
            },
            param(1, t),
        ],
        Body {
            stms: vec![],
            result: vec![var(1)],
        },
        vec![Type::Prim(t)],
    );
    let e = compile_fold(None, &arrs, &|_| None)
        .err()
        .expect("not compiled");
    assert!(e.contains("parameter types differ"), "{e}");
}

fn stm_exp(pat: Vec<Param>, exp: Exp) -> Stm {
    Stm {
        pat,
        exp,
        src: SrcInfo::default(),
    }
}

/// `for` and `while` loops with scalar parameters inside map and fold kernels.
#[test]
fn loops() {
    let t = PrimType::I32;
    let c = |x: i32| SubExp::Const(Prim::I32(x));
    // \x -> loop acc = 0 for i < 4i32 do acc + 60 / (x - i)
    let for_lam = Lambda::new(
        vec![param(0, t)],
        Body {
            stms: vec![stm_exp(
                vec![param(1, t)],
                Exp::Loop {
                    params: vec![(param(2, t), c(0))],
                    form: LoopForm::For {
                        i: VName(3),
                        bound: c(4),
                    },
                    body: Body {
                        stms: vec![
                            stm(4, t, BasicOp::BinOp(BinOp::Sub, var(0), var(3))),
                            stm(5, t, BasicOp::BinOp(BinOp::Div, c(60), var(4))),
                            stm(6, t, BasicOp::BinOp(BinOp::Add, var(2), var(5))),
                        ],
                        result: vec![var(6)],
                    },
                },
            )],
            result: vec![var(1)],
        },
        vec![Type::Prim(t)],
    );
    let want_for = |x: i32| -> Option<i32> {
        let mut acc = 0i32;
        for i in 0..4 {
            let d = x - i;
            if d == 0 {
                return None;
            }
            acc += (60f64 / d as f64).floor() as i32;
        }
        Some(acc)
    };
    let k = compile_map(&for_lam, &|_| None).expect("compiles");
    for x in -10..10 {
        let got = run_map(&k, &[vec![Prim::I32(x)]], &[]).ok();
        assert_eq!(
            got,
            want_for(x).map(|v| vec![vec![Prim::I32(v)]]),
            "x = {x}"
        );
    }
    // The same loop in a fold's map lambda.
    let add = lam_of(&[t, t], BasicOp::BinOp(BinOp::Add, var(0), var(1)), t);
    let f = compile_fold(Some(&for_lam), &add, &|_| None).expect("compiles");
    let xs: Vec<u8> = column(t, &(5..9).map(Prim::I32).collect::<Vec<_>>());
    let mut acc = [to_raw(Prim::I32(0))];
    // SAFETY: the column holds 4 i32.
    assert_eq!(
        unsafe { f.run(0, 4, &[xs.as_ptr(), dims(&[4])], &mut acc) },
        0
    );
    let want: i32 = (5..9).map(|x| want_for(x).unwrap()).sum();
    assert_eq!(from_raw(t, acc[0]), Prim::I32(want));

    // \x -> loop (c, acc, n) = (x > 0, 0, x) while c do
    //          let n' = n - 1 in (n' > 0, acc * 3 + n, n')
    let b = PrimType::Bool;
    let while_lam = Lambda::new(
        vec![param(0, t)],
        Body {
            stms: vec![
                stm(1, b, BasicOp::BinOp(BinOp::Lt, c(0), var(0))),
                stm_exp(
                    vec![param(2, b), param(3, t), param(4, t)],
                    Exp::Loop {
                        params: vec![
                            (param(5, b), var(1)),
                            (param(6, t), c(0)),
                            (param(7, t), var(0)),
                        ],
                        form: LoopForm::While { cond: VName(5) },
                        body: Body {
                            stms: vec![
                                stm(8, t, BasicOp::BinOp(BinOp::Sub, var(7), c(1))),
                                stm(9, b, BasicOp::BinOp(BinOp::Lt, c(0), var(8))),
                                stm(10, t, BasicOp::BinOp(BinOp::Mul, var(6), c(3))),
                                stm(11, t, BasicOp::BinOp(BinOp::Add, var(10), var(7))),
                            ],
                            result: vec![var(9), var(11), var(8)],
                        },
                    },
                ),
            ],
            result: vec![var(3), var(4)],
        },
        vec![Type::Prim(t), Type::Prim(t)],
    );
    let k = compile_map(&while_lam, &|_| None).expect("compiles");
    let xs: Vec<Prim> = (-3..30).map(Prim::I32).collect();
    let out = run_map(&k, std::slice::from_ref(&xs), &[]).expect("no failure");
    for (j, x) in (-3..30).enumerate() {
        let (mut acc, mut n) = (0i32, x);
        while n > 0 {
            acc = acc.wrapping_mul(3).wrapping_add(n);
            n -= 1;
        }
        assert_eq!(out[0][j], Prim::I32(acc), "x = {x}");
        assert_eq!(out[1][j], Prim::I32(n), "x = {x}");
    }
}

/// Rows as results: a nested map writes its row of the output in place, an array that is
/// not built there (a row of the input) is copied; a failing element gives a failure code.
#[test]
fn array_results() {
    let t = PrimType::I32;
    let row = |k: u32| Param {
        name: VName(k),
        ty: Type::Array {
            elem: t,
            shape: vec![SubExp::i64(3)],
        },
    };
    let row_t = Type::Array {
        elem: t,
        shape: vec![SubExp::i64(3)],
    };
    // \r -> (map (\x -> 12 / x) r, r)
    let inner = lam_of(
        &[t],
        BasicOp::BinOp(BinOp::Div, SubExp::Const(Prim::I32(12)), var(0)),
        t,
    );
    let lam = Lambda::new(
        vec![row(0)],
        Body {
            stms: vec![stm_exp(
                vec![row(1)],
                Exp::Soac(Soac::Map {
                    w: SubExp::i64(3),
                    lam: inner,
                    arrs: vec![VName(0)],
                }),
            )],
            result: vec![var(1), var(0)],
        },
        vec![row_t.clone(), row_t],
    );
    let k = compile_map(&lam, &|_| None).expect("compiles");
    assert_eq!(k.result_ranks, vec![2, 2]);
    let run = |m: &[i32]| -> Result<(Vec<i32>, Vec<i32>), i32> {
        let n = m.len() / 3;
        let mut outs = [vec![0i32; m.len()], vec![0i32; m.len()]];
        let dims: Vec<i64> = vec![n as i64, 3, n as i64, 3, n as i64, 3];
        let ins = [m.as_ptr() as *const u8, dims.as_ptr() as *const u8];
        let out_ptrs: Vec<*mut u8> = outs.iter_mut().map(|o| o.as_mut_ptr() as *mut u8).collect();
        // SAFETY: the input and both outputs hold n rows of 3 i32.
        let code = unsafe { k.run(0, n, &ins, &out_ptrs) };
        if code != 0 {
            return Err(code);
        }
        Ok((outs[0].clone(), outs[1].clone()))
    };
    let m = [1, 2, 3, -4, 5, 6];
    assert_eq!(run(&m), Ok((vec![12, 6, 4, -3, 2, 2], m.to_vec())));
    assert!(run(&[1, 2, 3, 4, 0, 6]).is_err());
}

/// The slice shim resolves `start:end:stride` exactly as the evaluator's `select` does:
/// the same valid slices, with the same elements, and the same invalid ones.
#[test]
fn slices_resolve_as_the_evaluator_does() {
    use runic_prim::index::{select, DimVal};
    let opts = [
        None,
        Some(-2i64),
        Some(-1),
        Some(0),
        Some(1),
        Some(2),
        Some(3),
        Some(5),
    ];
    for w in 0..5i64 {
        for start in opts {
            for end in opts {
                for stride in opts {
                    let flags = start.is_some() as i64
                        | (end.is_some() as i64) << 1
                        | (stride.is_some() as i64) << 2;
                    let mut out = [0i64; 3];
                    // SAFETY: `out` holds three i64.
                    let code = unsafe {
                        runic_jit::shims::rt_slice(
                            w,
                            start.unwrap_or(0),
                            end.unwrap_or(0),
                            stride.unwrap_or(0),
                            flags,
                            out.as_mut_ptr(),
                        )
                    };
                    let want = select(&[w as usize], &[DimVal::Slice { start, end, stride }]);
                    let what = format!("w {w} {start:?}:{end:?}:{stride:?}");
                    match want {
                        Err(_) => assert_ne!(code, 0, "{what}"),
                        Ok(sel) => {
                            assert_eq!(code, 0, "{what}");
                            let [i, n, s] = out;
                            let got: Vec<usize> = (0..n).map(|k| (i + k * s) as usize).collect();
                            assert_eq!(got, sel.block_offsets(), "{what}");
                        }
                    }
                }
            }
        }
    }
}
