//! SIMD code for maps over `f32` and `f64` vectors: 128-bit lanes (`F32X4`, `F64X2`), with
//! the scalar loop finishing what the vector loop leaves (the tail, and any group of lanes
//! the vector code cannot do exactly).
//!
//! A lambda is vectorised when every parameter and result has one float type `T` and its
//! body uses only values of type `T` and booleans (lane masks): `+ - * /`, comparisons,
//! `min`/`max`, `&&`/`||`/`!`, `neg`, `abs`, `sqrt`, `recip`, `floor`/`ceil`/`trunc`/`round`,
//! `isnan`/`isinf`, `mad`/`lerp`, conversions between `T` and `bool`, `exp`, `log`, `tanh`,
//! and `if`s of such bodies (both branches are computed, the lanes selected by the
//! condition: none of these operations can fail). Free scalars of type `T` or `bool` are
//! broadcast. Everything else keeps the scalar code.
//!
//! Arithmetic, comparisons, `min`/`max`, `sqrt` and rounding give exactly `runic_prim`'s
//! results (a group of lanes where `min`/`max` would have to choose between `0` and `-0`
//! leaves the vector loop, so the scalar code decides those as it always does). `exp`,
//! `log` and `tanh` are polynomials, evaluated with fused multiply-adds where the host has
//! them (so their last bit may differ between hosts with and without FMA, within the
//! bounds below). On `f64` lanes ([`exp_f64`], [`log_f64`], [`tanh_f64`]) they are within
//! 1, 1 and 4 ulp of std's; on `f32` lanes they are computed in `f32` (module `math32`),
//! within 1, 1 and 2 ulp of the correctly rounded result that `runic_prim` gives (it
//! computes in `f64` and rounds), where widening to `f64` took twice the time. Measured
//! over random inputs and edge cases in `tests/simd.rs` (on hosts with FMA; without, each
//! polynomial step rounds twice); special values (±inf, 0, NaN, overflow, underflow,
//! subnormals) are std's and `runic_prim`'s exactly.

use crate::gen::ba;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::immediates::{Ieee32, Ieee64};
use cranelift_codegen::ir::{types, Endianness, InstBuilder, MemFlagsData, Type as CType, Value};
use cranelift_frontend::FunctionBuilder;
use runic_ir::*;
use std::collections::HashMap;

type R<T> = Result<T, String>;

mod fold;
mod math32;
pub(crate) use fold::{vector_fold, Fold};
pub(crate) use math32::{exp_f32, log_f32, tanh_f32};

/// Whether SIMD code is generated: the host has 128-bit float vectors with the rounding
/// instructions (SSE4.1 on x86_64, NEON on aarch64), and `RUNIC_SIMD` is not `0`.
pub(crate) fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| {
        if std::env::var("RUNIC_SIMD").is_ok_and(|v| v == "0") {
            return false;
        }
        #[cfg(target_arch = "x86_64")]
        {
            std::arch::is_x86_feature_detected!("sse4.1")
        }
        #[cfg(target_arch = "aarch64")]
        {
            true
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            false
        }
    })
}

/// How a vectorisable lambda runs: its element type and the lanes per vector.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Plan {
    pub elem: PrimType,
    pub lanes: i64,
}

impl Plan {
    /// The scalar type of a lane.
    pub(crate) fn elem_type(self) -> CType {
        if self.elem == PrimType::F32 {
            types::F32
        } else {
            types::F64
        }
    }
    fn vt(self) -> CType {
        if self.elem == PrimType::F32 {
            types::F32X4
        } else {
            types::F64X2
        }
    }
    fn mt(self) -> CType {
        if self.elem == PrimType::F32 {
            types::I32X4
        } else {
            types::I64X2
        }
    }
}

/// The plan of `lam` if its body can run in vector lanes (see the module comment); `free`
/// gives the type of a variable the lambda does not bind.
pub(crate) fn plan(lam: &Lambda, free: &dyn Fn(VName) -> Option<PrimType>) -> Option<Plan> {
    if !enabled() {
        return None;
    }
    let t = match lam.params.first().map(|p| &p.ty) {
        Some(Type::Prim(t @ (PrimType::F32 | PrimType::F64))) => *t,
        _ => return None,
    };
    let is_t = |ty: &Type| matches!(ty, Type::Prim(p) if *p == t);
    if !lam.params.iter().all(|p| is_t(&p.ty)) || !lam.ret.iter().all(is_t) {
        return None;
    }
    let mut tys: HashMap<VName, PrimType> = lam.params.iter().map(|p| (p.name, t)).collect();
    check_body(&lam.body, t, &mut tys, free)?;
    let results_t = lam
        .body
        .result
        .iter()
        .all(|r| sub_type(r, &tys, free) == Some(t));
    results_t.then_some(Plan {
        elem: t,
        lanes: if t == PrimType::F32 { 4 } else { 2 },
    })
}

fn sub_type(
    s: &SubExp,
    tys: &HashMap<VName, PrimType>,
    free: &dyn Fn(VName) -> Option<PrimType>,
) -> Option<PrimType> {
    match s {
        SubExp::Const(p) => Some(p.ty()),
        SubExp::Var(v) => tys.get(v).copied().or_else(|| free(*v)),
    }
}

/// The type of what `op` gives on lanes of `t` (or masks), if it is vectorised.
fn op_type(
    op: &BasicOp,
    t: PrimType,
    ty: &dyn Fn(&SubExp) -> Option<PrimType>,
) -> Option<PrimType> {
    use PrimType::Bool;
    let lane = |s: &SubExp| ty(s).filter(|&x| x == t || x == Bool);
    match op {
        BasicOp::SubExp(a) => lane(a),
        BasicOp::BinOp(o, a, b) => {
            let (ta, tb) = (lane(a)?, lane(b)?);
            if ta != tb {
                return None;
            }
            match o {
                BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Min | BinOp::Max
                    if ta == t =>
                {
                    Some(t)
                }
                BinOp::Eq | BinOp::Neq => Some(Bool),
                BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge if ta == t => Some(Bool),
                BinOp::LogAnd | BinOp::LogOr | BinOp::And | BinOp::Or | BinOp::Xor
                    if ta == Bool =>
                {
                    Some(Bool)
                }
                _ => None,
            }
        }
        BasicOp::UnOp(o, a) => {
            let ta = lane(a)?;
            match o {
                UnOp::Not if ta == Bool => Some(Bool),
                UnOp::IsNan | UnOp::IsInf if ta == t => Some(Bool),
                UnOp::Neg
                | UnOp::Abs
                | UnOp::Sqrt
                | UnOp::Recip
                | UnOp::Floor
                | UnOp::Ceil
                | UnOp::Trunc
                | UnOp::Round
                | UnOp::Exp
                | UnOp::Log
                | UnOp::Tanh
                    if ta == t =>
                {
                    Some(t)
                }
                _ => None,
            }
        }
        BasicOp::Convert(to, a) => {
            let ta = lane(a)?;
            (*to == t || *to == Bool)
                .then_some(*to)
                .filter(|_| ta == t || ta == Bool)
        }
        BasicOp::TernOp(TernOp::Mad | TernOp::Lerp, a, b, c) => {
            (lane(a)? == t && lane(b)? == t && lane(c)? == t).then_some(t)
        }
        _ => None,
    }
}

fn check_body(
    body: &Body,
    t: PrimType,
    tys: &mut HashMap<VName, PrimType>,
    free: &dyn Fn(VName) -> Option<PrimType>,
) -> Option<()> {
    for s in &body.stms {
        let pat: Vec<PrimType> = s
            .pat
            .iter()
            .map(|p| match p.ty {
                Type::Prim(x) if x == t || x == PrimType::Bool => Some(x),
                _ => None,
            })
            .collect::<Option<_>>()?;
        match &s.exp {
            Exp::Basic(op) => {
                let [pt] = pat[..] else { return None };
                let got = op_type(op, t, &|x| sub_type(x, tys, free))?;
                if got != pt {
                    return None;
                }
            }
            Exp::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                if sub_type(cond, tys, free)? != PrimType::Bool {
                    return None;
                }
                for b in [then_body, else_body] {
                    check_body(b, t, tys, free)?;
                    if b.result.len() != pat.len() {
                        return None;
                    }
                    for (r, pt) in b.result.iter().zip(&pat) {
                        if sub_type(r, tys, free)? != *pt {
                            return None;
                        }
                    }
                }
            }
            _ => return None,
        }
        for (p, pt) in s.pat.iter().zip(pat) {
            tys.insert(p.name, pt);
        }
    }
    Some(())
}

fn little() -> MemFlagsData {
    let mut f = MemFlagsData::new();
    f.set_endianness(Endianness::Little);
    f
}

/// Reinterprets the bits of vector `v` as vector type `to`.
fn vcast(b: &mut FunctionBuilder, to: CType, v: Value) -> Value {
    if b.func.dfg.value_type(v) == to {
        v
    } else {
        b.ins().bitcast(to, little(), v)
    }
}

fn splat_f64(b: &mut FunctionBuilder, x: f64) -> Value {
    let c = b.ins().f64const(Ieee64::with_bits(x.to_bits()));
    b.ins().splat(types::F64X2, c)
}

fn splat_f32(b: &mut FunctionBuilder, x: f32) -> Value {
    let c = b.ins().f32const(Ieee32::with_bits(x.to_bits()));
    b.ins().splat(types::F32X4, c)
}

/// `x` in every lane of a float vector of type `ty` (`F32X4`: rounded to `f32`).
fn splat_as(b: &mut FunctionBuilder, ty: CType, x: f64) -> Value {
    if ty == types::F32X4 {
        splat_f32(b, x as f32)
    } else {
        splat_f64(b, x)
    }
}

fn splat_i32(b: &mut FunctionBuilder, x: i32) -> Value {
    let c = b.ins().iconst(types::I32, x as i64);
    b.ins().splat(types::I32X4, c)
}

fn splat_i64(b: &mut FunctionBuilder, x: i64) -> Value {
    let c = b.ins().iconst(types::I64, x);
    b.ins().splat(types::I64X2, c)
}

/// `m ? x : y` lane by lane (`m`: all ones or all zeros per lane, of any vector type).
fn select(b: &mut FunctionBuilder, m: Value, x: Value, y: Value) -> Value {
    let ty = b.func.dfg.value_type(x);
    let it = if ty.lane_bits() == 32 {
        types::I32X4
    } else {
        types::I64X2
    };
    let (m, xi, yi) = (vcast(b, it, m), vcast(b, it, x), vcast(b, it, y));
    let r = b.ins().bitselect(m, xi, yi);
    vcast(b, ty, r)
}

/// `Σ c[k]·r^k`, by Estrin's scheme: pairs `c[2k] + c[2k+1]·r` combined with r², r⁴, …, so
/// that the dependency chain is logarithmic in the degree (Horner's is linear, and latency
/// bound in a loop of one vector per iteration).
fn horner(b: &mut FunctionBuilder, r: Value, c: &[f64]) -> Value {
    let ty = b.func.dfg.value_type(r);
    let mut terms: Vec<Value> = c
        .chunks(2)
        .map(|pair| {
            let c0 = splat_as(b, ty, pair[0]);
            match pair.get(1) {
                Some(&k1) => {
                    let c1 = splat_as(b, ty, k1);
                    mul_add(b, c1, r, c0)
                }
                None => c0,
            }
        })
        .collect();
    let mut pow = b.ins().fmul(r, r);
    while terms.len() > 1 {
        terms = terms
            .chunks(2)
            .map(|pair| match pair {
                [lo, hi] => mul_add(b, *hi, pow, *lo),
                _ => pair[0],
            })
            .collect();
        if terms.len() > 1 {
            pow = b.ins().fmul(pow, pow);
        }
    }
    terms[0]
}

/// Whether the host fuses multiply-adds (FMA3 on x86_64; always on aarch64), which halves
/// the instructions of a polynomial.
fn has_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        cfg!(target_arch = "aarch64")
    }
}

/// `a·x + c` lane by lane: one fused multiply-add where the host has them (rounded once:
/// the polynomials stay within their error bounds either way, a little closer with it).
fn mul_add(b: &mut FunctionBuilder, a: Value, x: Value, c: Value) -> Value {
    if has_fma() {
        b.ins().fma(a, x, c)
    } else {
        let t = b.ins().fmul(a, x);
        b.ins().fadd(c, t)
    }
}

/// ln 2 split in a high part whose products with integers below 2¹¹ are exact and a low part.
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;

/// 1/(k+1)! for k = 0..=12: `e^r − 1 = r · Σ r^k/(k+1)!`, truncated where the next term is
/// below 2⁻⁵⁸ for |r| ≤ ln2/2.
const EXPM1_C: [f64; 13] = {
    let mut c = [0.0; 13];
    let mut f = 1.0;
    let mut k = 0;
    while k < 13 {
        f *= (k + 1) as f64;
        c[k] = 1.0 / f;
        k += 1;
    }
    c
};

/// 2^k for lanes holding integers k in [-1022, 1023]: the bits of `k + 1023` moved into the
/// exponent (added to 2⁵² so that they are the low bits of the mantissa first).
fn pow2(b: &mut FunctionBuilder, k: Value) -> Value {
    let bias = splat_f64(b, 4_503_599_627_370_496.0 + 1023.0);
    let kb = b.ins().fadd(k, bias);
    let bits = vcast(b, types::I64X2, kb);
    let sh = b.ins().ishl_imm_u(bits, 52);
    vcast(b, types::F64X2, sh)
}

/// `x = n·ln2 + r` with n an integer (in float lanes) and |r| ≤ ln2/2 (plus rounding);
/// returns `(n, r, e^r − 1)`.
fn reduce_exp(b: &mut FunctionBuilder, x: Value) -> (Value, Value, Value) {
    let log2e = splat_f64(b, std::f64::consts::LOG2_E);
    let xl = b.ins().fmul(x, log2e);
    let n = b.ins().nearest(xl);
    let hi = splat_f64(b, LN2_HI);
    let lo = splat_f64(b, LN2_LO);
    let nh = b.ins().fmul(n, hi);
    let nl = b.ins().fmul(n, lo);
    let r0 = b.ins().fsub(x, nh);
    let r = b.ins().fsub(r0, nl);
    let p = horner(b, r, &EXPM1_C);
    let q = b.ins().fmul(r, p);
    (n, r, q)
}

/// `x` limited to `[lo, hi]` lane by lane, a NaN left as it is: a comparison and a
/// blend each side (`fmin`/`fmax` propagate NaNs in a dozen instructions, and every caller
/// restores a NaN argument at the end anyway).
fn clamp(b: &mut FunctionBuilder, x: Value, lo: f64, hi: f64) -> Value {
    let ty = b.func.dfg.value_type(x);
    let lo = splat_as(b, ty, lo);
    let below = b.ins().fcmp(FloatCC::LessThan, x, lo);
    let x = select(b, below, lo, x);
    at_most(b, x, hi)
}

/// `x` limited to at most `hi` lane by lane, a NaN left as it is (see [`clamp`]).
fn at_most(b: &mut FunctionBuilder, x: Value, hi: f64) -> Value {
    let ty = b.func.dfg.value_type(x);
    let hi = splat_as(b, ty, hi);
    let above = b.ins().fcmp(FloatCC::GreaterThan, x, hi);
    select(b, above, hi, x)
}

/// `e^x` on `F64X2` lanes (≤ 1 ulp from std; overflow to `inf`, underflow through the
/// subnormals to 0, NaN kept).
pub(crate) fn exp_f64(b: &mut FunctionBuilder, x: Value) -> Value {
    let xc = clamp(b, x, -746.0, 710.0);
    let (n, _, q) = reduce_exp(b, xc);
    let one = splat_f64(b, 1.0);
    let p = b.ins().fadd(q, one);
    // 2^n as two factors, each a normal number, so that p·2^n1 is exact and the second
    // product rounds once, also into the subnormals.
    let half = splat_f64(b, 0.5);
    let nh = b.ins().fmul(n, half);
    let n1 = b.ins().floor(nh);
    let n2 = b.ins().fsub(n, n1);
    let s1 = pow2(b, n1);
    let s2 = pow2(b, n2);
    let r = b.ins().fmul(p, s1);
    let r = b.ins().fmul(r, s2);
    let nan = b.ins().fcmp(FloatCC::NotEqual, x, x);
    select(b, nan, x, r)
}

/// 2/(2k+1) for k = 1..=10: `log((1+s)/(1−s)) = 2s + s·Σ 2 z^k/(2k+1)`, z = s².
const LOG_C: [f64; 10] = {
    let mut c = [0.0; 10];
    let mut k = 0;
    while k < 10 {
        c[k] = 2.0 / (2 * (k + 1) + 1) as f64;
        k += 1;
    }
    c
};

/// `ln x` on `F64X2` lanes (≤ 1 ulp from std; `ln 0 = -inf`, negative → NaN, `ln inf = inf`).
pub(crate) fn log_f64(b: &mut FunctionBuilder, x: Value) -> Value {
    // Subnormals scaled into the normals first.
    let tiny = splat_f64(b, f64::MIN_POSITIVE);
    let sub = b.ins().fcmp(FloatCC::LessThan, x, tiny);
    let scale = splat_f64(b, 18_014_398_509_481_984.0); // 2^54
    let xs0 = b.ins().fmul(x, scale);
    let xs = select(b, sub, xs0, x);
    let bits = vcast(b, types::I64X2, xs);
    // The exponent as a float: its 11 bits as the low bits of 2^52's mantissa.
    let eb = b.ins().ushr_imm_u(bits, 52);
    let magic = splat_i64(b, 0x4330_0000_0000_0000);
    let eb = b.ins().bor(eb, magic);
    let ef = vcast(b, types::F64X2, eb);
    let off = splat_f64(b, 4_503_599_627_370_496.0 + 1023.0);
    let e = b.ins().fsub(ef, off);
    let e54 = splat_f64(b, 54.0);
    let e_sub = b.ins().fsub(e, e54);
    let e = select(b, sub, e_sub, e);
    // The mantissa m in [1, 2), then in [√½, √2).
    let mm = splat_i64(b, 0x000f_ffff_ffff_ffff);
    let mb = b.ins().band(bits, mm);
    let one_bits = splat_i64(b, 0x3ff0_0000_0000_0000);
    let mb = b.ins().bor(mb, one_bits);
    let m = vcast(b, types::F64X2, mb);
    let sqrt2 = splat_f64(b, std::f64::consts::SQRT_2);
    let big = b.ins().fcmp(FloatCC::GreaterThan, m, sqrt2);
    let half = splat_f64(b, 0.5);
    let mh = b.ins().fmul(m, half);
    let m = select(b, big, mh, m);
    let one = splat_f64(b, 1.0);
    let e1 = b.ins().fadd(e, one);
    let e = select(b, big, e1, e);
    // log m = f − (hfsq − s·(hfsq + R)), f = m − 1, s = f/(2 + f), hfsq = f²/2.
    let f = b.ins().fsub(m, one);
    let two = splat_f64(b, 2.0);
    let d = b.ins().fadd(f, two);
    let s = b.ins().fdiv(f, d);
    let z = b.ins().fmul(s, s);
    let rp = horner(b, z, &LOG_C);
    let r = b.ins().fmul(rp, z);
    let ff = b.ins().fmul(f, f);
    let hfsq = b.ins().fmul(ff, half);
    let t = b.ins().fadd(hfsq, r);
    let st = b.ins().fmul(s, t);
    let lo = splat_f64(b, LN2_LO);
    let elo = b.ins().fmul(e, lo);
    let a = b.ins().fadd(st, elo);
    let a = b.ins().fsub(hfsq, a);
    let a = b.ins().fsub(a, f);
    let hi = splat_f64(b, LN2_HI);
    let ehi = b.ins().fmul(e, hi);
    let mut res = b.ins().fsub(ehi, a);
    // Special values.
    let zero = splat_f64(b, 0.0);
    let inf = splat_f64(b, f64::INFINITY);
    let ninf = splat_f64(b, f64::NEG_INFINITY);
    // The NaN std gives for a negative argument (its sign differs between libms).
    let nan = splat_f64(b, std::hint::black_box(-1.0f64).ln());
    let is0 = b.ins().fcmp(FloatCC::Equal, x, zero);
    res = select(b, is0, ninf, res);
    let neg = b.ins().fcmp(FloatCC::LessThan, x, zero);
    res = select(b, neg, nan, res);
    let isinf = b.ins().fcmp(FloatCC::Equal, x, inf);
    res = select(b, isinf, inf, res);
    let isnan = b.ins().fcmp(FloatCC::NotEqual, x, x);
    select(b, isnan, x, res)
}

/// `tanh x` on `F64X2` lanes (≤ 4 ulp from std): `±em/(em + 2)`, em = e^{2|x|} − 1.
pub(crate) fn tanh_f64(b: &mut FunctionBuilder, x: Value) -> Value {
    let a = b.ins().fabs(x);
    let a = at_most(b, a, 20.0);
    let y = b.ins().fadd(a, a);
    let (n, _, q) = reduce_exp(b, y);
    // n is in [0, 58]: 2^n is one normal factor, and 2^n − 1 is exact or rounds harmlessly.
    let s = pow2(b, n);
    let one = splat_f64(b, 1.0);
    let s1 = b.ins().fsub(s, one);
    let sq = b.ins().fmul(s, q);
    let em = b.ins().fadd(sq, s1);
    let two = splat_f64(b, 2.0);
    let d = b.ins().fadd(em, two);
    let t = b.ins().fdiv(em, d);
    let sign = splat_i64(b, i64::MIN);
    let xb = vcast(b, types::I64X2, x);
    let sb = b.ins().band(xb, sign);
    let tb = vcast(b, types::I64X2, t);
    let r = b.ins().bor(tb, sb);
    let r = vcast(b, types::F64X2, r);
    let isnan = b.ins().fcmp(FloatCC::NotEqual, x, x);
    select(b, isnan, x, r)
}

/// A value in lanes: `T` lanes, or a lane mask (all ones: true) of the same width.
#[derive(Clone, Copy)]
struct V {
    v: Value,
    mask: bool,
}

/// Emits a lambda's body on vectors of lanes.
struct VGen<'a, 'b> {
    b: &'a mut FunctionBuilder<'b>,
    plan: Plan,
    env: HashMap<VName, V>,
    /// Lanes for which the vector result is not `runic_prim`'s (all ones), if any.
    bail: Option<Value>,
}

impl<'a, 'b> VGen<'a, 'b> {
    /// Code on lanes outside a lambda (a fold's accumulators): no variables, no bails yet.
    fn bare(b: &'a mut FunctionBuilder<'b>, plan: Plan) -> Self {
        VGen {
            b,
            plan,
            env: HashMap::new(),
            bail: None,
        }
    }

    fn konst(&mut self, p: Prim) -> R<V> {
        let b = &mut self.b;
        Ok(match p {
            Prim::F32(x) => {
                let c = b.ins().f32const(Ieee32::with_bits(x.to_bits()));
                V {
                    v: b.ins().splat(types::F32X4, c),
                    mask: false,
                }
            }
            Prim::F64(x) => V {
                v: splat_f64(b, x),
                mask: false,
            },
            Prim::Bool(t) => {
                let lane = self.plan.mt().lane_type();
                let c = b.ins().iconst(lane, if t { -1 } else { 0 });
                V {
                    v: b.ins().splat(self.plan.mt(), c),
                    mask: true,
                }
            }
            _ => {
                return Err(format!(
                    "internal error: a {} constant in vector lanes",
                    p.ty()
                ))
            }
        })
    }

    fn opd(&mut self, s: &SubExp) -> R<V> {
        match s {
            SubExp::Const(p) => self.konst(*p),
            SubExp::Var(v) => self
                .env
                .get(v)
                .copied()
                .ok_or_else(|| format!("internal error: {v} is not in vector scope")),
        }
    }

    fn mask(&mut self, v: Value) -> V {
        V {
            v: vcast(self.b, self.plan.mt(), v),
            mask: true,
        }
    }

    fn lanes(&mut self, v: Value) -> V {
        V { v, mask: false }
    }

    fn body(&mut self, body: &Body) -> R<Vec<V>> {
        for s in &body.stms {
            self.stm(s)?;
        }
        body.result.iter().map(|r| self.opd(r)).collect()
    }

    fn stm(&mut self, s: &Stm) -> R<()> {
        let vals = match &s.exp {
            Exp::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                let c = self.opd(cond)?;
                let t = self.body(then_body)?;
                let e = self.body(else_body)?;
                t.iter()
                    .zip(&e)
                    .map(|(x, y)| V {
                        v: select(self.b, c.v, x.v, y.v),
                        mask: x.mask,
                    })
                    .collect()
            }
            Exp::Basic(op) => vec![self.basic(op)?],
            _ => return Err("internal error: a statement SIMD code does not do".into()),
        };
        for (p, v) in s.pat.iter().zip(vals) {
            self.env.insert(p.name, v);
        }
        Ok(())
    }

    fn basic(&mut self, op: &BasicOp) -> R<V> {
        Ok(match op {
            BasicOp::SubExp(a) => self.opd(a)?,
            BasicOp::BinOp(o, a, b) => {
                let (a, b) = (self.opd(a)?, self.opd(b)?);
                self.binop(*o, a, b)?
            }
            BasicOp::UnOp(o, a) => {
                let a = self.opd(a)?;
                self.unop(*o, a)?
            }
            BasicOp::Convert(to, a) => {
                let a = self.opd(a)?;
                match (a.mask, *to == PrimType::Bool) {
                    (true, true) | (false, false) => a,
                    (false, true) => {
                        let z = self.konst(Prim::float(self.plan.elem, 0.0))?.v;
                        let m = self.b.ins().fcmp(FloatCC::NotEqual, a.v, z);
                        self.mask(m)
                    }
                    (true, false) => {
                        let one = self.konst(Prim::float(self.plan.elem, 1.0))?.v;
                        let one = vcast(self.b, self.plan.mt(), one);
                        let r = self.b.ins().band(a.v, one);
                        let r = vcast(self.b, self.plan.vt(), r);
                        self.lanes(r)
                    }
                }
            }
            BasicOp::TernOp(o, a, b, c) => {
                let (a, b, c) = (self.opd(a)?, self.opd(b)?, self.opd(c)?);
                let bb = &mut self.b;
                let r = if *o == TernOp::Mad {
                    let p = bb.ins().fmul(a.v, b.v);
                    bb.ins().fadd(p, c.v)
                } else {
                    let d = bb.ins().fsub(b.v, a.v);
                    let p = bb.ins().fmul(d, c.v);
                    bb.ins().fadd(a.v, p)
                };
                self.lanes(r)
            }
            _ => return Err("internal error: an operation SIMD code does not do".into()),
        })
    }

    fn binop(&mut self, op: BinOp, x: V, y: V) -> R<V> {
        let b = &mut self.b;
        if x.mask {
            let r = match op {
                BinOp::LogAnd | BinOp::And => b.ins().band(x.v, y.v),
                BinOp::LogOr | BinOp::Or => b.ins().bor(x.v, y.v),
                BinOp::Xor | BinOp::Neq => b.ins().bxor(x.v, y.v),
                BinOp::Eq => {
                    let d = b.ins().bxor(x.v, y.v);
                    b.ins().bnot(d)
                }
                _ => return Err("internal error: a boolean operation".into()),
            };
            return Ok(V { v: r, mask: true });
        }
        let cmp = |cc| Some(cc);
        let cc = match op {
            BinOp::Eq => cmp(FloatCC::Equal),
            BinOp::Neq => cmp(FloatCC::NotEqual),
            BinOp::Lt => cmp(FloatCC::LessThan),
            BinOp::Le => cmp(FloatCC::LessThanOrEqual),
            BinOp::Gt => cmp(FloatCC::GreaterThan),
            BinOp::Ge => cmp(FloatCC::GreaterThanOrEqual),
            _ => None,
        };
        if let Some(cc) = cc {
            let m = b.ins().fcmp(cc, x.v, y.v);
            return Ok(self.mask(m));
        }
        let r = match op {
            BinOp::Add => b.ins().fadd(x.v, y.v),
            BinOp::Sub => b.ins().fsub(x.v, y.v),
            BinOp::Mul => b.ins().fmul(x.v, y.v),
            BinOp::Div => b.ins().fdiv(x.v, y.v),
            BinOp::Min | BinOp::Max => return Ok(self.min_max(op, x.v, y.v)),
            _ => return Err("internal error: a float operation".into()),
        };
        Ok(self.lanes(r))
    }

    /// runic_prim's `min`/`max` (a NaN operand gives the other one); lanes comparing `0`
    /// with `-0` are left to the scalar code.
    fn min_max(&mut self, op: BinOp, x: Value, y: Value) -> V {
        let mt = self.plan.mt();
        let b = &mut self.b;
        let cc = if op == BinOp::Min {
            FloatCC::LessThan
        } else {
            FloatCC::GreaterThan
        };
        let pick_x = b.ins().fcmp(cc, x, y);
        let r = select(b, pick_x, x, y);
        let yn = b.ins().fcmp(FloatCC::NotEqual, y, y);
        let r = select(b, yn, x, r);
        let xn = b.ins().fcmp(FloatCC::NotEqual, x, x);
        let r = select(b, xn, y, r);
        let eq = b.ins().fcmp(FloatCC::Equal, x, y);
        let (xi, yi) = (vcast(b, mt, x), vcast(b, mt, y));
        let differ = b.ins().icmp(IntCC::NotEqual, xi, yi);
        let eq = vcast(b, mt, eq);
        let zeros = b.ins().band(eq, differ);
        self.bail = Some(match self.bail {
            Some(m) => self.b.ins().bor(m, zeros),
            None => zeros,
        });
        self.lanes(r)
    }

    /// `x ⊕ y` lane by lane, for a fold's operator.
    fn combine(&mut self, fold: Fold, x: Value, y: Value) -> Value {
        match fold {
            Fold::Add => self.b.ins().fadd(x, y),
            Fold::Min => self.min_max(BinOp::Min, x, y).v,
            Fold::Max => self.min_max(BinOp::Max, x, y).v,
        }
    }

    fn unop(&mut self, op: UnOp, x: V) -> R<V> {
        let f32 = self.plan.elem == PrimType::F32;
        type Math = fn(&mut FunctionBuilder, Value) -> Value;
        let math = |f32_lanes: Math, f64_lanes: Math, b: &mut FunctionBuilder| {
            if f32 {
                f32_lanes(b, x.v)
            } else {
                f64_lanes(b, x.v)
            }
        };
        let b = &mut self.b;
        let r = match op {
            UnOp::Not => {
                let r = b.ins().bnot(x.v);
                return Ok(V { v: r, mask: true });
            }
            UnOp::IsNan => {
                let m = b.ins().fcmp(FloatCC::NotEqual, x.v, x.v);
                return Ok(self.mask(m));
            }
            UnOp::IsInf => {
                let a = b.ins().fabs(x.v);
                let inf = self.konst(Prim::float(self.plan.elem, f64::INFINITY))?.v;
                let m = self.b.ins().fcmp(FloatCC::Equal, a, inf);
                return Ok(self.mask(m));
            }
            UnOp::Neg => b.ins().fneg(x.v),
            UnOp::Abs => b.ins().fabs(x.v),
            UnOp::Sqrt => b.ins().sqrt(x.v),
            UnOp::Floor => b.ins().floor(x.v),
            UnOp::Ceil => b.ins().ceil(x.v),
            UnOp::Trunc => b.ins().trunc(x.v),
            UnOp::Round => b.ins().nearest(x.v),
            UnOp::Recip => {
                let one = self.konst(Prim::float(self.plan.elem, 1.0))?.v;
                self.b.ins().fdiv(one, x.v)
            }
            UnOp::Exp => math(exp_f32, exp_f64, b),
            UnOp::Log => math(log_f32, log_f64, b),
            UnOp::Tanh => math(tanh_f32, tanh_f64, b),
            _ => return Err("internal error: a unary operation".into()),
        };
        Ok(self.lanes(r))
    }
}

/// Broadcasts the free scalars of type `plan.elem` or `bool` in `env` (emitted where the
/// caller is, so before the loop).
pub(crate) fn splat_env(
    b: &mut FunctionBuilder,
    plan: Plan,
    env: &HashMap<VName, (Value, PrimType)>,
    lam: &Lambda,
) -> HashMap<VName, (Value, bool)> {
    let used = runic_ir::traverse::free_vars(lam);
    let mut out = HashMap::new();
    for v in used {
        let Some(&(x, t)) = env.get(&v) else { continue };
        let x = crate::scalar::pinned_if_computed(b, x);
        if t == plan.elem {
            out.insert(v, (b.ins().splat(plan.vt(), x), false));
        } else if t == PrimType::Bool {
            let lane = plan.mt().lane_type();
            let w = b.ins().uextend(lane, x);
            let m = b.ins().ineg(w);
            out.insert(v, (b.ins().splat(plan.mt(), m), true));
        }
    }
    out
}

/// How [`vector_loop`] writes its results into the output columns.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Write {
    /// `outs[k][j] = r`.
    Store,
    /// `outs[k][j] = outs[k][j] + r` (an accumulator's row: each element is updated once
    /// per result, in the order of the results, so this is exactly the scalar update).
    Add,
}

/// Emits `for (j = from; j + lanes <= to; j += lanes) outs[k][j..] = lam(ins[..][j..])`
/// (contiguous columns at the addresses `ins` and `outs`, the broadcast free scalars
/// `frees`; `write` says whether results replace or are added to the outputs) and returns
/// the `j` it stops at: where the scalar code takes over, at the tail or at the first
/// group of lanes the vector code leaves to it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn vector_loop(
    b: &mut FunctionBuilder,
    plan: Plan,
    lam: &Lambda,
    frees: &HashMap<VName, (Value, bool)>,
    ins: &[Value],
    (outs, write): (&[Value], Write),
    from: Value,
    to: Value,
) -> R<Value> {
    // Bodies of a few statements are unrolled (see `lane_groups`); longer ones are
    // compute bound and would only grow the code.
    let unroll = if lam.body.stms.len() <= UNROLL_MAX_STMS {
        4
    } else {
        1
    };
    lane_groups(
        b,
        plan,
        (from, to),
        unroll,
        |b, off| lanes_body(b, plan, lam, frees, ins, off),
        |b, off, res| {
            for (r, base) in res.iter().zip(outs) {
                let a = b.ins().iadd(*base, off);
                let v = match write {
                    Write::Store => r.v,
                    Write::Add => {
                        let old = b.ins().load(plan.vt(), unaligned(), a, 0);
                        b.ins().fadd(old, r.v)
                    }
                };
                b.ins().store(unaligned(), v, a, 0);
            }
        },
    )
}

/// The most statements a lambda may have for its vector loop to be unrolled.
const UNROLL_MAX_STMS: usize = 8;

/// One application of a [`vector_chain`]'s lambda: the broadcast free scalars it sees and
/// the addresses of its parameters' columns (the first, the accumulator's, read only by
/// the first application).
pub(crate) struct ChainStep {
    pub frees: HashMap<VName, (Value, bool)>,
    pub ins: Vec<Value>,
}

/// Emits `for (j = from; j + lanes <= to; j += lanes) acc[j..] = lam(…lam(lam(acc[j..],
/// steps[0]…), steps[1]…)…)`: the steps of a column reduction one after another on the
/// same lanes, the accumulator (the lambda's first parameter, read from `acc` by the first
/// step) kept in a register between them. Where any step leaves lanes to the scalar code,
/// nothing is stored for that group and the loop stops there, so the scalar code runs
/// every step on it; returns the `j` the scalar code takes over from.
pub(crate) fn vector_chain(
    b: &mut FunctionBuilder,
    plan: Plan,
    lam: &Lambda,
    steps: &[ChainStep],
    acc: Value,
    from: Value,
    to: Value,
) -> R<Value> {
    let chain = |b: &mut FunctionBuilder, off| {
        let mut value = None;
        let mut bails = None;
        for step in steps {
            let (res, bail) = lanes_body_from(b, plan, lam, &step.frees, value, &step.ins, off)?;
            let [r] = &res[..] else {
                return Err("internal error: a chained step of several results".into());
            };
            value = Some(r.v);
            if let Some(m) = bail {
                bails = Some(match bails {
                    Some(old) => b.ins().bor(old, m),
                    None => m,
                });
            }
        }
        match value {
            Some(v) => Ok((v, bails)),
            None => Err("internal error: a chain of no steps".into()),
        }
    };
    lane_groups(b, plan, (from, to), 1, chain, |b, off, value| {
        let a = b.ins().iadd(acc, off);
        b.ins().store(unaligned(), value, a, 0);
    })
}

/// The loop over groups of lanes `for (j = from; j + lanes <= to; j += lanes)`: `group`
/// emits a group's code at byte offset `off` and returns its values and the lanes it
/// leaves to the scalar code, if any can be; `store` writes the values when no lane is
/// left, else the loop stops at that group. Returns the `j` it stops at.
///
/// With `unroll > 1`, `unroll` groups at a time come first while they last, then one at a
/// time: a body of a few instructions (a scaling, a mask, an outer product's row) was
/// otherwise half loop control, two taken branches per group.
fn lane_groups<T>(
    b: &mut FunctionBuilder,
    plan: Plan,
    (from, to): (Value, Value),
    unroll: i64,
    mut group: impl FnMut(&mut FunctionBuilder, Value) -> R<(T, Option<Value>)>,
    mut store: impl FnMut(&mut FunctionBuilder, Value, T),
) -> R<Value> {
    let i64t = types::I64;
    let rest = b.create_block();
    b.append_block_param(rest, i64t);
    // One group at `j`: its code, then to `rest` at `j` if it leaves lanes to the scalar
    // code, else stored.
    let mut one = |b: &mut FunctionBuilder, j: Value| -> R<()> {
        let off = byte_offset(b, plan, j);
        let (values, bail) = group(b, off)?;
        let store_block = b.create_block();
        match bail {
            Some(m) => {
                let any = b.ins().vany_true(m);
                b.ins().brif(any, rest, &ba(&[j]), store_block, &[]);
            }
            None => {
                b.ins().jump(store_block, &[]);
            }
        }
        b.switch_to_block(store_block);
        store(b, off, values);
        Ok(())
    };
    // `for (j = start; j + per·lanes <= to; j += per·lanes)` of `per` groups; returns
    // where it stopped.
    let mut groups_loop = |b: &mut FunctionBuilder, start: Value, per: i64| -> R<Value> {
        let header = b.create_block();
        b.append_block_param(header, i64t);
        let body = b.create_block();
        let after = b.create_block();
        b.append_block_param(after, i64t);
        b.ins().jump(header, &ba(&[start]));
        b.switch_to_block(header);
        let j = b.block_params(header)[0];
        let last = b.ins().iadd_imm_s(j, per * plan.lanes);
        let more = b.ins().icmp(IntCC::SignedLessThanOrEqual, last, to);
        b.ins().brif(more, body, &[], after, &ba(&[j]));
        b.switch_to_block(body);
        for u in 0..per {
            let ju = b.ins().iadd_imm_s(j, u * plan.lanes);
            one(b, ju)?;
        }
        b.ins().jump(header, &ba(&[last]));
        b.switch_to_block(after);
        Ok(b.block_params(after)[0])
    };
    let mut start = from;
    if unroll > 1 {
        start = groups_loop(b, start, unroll)?;
    }
    let stop = groups_loop(b, start, 1)?;
    b.ins().jump(rest, &ba(&[stop]));
    b.switch_to_block(rest);
    Ok(b.block_params(rest)[0])
}

fn unaligned() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

fn byte_offset(b: &mut FunctionBuilder, plan: Plan, j: Value) -> Value {
    let shift = plan.elem.size_bytes().trailing_zeros() as i64;
    b.ins().ishl_imm_u(j, shift)
}

/// The lanes of the elements at byte offset `off` of the columns `ins` through `lam`:
/// its results, and the lanes to leave to the scalar code, if any can be.
fn lanes_body(
    b: &mut FunctionBuilder,
    plan: Plan,
    lam: &Lambda,
    frees: &HashMap<VName, (Value, bool)>,
    ins: &[Value],
    off: Value,
) -> R<(Vec<V>, Option<Value>)> {
    lanes_body_from(b, plan, lam, frees, None, ins, off)
}

/// [`lanes_body`] with the first parameter's lanes `first` when given (its column in `ins`
/// then not read).
fn lanes_body_from(
    b: &mut FunctionBuilder,
    plan: Plan,
    lam: &Lambda,
    frees: &HashMap<VName, (Value, bool)>,
    first: Option<Value>,
    ins: &[Value],
    off: Value,
) -> R<(Vec<V>, Option<Value>)> {
    let mut env: HashMap<VName, V> = frees
        .iter()
        .map(|(k, &(v, mask))| (*k, V { v, mask }))
        .collect();
    for (k, (p, base)) in lam.params.iter().zip(ins).enumerate() {
        if let (0, Some(v)) = (k, first) {
            env.insert(p.name, V { v, mask: false });
            continue;
        }
        let a = b.ins().iadd(*base, off);
        let x = b.ins().load(plan.vt(), unaligned(), a, 0);
        env.insert(p.name, V { v: x, mask: false });
    }
    let mut g = VGen {
        b,
        plan,
        env,
        bail: None,
    };
    let res = g.body(&lam.body)?;
    Ok((res, g.bail))
}
