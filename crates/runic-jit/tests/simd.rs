//! SIMD map kernels (`simd.rs`): the accuracy of the vector `exp`, `log` and `tanh` against
//! std (`f64`) and runic_prim (`f32`, also in the scalar code), and vector results against runic_prim's scalar ones on random inputs with edge
//! cases (0, -0, negative, huge, tiny, subnormal, ±inf, NaN), over ranges whose lengths and
//! starts are not multiples of the lanes, so that the scalar tail runs too.
//! (Skipped where the host has no SIMD code or `RUNIC_SIMD=0`.)

mod common;

use common::{param as p, stm, var as v, Rng};
use runic_ir::*;
use runic_jit::{compile_map, from_raw, to_raw, MapKernel};
use runic_prim::{binop, unop};

const EDGES: [f64; 24] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    2.0,
    1e-300,
    -1e-300,
    5e-324,
    -5e-324,
    2.2250738585072014e-308,
    1e-8,
    -1e-8,
    20.0,
    -20.0,
    88.7,
    -103.9,
    709.78,
    -745.1,
    1e300,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
];

fn lam(params: &[PrimType], stms: Vec<Stm>, result: u32, rt: PrimType) -> Lambda {
    Lambda::new(
        params
            .iter()
            .enumerate()
            .map(|(k, t)| p(k as u32, *t))
            .collect(),
        Body {
            stms,
            result: vec![v(result)],
        },
        vec![Type::Prim(rt)],
    )
}

/// Runs a one-result kernel over `start..n` of the columns (raw words of type `t`).
fn run(k: &MapKernel, t: PrimType, cols: &[Vec<f64>], start: usize) -> Vec<f64> {
    let n = cols[0].len();
    let size = t.size_bytes();
    let enc = |x: f64| to_raw(Prim::float(t, x)).to_le_bytes();
    let data: Vec<Vec<u8>> = cols
        .iter()
        .map(|c| c.iter().flat_map(|&x| enc(x)[..size].to_vec()).collect())
        .collect();
    let mut out = vec![0u8; n * size];
    let mut ins: Vec<*const u8> = data.iter().map(|c| c.as_ptr()).collect();
    let dims: Vec<i64> = vec![n as i64; cols.len() + 1];
    ins.push(dims.as_ptr() as *const u8);
    let outs = [out.as_mut_ptr()];
    // SAFETY: every column and the output hold n elements of type t.
    let code = unsafe { k.run(start, n, &ins, &outs) };
    assert_eq!(code, 0);
    (0..n)
        .map(|i| {
            let mut w = [0u8; 8];
            w[..size].copy_from_slice(&out[i * size..(i + 1) * size]);
            from_raw(t, u64::from_le_bytes(w)).as_float().unwrap()
        })
        .collect()
}

/// Distance in units in the last place between two f64 of the same sign.
fn ulps(a: f64, b: f64) -> u64 {
    if a == b || (a.is_nan() && b.is_nan()) {
        return 0;
    }
    if a.is_nan() || b.is_nan() || a.is_sign_negative() != b.is_sign_negative() {
        return u64::MAX;
    }
    a.to_bits().abs_diff(b.to_bits())
}

fn unop_lam(op: UnOp, t: PrimType) -> Lambda {
    lam(&[t], vec![stm(1, t, BasicOp::UnOp(op, v(0)))], 1, t)
}

/// Inputs for a function: the edge cases, then uniform values over the ranges where it
/// is interesting.
fn inputs(rng: &mut Rng, ranges: &[(f64, f64)], per_range: usize) -> Vec<f64> {
    let mut xs = EDGES.to_vec();
    for &(lo, hi) in ranges {
        xs.extend((0..per_range).map(|_| rng.range(lo, hi)));
    }
    // Magnitudes spread over the exponents, both signs.
    xs.extend((0..per_range).map(|_| {
        f64::from_bits(rng.next() >> 1)
            * if rng.next().is_multiple_of(2) {
                1.0
            } else {
                -1.0
            }
    }));
    xs
}

/// The largest distance in ulps of the vector `f64` function from std over `xs`, with
/// every special value (infinite, zero, NaN results) exact.
fn max_ulps(op: UnOp, xs: &[f64], std: fn(f64) -> f64) -> u64 {
    let k = compile_map(&unop_lam(op, PrimType::F64), &|_| None).unwrap();
    let got = run(&k, PrimType::F64, &[xs.to_vec()], 0);
    let mut worst = 0;
    for (x, g) in xs.iter().zip(got) {
        let e = std(*x);
        if !e.is_finite() || e == 0.0 || !g.is_finite() || g == 0.0 {
            let same = (e.is_nan() && g.is_nan()) || e.to_bits() == g.to_bits();
            assert!(same, "{op:?}({x:e}): {g:e}, std {e:e}");
            continue;
        }
        let u = ulps(g, e);
        assert!(u <= 8, "{op:?}({x:e}): {g:e}, std {e:e} ({u} ulp)");
        worst = worst.max(u);
    }
    worst
}

#[test]
fn vector_exp_log_tanh_are_within_a_few_ulp_of_std() {
    let k = compile_map(&unop_lam(UnOp::Exp, PrimType::F64), &|_| None).unwrap();
    if k.simd_lanes == 0 {
        return;
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let n = 200_000;
    let xs = inputs(&mut rng, &[(-745.2, 709.8), (-2.0, 2.0), (-1e-5, 1e-5)], n);
    let e = max_ulps(UnOp::Exp, &xs, f64::exp);
    let xs = inputs(
        &mut rng,
        &[(0.0, 4.0), (0.5, 2.0), (0.0, 1e-300), (0.0, 1e300)],
        n,
    );
    let l = max_ulps(UnOp::Log, &xs, f64::ln);
    let xs = inputs(&mut rng, &[(-25.0, 25.0), (-1.0, 1.0), (-1e-4, 1e-4)], n);
    let t = max_ulps(UnOp::Tanh, &xs, f64::tanh);
    eprintln!("max ulp from std: exp {e}, log {l}, tanh {t}");
    assert!(e <= 1 && l <= 1 && t <= 4, "exp {e}, log {l}, tanh {t}");
}

/// `f32` inputs for `op`: the edge cases, the points where `exp` is clamped or its result
/// overflows or vanishes (and their neighbours), uniform values over `[lo, hi]`, and bit
/// patterns spread over every exponent, both signs.
fn f32_inputs(rng: &mut Rng, lo: f64, hi: f64) -> Vec<f64> {
    let mut xs: Vec<f64> = EDGES.iter().map(|&x| x as f32 as f64).collect();
    let near = [
        -104.0f32, 89.0, 88.72284, -103.97208, -87.33655, 12.0, 9.0, 1e-30,
    ];
    for c in near {
        let b = c.to_bits();
        xs.extend((b - 3..=b + 3).map(|u| f32::from_bits(u) as f64));
    }
    xs.extend((0..200_000).map(|_| rng.range(lo, hi) as f32 as f64));
    xs.extend((0..50_000).map(|_| f32::from_bits(rng.next() as u32) as f64));
    xs
}

/// The largest distance in `f32` ulps of `got` from `runic_prim`'s correctly rounded
/// results, with every special value (infinite, zero and NaN results) exactly theirs.
fn max_f32_ulps(op: UnOp, xs: &[f64], got: &[f64]) -> u32 {
    let mut worst = 0;
    for (x, g) in xs.iter().zip(got) {
        let e = unop(op, Prim::F32(*x as f32)).as_float().unwrap();
        let (e, g) = (e as f32, *g as f32);
        if !e.is_finite() || e == 0.0 || !g.is_finite() || g == 0.0 {
            let same = (e.is_nan() && g.is_nan()) || e.to_bits() == g.to_bits();
            assert!(same, "{op:?}({x:e}): {g:e}, runic_prim {e:e}");
            continue;
        }
        assert_eq!(g.is_sign_negative(), e.is_sign_negative(), "{op:?}({x:e})");
        worst = worst.max(g.to_bits().abs_diff(e.to_bits()));
    }
    worst
}

/// `f32` lanes compute `exp`, `log` and `tanh` in `f32` (`simd::math`), in the vector
/// loop and, one lane at a time, in the scalar code (a lambda with an `i32` parameter is
/// not vectorised): within 1, 1 and 2 ulp of the correctly rounded result.
#[test]
fn f32_exp_log_tanh_are_within_an_ulp_or_two() {
    let t = PrimType::F32;
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for (op, lo, hi, bound) in [
        (UnOp::Exp, -110.0, 95.0, 1),
        (UnOp::Log, 0.0, 100.0, 1),
        (UnOp::Tanh, -10.0, 10.0, 2),
    ] {
        let xs = f32_inputs(&mut rng, lo, hi);
        let vector = compile_map(&unop_lam(op, t), &|_| None).unwrap();
        let scalar_lam = lam(
            &[t, PrimType::I32],
            vec![stm(2, t, BasicOp::UnOp(op, v(0)))],
            2,
            t,
        );
        let scalar = compile_map(&scalar_lam, &|_| None).unwrap();
        assert_eq!(scalar.simd_lanes, 0);
        let zeros = vec![0.0; xs.len()];
        let mut kernels = vec![("scalar", run(&scalar, t, &[xs.clone(), zeros], 0))];
        if vector.simd_lanes > 0 {
            kernels.push(("vector", run(&vector, t, std::slice::from_ref(&xs), 0)));
        }
        for (which, got) in kernels {
            let worst = max_f32_ulps(op, &xs, &got);
            eprintln!("{op:?} ({which}): at most {worst} ulp from runic_prim");
            assert!(worst <= bound, "{op:?} ({which}): {worst} ulp");
        }
    }
}

/// A body using every vectorised construct: `sigmoid` through `exp`, a comparison
/// selecting with `if`, `min`/`max`, `sqrt`, `abs`, `floor`, `mad` and bool conversion.
fn mixed(t: PrimType) -> Lambda {
    use BasicOp::*;
    let c = |x: f64| runic_ir::SubExp::Const(Prim::float(t, x));
    let b = PrimType::Bool;
    let branch = |stms: Vec<Stm>, r: u32| Body {
        stms,
        result: vec![v(r)],
    };
    let stms = vec![
        stm(2, t, UnOp(runic_ir::UnOp::Neg, v(0))),
        stm(3, t, UnOp(runic_ir::UnOp::Exp, v(2))),
        stm(4, t, BinOp(runic_ir::BinOp::Add, c(1.0), v(3))),
        stm(5, t, BinOp(runic_ir::BinOp::Div, c(1.0), v(4))),
        stm(6, b, BinOp(runic_ir::BinOp::Lt, v(0), v(1))),
        Stm {
            pat: vec![p(7, t)],
            exp: Exp::If {
                cond: v(6),
                then_body: branch(
                    vec![stm(20, t, BinOp(runic_ir::BinOp::Min, v(0), v(1)))],
                    20,
                ),
                else_body: branch(
                    vec![
                        stm(21, t, UnOp(runic_ir::UnOp::Abs, v(1))),
                        stm(22, t, UnOp(runic_ir::UnOp::Sqrt, v(21))),
                        stm(23, t, UnOp(runic_ir::UnOp::Floor, v(22))),
                    ],
                    23,
                ),
                ret: vec![Type::Prim(t)],
            },
            src: SrcInfo::default(),
        },
        stm(8, t, BinOp(runic_ir::BinOp::Max, v(7), v(5))),
        stm(9, t, Convert(t, v(6))),
        stm(10, t, TernOp(runic_ir::TernOp::Mad, v(8), v(9), v(1))),
        stm(11, t, UnOp(runic_ir::UnOp::Tanh, v(10))),
        stm(12, t, UnOp(runic_ir::UnOp::Log, v(4))),
        stm(13, t, BinOp(runic_ir::BinOp::Sub, v(11), v(12))),
    ];
    lam(&[t, t], stms, 13, t)
}

/// The same body on runic_prim scalars.
fn mixed_ref(t: PrimType, x: f64, y: f64) -> f64 {
    let f = |v: f64| Prim::float(t, v);
    let bin = |o, a: Prim, b: Prim| binop(o, a, b).unwrap();
    let (x, y) = (f(x), f(y));
    let e = unop(UnOp::Exp, unop(UnOp::Neg, x));
    let d = bin(BinOp::Add, f(1.0), e);
    let s = bin(BinOp::Div, f(1.0), d);
    let lt = bin(BinOp::Lt, x, y);
    let m = if lt == Prim::Bool(true) {
        bin(BinOp::Min, x, y)
    } else {
        unop(UnOp::Floor, unop(UnOp::Sqrt, unop(UnOp::Abs, y)))
    };
    let mx = bin(BinOp::Max, m, s);
    let b = f(if lt == Prim::Bool(true) { 1.0 } else { 0.0 });
    let mad = bin(BinOp::Add, bin(BinOp::Mul, mx, b), y);
    let r = bin(BinOp::Sub, unop(UnOp::Tanh, mad), unop(UnOp::Log, d));
    r.as_float().unwrap()
}

#[test]
fn vector_maps_agree_with_scalar_runic_prim() {
    for t in [PrimType::F32, PrimType::F64] {
        let k = compile_map(&mixed(t), &|_| None).unwrap();
        if k.simd_lanes == 0 {
            return;
        }
        let mut rng = Rng(0x5555_aaaa_1234_4321 ^ t.bits() as u64);
        let mut xs: Vec<f64> = Vec::new();
        let mut ys: Vec<f64> = Vec::new();
        for a in EDGES {
            for b in EDGES {
                xs.push(a);
                ys.push(b);
            }
        }
        for _ in 0..50_000 {
            xs.push(rng.range(-30.0, 30.0));
            ys.push(rng.range(-30.0, 30.0));
        }
        // Ties of min/max between 0 and -0 (left to the scalar code), and a tail.
        xs.extend([0.0, -0.0, -0.0, 0.0, 3.0]);
        ys.extend([0.5, 0.5, 1.0, 1.0, 2.0]);
        let round = |z: f64| Prim::float(t, z).as_float().unwrap();
        let xs: Vec<f64> = xs.into_iter().map(round).collect();
        let ys: Vec<f64> = ys.into_iter().map(round).collect();
        for start in [0, 1, 3] {
            let got = run(&k, t, &[xs.clone(), ys.clone()], start);
            for i in start..xs.len() {
                let e = mixed_ref(t, xs[i], ys[i]);
                let g = got[i];
                // f32's exp, log and tanh are within an ulp or two of runic_prim's
                // correctly rounded values (above); f64's within 1e-12.
                let tol = if t == PrimType::F32 {
                    8.0 * f32::EPSILON as f64
                } else {
                    1e-12
                };
                let ok =
                    (e.is_nan() && g.is_nan()) || e == g || (g - e).abs() <= tol * e.abs().max(1.0);
                assert!(ok, "{t}: f({}, {}) = {g:e}, scalar {e:e}", xs[i], ys[i]);
            }
        }
    }
}

/// Short bodies run four groups of lanes per step of their loop, then one group at a
/// time, then the scalar code: every length and start around those boundaries gives the
/// scalar results, and a group the vector code leaves to the scalar code (a `min`/`max`
/// tie of `0` and `-0`) stops the loop at that group wherever it falls in a step.
#[test]
fn unrolled_vector_loops_match_the_scalar_code() {
    for t in [PrimType::F32, PrimType::F64] {
        // x·y + x: no group leaves lanes to the scalar code.
        let l = lam(
            &[t, t],
            vec![
                stm(2, t, BasicOp::BinOp(BinOp::Mul, v(0), v(1))),
                stm(3, t, BasicOp::BinOp(BinOp::Add, v(2), v(0))),
            ],
            3,
            t,
        );
        let k = compile_map(&l, &|_| None).unwrap();
        if k.simd_lanes == 0 {
            return;
        }
        let mut rng = Rng(0x0bad_cafe_0123_4567 ^ t.bits() as u64);
        for n in 0..=45 {
            let round = |z: f64| Prim::float(t, z).as_float().unwrap();
            let xs: Vec<f64> = (0..n).map(|_| round(rng.range(-4.0, 4.0))).collect();
            let ys: Vec<f64> = (0..n).map(|_| round(rng.range(-4.0, 4.0))).collect();
            for start in [0, 1, 3, 5].into_iter().filter(|&s| s <= n) {
                let got = run(&k, t, &[xs.clone(), ys.clone()], start);
                for i in start..n {
                    let p = |x| Prim::float(t, x);
                    let m = binop(BinOp::Mul, p(xs[i]), p(ys[i])).unwrap();
                    let e = binop(BinOp::Add, m, p(xs[i])).unwrap();
                    assert_eq!(
                        got[i].to_bits(),
                        e.as_float().unwrap().to_bits(),
                        "{t} n {n}"
                    );
                }
            }
        }
        // min with ties of zeros at positions falling in each group of an unrolled step.
        let l = lam(
            &[t, t],
            vec![stm(2, t, BasicOp::BinOp(BinOp::Min, v(0), v(1)))],
            2,
            t,
        );
        let k = compile_map(&l, &|_| None).unwrap();
        for tie in [0, 5, 9, 14, 18, 27, 31, 40] {
            let n = 48;
            let mut xs: Vec<f64> = (0..n).map(|i| i as f64 - 20.5).collect();
            let mut ys: Vec<f64> = (0..n).map(|i| 7.25 - i as f64).collect();
            xs[tie] = -0.0;
            ys[tie] = 0.0;
            let got = run(&k, t, &[xs.clone(), ys.clone()], 0);
            for i in 0..n {
                let e = binop(BinOp::Min, Prim::float(t, xs[i]), Prim::float(t, ys[i]));
                let e = e.unwrap().as_float().unwrap();
                assert_eq!(
                    got[i].to_bits(),
                    e.to_bits(),
                    "{t}: tie at {tie}, element {i}"
                );
            }
        }
    }
}

#[test]
fn min_max_ties_of_zeros_are_runic_prims() {
    for t in [PrimType::F32, PrimType::F64] {
        for op in [BinOp::Min, BinOp::Max] {
            let l = lam(
                &[t, t],
                vec![stm(2, t, BasicOp::BinOp(op, v(0), v(1)))],
                2,
                t,
            );
            let k = compile_map(&l, &|_| None).unwrap();
            let xs = vec![1.0, 0.0, -0.0, 0.0, -0.0, f64::NAN, 2.0, -3.0, 0.0];
            let ys = vec![2.0, -0.0, 0.0, 0.0, -0.0, 1.0, f64::NAN, -3.0, -0.0];
            let got = run(&k, t, &[xs.clone(), ys.clone()], 0);
            for i in 0..xs.len() {
                let e = binop(op, Prim::float(t, xs[i]), Prim::float(t, ys[i]));
                let e = e.unwrap().as_float().unwrap();
                assert_eq!(
                    got[i].to_bits(),
                    e.to_bits(),
                    "{op:?}({}, {})",
                    xs[i],
                    ys[i]
                );
            }
        }
    }
}

/// `min`/`max` with a constant operand on either side (ReLU's `max 0 x`, which the lanes
/// compute with one comparison), constants `0`, `-0` and others, against runic_prim on
/// every edge value, each element of a vector's lanes in turn.
#[test]
fn min_max_with_a_constant_are_runic_prims() {
    for t in [PrimType::F32, PrimType::F64] {
        for op in [BinOp::Min, BinOp::Max] {
            for c in [0.0, -0.0, 1.0, -0.5, f64::INFINITY, f64::NAN] {
                let k = SubExp::Const(Prim::float(t, c));
                for const_first in [false, true] {
                    let e = if const_first {
                        BasicOp::BinOp(op, k.clone(), v(0))
                    } else {
                        BasicOp::BinOp(op, v(0), k.clone())
                    };
                    let kernel =
                        compile_map(&lam(&[t], vec![stm(1, t, e)], 1, t), &|_| None).unwrap();
                    let xs: Vec<f64> = (0..3)
                        .flat_map(|_| EDGES)
                        .chain(EDGES[..5].iter().copied())
                        .collect();
                    let got = run(&kernel, t, std::slice::from_ref(&xs), 0);
                    for (x, g) in xs.iter().zip(&got) {
                        let (a, b) = if const_first { (c, *x) } else { (*x, c) };
                        let want = binop(op, Prim::float(t, a), Prim::float(t, b)).unwrap();
                        let want = want.as_float().unwrap();
                        assert!(
                            g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()),
                            "{t} {op:?}({a}, {b}) = {g}, runic_prim {want}"
                        );
                    }
                }
            }
        }
    }
}

/// The scalar code's `min`/`max` (a body the lanes do not take: `sin`) on every pair of
/// NaNs, zeros, infinities and ordinary values, bit for bit runic_prim's.
#[test]
fn scalar_min_max_are_runic_prims_on_special_values() {
    let specials = [
        f64::NAN,
        -f64::NAN,
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.5,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MIN_POSITIVE,
    ];
    let (xs, ys): (Vec<f64>, Vec<f64>) = specials
        .iter()
        .flat_map(|&x| specials.iter().map(move |&y| (x, y)))
        .unzip();
    for t in [PrimType::F32, PrimType::F64] {
        for op in [BinOp::Min, BinOp::Max] {
            let l = lam(
                &[t, t, t],
                vec![
                    stm(3, t, BasicOp::BinOp(op, v(0), v(1))),
                    stm(4, t, BasicOp::UnOp(runic_ir::UnOp::Sin, v(2))),
                ],
                3,
                t,
            );
            let k = compile_map(&l, &|_| None).unwrap();
            assert_eq!(k.simd_lanes, 0, "the scalar code is under test");
            let got = run(&k, t, &[xs.clone(), ys.clone(), xs.clone()], 0);
            for i in 0..xs.len() {
                let e = binop(op, Prim::float(t, xs[i]), Prim::float(t, ys[i]));
                let e = e.unwrap().as_float().unwrap();
                let same = (e.is_nan() && got[i].is_nan()) || got[i].to_bits() == e.to_bits();
                assert!(
                    same,
                    "{t} {op:?}({}, {}) = {}, not {e}",
                    xs[i], ys[i], got[i]
                );
            }
        }
    }
}

/// `reduce (+) acc (map (\x -> x * x + c) xs)` over `start..n`, with `c` free.
fn run_sum(t: PrimType, xs: &[f64], c: f64, acc: f64, start: usize) -> f64 {
    use BasicOp::*;
    let free = VName(50);
    let pre = lam(
        &[t],
        vec![
            stm(1, t, BinOp(runic_ir::BinOp::Mul, v(0), v(0))),
            stm(
                2,
                t,
                BinOp(runic_ir::BinOp::Add, v(1), runic_ir::SubExp::Var(free)),
            ),
        ],
        2,
        t,
    );
    let op = lam(
        &[t, t],
        vec![stm(2, t, BinOp(runic_ir::BinOp::Add, v(0), v(1)))],
        2,
        t,
    );
    let k = runic_jit::compile_fold(Some(&pre), &op, &|v| {
        (v == free).then_some(runic_jit::VarType::Scalar(t))
    })
    .unwrap();
    let size = t.size_bytes();
    let data: Vec<u8> = xs
        .iter()
        .flat_map(|&x| to_raw(Prim::float(t, x)).to_le_bytes()[..size].to_vec())
        .collect();
    let cw = to_raw(Prim::float(t, c));
    let dims = [xs.len() as i64];
    let ins = [
        data.as_ptr(),
        &cw as *const u64 as *const u8,
        dims.as_ptr() as *const u8,
    ];
    let mut a = [to_raw(Prim::float(t, acc))];
    // SAFETY: the column holds xs.len() elements of type t; the free scalar is a raw word.
    let code = unsafe { k.run(start, xs.len(), &ins, &mut a) };
    assert_eq!(code, 0);
    from_raw(t, a[0]).as_float().unwrap()
}

#[test]
fn vector_sums_are_sums_in_lanes() {
    let mut rng = Rng(0x0bad_cafe_f00d_d00d);
    for t in [PrimType::F32, PrimType::F64] {
        let round = |z: f64| Prim::float(t, z).as_float().unwrap();
        // Lengths around each loop's step: the four-accumulator groups (8 f64, 16 f32),
        // the pairs after them (4 / 8), and the scalar tail.
        for n in [
            0, 1, 7, 8, 9, 12, 13, 15, 16, 17, 23, 24, 25, 31, 1000, 1001,
        ] {
            let xs: Vec<f64> = (0..n).map(|_| round(rng.range(-2.0, 2.0))).collect();
            for start in [0, 3] {
                let want: f64 = xs.iter().skip(start).map(|x| x * x + 0.5).sum::<f64>() + 1.25;
                let got = run_sum(t, &xs, 0.5, 1.25, start);
                let tol = if t == PrimType::F32 { 1e-5 } else { 1e-12 };
                assert!(
                    (got - want).abs() <= tol * want.abs(),
                    "{t} n={n}: {got} vs {want}"
                );
            }
        }
        // Zeros sum to +0 (as in order: 0·0 + -0 = +0); inf and NaN propagate.
        let got = run_sum(t, &[0.0; 11], -0.0, -0.0, 0);
        assert!(got == 0.0 && got.is_sign_positive(), "{t}: {got}");
        let mut xs = vec![1.0; 11];
        xs[5] = f64::INFINITY;
        assert_eq!(run_sum(t, &xs, 0.0, 0.0, 0), f64::INFINITY);
        xs[6] = f64::NAN;
        assert!(run_sum(t, &xs, 0.0, 0.0, 0).is_nan());
    }
}

/// `reduce op acc xs` (no pre-lambda) over `start..n` for `op` min or max.
fn run_min_max(t: PrimType, op: BinOp, xs: &[f64], acc: f64, start: usize) -> f64 {
    let l = lam(
        &[t, t],
        vec![stm(2, t, BasicOp::BinOp(op, v(0), v(1)))],
        2,
        t,
    );
    let k = runic_jit::compile_fold(None, &l, &|_| None).unwrap();
    let size = t.size_bytes();
    let data: Vec<u8> = xs
        .iter()
        .flat_map(|&x| to_raw(Prim::float(t, x)).to_le_bytes()[..size].to_vec())
        .collect();
    let dims = [xs.len() as i64];
    let ins = [data.as_ptr(), dims.as_ptr() as *const u8];
    let mut a = [to_raw(Prim::float(t, acc))];
    // SAFETY: the column holds xs.len() elements of type t.
    let code = unsafe { k.run(start, xs.len(), &ins, &mut a) };
    assert_eq!(code, 0);
    from_raw(t, a[0]).as_float().unwrap()
}

/// `min` and `max` folded in lanes give the sequential fold's bits, whatever the length
/// (every loop of the vector fold and the scalar tail) and wherever zeros of both signs
/// and NaNs fall: a group of lanes meeting `0` against `-0` hands the fold back to the
/// scalar code from the start.
#[test]
fn vector_min_max_folds_are_sequential_folds() {
    let mut rng = Rng(0x5eed_0ff0_1d00);
    for t in [PrimType::F32, PrimType::F64] {
        let round = |z: f64| Prim::float(t, z).as_float().unwrap();
        for op in [BinOp::Min, BinOp::Max] {
            for n in [1, 7, 8, 9, 15, 16, 17, 24, 25, 31, 32, 33, 35, 64, 100] {
                for trial in 0..20 {
                    let xs: Vec<f64> = (0..n)
                        .map(|_| match rng.next() % 8 {
                            0 => 0.0,
                            1 => -0.0,
                            2 if trial % 2 == 0 => f64::NAN,
                            _ => round(rng.range(-1.0, 1.0)),
                        })
                        .collect();
                    for start in [0, 3.min(n)] {
                        let want = xs[start..].iter().fold(Prim::float(t, 0.0), |a, &x| {
                            binop(op, a, Prim::float(t, x)).unwrap()
                        });
                        let got = run_min_max(t, op, &xs, 0.0, start);
                        assert_eq!(
                            got.to_bits(),
                            want.as_float().unwrap().to_bits(),
                            "{t} {op:?} n={n} start={start}: {xs:?}"
                        );
                    }
                }
            }
        }
    }
}

/// A parameter that is the element's index (`map (\i -> f32.i64 i * c) (iota n)`) has no
/// input: its lanes are the indices converted, which must round as the scalar conversion
/// does — where `f32` stops being exact (2^24), where 32-bit lane indices would overflow
/// (2^31: those elements are left to the scalar code) and, for `f64`, around 2^53 and up
/// to where an output's byte offset would not fit in 64 bits.
#[test]
fn index_lanes_round_as_the_scalar_conversion() {
    for (t, c, starts) in [
        (
            PrimType::F32,
            3.0,
            vec![0i64, 5, (1 << 24) - 7, (1 << 31) - 9],
        ),
        (
            PrimType::F64,
            3.0,
            vec![0i64, 5, (1 << 53) - 7, (1 << 58) - 3],
        ),
    ] {
        let body = vec![
            stm(1, t, BasicOp::Convert(t, v(0))),
            stm(
                2,
                t,
                BasicOp::BinOp(BinOp::Mul, v(1), SubExp::Const(Prim::float(t, c))),
            ),
        ];
        let lam = Lambda::new(
            vec![p(0, PrimType::I64)],
            Body {
                stms: body,
                result: vec![v(2)],
            },
            vec![Type::Prim(t)],
        );
        let k = runic_jit::compile_map_indexed(&lam, &[true], &|_| None).unwrap();
        assert_eq!(k.index_params, [true]);
        assert!(k.params.is_empty(), "an index has no input");
        if runic_jit::compile_map(&unop_lam(UnOp::Neg, t), &|_| None)
            .unwrap()
            .simd_lanes
            > 0
        {
            assert!(k.simd_lanes > 0, "{t}: the index converted in lanes");
        }
        let size = t.size_bytes();
        for start in starts {
            let n = 19;
            let mut out = vec![0u8; n * size];
            // The output's element `start` is the buffer's first: the kernel writes
            // `base + i·size` for `i` in `start..start + n`.
            let base = out
                .as_mut_ptr()
                .wrapping_sub((start as usize).wrapping_mul(size));
            let dims = [(start as usize + n) as i64];
            let ins = [dims.as_ptr() as *const u8];
            // SAFETY: the kernel reads no input and writes the n elements of `out`.
            let code = unsafe { k.run(start as usize, start as usize + n, &ins, &[base]) };
            assert_eq!(code, 0);
            for e in 0..n {
                let i = start + e as i64;
                let x = runic_prim::convert(Prim::I64(i), t);
                let want = binop(BinOp::Mul, x, Prim::float(t, c)).unwrap();
                let mut w = [0u8; 8];
                w[..size].copy_from_slice(&out[e * size..(e + 1) * size]);
                let got = from_raw(t, u64::from_le_bytes(w));
                assert_eq!(to_raw(got), to_raw(want), "{t} index {i}");
            }
        }
    }
}
