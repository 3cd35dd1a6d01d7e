//! `exp`, `log` and `tanh` on float vectors, one algorithm for both lane types: `F64X2`
//! lanes within 1, 1 and 4 ulp of std, `F32X4` lanes computed in `f32` (four lanes per
//! vector and polynomials of `f32` length: widening each half to `f64` took twice the
//! time, 6.9 ns an element for a map of `f32.exp` on one core) within 1, 1 and 2 ulp of
//! the correctly rounded result `runic_prim` gives. What differs between the two is a
//! [`Format`]: field widths, constants and the length of each polynomial. Special values
//! (±inf, ±0, NaN, overflow, underflow through the subnormals) are std's exactly.

use super::{select, splat_as, vcast};
use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::{types, InstBuilder, Type as CType, Value};
use cranelift_frontend::FunctionBuilder;

/// A lane type's floating-point format and the constants the functions need for it.
struct Format {
    /// The integer vector of the same lanes (bit manipulation).
    int: CType,
    /// Mantissa bits; the exponent's bias.
    mant: u32,
    bias: i64,
    /// `1.0`'s bits, and the mask of the mantissa's.
    one_bits: i64,
    mant_mask: i64,
    /// The bits of `2^mant` (exponent bits read as the low bits of its mantissa).
    magic: i64,
    /// ln 2 split in a high part whose products with the exponents that occur are exact
    /// (its low bits zero) and the rest.
    ln2_hi: f64,
    ln2_lo: f64,
    /// 1/(k+1)! for k ≥ 0: `e^r − 1 = r·Σ r^k/(k+1)!`, truncated where the next term is
    /// below a fraction of an ulp for |r| ≤ ln2/2.
    expm1_series: &'static [f64],
    /// Whether `e^r − 1` is summed as `r + r²·Σ r^k/(k+2)!` (its rounding error a fraction
    /// of r's ulp; `f32`'s `tanh` of small arguments, `em` = that sum, needs it: 3 ulp
    /// without) rather than `r·Σ r^k/(k+1)!` (`f64`'s, whose results are std's in more
    /// cases, `e^1` among them).
    expm1_split: bool,
    /// Arguments past which `exp` is 0 or inf whatever the polynomial says.
    exp_range: (f64, f64),
    /// 2/(2k+3) for k ≥ 0: `log((1+s)/(1−s)) = 2s + s·z·Σ 2 z^k/(2k+3)`, z = s² ≤ 0.03.
    log_tail: &'static [f64],
    /// The smallest normal number; a factor taking subnormals into the normals, and its
    /// base-2 logarithm.
    min_normal: f64,
    subnormal_scale: (f64, f64),
    /// |x| past which `tanh x` rounds to ±1.
    tanh_limit: f64,
}

const fn inverse_factorials<const N: usize>() -> [f64; N] {
    let mut c = [0.0; N];
    let mut f = 1.0;
    let mut k = 0;
    while k < N {
        f *= (k + 1) as f64;
        c[k] = 1.0 / f;
        k += 1;
    }
    c
}

const fn odd_reciprocals<const N: usize>() -> [f64; N] {
    let mut c = [0.0; N];
    let mut k = 0;
    while k < N {
        c[k] = 2.0 / (2 * k + 3) as f64;
        k += 1;
    }
    c
}

const F64_EXPM1: [f64; 13] = inverse_factorials();
const F32_EXPM1: [f64; 7] = inverse_factorials();
const F64_LOG_TAIL: [f64; 10] = odd_reciprocals();
const F32_LOG_TAIL: [f64; 5] = odd_reciprocals();

const F64: Format = Format {
    int: types::I64X2,
    mant: 52,
    bias: 1023,
    one_bits: 0x3ff0_0000_0000_0000,
    mant_mask: 0x000f_ffff_ffff_ffff,
    magic: 0x4330_0000_0000_0000,
    ln2_hi: f64::from_bits(0x3fe6_2e42_fee0_0000),
    ln2_lo: 1.908_214_929_270_587_7e-10,
    expm1_series: &F64_EXPM1,
    expm1_split: false,
    exp_range: (-746.0, 710.0),
    log_tail: &F64_LOG_TAIL,
    min_normal: f64::MIN_POSITIVE,
    subnormal_scale: (18_014_398_509_481_984.0, 54.0),
    tanh_limit: 20.0,
};

const F32: Format = Format {
    int: types::I32X4,
    mant: 23,
    bias: 127,
    one_bits: 0x3f80_0000,
    mant_mask: 0x007f_ffff,
    magic: 0x4b00_0000,
    ln2_hi: f32::from_bits(0x3f31_7200) as f64,
    ln2_lo: (std::f64::consts::LN_2 - f32::from_bits(0x3f31_7200) as f64) as f32 as f64,
    expm1_series: &F32_EXPM1,
    expm1_split: true,
    exp_range: (-104.0, 89.0),
    log_tail: &F32_LOG_TAIL,
    min_normal: f32::MIN_POSITIVE as f64,
    subnormal_scale: (33_554_432.0, 25.0),
    tanh_limit: 12.0,
};

impl Format {
    /// `2^mant + bias`: a float whose mantissa's low bits, read as an integer, are an
    /// exponent field (`pow2` adds it, `log` subtracts it).
    fn exponent_offset(&self) -> f64 {
        (1u64 << self.mant) as f64 + self.bias as f64
    }
}

/// The format of `x`'s lanes.
fn format(b: &FunctionBuilder, x: Value) -> &'static Format {
    if b.func.dfg.value_type(x) == types::F32X4 {
        &F32
    } else {
        &F64
    }
}

/// `x` in every float lane of `x_like`'s type.
fn splat_like(b: &mut FunctionBuilder, x_like: Value, x: f64) -> Value {
    let ty = b.func.dfg.value_type(x_like);
    splat_as(b, ty, x)
}

/// `x` in every integer lane of the format.
fn splat_int(b: &mut FunctionBuilder, f: &Format, x: i64) -> Value {
    let lane = f.int.lane_type();
    let c = b.ins().iconst(
        lane,
        if lane == types::I32 {
            x as i32 as i64
        } else {
            x
        },
    );
    b.ins().splat(f.int, c)
}

/// `Σ c[k]·r^k`, by Estrin's scheme: pairs `c[2k] + c[2k+1]·r` combined with r², r⁴, …, so
/// that the dependency chain is logarithmic in the degree (Horner's is linear, and latency
/// bound in a loop of one vector per iteration).
fn polynomial(b: &mut FunctionBuilder, r: Value, c: &[f64]) -> Value {
    let mut terms: Vec<Value> = c
        .chunks(2)
        .map(|pair| {
            let c0 = splat_like(b, r, pair[0]);
            match pair.get(1) {
                Some(&k1) => {
                    let c1 = splat_like(b, r, k1);
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

/// `x` limited to `[lo, hi]` lane by lane, a NaN left as it is: a comparison and a
/// blend each side (`fmin`/`fmax` propagate NaNs in a dozen instructions, and every caller
/// restores a NaN argument at the end anyway).
fn clamp(b: &mut FunctionBuilder, x: Value, lo: f64, hi: f64) -> Value {
    let lo = splat_like(b, x, lo);
    let below = b.ins().fcmp(FloatCC::LessThan, x, lo);
    let x = select(b, below, lo, x);
    at_most(b, x, hi)
}

/// `x` limited to at most `hi` lane by lane, a NaN left as it is (see [`clamp`]).
fn at_most(b: &mut FunctionBuilder, x: Value, hi: f64) -> Value {
    let hi = splat_like(b, x, hi);
    let above = b.ins().fcmp(FloatCC::GreaterThan, x, hi);
    select(b, above, hi, x)
}

/// `x` where `x` is NaN, else `r`.
fn keep_nan(b: &mut FunctionBuilder, x: Value, r: Value) -> Value {
    let nan = b.ins().fcmp(FloatCC::NotEqual, x, x);
    select(b, nan, x, r)
}

/// 2^k for lanes holding integers k of the format's normal exponents: the bits of
/// `k + bias` moved into the exponent field (added to 2^mant first, so that they are the
/// low bits of its mantissa).
fn pow2(b: &mut FunctionBuilder, f: &Format, k: Value) -> Value {
    let bias = splat_like(b, k, f.exponent_offset());
    let kb = b.ins().fadd(k, bias);
    let float = b.func.dfg.value_type(k);
    let bits = vcast(b, f.int, kb);
    let sh = b.ins().ishl_imm_u(bits, f.mant as i64);
    vcast(b, float, sh)
}

/// `x = n·ln2 + r` with n an integer (in float lanes) and |r| ≤ ln2/2 (plus rounding);
/// returns `(n, e^r − 1)`.
fn reduce_exp(b: &mut FunctionBuilder, f: &Format, x: Value) -> (Value, Value) {
    let log2e = splat_like(b, x, std::f64::consts::LOG2_E);
    let xl = b.ins().fmul(x, log2e);
    let n = b.ins().nearest(xl);
    let hi = splat_like(b, x, f.ln2_hi);
    let lo = splat_like(b, x, f.ln2_lo);
    let nh = b.ins().fmul(n, hi);
    let nl = b.ins().fmul(n, lo);
    let r = b.ins().fsub(x, nh);
    let r = b.ins().fsub(r, nl);
    if f.expm1_split {
        let p = polynomial(b, r, &f.expm1_series[1..]);
        let r2 = b.ins().fmul(r, r);
        (n, mul_add(b, r2, p, r))
    } else {
        let p = polynomial(b, r, f.expm1_series);
        (n, b.ins().fmul(r, p))
    }
}

/// `e^x` lane by lane. Past the format's range the result is 0 or inf, so the argument is
/// clamped there; `2^n` is applied as two factors, each a normal number, so that the
/// first product is exact and the second rounds once, also into the subnormals.
pub(crate) fn exp(b: &mut FunctionBuilder, x: Value) -> Value {
    let f = format(b, x);
    let xc = clamp(b, x, f.exp_range.0, f.exp_range.1);
    let (n, q) = reduce_exp(b, f, xc);
    let one = splat_like(b, x, 1.0);
    let p = b.ins().fadd(q, one);
    let half = splat_like(b, x, 0.5);
    let nh = b.ins().fmul(n, half);
    let n1 = b.ins().floor(nh);
    let n2 = b.ins().fsub(n, n1);
    let s1 = pow2(b, f, n1);
    let s2 = pow2(b, f, n2);
    let r = b.ins().fmul(p, s1);
    let r = b.ins().fmul(r, s2);
    keep_nan(b, x, r)
}

/// `ln x` lane by lane (`ln 0 = -inf`, negative → NaN, `ln inf = inf`): x = 2^e·m with m
/// in [√½, √2), and `ln m = f − (f²/2 − s·(f²/2 + R))`, f = m − 1 (exact), s = f/(2 + f).
pub(crate) fn log(b: &mut FunctionBuilder, x: Value) -> Value {
    let f = format(b, x);
    let float = b.func.dfg.value_type(x);
    // Subnormals scaled into the normals first.
    let tiny = splat_like(b, x, f.min_normal);
    let sub = b.ins().fcmp(FloatCC::LessThan, x, tiny);
    let scale = splat_like(b, x, f.subnormal_scale.0);
    let xs0 = b.ins().fmul(x, scale);
    let xs = select(b, sub, xs0, x);
    let bits = vcast(b, f.int, xs);
    // The exponent as a float: its bits as the low bits of 2^mant's mantissa.
    let eb = b.ins().ushr_imm_u(bits, f.mant as i64);
    let magic = splat_int(b, f, f.magic);
    let eb = b.ins().bor(eb, magic);
    let ef = vcast(b, float, eb);
    let off = splat_like(b, x, f.exponent_offset());
    let e = b.ins().fsub(ef, off);
    let shift = splat_like(b, x, f.subnormal_scale.1);
    let e_sub = b.ins().fsub(e, shift);
    let e = select(b, sub, e_sub, e);
    // The mantissa m in [1, 2), then in [√½, √2).
    let mm = splat_int(b, f, f.mant_mask);
    let mb = b.ins().band(bits, mm);
    let one_bits = splat_int(b, f, f.one_bits);
    let mb = b.ins().bor(mb, one_bits);
    let m = vcast(b, float, mb);
    let sqrt2 = splat_like(b, x, std::f64::consts::SQRT_2);
    let big = b.ins().fcmp(FloatCC::GreaterThan, m, sqrt2);
    let half = splat_like(b, x, 0.5);
    let mh = b.ins().fmul(m, half);
    let m = select(b, big, mh, m);
    let one = splat_like(b, x, 1.0);
    let e1 = b.ins().fadd(e, one);
    let e = select(b, big, e1, e);
    let fm = b.ins().fsub(m, one);
    let two = splat_like(b, x, 2.0);
    let d = b.ins().fadd(fm, two);
    let s = b.ins().fdiv(fm, d);
    let z = b.ins().fmul(s, s);
    let rp = polynomial(b, z, f.log_tail);
    let r = b.ins().fmul(rp, z);
    let ff = b.ins().fmul(fm, fm);
    let hfsq = b.ins().fmul(ff, half);
    let t = b.ins().fadd(hfsq, r);
    let st = b.ins().fmul(s, t);
    let lo = splat_like(b, x, f.ln2_lo);
    let elo = b.ins().fmul(e, lo);
    let a = b.ins().fadd(st, elo);
    let a = b.ins().fsub(hfsq, a);
    let a = b.ins().fsub(a, fm);
    let hi = splat_like(b, x, f.ln2_hi);
    let ehi = b.ins().fmul(e, hi);
    let mut res = b.ins().fsub(ehi, a);
    // Special values.
    let zero = splat_like(b, x, 0.0);
    let inf = splat_like(b, x, f64::INFINITY);
    let ninf = splat_like(b, x, f64::NEG_INFINITY);
    // The NaN std gives for a negative argument (its sign differs between libms), as
    // `runic_prim` gives it for either type.
    let nan = splat_like(b, x, std::hint::black_box(-1.0f64).ln());
    let is0 = b.ins().fcmp(FloatCC::Equal, x, zero);
    res = select(b, is0, ninf, res);
    let neg = b.ins().fcmp(FloatCC::LessThan, x, zero);
    res = select(b, neg, nan, res);
    let isinf = b.ins().fcmp(FloatCC::Equal, x, inf);
    res = select(b, isinf, inf, res);
    keep_nan(b, x, res)
}

/// `tanh x` lane by lane: `±em/(em + 2)`, em = e^{2|x|} − 1. Past the format's limit the
/// result rounds to ±1, so |x| is clamped there and 2^n is one normal factor.
pub(crate) fn tanh(b: &mut FunctionBuilder, x: Value) -> Value {
    let f = format(b, x);
    let a = b.ins().fabs(x);
    let a = at_most(b, a, f.tanh_limit);
    let y = b.ins().fadd(a, a);
    let (n, q) = reduce_exp(b, f, y);
    let s = pow2(b, f, n);
    let one = splat_like(b, x, 1.0);
    let s1 = b.ins().fsub(s, one);
    let em = mul_add(b, s, q, s1);
    let two = splat_like(b, x, 2.0);
    let d = b.ins().fadd(em, two);
    let t = b.ins().fdiv(em, d);
    // The sign bit of x onto |tanh x|.
    let sign = splat_int(b, f, i64::MIN >> (64 - f.int.lane_bits()));
    let xb = vcast(b, f.int, x);
    let sb = b.ins().band(xb, sign);
    let tb = vcast(b, f.int, t);
    let r = b.ins().bor(tb, sb);
    let float = b.func.dfg.value_type(x);
    let r = vcast(b, float, r);
    keep_nan(b, x, r)
}
