//! Calls from native code back into `runic_prim`, for the operations Cranelift has no
//! instruction for (transcendental functions, `**`, `f16` arithmetic, rare conversions, …).
//! The native code passes scalars as *raw* 64-bit words ([`to_raw`]) and operations and
//! types as indices into the tables below; each shim decodes them and calls exactly the
//! function the executor and the interpreter call, so results are the same bits.

use half::f16;
use runic_ir::TernOp;
use runic_prim::{binop, convert, get_bit, set_bit, unop, BinOp, Prim, PrimType, UnOp};

/// Every binary operation, in the order native code refers to them.
pub const BINOPS: [BinOp; 33] = [
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Div,
    BinOp::Mod,
    BinOp::Pow,
    BinOp::Quot,
    BinOp::Rem,
    BinOp::And,
    BinOp::Or,
    BinOp::Xor,
    BinOp::Shl,
    BinOp::Shr,
    BinOp::Lshr,
    BinOp::Eq,
    BinOp::Neq,
    BinOp::Lt,
    BinOp::Le,
    BinOp::Gt,
    BinOp::Ge,
    BinOp::LogAnd,
    BinOp::LogOr,
    BinOp::Max,
    BinOp::Min,
    BinOp::MulHi,
    BinOp::Atan2,
    BinOp::Atan2Pi,
    BinOp::Hypot,
    BinOp::NextAfter,
    BinOp::CopySign,
    BinOp::Ldexp,
    BinOp::GetBit,
    BinOp::FromFraction,
];

/// Every unary operation, in the order native code refers to them.
pub const UNOPS: [UnOp; 46] = [
    UnOp::Neg,
    UnOp::Not,
    UnOp::Abs,
    UnOp::Sgn,
    UnOp::Popc,
    UnOp::Clz,
    UnOp::Ctz,
    UnOp::ToBits,
    UnOp::FromBits,
    UnOp::Recip,
    UnOp::Sqrt,
    UnOp::Rsqrt,
    UnOp::Cbrt,
    UnOp::Exp,
    UnOp::Log,
    UnOp::Log2,
    UnOp::Log10,
    UnOp::Log1p,
    UnOp::Sin,
    UnOp::Cos,
    UnOp::Tan,
    UnOp::Asin,
    UnOp::Acos,
    UnOp::Atan,
    UnOp::SinPi,
    UnOp::CosPi,
    UnOp::TanPi,
    UnOp::AsinPi,
    UnOp::AcosPi,
    UnOp::AtanPi,
    UnOp::Sinh,
    UnOp::Cosh,
    UnOp::Tanh,
    UnOp::Asinh,
    UnOp::Acosh,
    UnOp::Atanh,
    UnOp::Gamma,
    UnOp::Lgamma,
    UnOp::Erf,
    UnOp::Erfc,
    UnOp::Ceil,
    UnOp::Floor,
    UnOp::Trunc,
    UnOp::Round,
    UnOp::IsInf,
    UnOp::IsNan,
];

pub const TERNOPS: [TernOp; 5] = [
    TernOp::SetBit,
    TernOp::MadHi,
    TernOp::Lerp,
    TernOp::Mad,
    TernOp::Fma,
];

pub fn binop_index(op: BinOp) -> i64 {
    BINOPS.iter().position(|&o| o == op).unwrap_or(0) as i64
}
pub fn unop_index(op: UnOp) -> i64 {
    UNOPS.iter().position(|&o| o == op).unwrap_or(0) as i64
}
pub fn ternop_index(op: TernOp) -> i64 {
    TERNOPS.iter().position(|&o| o == op).unwrap_or(0) as i64
}
pub fn type_index(t: PrimType) -> i64 {
    PrimType::ALL.iter().position(|&p| p == t).unwrap_or(0) as i64
}
fn type_at(k: i64) -> PrimType {
    PrimType::ALL[(k as usize).min(11)]
}

/// A scalar as a raw word: the bit pattern in the low bits (bool: 0 or 1), upper bits zero.
pub fn to_raw(p: Prim) -> u64 {
    match p {
        Prim::I8(x) => x as u8 as u64,
        Prim::I16(x) => x as u16 as u64,
        Prim::I32(x) => x as u32 as u64,
        Prim::I64(x) => x as u64,
        Prim::U8(x) => x as u64,
        Prim::U16(x) => x as u64,
        Prim::U32(x) => x as u64,
        Prim::U64(x) => x,
        Prim::F16(x) => x.to_bits() as u64,
        Prim::F32(x) => x.to_bits() as u64,
        Prim::F64(x) => x.to_bits(),
        Prim::Bool(b) => b as u64,
    }
}

/// The scalar of type `t` whose bit pattern is in the low bits of `r` (upper bits ignored).
pub fn from_raw(t: PrimType, r: u64) -> Prim {
    match t {
        PrimType::I8 => Prim::I8(r as i8),
        PrimType::I16 => Prim::I16(r as i16),
        PrimType::I32 => Prim::I32(r as i32),
        PrimType::I64 => Prim::I64(r as i64),
        PrimType::U8 => Prim::U8(r as u8),
        PrimType::U16 => Prim::U16(r as u16),
        PrimType::U32 => Prim::U32(r as u32),
        PrimType::U64 => Prim::U64(r),
        PrimType::F16 => Prim::F16(f16::from_bits(r as u16)),
        PrimType::F32 => Prim::F32(f32::from_bits(r as u32)),
        PrimType::F64 => Prim::F64(f64::from_bits(r)),
        PrimType::Bool => Prim::Bool(r as u8 & 1 != 0),
    }
}

/// Failure codes returned by kernels (any nonzero code means "redo on the slow path").
pub const FAIL_DIV_ZERO: i32 = 1;
pub const FAIL_NEG_EXPONENT: i32 = 2;

fn fail_code(e: runic_prim::PrimError) -> i32 {
    match e {
        runic_prim::PrimError::DivisionByZero => FAIL_DIV_ZERO,
        runic_prim::PrimError::NegativeExponent => FAIL_NEG_EXPONENT,
    }
}

/// A binary operation exactly as the executor evaluates it (`get_bit` takes the bit index
/// first; everything else is `runic_prim::binop`).
pub fn scalar_binop(op: BinOp, a: Prim, b: Prim) -> Result<Prim, i32> {
    if op == BinOp::GetBit {
        return Ok(get_bit(a, b));
    }
    binop(op, a, b).map_err(fail_code)
}

/// A ternary operation exactly as the executor evaluates it (`runic_exec::eval::ternop`).
pub fn scalar_ternop(op: TernOp, a: Prim, b: Prim, c: Prim) -> Result<Prim, i32> {
    let bin = scalar_binop;
    Ok(match op {
        TernOp::SetBit => set_bit(a, b, c),
        TernOp::MadHi => bin(BinOp::Add, bin(BinOp::MulHi, a, b)?, c)?,
        TernOp::Lerp => bin(BinOp::Add, a, bin(BinOp::Mul, bin(BinOp::Sub, b, a)?, c)?)?,
        TernOp::Mad => bin(BinOp::Add, bin(BinOp::Mul, a, b)?, c)?,
        TernOp::Fma => match (a, b, c) {
            (Prim::F32(x), Prim::F32(y), Prim::F32(z)) => Prim::F32(x.mul_add(y, z)),
            (Prim::F64(x), Prim::F64(y), Prim::F64(z)) => Prim::F64(x.mul_add(y, z)),
            (Prim::F16(x), Prim::F16(y), Prim::F16(z)) => {
                Prim::F16(f16::from_f64(x.to_f64().mul_add(y.to_f64(), z.to_f64())))
            }
            _ => bin(BinOp::Add, bin(BinOp::Mul, a, b)?, c)?,
        },
    })
}

/// `a op b`; the result's raw word goes to `*out`. Returns 0, or a failure code.
///
/// # Safety
/// `out` must be valid for a write of a `u64`.
pub unsafe extern "C" fn rt_binop(op: i64, ta: i64, a: u64, tb: i64, b: u64, out: *mut u64) -> i32 {
    let op = BINOPS[(op as usize).min(BINOPS.len() - 1)];
    match scalar_binop(op, from_raw(type_at(ta), a), from_raw(type_at(tb), b)) {
        Ok(r) => {
            *out = to_raw(r);
            0
        }
        Err(code) => code,
    }
}

pub extern "C" fn rt_unop(op: i64, t: i64, a: u64) -> u64 {
    let op = UNOPS[(op as usize).min(UNOPS.len() - 1)];
    to_raw(unop(op, from_raw(type_at(t), a)))
}

pub extern "C" fn rt_convert(from: i64, to: i64, a: u64) -> u64 {
    to_raw(convert(from_raw(type_at(from), a), type_at(to)))
}

/// # Safety
/// `out` must be valid for a write of a `u64`.
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rt_ternop(
    op: i64,
    ta: i64,
    a: u64,
    tb: i64,
    b: u64,
    tc: i64,
    c: u64,
    out: *mut u64,
) -> i32 {
    let op = TERNOPS[(op as usize).min(TERNOPS.len() - 1)];
    let (a, b, c) = (
        from_raw(type_at(ta), a),
        from_raw(type_at(tb), b),
        from_raw(type_at(tc), c),
    );
    match scalar_ternop(op, a, b, c) {
        Ok(r) => {
            *out = to_raw(r);
            0
        }
        Err(code) => code,
    }
}

/// The scratch buffers of one kernel call (one chunk): one per intermediate array of the
/// kernel's body, grown as needed and reused by every element of the chunk.
#[derive(Default)]
pub struct Scratch {
    bufs: Vec<Vec<u64>>,
}

/// A buffer of at least `bytes` bytes (8-byte aligned) for the intermediate array `k`,
/// valid until the next call for the same `k` or the end of the kernel call.
///
/// # Safety
/// `arena` must point to the [`Scratch`] of the running kernel call, used by no other
/// thread.
pub unsafe extern "C" fn rt_scratch(arena: *mut Scratch, k: i64, bytes: i64) -> *mut u8 {
    let a = &mut *arena;
    let k = k.max(0) as usize;
    if a.bufs.len() <= k {
        a.bufs.resize_with(k + 1, Vec::new);
    }
    let words = (bytes.max(0) as usize).div_ceil(8).max(1);
    let b = &mut a.bufs[k];
    if b.len() < words {
        b.resize(words, 0);
    }
    b.as_mut_ptr() as *mut u8
}

/// Resolve the slice `start:end:stride` (each given when its bit of `flags` is set: 1, 2,
/// 4) of a dimension of `w` elements as `runic_prim::index::select` does, writing its first
/// index, length and stride to `out`. Returns 0, or nonzero when the slice is invalid.
///
/// # Safety
/// `out` must be valid for writes of three `i64`.
pub unsafe extern "C" fn rt_slice(
    w: i64,
    start: i64,
    end: i64,
    stride: i64,
    flags: i64,
    out: *mut i64,
) -> i32 {
    let s = if flags & 4 != 0 { stride } else { 1 };
    let i = if flags & 1 != 0 {
        start
    } else if s > 0 {
        0
    } else {
        w - 1
    };
    let j = if flags & 2 != 0 {
        end
    } else if s > 0 {
        w
    } else {
        -1
    };
    if s == 0 {
        return 1;
    }
    let (s128, w128) = (s as i128, w as i128);
    let n = (j as i128 - i as i128 + s128 - s128.signum()) / s128;
    let valid = n >= 0
        && (n == 0 || {
            let last = i as i128 + (n - 1) * s128;
            (0..w128).contains(&(i as i128)) && (0..w128).contains(&last)
        });
    if !valid {
        return 1;
    }
    *out = i;
    *out.add(1) = n as i64;
    *out.add(2) = s;
    0
}

/// The first element, step and length of the range `a [.. b] (kind) c` of integers of the
/// type with index `t` (each a raw word; `b` only when `has_b` is nonzero), as
/// `runic_prim::index::range_elements` resolves it, written to `out`. Returns 0, or
/// nonzero when the range is invalid (the slow path reports it).
///
/// # Safety
/// `out` must be valid for writes of three `i64`.
pub unsafe extern "C" fn rt_range(
    t: i64,
    a: u64,
    b: u64,
    has_b: i64,
    c: u64,
    kind: i64,
    out: *mut i64,
) -> i32 {
    let t = type_at(t);
    let kind = match kind {
        0 => runic_prim::RangeKind::UpToExclusive,
        1 => runic_prim::RangeKind::DownToExclusive,
        _ => runic_prim::RangeKind::Inclusive,
    };
    let b = (has_b != 0).then(|| from_raw(t, b));
    match runic_prim::index::range_elements(from_raw(t, a), b, from_raw(t, c), kind) {
        Ok((first, step, n)) => {
            // Wrapped to 64 bits: the elements are computed modulo the type's width.
            *out = first as i64;
            *out.add(1) = step as i64;
            *out.add(2) = n as i64;
            0
        }
        Err(_) => 1,
    }
}

/// The index native code passes for a range kind (see [`rt_range`]).
pub fn range_kind_index(k: runic_prim::RangeKind) -> i64 {
    match k {
        runic_prim::RangeKind::UpToExclusive => 0,
        runic_prim::RangeKind::DownToExclusive => 1,
        runic_prim::RangeKind::Inclusive => 2,
    }
}
