//! `exp`, `log` and `tanh` on `F32X4` lanes, computed in `f32`: four lanes per vector and
//! polynomials of `f32` length, where widening each half to `f64` ([`super::exp_f64`] and
//! its siblings) ran two lanes through `f64`-length polynomials (a map of `f32.exp` over
//! 2²⁰ elements on one core: 6.9 → 3.2 ns an element). The results are within
//! an ulp or two of the correctly rounded ones (bounds measured in `tests/simd.rs`), as
//! XLA's and libm's `expf` are, so they may differ from `runic_prim`'s in the last bits;
//! special values (±inf, ±0, NaN, overflow, underflow through the subnormals) are exactly
//! `runic_prim`'s.

use super::{at_most, clamp, horner, mul_add, select, splat_f32, splat_i32, vcast};
use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;

/// ln 2 split in a high part whose products with integers below 2⁸ are exact (its low 9
/// mantissa bits are zero) and the rest.
const LN2_HI: f32 = f32::from_bits(0x3f31_7200);
const LN2_LO: f32 = (std::f64::consts::LN_2 - LN2_HI as f64) as f32;

/// 1/(k+2)! for k = 0..=5: `e^r = 1 + r + r²·Σ r^k/(k+2)!`; the first term left out,
/// r⁸/8!, is below 0.1 ulp of the result for |r| ≤ ln2/2.
const EXP_TAIL: [f64; 6] = [
    1.0 / 2.0,
    1.0 / 6.0,
    1.0 / 24.0,
    1.0 / 120.0,
    1.0 / 720.0,
    1.0 / 5040.0,
];

/// 2/(2k+3) for k = 0..=4: `log((1+s)/(1−s)) = 2s + s·z·Σ 2 z^k/(2k+3)`, z = s² ≤ 0.03.
const LOG_TAIL: [f64; 5] = [2.0 / 3.0, 2.0 / 5.0, 2.0 / 7.0, 2.0 / 9.0, 2.0 / 11.0];

/// 2^k for lanes holding integers k in [-126, 127]: the bits of `k + 127` moved into the
/// exponent field (added to 2²³ first, so that they are the low bits of its mantissa).
fn pow2(b: &mut FunctionBuilder, k: Value) -> Value {
    let bias = splat_f32(b, 8_388_608.0 + 127.0);
    let kb = b.ins().fadd(k, bias);
    let bits = vcast(b, types::I32X4, kb);
    let sh = b.ins().ishl_imm_u(bits, 23);
    vcast(b, types::F32X4, sh)
}

/// `x = n·ln2 + r` with n an integer (in float lanes) and |r| ≤ ln2/2 (plus rounding);
/// returns `(n, e^r − 1)`, the latter as `r + r²·P(r)` so that its rounding error is a
/// fraction of the ulp of r's.
fn reduce_exp(b: &mut FunctionBuilder, x: Value) -> (Value, Value) {
    let log2e = splat_f32(b, std::f32::consts::LOG2_E);
    let xl = b.ins().fmul(x, log2e);
    let n = b.ins().nearest(xl);
    let hi = splat_f32(b, LN2_HI);
    let lo = splat_f32(b, LN2_LO);
    let nh = b.ins().fmul(n, hi);
    let nl = b.ins().fmul(n, lo);
    let r = b.ins().fsub(x, nh);
    let r = b.ins().fsub(r, nl);
    let p = horner(b, r, &EXP_TAIL);
    let r2 = b.ins().fmul(r, r);
    (n, mul_add(b, r2, p, r))
}

/// `e^x` on `F32X4` lanes. Past `[-104, 89]` the result is 0 or inf, so the argument is
/// clamped there; `2^n` (n in [-150, 128]) is applied as two normal factors, so that the
/// first product is exact and the second rounds once, also into the subnormals.
pub(crate) fn exp_f32(b: &mut FunctionBuilder, x: Value) -> Value {
    let xc = clamp(b, x, -104.0, 89.0);
    let (n, q) = reduce_exp(b, xc);
    let one = splat_f32(b, 1.0);
    let p = b.ins().fadd(q, one);
    let half = splat_f32(b, 0.5);
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

/// `ln x` on `F32X4` lanes (`ln 0 = -inf`, negative → NaN, `ln inf = inf`): x = 2^e·m with
/// m in [√½, √2), and `ln m = f − (f²/2 − s·(f²/2 + R))`, f = m − 1 (exact), s = f/(2 + f).
pub(crate) fn log_f32(b: &mut FunctionBuilder, x: Value) -> Value {
    // Subnormals scaled into the normals first.
    let tiny = splat_f32(b, f32::MIN_POSITIVE);
    let sub = b.ins().fcmp(FloatCC::LessThan, x, tiny);
    let scale = splat_f32(b, 33_554_432.0); // 2^25
    let xs0 = b.ins().fmul(x, scale);
    let xs = select(b, sub, xs0, x);
    let bits = vcast(b, types::I32X4, xs);
    // The exponent as a float: its 8 bits as the low bits of 2^23's mantissa.
    let eb = b.ins().ushr_imm_u(bits, 23);
    let magic = splat_i32(b, 0x4b00_0000);
    let eb = b.ins().bor(eb, magic);
    let ef = vcast(b, types::F32X4, eb);
    let off = splat_f32(b, 8_388_608.0 + 127.0);
    let e = b.ins().fsub(ef, off);
    let e25 = splat_f32(b, 25.0);
    let e_sub = b.ins().fsub(e, e25);
    let e = select(b, sub, e_sub, e);
    // The mantissa m in [1, 2), then in [√½, √2).
    let mm = splat_i32(b, 0x007f_ffff);
    let mb = b.ins().band(bits, mm);
    let one_bits = splat_i32(b, 0x3f80_0000);
    let mb = b.ins().bor(mb, one_bits);
    let m = vcast(b, types::F32X4, mb);
    let sqrt2 = splat_f32(b, std::f32::consts::SQRT_2);
    let big = b.ins().fcmp(FloatCC::GreaterThan, m, sqrt2);
    let half = splat_f32(b, 0.5);
    let mh = b.ins().fmul(m, half);
    let m = select(b, big, mh, m);
    let one = splat_f32(b, 1.0);
    let e1 = b.ins().fadd(e, one);
    let e = select(b, big, e1, e);
    let f = b.ins().fsub(m, one);
    let two = splat_f32(b, 2.0);
    let d = b.ins().fadd(f, two);
    let s = b.ins().fdiv(f, d);
    let z = b.ins().fmul(s, s);
    let rp = horner(b, z, &LOG_TAIL);
    let r = b.ins().fmul(rp, z);
    let ff = b.ins().fmul(f, f);
    let hfsq = b.ins().fmul(ff, half);
    let t = b.ins().fadd(hfsq, r);
    let st = b.ins().fmul(s, t);
    let lo = splat_f32(b, LN2_LO);
    let elo = b.ins().fmul(e, lo);
    let a = b.ins().fadd(st, elo);
    let a = b.ins().fsub(hfsq, a);
    let a = b.ins().fsub(a, f);
    let hi = splat_f32(b, LN2_HI);
    let ehi = b.ins().fmul(e, hi);
    let mut res = b.ins().fsub(ehi, a);
    // Special values.
    let zero = splat_f32(b, 0.0);
    let inf = splat_f32(b, f32::INFINITY);
    let ninf = splat_f32(b, f32::NEG_INFINITY);
    // The NaN `runic_prim` gives for a negative argument: std's `f64` one, rounded.
    let nan = splat_f32(b, std::hint::black_box(-1.0f64).ln() as f32);
    let is0 = b.ins().fcmp(FloatCC::Equal, x, zero);
    res = select(b, is0, ninf, res);
    let neg = b.ins().fcmp(FloatCC::LessThan, x, zero);
    res = select(b, neg, nan, res);
    let isinf = b.ins().fcmp(FloatCC::Equal, x, inf);
    res = select(b, isinf, inf, res);
    let isnan = b.ins().fcmp(FloatCC::NotEqual, x, x);
    select(b, isnan, x, res)
}

/// `tanh x` on `F32X4` lanes: `±em/(em + 2)`, em = e^{2|x|} − 1. Past |x| = 12 the result
/// rounds to ±1, so |x| is clamped there and 2^n (n ≤ 35) is one normal factor.
pub(crate) fn tanh_f32(b: &mut FunctionBuilder, x: Value) -> Value {
    let a = b.ins().fabs(x);
    let a = at_most(b, a, 12.0);
    let y = b.ins().fadd(a, a);
    let (n, q) = reduce_exp(b, y);
    let s = pow2(b, n);
    let one = splat_f32(b, 1.0);
    let s1 = b.ins().fsub(s, one);
    let em = mul_add(b, s, q, s1);
    let two = splat_f32(b, 2.0);
    let d = b.ins().fadd(em, two);
    let t = b.ins().fdiv(em, d);
    let sign = splat_i32(b, i32::MIN);
    let xb = vcast(b, types::I32X4, x);
    let sb = b.ins().band(xb, sign);
    let tb = vcast(b, types::I32X4, t);
    let r = b.ins().bor(tb, sb);
    let r = vcast(b, types::F32X4, r);
    let isnan = b.ins().fcmp(FloatCC::NotEqual, x, x);
    select(b, isnan, x, r)
}
