//! Primitive values and the primitive operations of language.md §9.
//!
//! Integer operations are computed on `i128` and wrapped back to the operand width, which gives
//! the two's-complement wrap-around rules of §9.1 for every width with one code path. Float
//! operations are computed in `f64` and rounded to the operand type: for `+ - * / sqrt` and
//! `fmod` this double rounding is exact for `f32` and `f16`.

use crate::types::PrimType;
use half::f16;

/// A scalar of one of the twelve primitive types.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Prim {
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    F16(f16),
    F32(f32),
    F64(f64),
    Bool(bool),
}

/// Errors of primitive operations (their messages are fixed by §9.6).
#[derive(Debug, Clone, PartialEq)]
pub enum PrimError {
    DivisionByZero,
    NegativeExponent,
}

impl PrimError {
    pub fn message(&self) -> &'static str {
        match self {
            PrimError::DivisionByZero => "division by zero",
            PrimError::NegativeExponent => "negative exponent",
        }
    }
}

impl Prim {
    pub fn ty(self) -> PrimType {
        match self {
            Prim::I8(_) => PrimType::I8,
            Prim::I16(_) => PrimType::I16,
            Prim::I32(_) => PrimType::I32,
            Prim::I64(_) => PrimType::I64,
            Prim::U8(_) => PrimType::U8,
            Prim::U16(_) => PrimType::U16,
            Prim::U32(_) => PrimType::U32,
            Prim::U64(_) => PrimType::U64,
            Prim::F16(_) => PrimType::F16,
            Prim::F32(_) => PrimType::F32,
            Prim::F64(_) => PrimType::F64,
            Prim::Bool(_) => PrimType::Bool,
        }
    }

    /// The integer value, exactly (unsigned types read as unsigned).
    pub fn as_int(self) -> Option<i128> {
        Some(match self {
            Prim::I8(x) => x as i128,
            Prim::I16(x) => x as i128,
            Prim::I32(x) => x as i128,
            Prim::I64(x) => x as i128,
            Prim::U8(x) => x as i128,
            Prim::U16(x) => x as i128,
            Prim::U32(x) => x as i128,
            Prim::U64(x) => x as i128,
            _ => return None,
        })
    }

    pub fn as_float(self) -> Option<f64> {
        Some(match self {
            Prim::F16(x) => x.to_f64(),
            Prim::F32(x) => x as f64,
            Prim::F64(x) => x,
            _ => return None,
        })
    }

    pub fn as_bool(self) -> Option<bool> {
        match self {
            Prim::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// Any integer as i64 (wrapping); used for indices and sizes.
    pub fn to_i64(self) -> Option<i64> {
        self.as_int().map(|v| v as i64)
    }

    /// An integer of type `t` from an exact value, wrapping modulo 2^N.
    pub fn int(t: PrimType, v: i128) -> Prim {
        match t {
            PrimType::I8 => Prim::I8(v as i8),
            PrimType::I16 => Prim::I16(v as i16),
            PrimType::I32 => Prim::I32(v as i32),
            PrimType::I64 => Prim::I64(v as i64),
            PrimType::U8 => Prim::U8(v as u8),
            PrimType::U16 => Prim::U16(v as u16),
            PrimType::U32 => Prim::U32(v as u32),
            PrimType::U64 => Prim::U64(v as u64),
            PrimType::F16 | PrimType::F32 | PrimType::F64 => Prim::float(t, v as f64),
            PrimType::Bool => Prim::Bool(v != 0),
        }
    }

    /// A float of type `t`, rounded to nearest.
    pub fn float(t: PrimType, v: f64) -> Prim {
        match t {
            PrimType::F16 => Prim::F16(f16::from_f64(v)),
            PrimType::F32 => Prim::F32(v as f32),
            PrimType::F64 => Prim::F64(v),
            PrimType::Bool => Prim::Bool(v != 0.0),
            _ => convert(Prim::F64(v), t),
        }
    }

    pub fn zero(t: PrimType) -> Prim {
        Prim::int(t, 0)
    }
    pub fn one(t: PrimType) -> Prim {
        Prim::int(t, 1)
    }

    /// Largest value of the type (`inf` for floats).
    pub fn highest(t: PrimType) -> Prim {
        if t.is_float() {
            Prim::float(t, f64::INFINITY)
        } else if t == PrimType::Bool {
            Prim::Bool(true)
        } else if t.is_signed_int() {
            Prim::int(t, (1i128 << (t.bits() - 1)) - 1)
        } else {
            Prim::int(t, (1i128 << t.bits()) - 1)
        }
    }

    /// Smallest value of the type (`-inf` for floats).
    pub fn lowest(t: PrimType) -> Prim {
        if t.is_float() {
            Prim::float(t, f64::NEG_INFINITY)
        } else if t == PrimType::Bool {
            Prim::Bool(false)
        } else if t.is_signed_int() {
            Prim::int(t, -(1i128 << (t.bits() - 1)))
        } else {
            Prim::int(t, 0)
        }
    }

    /// The value printed without a type suffix (for error messages).
    pub fn plain(self) -> String {
        match self {
            Prim::Bool(b) => b.to_string(),
            p => match p.as_int() {
                Some(v) => v.to_string(),
                None => {
                    let f = p.as_float().unwrap_or(0.0);
                    if f.is_nan() {
                        "nan".into()
                    } else if f.is_infinite() {
                        if f > 0.0 {
                            "inf".into()
                        } else {
                            "-inf".into()
                        }
                    } else {
                        format!("{f}")
                    }
                }
            },
        }
    }
}

/// The binary operators of §9 (overloaded and module members alike).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Pow,
    Quot,
    Rem,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Lshr,
    Eq,
    Neq,
    Lt,
    Le,
    Gt,
    Ge,
    LogAnd,
    LogOr,
    Max,
    Min,
    MulHi,
    Atan2,
    Atan2Pi,
    Hypot,
    NextAfter,
    CopySign,
    Ldexp,
    GetBit,
    FromFraction,
}

impl BinOp {
    /// The binary operation of a numeric-module member: an operator symbol (`i32.+`) or a
    /// named member (`max`, `atan2`, …).
    pub fn from_member_name(name: &str) -> Option<BinOp> {
        // Operator symbols first (`i32.+`); the match below returns early for other names.
        if let Some(op) = BinOp::from_symbol(name) {
            return Some(op);
        }
        Some(match name {
            "max" => BinOp::Max,
            "min" => BinOp::Min,
            "mul_hi" => BinOp::MulHi,
            "atan2" => BinOp::Atan2,
            "atan2pi" => BinOp::Atan2Pi,
            "hypot" => BinOp::Hypot,
            "nextafter" => BinOp::NextAfter,
            "copysign" => BinOp::CopySign,
            "ldexp" => BinOp::Ldexp,
            _ => return None,
        })
    }

    /// The operator for an overloaded operator symbol.
    pub fn from_symbol(s: &str) -> Option<BinOp> {
        Some(match s {
            "+" => BinOp::Add,
            "-" => BinOp::Sub,
            "*" => BinOp::Mul,
            "/" => BinOp::Div,
            "%" => BinOp::Mod,
            "**" => BinOp::Pow,
            "//" => BinOp::Quot,
            "%%" => BinOp::Rem,
            "&" => BinOp::And,
            "|" => BinOp::Or,
            "^" => BinOp::Xor,
            "<<" => BinOp::Shl,
            ">>" => BinOp::Shr,
            ">>>" => BinOp::Lshr,
            "==" => BinOp::Eq,
            "!=" => BinOp::Neq,
            "<" => BinOp::Lt,
            "<=" => BinOp::Le,
            ">" => BinOp::Gt,
            ">=" => BinOp::Ge,
            "&&" => BinOp::LogAnd,
            "||" => BinOp::LogOr,
            _ => return None,
        })
    }
}

fn cmp_prims(a: Prim, b: Prim) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Prim::Bool(x), Prim::Bool(y)) => Some(x.cmp(&y)),
        _ => match (a.as_int(), b.as_int()) {
            (Some(x), Some(y)) => Some(x.cmp(&y)),
            _ => a.as_float()?.partial_cmp(&b.as_float()?),
        },
    }
}

/// Apply a binary operator to two primitives of the same type.
pub fn binop(op: BinOp, a: Prim, b: Prim) -> Result<Prim, PrimError> {
    use std::cmp::Ordering::*;
    let t = a.ty();
    match op {
        BinOp::Eq => return Ok(Prim::Bool(cmp_prims(a, b) == Some(Equal))),
        BinOp::Neq => return Ok(Prim::Bool(cmp_prims(a, b) != Some(Equal))),
        BinOp::Lt => return Ok(Prim::Bool(cmp_prims(a, b) == Some(Less))),
        BinOp::Le => return Ok(Prim::Bool(matches!(cmp_prims(a, b), Some(Less | Equal)))),
        BinOp::Gt => return Ok(Prim::Bool(cmp_prims(a, b) == Some(Greater))),
        BinOp::Ge => return Ok(Prim::Bool(matches!(cmp_prims(a, b), Some(Greater | Equal)))),
        _ => {}
    }
    if let (Prim::Bool(x), Prim::Bool(y)) = (a, b) {
        return Ok(Prim::Bool(match op {
            BinOp::LogAnd | BinOp::And | BinOp::Min | BinOp::Mul => x && y,
            BinOp::LogOr | BinOp::Or | BinOp::Max | BinOp::Add => x || y,
            BinOp::Xor | BinOp::Sub => x ^ y,
            _ => x,
        }));
    }
    if let (Some(x), Some(y)) = (a.as_int(), b.as_int()) {
        return int_binop(op, t, x, y);
    }
    if let (Some(x), Some(y)) = (a.as_float(), b.as_float()) {
        return Ok(float_binop(op, t, x, y));
    }
    // Mixed operand types only arise for operators with an i32/i64 second operand.
    match (op, a.as_float(), b.as_int()) {
        (BinOp::Ldexp, Some(x), Some(n)) => Ok(Prim::float(t, ldexp(x, n))),
        (BinOp::GetBit, _, _) => Ok(Prim::I32(0)),
        _ => Ok(a),
    }
}

fn ldexp(x: f64, n: i128) -> f64 {
    let n = n.clamp(-2200, 2200) as i32;
    // Split the exponent so that intermediate powers stay finite.
    let mut r = x;
    let mut k = n;
    while k > 1000 {
        r *= 2f64.powi(1000);
        k -= 1000;
    }
    while k < -1000 {
        r *= 2f64.powi(-1000);
        k += 1000;
    }
    r * 2f64.powi(k)
}

fn int_binop(op: BinOp, t: PrimType, x: i128, y: i128) -> Result<Prim, PrimError> {
    let bits = t.bits();
    let signed = t.is_signed_int();
    let r = match op {
        BinOp::Add => x.wrapping_add(y),
        BinOp::Sub => x.wrapping_sub(y),
        BinOp::Mul => x.wrapping_mul(y),
        BinOp::Div => {
            if y == 0 {
                return Err(PrimError::DivisionByZero);
            }
            let q = x / y;
            if x % y != 0 && ((x < 0) != (y < 0)) {
                q - 1
            } else {
                q
            }
        }
        BinOp::Mod => {
            if y == 0 {
                return Err(PrimError::DivisionByZero);
            }
            let r = x % y;
            if r != 0 && ((r < 0) != (y < 0)) {
                r + y
            } else {
                r
            }
        }
        BinOp::Quot => {
            if y == 0 {
                return Err(PrimError::DivisionByZero);
            }
            x / y
        }
        BinOp::Rem => {
            if y == 0 {
                return Err(PrimError::DivisionByZero);
            }
            x % y
        }
        BinOp::Pow => {
            if y < 0 {
                return Err(PrimError::NegativeExponent);
            }
            let mut base = x;
            let mut e = y;
            let mut acc: i128 = 1;
            while e > 0 {
                if e & 1 == 1 {
                    acc = wrap(acc.wrapping_mul(base), bits, signed);
                }
                base = wrap(base.wrapping_mul(base), bits, signed);
                e >>= 1;
            }
            acc
        }
        BinOp::And => x & y,
        BinOp::Or => x | y,
        BinOp::Xor => x ^ y,
        BinOp::Shl => {
            if y < 0 || y >= bits as i128 {
                0
            } else {
                x << y
            }
        }
        BinOp::Shr => {
            if y < 0 || y >= bits as i128 {
                if x < 0 {
                    -1
                } else {
                    0
                }
            } else {
                x >> y
            }
        }
        BinOp::Lshr => {
            let ux = x & ((1i128 << bits) - 1);
            if y < 0 || y >= bits as i128 {
                0
            } else {
                ux >> y
            }
        }
        BinOp::Max => x.max(y),
        BinOp::Min => x.min(y),
        BinOp::MulHi => {
            if signed {
                (x * y) >> bits
            } else {
                ((x as u128).wrapping_mul(y as u128) >> bits) as i128
            }
        }
        BinOp::LogAnd | BinOp::LogOr => x,
        BinOp::GetBit => return Ok(Prim::I32(((x >> y.clamp(0, 127)) & 1) as i32)),
        _ => x,
    };
    Ok(Prim::int(t, r))
}

fn wrap(v: i128, bits: u32, signed: bool) -> i128 {
    let mask = (1i128 << bits) - 1;
    let low = v & mask;
    if signed && low >> (bits - 1) & 1 == 1 {
        low - (1i128 << bits)
    } else {
        low
    }
}

/// Float `max` and `min` for one float type, the same in every engine: a NaN operand
/// gives the other, and `-0 < 0` (so the result depends neither on the operands' order nor
/// on a reduction's association). Equal operands are the same bits but for the two zeros,
/// whose bits `&` (for `max`) and `|` (for `min`) combine into `0` and `-0`.
macro_rules! float_min_max {
    ($t:ty, $max:ident, $min:ident) => {
        #[doc = concat!("`max` on `", stringify!($t), "` (see `float_min_max!`).")]
        pub fn $max(x: $t, y: $t) -> $t {
            if x.is_nan() || y > x {
                y
            } else if x == y {
                <$t>::from_bits(x.to_bits() & y.to_bits())
            } else {
                x
            }
        }

        #[doc = concat!("`min` on `", stringify!($t), "` (see `float_min_max!`).")]
        pub fn $min(x: $t, y: $t) -> $t {
            if x.is_nan() || y < x {
                y
            } else if x == y {
                <$t>::from_bits(x.to_bits() | y.to_bits())
            } else {
                x
            }
        }
    };
}

float_min_max!(f64, max_f64, min_f64);
// Beside the f64 pair (which runic_prim computes f32 in) for the executor's f32 loops.
float_min_max!(f32, max_f32, min_f32);

fn float_binop(op: BinOp, t: PrimType, x: f64, y: f64) -> Prim {
    let r = match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div => x / y,
        BinOp::Mod => x % y,
        BinOp::Pow => {
            if t == PrimType::F32 {
                (x as f32).powf(y as f32) as f64
            } else {
                x.powf(y)
            }
        }
        BinOp::Max => max_f64(x, y),
        BinOp::Min => min_f64(x, y),
        BinOp::Atan2 => y_atan2(x, y),
        BinOp::Atan2Pi => y_atan2(x, y) / std::f64::consts::PI,
        BinOp::Hypot => x.hypot(y),
        BinOp::CopySign => x.copysign(y),
        BinOp::NextAfter => return next_after(t, x, y),
        _ => x,
    };
    Prim::float(t, r)
}

fn y_atan2(y: f64, x: f64) -> f64 {
    y.atan2(x)
}

fn next_after(t: PrimType, x: f64, y: f64) -> Prim {
    if x.is_nan() || y.is_nan() {
        return Prim::float(t, f64::NAN);
    }
    if x == y {
        return Prim::float(t, y);
    }
    let up = y > x;
    match t {
        PrimType::F32 => {
            let v = x as f32;
            Prim::F32(step_f32(v, up))
        }
        PrimType::F16 => {
            let v = f16::from_f64(x);
            let bits = v.to_bits();
            let nb = if v == f16::ZERO || v == f16::NEG_ZERO {
                if up {
                    1
                } else {
                    0x8001
                }
            } else if (v.to_f64() > 0.0) == up {
                bits + 1
            } else {
                bits - 1
            };
            Prim::F16(f16::from_bits(nb))
        }
        _ => Prim::F64(step_f64(x, up)),
    }
}

fn step_f64(v: f64, up: bool) -> f64 {
    if v == 0.0 {
        let tiny = f64::from_bits(1);
        return if up { tiny } else { -tiny };
    }
    let b = v.to_bits();
    f64::from_bits(if (v > 0.0) == up { b + 1 } else { b - 1 })
}

fn step_f32(v: f32, up: bool) -> f32 {
    if v == 0.0 {
        let tiny = f32::from_bits(1);
        return if up { tiny } else { -tiny };
    }
    let b = v.to_bits();
    f32::from_bits(if (v > 0.0) == up { b + 1 } else { b - 1 })
}

/// Unary operations: prefix operators and one-argument module members.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    /// Prefix `!`: boolean negation or bitwise complement.
    Not,
    Abs,
    Sgn,
    Popc,
    Clz,
    Ctz,
    ToBits,
    FromBits,
    Recip,
    Sqrt,
    Rsqrt,
    Cbrt,
    Exp,
    Log,
    Log2,
    Log10,
    Log1p,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    SinPi,
    CosPi,
    TanPi,
    AsinPi,
    AcosPi,
    AtanPi,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Gamma,
    Lgamma,
    Erf,
    Erfc,
    Ceil,
    Floor,
    Trunc,
    Round,
    IsInf,
    IsNan,
}

impl UnOp {
    /// The unary operation of a numeric-module member (`sqrt`, `popc`, …), by name.
    pub fn from_member_name(name: &str) -> Option<UnOp> {
        Some(match name {
            "neg" => UnOp::Neg,
            "not" => UnOp::Not,
            "abs" => UnOp::Abs,
            "sgn" => UnOp::Sgn,
            "popc" => UnOp::Popc,
            "clz" => UnOp::Clz,
            "ctz" => UnOp::Ctz,
            "to_bits" => UnOp::ToBits,
            "from_bits" => UnOp::FromBits,
            "recip" => UnOp::Recip,
            "sqrt" => UnOp::Sqrt,
            "rsqrt" => UnOp::Rsqrt,
            "cbrt" => UnOp::Cbrt,
            "exp" => UnOp::Exp,
            "log" => UnOp::Log,
            "log2" => UnOp::Log2,
            "log10" => UnOp::Log10,
            "log1p" => UnOp::Log1p,
            "sin" => UnOp::Sin,
            "cos" => UnOp::Cos,
            "tan" => UnOp::Tan,
            "asin" => UnOp::Asin,
            "acos" => UnOp::Acos,
            "atan" => UnOp::Atan,
            "sinpi" => UnOp::SinPi,
            "cospi" => UnOp::CosPi,
            "tanpi" => UnOp::TanPi,
            "asinpi" => UnOp::AsinPi,
            "acospi" => UnOp::AcosPi,
            "atanpi" => UnOp::AtanPi,
            "sinh" => UnOp::Sinh,
            "cosh" => UnOp::Cosh,
            "tanh" => UnOp::Tanh,
            "asinh" => UnOp::Asinh,
            "acosh" => UnOp::Acosh,
            "atanh" => UnOp::Atanh,
            "gamma" => UnOp::Gamma,
            "lgamma" => UnOp::Lgamma,
            "erf" => UnOp::Erf,
            "erfc" => UnOp::Erfc,
            "ceil" => UnOp::Ceil,
            "floor" => UnOp::Floor,
            "trunc" => UnOp::Trunc,
            "round" => UnOp::Round,
            "isinf" => UnOp::IsInf,
            "isnan" => UnOp::IsNan,
            _ => return None,
        })
    }
}

// The platform's libm. All of these are pure apart from `errno`, which is thread-local, so
// they are safe to call from rayon's worker threads. C's plain `lgamma` is not: it also
// writes the process-global `signgam`, a data race when two threads call it at once. We use
// the re-entrant `lgamma_r`, which hands the sign back through a pointer instead and computes
// the same value (both are glibc's `__ieee754_lgamma_r`).
extern "C" {
    fn tgamma(x: f64) -> f64;
    fn lgamma_r(x: f64, sign: *mut i32) -> f64;
    fn erf(x: f64) -> f64;
    fn erfc(x: f64) -> f64;
}

/// ln|Γ(x)|, thread-safe (see the `extern` block above).
fn ln_gamma(x: f64) -> f64 {
    let mut sign = 0i32;
    // SAFETY: `sign` is a live, writable i32 for the duration of the call; `lgamma_r` only
    // writes the sign of Γ(x) through it and keeps no reference.
    unsafe { lgamma_r(x, &mut sign) }
}

/// Apply a unary operation.
pub fn unop(op: UnOp, a: Prim) -> Prim {
    let t = a.ty();
    if let Prim::Bool(b) = a {
        return Prim::Bool(match op {
            UnOp::Not => !b,
            _ => b,
        });
    }
    if let Some(x) = a.as_int() {
        let bits = t.bits();
        let ux = x & ((1i128 << bits) - 1);
        return match op {
            UnOp::Neg => Prim::int(t, -x),
            UnOp::Not => Prim::int(t, !x),
            UnOp::Abs => Prim::int(t, x.abs()),
            UnOp::Sgn => Prim::int(t, x.signum()),
            UnOp::Popc => Prim::I32(ux.count_ones() as i32),
            UnOp::Clz => Prim::I32((ux.leading_zeros() - (128 - bits)) as i32),
            UnOp::Ctz => Prim::I32(if ux == 0 {
                bits as i32
            } else {
                ux.trailing_zeros() as i32
            }),
            UnOp::FromBits => match t {
                PrimType::U16 => Prim::F16(f16::from_bits(ux as u16)),
                PrimType::U32 => Prim::F32(f32::from_bits(ux as u32)),
                _ => Prim::F64(f64::from_bits(ux as u64)),
            },
            _ => a,
        };
    }
    let x = a.as_float().unwrap_or(0.0);
    let pi = std::f64::consts::PI;
    let r = match op {
        UnOp::Neg => -x,
        UnOp::Abs => x.abs(),
        UnOp::Sgn => {
            if x.is_nan() {
                x
            } else if x == 0.0 {
                0.0
            } else {
                x.signum()
            }
        }
        UnOp::ToBits => {
            return match a {
                Prim::F16(v) => Prim::U16(v.to_bits()),
                Prim::F32(v) => Prim::U32(v.to_bits()),
                _ => Prim::U64(x.to_bits()),
            }
        }
        UnOp::IsInf => return Prim::Bool(x.is_infinite()),
        UnOp::IsNan => return Prim::Bool(x.is_nan()),
        UnOp::Popc | UnOp::Clz | UnOp::Ctz | UnOp::Not | UnOp::FromBits => x,
        UnOp::Recip => 1.0 / x,
        UnOp::Sqrt => x.sqrt(),
        UnOp::Rsqrt => 1.0 / x.sqrt(),
        UnOp::Cbrt => x.cbrt(),
        UnOp::Exp => x.exp(),
        UnOp::Log => x.ln(),
        UnOp::Log2 => x.log2(),
        UnOp::Log10 => x.log10(),
        UnOp::Log1p => x.ln_1p(),
        UnOp::Sin => x.sin(),
        UnOp::Cos => x.cos(),
        UnOp::Tan => x.tan(),
        UnOp::Asin => x.asin(),
        UnOp::Acos => x.acos(),
        UnOp::Atan => x.atan(),
        UnOp::SinPi => sin_pi(x),
        UnOp::CosPi => sin_pi(x + 0.5),
        UnOp::TanPi => sin_pi(x) / sin_pi(x + 0.5),
        UnOp::AsinPi => x.asin() / pi,
        UnOp::AcosPi => x.acos() / pi,
        UnOp::AtanPi => x.atan() / pi,
        UnOp::Sinh => x.sinh(),
        UnOp::Cosh => x.cosh(),
        UnOp::Tanh => x.tanh(),
        UnOp::Asinh => x.asinh(),
        UnOp::Acosh => x.acosh(),
        UnOp::Atanh => x.atanh(),
        // SAFETY: plain C math functions from the platform's libm, no pointers involved.
        UnOp::Gamma => unsafe { tgamma(x) },
        UnOp::Lgamma => ln_gamma(x),
        UnOp::Erf => unsafe { erf(x) },
        UnOp::Erfc => unsafe { erfc(x) },
        UnOp::Ceil => x.ceil(),
        UnOp::Floor => x.floor(),
        UnOp::Trunc => x.trunc(),
        UnOp::Round => x.round_ties_even(),
    };
    Prim::float(t, r)
}

/// sin(πx), exact at integers and half-integers.
fn sin_pi(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let r = x.rem_euclid(2.0);
    if r == 0.0 || r == 1.0 {
        return if r == 0.0 {
            0.0f64.copysign(x)
        } else {
            -0.0f64.copysign(x)
        };
    }
    if r == 0.5 {
        return 1.0;
    }
    if r == 1.5 {
        return -1.0;
    }
    (std::f64::consts::PI * r).sin()
}

/// Convert a primitive to type `to` by the rules of §9.4.
pub fn convert(a: Prim, to: PrimType) -> Prim {
    if a.ty() == to {
        return a;
    }
    match a {
        Prim::Bool(b) => Prim::int(to, b as i128),
        _ => {
            if let Some(x) = a.as_int() {
                if to.is_float() {
                    Prim::float(to, x as f64)
                } else if to.is_unsigned_int() && to.bits() > a.ty().bits() {
                    // Widening to unsigned zero-extends the source bit pattern.
                    Prim::int(to, x & ((1i128 << a.ty().bits()) - 1))
                } else {
                    Prim::int(to, x)
                }
            } else {
                let x = a.as_float().unwrap_or(0.0);
                if to == PrimType::Bool {
                    Prim::Bool(x != 0.0)
                } else if to.is_float() {
                    Prim::float(to, x)
                } else if !x.is_finite() {
                    Prim::int(to, 0)
                } else {
                    Prim::int(to, x.trunc() as i128)
                }
            }
        }
    }
}

/// `T.set_bit i x b`.
pub fn set_bit(i: Prim, x: Prim, b: Prim) -> Prim {
    let i = i.as_int().unwrap_or(0);
    let bit = b.as_int().unwrap_or(0) & 1;
    let t = x.ty();
    if !(0..t.bits() as i128).contains(&i) {
        return x;
    }
    if t.is_float() {
        let bits = unop(UnOp::ToBits, x).as_int().unwrap_or(0);
        let nb = (bits & !(1 << i)) | (bit << i);
        let ut = match t {
            PrimType::F16 => PrimType::U16,
            PrimType::F32 => PrimType::U32,
            _ => PrimType::U64,
        };
        return unop(UnOp::FromBits, Prim::int(ut, nb));
    }
    let v = x.as_int().unwrap_or(0);
    Prim::int(t, (v & !(1 << i)) | (bit << i))
}

/// `T.get_bit i x`.
pub fn get_bit(i: Prim, x: Prim) -> Prim {
    let i = i.as_int().unwrap_or(0);
    let t = x.ty();
    if !(0..t.bits() as i128).contains(&i) {
        return Prim::I32(0);
    }
    let bits = if t.is_float() {
        unop(UnOp::ToBits, x).as_int().unwrap_or(0)
    } else {
        x.as_int().unwrap_or(0)
    };
    Prim::I32(((bits >> i) & 1) as i32)
}

/// Parse a float literal's decimal text at a float type, rounding once where possible.
pub fn float_literal(text: &str, t: PrimType) -> Prim {
    match t {
        PrimType::F32 => Prim::F32(text.parse::<f32>().unwrap_or(f32::NAN)),
        PrimType::F16 => {
            let v = text.parse::<f64>().unwrap_or(f64::NAN);
            Prim::F16(f16::from_f64(v))
        }
        PrimType::F64 => Prim::F64(text.parse::<f64>().unwrap_or(f64::NAN)),
        other => convert(Prim::F64(text.parse::<f64>().unwrap_or(0.0)), other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `min`/`max` of floats: NaNs are ignored, `-0 < 0` whatever the operands' order, and
    /// the f32 helpers agree with the f64 ones.
    #[test]
    fn min_max_order_the_zeros_and_ignore_nans() {
        let bits = |p: Prim| p.as_float().unwrap().to_bits();
        for t in [PrimType::F32, PrimType::F64] {
            let f = |x: f64| Prim::float(t, x);
            for (x, y) in [(0.0, -0.0), (-0.0, 0.0)] {
                assert_eq!(
                    bits(binop(BinOp::Max, f(x), f(y)).unwrap()),
                    0.0f64.to_bits()
                );
                assert_eq!(
                    bits(binop(BinOp::Min, f(x), f(y)).unwrap()),
                    (-0.0f64).to_bits()
                );
            }
            for (x, y, max, min) in [
                (f64::NAN, 1.0, 1.0f64, 1.0f64),
                (2.0, f64::NAN, 2.0, 2.0),
                (-3.0, 5.0, 5.0, -3.0),
                (-0.0, -0.0, -0.0, -0.0),
            ] {
                assert_eq!(bits(binop(BinOp::Max, f(x), f(y)).unwrap()), max.to_bits());
                assert_eq!(bits(binop(BinOp::Min, f(x), f(y)).unwrap()), min.to_bits());
            }
            assert!(binop(BinOp::Max, f(f64::NAN), f(f64::NAN))
                .unwrap()
                .as_float()
                .unwrap()
                .is_nan());
        }
        let vals = [0.0f32, -0.0, 1.5, -2.0, f32::NAN, f32::INFINITY];
        for &x in &vals {
            for &y in &vals {
                let wide = max_f64(x as f64, y as f64) as f32;
                assert_eq!(max_f32(x, y).to_bits(), wide.to_bits(), "max {x} {y}");
                let wide = min_f64(x as f64, y as f64) as f32;
                assert_eq!(min_f32(x, y).to_bits(), wide.to_bits(), "min {x} {y}");
            }
        }
    }

    fn lgamma64(x: f64) -> f64 {
        match unop(UnOp::Lgamma, Prim::F64(x)) {
            Prim::F64(r) => r,
            other => panic!("lgamma of an f64 gave {other:?}"),
        }
    }

    /// Ordinary, negative non-integer, near-pole, tiny, huge and non-finite arguments.
    fn lgamma_inputs() -> Vec<f64> {
        let mut xs: Vec<f64> = (-4000..4000).map(|i| i as f64 * 0.0137 + 0.003).collect();
        xs.extend((1..200).map(|i| i as f64 * 0.5));
        xs.extend((1..60).map(|i| -(i as f64) + 1e-9));
        xs.extend([
            0.0,
            -0.0,
            1.0,
            2.0,
            -1.0,
            1e-300,
            5e-324,
            1e300,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ]);
        xs
    }

    #[test]
    fn lgamma_known_values() {
        let pi = std::f64::consts::PI;
        let close = |a: f64, b: f64| (a - b).abs() <= 4.0 * f64::EPSILON * b.abs().max(1.0);
        assert_eq!(lgamma64(1.0), 0.0);
        assert_eq!(lgamma64(2.0), 0.0);
        assert!(close(lgamma64(0.5), pi.sqrt().ln()));
        assert!(close(lgamma64(-0.5), (2.0 * pi.sqrt()).ln()));
        assert!(close(lgamma64(5.0), 24f64.ln()));
        assert_eq!(lgamma64(0.0), f64::INFINITY);
        assert_eq!(lgamma64(-1.0), f64::INFINITY);
        assert!(lgamma64(f64::NAN).is_nan());
        // f32 goes through the same f64 computation.
        assert_eq!(unop(UnOp::Lgamma, Prim::F32(1.0)), Prim::F32(0.0));
    }

    #[test]
    fn lgamma_is_bit_identical_to_libm_lgamma() {
        extern "C" {
            fn lgamma(x: f64) -> f64;
        }
        for x in lgamma_inputs() {
            // SAFETY: a plain libm call; it writes `signgam`, but nothing else in this crate
            // calls `lgamma` any more, so nothing races with it.
            let old = unsafe { lgamma(x) };
            assert_eq!(lgamma64(x).to_bits(), old.to_bits(), "lgamma({x:e})");
        }
    }

    #[test]
    fn lgamma_from_many_threads_matches_single_threaded() {
        let xs = lgamma_inputs();
        let expected: Vec<u64> = xs.iter().map(|&x| lgamma64(x).to_bits()).collect();
        std::thread::scope(|s| {
            for t in 0..8 {
                let (xs, expected) = (&xs, &expected);
                s.spawn(move || {
                    for round in 0..20 {
                        // Each thread walks the inputs from a different start so that calls
                        // with different signs of Γ(x) overlap.
                        for k in 0..xs.len() {
                            let i = (k + t * 997 + round * 31) % xs.len();
                            let got = lgamma64(xs[i]).to_bits();
                            assert_eq!(got, expected[i], "lgamma({:e}) on thread {t}", xs[i]);
                        }
                    }
                });
            }
        });
    }
}
