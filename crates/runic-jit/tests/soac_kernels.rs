//! Scan kernels (and, below, the kernels of later SOACs) against sequential `runic_prim`
//! evaluation, bit for bit, on every primitive type.

mod common;

use common::{param, stm, var};
use runic_ir::*;
use runic_jit::shims::scalar_binop;
use runic_jit::{compile_scan, from_raw, to_raw, ScanKernel};

const TYPES: [PrimType; 11] = [
    PrimType::I8,
    PrimType::I16,
    PrimType::I32,
    PrimType::I64,
    PrimType::U8,
    PrimType::U16,
    PrimType::U32,
    PrimType::U64,
    PrimType::F16,
    PrimType::F32,
    PrimType::F64,
];

/// `\x0 x1 -> x0 op x1`.
fn binop_lam(op: BinOp, t: PrimType) -> Lambda {
    Lambda::new(
        vec![param(0, t), param(1, t)],
        Body {
            stms: vec![stm(2, t, BasicOp::BinOp(op, var(0), var(1)))],
            result: vec![var(2)],
        },
        vec![Type::Prim(t)],
    )
}

/// A column of elements in their natural size.
fn column(t: PrimType, xs: &[Prim]) -> Vec<u8> {
    let size = t.size_bytes();
    let mut out = Vec::with_capacity(xs.len() * size + 8);
    for x in xs {
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

/// Values of `t` from small integers (exact in every type), with some negatives.
fn sample(t: PrimType, n: usize) -> Vec<Prim> {
    (0..n)
        .map(|k| {
            let x = (k as i64 * 7919 % 23) - 9;
            let x = if t.is_signed_int() || t.is_float() {
                x
            } else {
                x.abs()
            };
            runic_prim::convert(Prim::I64(x), t)
        })
        .collect()
}

/// Scans `xs` from `ne` with the kernel, in two calls split at `mid`, carrying the
/// accumulator between them as the executor carries a chunk's carry.
fn scan_with(
    k: &ScanKernel,
    t: PrimType,
    xs: &[Prim],
    ne: Prim,
    mid: usize,
) -> Result<Vec<Prim>, i32> {
    let col = column(t, xs);
    let mut out = vec![0u8; xs.len() * t.size_bytes() + 8];
    let dims = [xs.len() as i64];
    let ins = [col.as_ptr(), dims.as_ptr() as *const u8];
    let outs = [out.as_mut_ptr()];
    let mut acc = [to_raw(ne)];
    for (lo, hi) in [(0, mid), (mid, xs.len())] {
        // SAFETY: the column and the output hold `xs.len()` elements of `t`.
        let code = unsafe { k.run(lo, hi, &ins, &mut acc, &outs) };
        if code != 0 {
            return Err(code);
        }
    }
    Ok(uncolumn(t, &out, xs.len()))
}

fn same(a: Prim, b: Prim) -> bool {
    to_raw(a) == to_raw(b)
}

#[test]
fn scans_of_every_type_and_operator() {
    for t in TYPES {
        for op in [BinOp::Add, BinOp::Mul, BinOp::Min, BinOp::Max, BinOp::Sub] {
            let lam = binop_lam(op, t);
            let k = compile_scan(None, &lam, &|_| None).expect("compiles");
            let xs = sample(t, 200);
            let ne = runic_prim::convert(Prim::I64(1), t);
            let got = scan_with(&k, t, &xs, ne, 77).expect("no failure");
            let mut a = ne;
            for (j, x) in xs.iter().enumerate() {
                a = scalar_binop(op, a, *x).expect("no failure");
                assert!(same(got[j], a), "{t:?} {op:?} at {j}: {:?} {:?}", got[j], a);
            }
        }
    }
}

#[test]
fn scan_with_a_map_and_a_failure() {
    // scan (+) 0 (map (\x -> 100 / x) xs) over i32: native floor division, and a failure
    // code where x = 0.
    let t = PrimType::I32;
    let pre = Lambda::new(
        vec![param(10, t)],
        Body {
            stms: vec![stm(
                11,
                t,
                BasicOp::BinOp(BinOp::Div, SubExp::Const(Prim::I32(100)), var(10)),
            )],
            result: vec![var(11)],
        },
        vec![Type::Prim(t)],
    );
    let k = compile_scan(Some(&pre), &binop_lam(BinOp::Add, t), &|_| None).expect("compiles");
    let xs: Vec<Prim> = [3, -7, 9, 1, -1].iter().map(|&x| Prim::I32(x)).collect();
    let got = scan_with(&k, t, &xs, Prim::I32(0), 2).expect("no failure");
    let want = [33, 33 - 15, 33 - 15 + 11, 33 - 15 + 11 + 100, 33 - 15 + 11];
    assert_eq!(got, want.iter().map(|&x| Prim::I32(x)).collect::<Vec<_>>());
    let zs: Vec<Prim> = [3, 0, 9].iter().map(|&x| Prim::I32(x)).collect();
    assert!(scan_with(&k, t, &zs, Prim::I32(0), 1).is_err());
}

#[test]
fn scan_of_a_pair() {
    // (max value, its index) over f64 with NaN: runic_prim's comparison, sequential.
    let (f, i) = (PrimType::F64, PrimType::I64);
    let lam = Lambda::new(
        vec![param(0, f), param(1, i), param(2, f), param(3, i)],
        Body {
            stms: vec![
                stm(4, PrimType::Bool, BasicOp::BinOp(BinOp::Lt, var(0), var(2))),
                Stm {
                    pat: vec![param(5, f), param(6, i)],
                    exp: Exp::If {
                        cond: var(4),
                        then_body: Body {
                            stms: vec![],
                            result: vec![var(2), var(3)],
                        },
                        else_body: Body {
                            stms: vec![],
                            result: vec![var(0), var(1)],
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
    let k = compile_scan(None, &lam, &|_| None).expect("compiles");
    let xs = [1.0, f64::NAN, 3.0, 2.0, 7.5];
    let cx = column(f, &xs.iter().map(|&x| Prim::F64(x)).collect::<Vec<_>>());
    let ci = column(i, &(0..5).map(Prim::I64).collect::<Vec<_>>());
    let (mut ov, mut oi) = (vec![0u8; 48], vec![0u8; 48]);
    let dims = [5i64, 5];
    let ins = [cx.as_ptr(), ci.as_ptr(), dims.as_ptr() as *const u8];
    let mut acc = [to_raw(Prim::F64(f64::NEG_INFINITY)), to_raw(Prim::I64(-1))];
    // SAFETY: two columns and two outputs of 5 elements.
    let code = unsafe { k.run(0, 5, &ins, &mut acc, &[ov.as_mut_ptr(), oi.as_mut_ptr()]) };
    assert_eq!(code, 0);
    let vals: Vec<f64> = uncolumn(f, &ov, 5)
        .iter()
        .map(|p| p.as_float().unwrap())
        .collect();
    assert_eq!(vals[..], [1.0, 1.0, 3.0, 3.0, 7.5]);
    assert_eq!(uncolumn(i, &oi, 5), [0, 0, 2, 2, 4].map(Prim::I64).to_vec());
}

#[test]
fn histograms_of_every_type_and_operator() {
    use runic_jit::compile_hist;
    for t in TYPES {
        for op in [BinOp::Add, BinOp::Max, BinOp::Min] {
            for it in [PrimType::I64, PrimType::I32, PrimType::U8] {
                let k = compile_hist(&binop_lam(op, t), &[it], &|_| None).expect("compiles");
                let n = 300;
                let is: Vec<Prim> = (0..n)
                    .map(|j| runic_prim::convert(Prim::I64((j * 37 % 13) as i64 - 2), it))
                    .collect();
                let xs = sample(t, n);
                let (ci, cx) = (column(it, &is), column(t, &xs));
                let nb = 9usize;
                let ne = runic_prim::convert(Prim::I64(3), t);
                // Bins 2..7 only, from element 5 on.
                let (lo, hi) = (2usize, 7usize);
                let mut d = column(t, &vec![ne; hi - lo]);
                d.extend([0u8; 8]);
                let dims = [n as i64, n as i64, nb as i64, lo as i64, hi as i64];
                let ins = [ci.as_ptr(), cx.as_ptr(), dims.as_ptr() as *const u8];
                // SAFETY: inputs of n elements, a destination of hi - lo bins.
                let code = unsafe { k.run(5, n, &ins, &[d.as_mut_ptr()]) };
                assert_eq!(code, 0);
                let got = uncolumn(t, &d, hi - lo);
                let mut want = vec![ne; hi - lo];
                for j in 5..n {
                    let b = is[j].to_i64().unwrap();
                    if b >= lo as i64 && b < hi as i64 && b < nb as i64 {
                        let w = &mut want[b as usize - lo];
                        *w = scalar_binop(op, *w, xs[j]).unwrap();
                    }
                }
                for (g, w) in got.iter().zip(&want) {
                    assert!(same(*g, *w), "{t:?} {op:?} {it:?}: {g:?} {w:?}");
                }
            }
        }
    }
}

#[test]
fn accumulator_updates_in_map_kernels() {
    use runic_jit::{compile_map, VarType};
    // \i x -> let a' = update_acc(a, [i], {x * 2}) in x: the free accumulator `a` (9) over
    // f64 with `+`, then (with no operator) overwriting updates; an index out of range is
    // skipped.
    let (f, i) = (PrimType::F64, PrimType::I64);
    let lam = Lambda::new(
        vec![param(0, i), param(1, f)],
        Body {
            stms: vec![
                stm(
                    2,
                    f,
                    BasicOp::BinOp(BinOp::Mul, var(1), SubExp::Const(Prim::F64(2.0))),
                ),
                Stm {
                    pat: vec![Param {
                        name: VName(3),
                        ty: Type::Acc {
                            shape: vec![SubExp::Const(Prim::I64(3))],
                            elems: vec![f],
                        },
                    }],
                    exp: Exp::Basic(BasicOp::UpdateAcc {
                        acc: VName(9),
                        is: vec![var(0)],
                        vals: vec![var(2)],
                    }),
                    src: SrcInfo::default(),
                },
            ],
            result: vec![var(1)],
        },
        vec![Type::Prim(f)],
    );
    let is = [2i64, 0, 5, 2, -1, 1];
    let xs = [1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0];
    for op in [Some(binop_lam(BinOp::Add, f)), None] {
        let ty = VarType::Acc(f, 1, op.clone());
        let k = compile_map(&lam, &|v| (v == VName(9)).then(|| ty.clone())).expect("compiles");
        assert_eq!(k.accs, vec![(VName(9), f, 1)]);
        let ci = column(i, &is.map(Prim::I64));
        let cx = column(f, &xs.map(Prim::F64));
        let mut acc = column(f, &[Prim::F64(10.0); 3]);
        let mut out = vec![0u8; 48];
        let dims = [6i64, 6, 3, 6];
        let ins = [
            ci.as_ptr(),
            cx.as_ptr(),
            acc.as_mut_ptr() as *const u8,
            dims.as_ptr() as *const u8,
        ];
        // SAFETY: inputs and output of 6 elements, an accumulator array of 3.
        let code = unsafe { k.run(0, 6, &ins, &[out.as_mut_ptr()]) };
        assert_eq!(code, 0);
        let want = match op {
            Some(_) => [10.0 + 4.0, 10.0 + 12.0, 10.0 + 2.0 + 8.0],
            None => [4.0, 12.0, 8.0],
        };
        assert_eq!(uncolumn(f, &acc, 3), want.map(Prim::F64).to_vec());
        assert_eq!(uncolumn(f, &out, 6), xs.map(Prim::F64).to_vec());
    }
}

#[test]
fn scatters_of_every_type() {
    use runic_jit::compile_scatter;
    for t in TYPES {
        let k = compile_scatter(&[PrimType::I32], t).expect("compiles");
        let is: Vec<Prim> = [3, -1, 0, 3, 7, 1].iter().map(|&x| Prim::I32(x)).collect();
        let xs = sample(t, 6);
        let (ci, cx) = (column(PrimType::I32, &is), column(t, &xs));
        let ne = runic_prim::convert(Prim::I64(5), t);
        let mut d = column(t, &[ne; 4]);
        d.extend([0u8; 8]);
        // Positions 1..4 only (the destination points at position 1).
        let dims = [6i64, 6, 4, 1, 4];
        let ins = [ci.as_ptr(), cx.as_ptr(), dims.as_ptr() as *const u8];
        // SAFETY: inputs of 6 elements, a destination of 3 (positions 1..4).
        assert_eq!(unsafe { k.run(0, 6, &ins, &[d.as_mut_ptr()]) }, 0);
        let got = uncolumn(t, &d, 3);
        // Position 3 is written twice (the later, element 3, wins); 0 and 7 are outside.
        let want = [xs[5], ne, xs[3]];
        for (g, w) in got.iter().zip(&want) {
            assert!(same(*g, *w), "{t:?}: {g:?} {w:?}");
        }
    }
}

#[test]
fn folds_with_array_accumulators() {
    use runic_jit::compile_fold;
    // reduce (\a b -> map2 (+) a b) over rows of 3 f32: the accumulator is an array.
    let f = PrimType::F32;
    let row = |k: u32| Param {
        name: VName(k),
        ty: Type::Array {
            elem: f,
            shape: vec![SubExp::Const(Prim::I64(3))],
        },
    };
    let op = Lambda::new(
        vec![row(0), row(1)],
        Body {
            stms: vec![Stm {
                pat: vec![row(2)],
                exp: Exp::Soac(Soac::Map {
                    w: SubExp::Const(Prim::I64(3)),
                    lam: binop_lam_at(BinOp::Add, f, 10),
                    arrs: vec![VName(0), VName(1)],
                }),
                src: SrcInfo::default(),
            }],
            result: vec![var(2)],
        },
        vec![row(2).ty],
    );
    let k = compile_fold(None, &op, &|_| None).expect("compiles");
    assert_eq!((k.accs.clone(), k.acc_ranks.clone()), (vec![f], vec![1]));
    let m: Vec<Prim> = (0..12).map(|x| Prim::F32(x as f32 * 0.5)).collect();
    let cm = column(f, &m);
    let mut acc_buf = column(f, &[Prim::F32(1.0); 3]);
    let dims = [4i64, 3, 3];
    let ins = [cm.as_ptr(), dims.as_ptr() as *const u8];
    let mut acc = [acc_buf.as_mut_ptr() as u64];
    // SAFETY: 4 rows of 3 f32, an accumulator buffer of 3 f32.
    assert_eq!(unsafe { k.run(1, 4, &ins, &mut acc) }, 0);
    // Rows 1..4: 1 + (1.5 + 3 + 4.5), 1 + (2 + 3.5 + 5), 1 + (2.5 + 4 + 5.5).
    let want = [10.0f32, 11.5, 13.0].map(Prim::F32);
    assert_eq!(uncolumn(f, &acc_buf, 3), want.to_vec());
}

/// `\x y -> x op y` with parameters numbered from `k`.
fn binop_lam_at(op: BinOp, t: PrimType, k: u32) -> Lambda {
    Lambda::new(
        vec![param(k, t), param(k + 1, t)],
        Body {
            stms: vec![stm(k + 2, t, BasicOp::BinOp(op, var(k), var(k + 1)))],
            result: vec![var(k + 2)],
        },
        vec![Type::Prim(t)],
    )
}

/// A free `i64` vector the caller marks as `iota n` (one hoisted out of the lambda, as the
/// optimiser does): the loops that map or reduce over it use their counter and never read
/// its memory, which holds other numbers here; a loop wider than it fails (code 3, for the
/// slow path to report), and an index into it reads memory as any array's does.
#[test]
fn free_iotas_are_read_as_counters() {
    use runic_jit::{compile_map, VarType};
    let (f, i) = (PrimType::F64, PrimType::I64);
    // \x w -> (reduce (+) 0 (map (\j -> x * f64 j) is[:w]), is[1])   with `is` (9) free
    let pre = Lambda::new(
        vec![param(10, i)],
        Body {
            stms: vec![
                stm(11, f, BasicOp::Convert(f, var(10))),
                stm(12, f, BasicOp::BinOp(BinOp::Mul, var(0), var(11))),
            ],
            result: vec![var(12)],
        },
        vec![Type::Prim(f)],
    );
    let sum = Stm {
        pat: vec![param(2, f)],
        exp: Exp::Soac(Soac::Reduce {
            w: var(1),
            arrs: vec![VName(9)],
            pre: Some(pre),
            lam: binop_lam(BinOp::Add, f),
            neutral: vec![SubExp::Const(Prim::F64(0.0))],
            commutative: true,
        }),
        src: SrcInfo::default(),
    };
    let picked = stm(
        3,
        i,
        BasicOp::Index(VName(9), vec![DimIndex::Fix(SubExp::Const(Prim::I64(1)))]),
    );
    let lam = Lambda::new(
        vec![param(0, f), param(1, i)],
        Body {
            stms: vec![sum, picked],
            result: vec![var(2), var(3)],
        },
        vec![Type::Prim(f), Type::Prim(i)],
    );
    let free = |v: VName| (v == VName(9)).then_some(VarType::Iota);
    let k = compile_map(&lam, &free).expect("compiles");
    let xs = [1.0f64, 2.0, 0.5];
    let ws = [4i64, 3, 0];
    // Not 0, 1, 2, 3: only the index reads it.
    let is = [70i64, 71, 72, 73];
    let run = |ws: &[i64]| {
        let (cx, cw, ci) = (
            column(f, &xs.map(Prim::F64)),
            column(i, &ws.iter().map(|&w| Prim::I64(w)).collect::<Vec<_>>()),
            column(i, &is.map(Prim::I64)),
        );
        let (mut sums, mut picks) = (vec![0u8; 24], vec![0u8; 24]);
        let dims = [3i64, 3, 4, 3, 3];
        let ins = [
            cx.as_ptr(),
            cw.as_ptr(),
            ci.as_ptr(),
            dims.as_ptr() as *const u8,
        ];
        // SAFETY: inputs and outputs of 3 elements, a free vector of 4.
        let code = unsafe { k.run(0, 3, &ins, &[sums.as_mut_ptr(), picks.as_mut_ptr()]) };
        (code, uncolumn(f, &sums, 3), uncolumn(i, &picks, 3))
    };
    let (code, sums, picks) = run(&ws);
    assert_eq!(code, 0);
    // x · (0 + 1 + … + (w − 1)).
    assert_eq!(sums, [6.0, 6.0, 0.0].map(Prim::F64).to_vec());
    assert_eq!(picks, [71i64; 3].map(Prim::I64).to_vec());
    // A sum over 5 elements of an iota of 4.
    assert_eq!(run(&[4, 5, 1]).0, 3);
}
