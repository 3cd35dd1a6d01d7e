//! The derivative table of every primitive operation (language.md §11.2–§11.3), written once.
//!
//! Rules are generic over an [`Algebra`]: a small set of operations on some value type `V`.
//! The interpreter instantiates it with concrete (possibly themselves differentiated) scalars
//! and evaluates the rules directly; a compiler instantiates it with an IR builder whose
//! values are variables, so that the same rules emit derivative code.
//!
//! A rule returns one [`Partial`] per operand: how a tangent (forward mode) or cotangent
//! (reverse mode) crosses the operation. Most partials are a factor multiplied with the
//! type's tangent multiplication (§11.2: `*`, wrapping for integers, `&&` for `bool`); a
//! few are linear maps that are not multiplications (conversions, bit reinterpretation and
//! the truncation of `T.trunc`), with a forward and a reverse (adjoint) direction.

use crate::ops::{BinOp, Prim, UnOp};
use crate::types::PrimType;

/// What the rules need from a value domain. `binop`, `unop` and `convert` have the meaning
/// of [`crate::binop`], [`crate::unop`] and [`crate::convert`] on the values' primal parts.
pub trait Algebra {
    /// A scalar value (a concrete scalar or an IR variable).
    type V: Clone;
    /// Errors of the domain (division by zero, unsupported operations).
    type E;
    /// A constant.
    fn prim(&mut self, p: Prim) -> Self::V;
    fn binop(&mut self, op: BinOp, a: &Self::V, b: &Self::V) -> Result<Self::V, Self::E>;
    fn unop(&mut self, op: UnOp, a: &Self::V) -> Result<Self::V, Self::E>;
    fn convert(&mut self, a: &Self::V, to: PrimType) -> Result<Self::V, Self::E>;
    /// `if c then a else b` for a boolean `c` (both sides are already computed).
    fn select(&mut self, c: &Self::V, a: &Self::V, b: &Self::V) -> Result<Self::V, Self::E>;
    /// The error for an operation without a derivative rule.
    fn not_differentiable(&mut self, what: &str) -> Self::E;

    /// The number `x` in type `t` (integers: truncated; `bool`: `x != 0`).
    fn konst(&mut self, t: PrimType, x: f64) -> Self::V {
        let p = if t.is_float() {
            Prim::float(t, x)
        } else {
            Prim::int(t, x as i128)
        };
        self.prim(p)
    }
    fn add(&mut self, a: &Self::V, b: &Self::V) -> Result<Self::V, Self::E> {
        self.binop(BinOp::Add, a, b)
    }
    fn sub(&mut self, a: &Self::V, b: &Self::V) -> Result<Self::V, Self::E> {
        self.binop(BinOp::Sub, a, b)
    }
    fn mul(&mut self, a: &Self::V, b: &Self::V) -> Result<Self::V, Self::E> {
        self.binop(BinOp::Mul, a, b)
    }
    fn div(&mut self, a: &Self::V, b: &Self::V) -> Result<Self::V, Self::E> {
        self.binop(BinOp::Div, a, b)
    }
    fn neg(&mut self, a: &Self::V) -> Result<Self::V, Self::E> {
        self.unop(UnOp::Neg, a)
    }
    /// `c / a` for a constant `c`.
    fn kdiv(&mut self, t: PrimType, c: f64, a: &Self::V) -> Result<Self::V, Self::E> {
        let k = self.konst(t, c);
        self.div(&k, a)
    }
    /// `c * a` for a constant `c`.
    fn kmul(&mut self, t: PrimType, c: f64, a: &Self::V) -> Result<Self::V, Self::E> {
        let k = self.konst(t, c);
        self.mul(&k, a)
    }
    /// Tangent addition of §11.2 (`||` on `bool`).
    fn tadd(&mut self, t: PrimType, a: &Self::V, b: &Self::V) -> Result<Self::V, Self::E> {
        let op = if t == PrimType::Bool {
            BinOp::LogOr
        } else {
            BinOp::Add
        };
        self.binop(op, a, b)
    }
    /// Tangent multiplication of §11.2 (`&&` on `bool`).
    fn tmul(&mut self, t: PrimType, a: &Self::V, b: &Self::V) -> Result<Self::V, Self::E> {
        let op = if t == PrimType::Bool {
            BinOp::LogAnd
        } else {
            BinOp::Mul
        };
        self.binop(op, a, b)
    }
}

/// How a (co)tangent crosses one operand of an operation.
#[derive(Clone, Debug)]
pub enum Partial<V> {
    /// No dependence: the tangent is the output type's zero, no cotangent flows back.
    Zero,
    /// The identity (a factor of one, kept apart to save a multiplication).
    One,
    /// Negation (a factor of minus one).
    NegOne,
    /// Multiplication by a factor (the type's tangent multiplication).
    Scale(V),
    /// A linear map that is not a multiplication.
    Linear(LinearMap),
}

/// Linear maps between tangent spaces of (possibly) different primitive types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinearMap {
    /// A conversion `from -> to`: forward converts the tangent the same way, reverse converts
    /// the cotangent back (§11.3 *Conversions*).
    Convert { from: PrimType, to: PrimType },
    /// `T.to_bits` (forward) / `T.from_bits` (reverse) of a float type.
    ToBits,
    /// `T.from_bits` (forward) / `T.to_bits` (reverse) of an unsigned type.
    FromBits,
    /// `T.trunc` of a float type, defined as a round trip through the signed integer of the
    /// same width, so the (co)tangent itself is truncated in both directions.
    Trunc { float: PrimType },
}

/// The signed integer type `T.trunc` goes through.
fn trunc_int(float: PrimType) -> PrimType {
    match float {
        PrimType::F16 => PrimType::I16,
        PrimType::F32 => PrimType::I32,
        _ => PrimType::I64,
    }
}

impl LinearMap {
    /// Carry a tangent of the input side to the output side.
    pub fn forward<A: Algebra>(self, alg: &mut A, dx: &A::V) -> Result<A::V, A::E> {
        match self {
            LinearMap::Convert { to, .. } => alg.convert(dx, to),
            LinearMap::ToBits => alg.unop(UnOp::ToBits, dx),
            LinearMap::FromBits => alg.unop(UnOp::FromBits, dx),
            LinearMap::Trunc { float } => {
                let i = alg.convert(dx, trunc_int(float))?;
                alg.convert(&i, float)
            }
        }
    }
    /// Carry a cotangent of the output side back to the input side (the adjoint map).
    pub fn reverse<A: Algebra>(self, alg: &mut A, c: &A::V) -> Result<A::V, A::E> {
        match self {
            LinearMap::Convert { from, .. } => alg.convert(c, from),
            LinearMap::ToBits => alg.unop(UnOp::FromBits, c),
            LinearMap::FromBits => alg.unop(UnOp::ToBits, c),
            LinearMap::Trunc { .. } => self.forward(alg, c),
        }
    }
}

impl<V> Partial<V> {
    pub fn is_zero(&self) -> bool {
        matches!(self, Partial::Zero)
    }
}

/// Forward mode: the contribution `∂·dx` of one operand's tangent (of type `in_t`) to the
/// output tangent; `None` for a zero partial.
pub fn push_forward<A: Algebra>(
    alg: &mut A,
    p: &Partial<A::V>,
    in_t: PrimType,
    dx: &A::V,
) -> Result<Option<A::V>, A::E> {
    Ok(Some(match p {
        Partial::Zero => return Ok(None),
        Partial::One => dx.clone(),
        Partial::NegOne => alg.neg(dx)?,
        Partial::Scale(f) => alg.tmul(in_t, dx, f)?,
        Partial::Linear(m) => m.forward(alg, dx)?,
    }))
}

/// Reverse mode: the contribution `c·∂` of the output cotangent `c` (of type `out_t`) to one
/// operand's cotangent; `None` for a zero partial.
pub fn pull_back<A: Algebra>(
    alg: &mut A,
    p: &Partial<A::V>,
    out_t: PrimType,
    c: &A::V,
) -> Result<Option<A::V>, A::E> {
    Ok(Some(match p {
        Partial::Zero => return Ok(None),
        Partial::One => c.clone(),
        Partial::NegOne => alg.neg(c)?,
        Partial::Scale(f) => alg.tmul(out_t, c, f)?,
        Partial::Linear(m) => m.reverse(alg, c)?,
    }))
}

/// Partials of a conversion `from -> to`.
pub fn convert_partial<V>(from: PrimType, to: PrimType) -> Partial<V> {
    if from == to {
        Partial::One
    } else {
        Partial::Linear(LinearMap::Convert { from, to })
    }
}

/// Partials of `op x y` with operands of type `t` (the first operand's type) and result `r`.
pub fn binop_partials<A: Algebra>(
    alg: &mut A,
    op: BinOp,
    t: PrimType,
    x: &A::V,
    y: &A::V,
    r: &A::V,
) -> Result<[Partial<A::V>; 2], A::E> {
    use Partial::*;
    let float = t.is_float();
    Ok(match op {
        BinOp::Add => [One, One],
        BinOp::Sub => [One, NegOne],
        BinOp::Mul | BinOp::MulHi => [Scale(y.clone()), Scale(x.clone())],
        BinOp::Div if float => {
            // 1/y and -x/y².
            let dx = alg.kdiv(t, 1.0, y)?;
            let yy = alg.mul(y, y)?;
            let q = alg.div(x, &yy)?;
            [Scale(dx), Scale(alg.neg(&q)?)]
        }
        BinOp::Div | BinOp::Quot => {
            // Integer rules: 1 // y and -(x // (y*y)) (y*y may wrap to 0: use 1 then).
            let one = alg.konst(t, 1.0);
            let dx = alg.binop(BinOp::Quot, &one, y)?;
            let yy = alg.mul(y, y)?;
            let zero = alg.konst(t, 0.0);
            let is0 = alg.binop(BinOp::Eq, &yy, &zero)?;
            let yy = alg.select(&is0, &one, &yy)?;
            let q = alg.binop(BinOp::Quot, x, &yy)?;
            [Scale(dx), Scale(alg.neg(&q)?)]
        }
        BinOp::Mod | BinOp::Rem => [One, Zero],
        BinOp::Pow if float => {
            let zero = alg.konst(t, 0.0);
            let one = alg.konst(t, 1.0);
            // ∂x: 0 if x == 0 && y < 1, else y·x^(y−1).
            let ym1 = alg.sub(y, &one)?;
            let p = alg.binop(BinOp::Pow, x, &ym1)?;
            let gen = alg.mul(y, &p)?;
            let x0 = alg.binop(BinOp::Eq, x, &zero)?;
            let ylt1 = alg.binop(BinOp::Lt, y, &one)?;
            let both = alg.binop(BinOp::LogAnd, &x0, &ylt1)?;
            let dx = alg.select(&both, &zero, &gen)?;
            // ∂y: x^y·ln x if x > 0, else 0.
            let lx = alg.unop(UnOp::Log, x)?;
            let gy = alg.mul(r, &lx)?;
            let xpos = alg.binop(BinOp::Gt, x, &zero)?;
            let dy = alg.select(&xpos, &gy, &zero)?;
            [Scale(dx), Scale(dy)]
        }
        BinOp::Pow => {
            // y·x^max(y−1, 0): the factor y makes it 0 when y == 0.
            let zero = alg.konst(t, 0.0);
            let one = alg.konst(t, 1.0);
            let ym1 = alg.sub(y, &one)?;
            let e = alg.binop(BinOp::Max, &ym1, &zero)?;
            let p = alg.binop(BinOp::Pow, x, &e)?;
            [Scale(alg.mul(y, &p)?), Zero]
        }
        BinOp::Max | BinOp::Min => {
            // To the operand the result is: ties favour the left one, and a NaN operand
            // is never the result unless both are. The left one is the result when
            // `r == x`, or when both are NaN (then `r` is); read off `x` and `r`, not `y`,
            // so that a ReLU's adjoint (`max 0 y`: `r == 0`) needs its output, which the
            // return sweep keeps anyway, and not its input as well.
            let same = alg.binop(BinOp::Eq, r, x)?;
            let x_nan = alg.binop(BinOp::Neq, x, x)?;
            let r_nan = alg.binop(BinOp::Neq, r, r)?;
            let both_nan = alg.binop(BinOp::LogAnd, &x_nan, &r_nan)?;
            let c = alg.binop(BinOp::LogOr, &same, &both_nan)?;
            let one = alg.konst(t, 1.0);
            let zero = alg.konst(t, 0.0);
            [
                Scale(alg.select(&c, &one, &zero)?),
                Scale(alg.select(&c, &zero, &one)?),
            ]
        }
        BinOp::LogAnd => [Scale(y.clone()), Scale(x.clone())],
        BinOp::LogOr => [One, Zero],
        BinOp::And | BinOp::Or | BinOp::Xor => [Zero, Zero],
        BinOp::Shl => {
            let one = alg.konst(t, 1.0);
            let yt = alg.convert(y, t)?;
            [Scale(alg.binop(BinOp::Shl, &one, &yt)?), Zero]
        }
        BinOp::Shr | BinOp::Lshr => {
            // 1 // 2^y: one for a zero shift, zero otherwise.
            let one = alg.konst(t, 1.0);
            let zero = alg.konst(t, 0.0);
            let yt = alg.convert(y, t)?;
            let y0 = alg.binop(BinOp::Eq, &yt, &zero)?;
            [Scale(alg.select(&y0, &one, &zero)?), Zero]
        }
        BinOp::Eq
        | BinOp::Neq
        | BinOp::Lt
        | BinOp::Le
        | BinOp::Gt
        | BinOp::Ge
        | BinOp::GetBit
        | BinOp::FromFraction => [Zero, Zero],
        BinOp::Atan2 | BinOp::Atan2Pi => {
            // atan2 y x with y = first operand: x/(x²+y²), −y/(x²+y²).
            let (a, b) = (x, y);
            let aa = alg.mul(a, a)?;
            let bb = alg.mul(b, b)?;
            let mut den = alg.add(&aa, &bb)?;
            if op == BinOp::Atan2Pi {
                den = alg.kmul(t, std::f64::consts::PI, &den)?;
            }
            let d1 = alg.div(b, &den)?;
            let q = alg.div(a, &den)?;
            [Scale(d1), Scale(alg.neg(&q)?)]
        }
        BinOp::Hypot => [Scale(alg.div(x, r)?), Scale(alg.div(y, r)?)],
        BinOp::NextAfter => [One, Zero],
        BinOp::CopySign => {
            let sx = alg.unop(UnOp::Sgn, x)?;
            let sy = alg.unop(UnOp::Sgn, y)?;
            [Scale(alg.mul(&sx, &sy)?), Zero]
        }
        BinOp::Ldexp => {
            let one = alg.konst(t, 1.0);
            [Scale(alg.binop(BinOp::Ldexp, &one, y)?), Zero]
        }
    })
}

/// The partial of `op x` with operand type `t` and result `r`.
pub fn unop_partial<A: Algebra>(
    alg: &mut A,
    op: UnOp,
    t: PrimType,
    x: &A::V,
    r: &A::V,
) -> Result<Partial<A::V>, A::E> {
    use std::f64::consts::{LN_10, LN_2, PI};
    use Partial::*;
    if t == PrimType::Bool {
        // `!b` has tangent `b && db`; other operations on booleans are constant.
        return Ok(match op {
            UnOp::Not => Scale(x.clone()),
            _ => Zero,
        });
    }
    if t.is_int() {
        return Ok(match op {
            UnOp::Neg => NegOne,
            UnOp::Not => Scale(r.clone()),
            UnOp::Abs => Scale(alg.unop(UnOp::Sgn, x)?),
            UnOp::FromBits => Linear(LinearMap::FromBits),
            _ => Zero,
        });
    }
    let one = alg.konst(t, 1.0);
    let sq = |alg: &mut A, v: &A::V| alg.mul(v, v);
    let p = match op {
        UnOp::Neg => return Ok(NegOne),
        UnOp::Abs => alg.unop(UnOp::Sgn, x)?,
        UnOp::Sgn | UnOp::Ceil | UnOp::Floor | UnOp::Round => return Ok(Zero),
        UnOp::Not | UnOp::Popc | UnOp::Clz | UnOp::Ctz | UnOp::IsInf | UnOp::IsNan => {
            return Ok(Zero)
        }
        UnOp::Trunc => return Ok(Linear(LinearMap::Trunc { float: t })),
        UnOp::ToBits => return Ok(Linear(LinearMap::ToBits)),
        UnOp::FromBits => return Ok(One),
        UnOp::Recip => {
            let xx = sq(alg, x)?;
            alg.kdiv(t, -1.0, &xx)?
        }
        UnOp::Sqrt => {
            let d = alg.kmul(t, 2.0, r)?;
            alg.kdiv(t, 1.0, &d)?
        }
        UnOp::Rsqrt => {
            // −1/(2·x^(3/2)) = −r/(2x)
            let d = alg.kmul(t, 2.0, x)?;
            let q = alg.div(r, &d)?;
            alg.neg(&q)?
        }
        UnOp::Cbrt => {
            let rr = sq(alg, r)?;
            let d = alg.kmul(t, 3.0, &rr)?;
            alg.kdiv(t, 1.0, &d)?
        }
        UnOp::Exp => r.clone(),
        UnOp::Log => alg.kdiv(t, 1.0, x)?,
        UnOp::Log2 => {
            let d = alg.kmul(t, LN_2, x)?;
            alg.kdiv(t, 1.0, &d)?
        }
        UnOp::Log10 => {
            let d = alg.kmul(t, LN_10, x)?;
            alg.kdiv(t, 1.0, &d)?
        }
        UnOp::Log1p => {
            let d = alg.add(&one, x)?;
            alg.kdiv(t, 1.0, &d)?
        }
        UnOp::Sin => alg.unop(UnOp::Cos, x)?,
        UnOp::Cos => {
            let s = alg.unop(UnOp::Sin, x)?;
            alg.neg(&s)?
        }
        UnOp::Tan => {
            let c = alg.unop(UnOp::Cos, x)?;
            let cc = sq(alg, &c)?;
            alg.kdiv(t, 1.0, &cc)?
        }
        UnOp::SinPi => {
            let c = alg.unop(UnOp::CosPi, x)?;
            alg.kmul(t, PI, &c)?
        }
        UnOp::CosPi => {
            let s = alg.unop(UnOp::SinPi, x)?;
            alg.kmul(t, -PI, &s)?
        }
        UnOp::TanPi => {
            let c = alg.unop(UnOp::CosPi, x)?;
            let cc = sq(alg, &c)?;
            alg.kdiv(t, PI, &cc)?
        }
        UnOp::Asin | UnOp::Acos | UnOp::AsinPi | UnOp::AcosPi => {
            // ±1/√(1−x²), divided by π for the *pi variants.
            let xx = sq(alg, x)?;
            let d = alg.sub(&one, &xx)?;
            let s = alg.unop(UnOp::Sqrt, &d)?;
            let s = if matches!(op, UnOp::AsinPi | UnOp::AcosPi) {
                alg.kmul(t, PI, &s)?
            } else {
                s
            };
            let sign = if matches!(op, UnOp::Asin | UnOp::AsinPi) {
                1.0
            } else {
                -1.0
            };
            alg.kdiv(t, sign, &s)?
        }
        UnOp::Atan | UnOp::AtanPi => {
            let xx = sq(alg, x)?;
            let d = alg.add(&one, &xx)?;
            let d = if op == UnOp::AtanPi {
                alg.kmul(t, PI, &d)?
            } else {
                d
            };
            alg.kdiv(t, 1.0, &d)?
        }
        UnOp::Sinh => alg.unop(UnOp::Cosh, x)?,
        UnOp::Cosh => alg.unop(UnOp::Sinh, x)?,
        UnOp::Tanh => {
            let rr = sq(alg, r)?;
            alg.sub(&one, &rr)?
        }
        UnOp::Asinh | UnOp::Acosh => {
            let xx = sq(alg, x)?;
            let d = if op == UnOp::Asinh {
                alg.add(&xx, &one)?
            } else {
                alg.sub(&xx, &one)?
            };
            let s = alg.unop(UnOp::Sqrt, &d)?;
            alg.kdiv(t, 1.0, &s)?
        }
        UnOp::Atanh => {
            let xx = sq(alg, x)?;
            let d = alg.sub(&one, &xx)?;
            alg.kdiv(t, 1.0, &d)?
        }
        UnOp::Erf | UnOp::Erfc => {
            let xx = sq(alg, x)?;
            let nx = alg.neg(&xx)?;
            let e = alg.unop(UnOp::Exp, &nx)?;
            let k = 2.0 / PI.sqrt();
            alg.kmul(t, if op == UnOp::Erf { k } else { -k }, &e)?
        }
        UnOp::Gamma | UnOp::Lgamma => {
            return Err(alg.not_differentiable(if op == UnOp::Gamma { "gamma" } else { "lgamma" }))
        }
    };
    Ok(Scale(p))
}

/// Partials of `fma a b c` / `mad a b c` (`a*b + c`).
pub fn fma_partials<A: Algebra>(a: &A::V, b: &A::V) -> [Partial<A::V>; 3] {
    [
        Partial::Scale(b.clone()),
        Partial::Scale(a.clone()),
        Partial::One,
    ]
}

/// Partials of `lerp v0 v1 t`: 1 − t', t', v1 − v0 with t' = clamp(t, 0, 1).
pub fn lerp_partials<A: Algebra>(
    alg: &mut A,
    ty: PrimType,
    v0: &A::V,
    v1: &A::V,
    t: &A::V,
) -> Result<[Partial<A::V>; 3], A::E> {
    let zero = alg.konst(ty, 0.0);
    let one = alg.konst(ty, 1.0);
    let lo = alg.binop(BinOp::Max, t, &zero)?;
    let tc = alg.binop(BinOp::Min, &lo, &one)?;
    let d0 = alg.sub(&one, &tc)?;
    let dt = alg.sub(v1, v0)?;
    Ok([Partial::Scale(d0), Partial::Scale(tc), Partial::Scale(dt)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::{binop, convert, unop};

    /// The algebra of plain f64 scalars.
    struct Plain;
    impl Algebra for Plain {
        type V = Prim;
        type E = String;
        fn prim(&mut self, p: Prim) -> Prim {
            p
        }
        fn binop(&mut self, op: BinOp, a: &Prim, b: &Prim) -> Result<Prim, String> {
            binop(op, *a, *b).map_err(|e| e.message().to_string())
        }
        fn unop(&mut self, op: UnOp, a: &Prim) -> Result<Prim, String> {
            Ok(unop(op, *a))
        }
        fn convert(&mut self, a: &Prim, to: PrimType) -> Result<Prim, String> {
            Ok(convert(*a, to))
        }
        fn select(&mut self, c: &Prim, a: &Prim, b: &Prim) -> Result<Prim, String> {
            Ok(if c.as_bool() == Some(true) { *a } else { *b })
        }
        fn not_differentiable(&mut self, what: &str) -> String {
            format!("not differentiable: {what}")
        }
    }

    fn fwd(p: &Partial<Prim>, t: PrimType, dx: Prim) -> Prim {
        push_forward(&mut Plain, p, t, &dx)
            .unwrap()
            .unwrap_or(Prim::zero(t))
    }

    fn f(x: f64) -> Prim {
        Prim::F64(x)
    }
    fn num(p: Prim) -> f64 {
        p.as_float().unwrap()
    }

    const UNARY: &[(UnOp, f64)] = &[
        (UnOp::Neg, 0.7),
        (UnOp::Abs, -0.7),
        (UnOp::Recip, 1.3),
        (UnOp::Sqrt, 2.0),
        (UnOp::Rsqrt, 2.0),
        (UnOp::Cbrt, 2.5),
        (UnOp::Exp, 0.3),
        (UnOp::Log, 1.7),
        (UnOp::Log2, 1.7),
        (UnOp::Log10, 1.7),
        (UnOp::Log1p, 0.4),
        (UnOp::Sin, 0.9),
        (UnOp::Cos, 0.9),
        (UnOp::Tan, 0.9),
        (UnOp::SinPi, 0.3),
        (UnOp::CosPi, 0.3),
        (UnOp::TanPi, 0.3),
        (UnOp::Asin, 0.4),
        (UnOp::Acos, 0.4),
        (UnOp::Atan, 0.4),
        (UnOp::AsinPi, 0.4),
        (UnOp::AcosPi, 0.4),
        (UnOp::AtanPi, 0.4),
        (UnOp::Sinh, 0.6),
        (UnOp::Cosh, 0.6),
        (UnOp::Tanh, 0.6),
        (UnOp::Asinh, 0.6),
        (UnOp::Acosh, 1.6),
        (UnOp::Atanh, 0.6),
        (UnOp::Erf, 0.6),
        (UnOp::Erfc, 0.6),
        (UnOp::Floor, 0.6),
        (UnOp::Ceil, 0.6),
        (UnOp::Round, 0.6),
        (UnOp::Sgn, 0.6),
    ];

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-6 * (1.0 + b.abs())
    }

    #[test]
    fn unary_float_rules_match_central_differences() {
        let h = 1e-6;
        for &(op, x) in UNARY {
            let r = unop(op, f(x));
            let p = unop_partial(&mut Plain, op, PrimType::F64, &f(x), &r).unwrap();
            let d = num(fwd(&p, PrimType::F64, f(1.0)));
            let fd = (num(unop(op, f(x + h))) - num(unop(op, f(x - h)))) / (2.0 * h);
            assert!(close(d, fd), "{op:?} at {x}: rule {d}, difference {fd}");
        }
    }

    #[test]
    fn binary_float_rules_match_central_differences() {
        let h = 1e-6;
        let cases: &[(BinOp, f64, f64)] = &[
            (BinOp::Add, 1.2, 0.7),
            (BinOp::Sub, 1.2, 0.7),
            (BinOp::Mul, 1.2, 0.7),
            (BinOp::Div, 1.2, 0.7),
            (BinOp::Pow, 1.2, 0.7),
            (BinOp::Pow, 0.8, 2.5),
            (BinOp::Max, 1.2, 0.7),
            (BinOp::Min, 1.2, 0.7),
            (BinOp::Atan2, 1.2, 0.7),
            (BinOp::Atan2Pi, -0.4, 0.9),
            (BinOp::Hypot, 1.2, 0.7),
            (BinOp::CopySign, 1.2, 0.7),
            (BinOp::NextAfter, 1.2, 0.7),
        ];
        for &(op, x, y) in cases {
            let r = binop(op, f(x), f(y)).unwrap();
            let [px, py] = binop_partials(&mut Plain, op, PrimType::F64, &f(x), &f(y), &r).unwrap();
            let dx = num(fwd(&px, PrimType::F64, f(1.0)));
            let dy = num(fwd(&py, PrimType::F64, f(1.0)));
            let g = |a: f64, b: f64| num(binop(op, f(a), f(b)).unwrap());
            let fx = (g(x + h, y) - g(x - h, y)) / (2.0 * h);
            let fy = (g(x, y + h) - g(x, y - h)) / (2.0 * h);
            assert!(close(dx, fx), "{op:?} ∂x: rule {dx}, difference {fx}");
            assert!(close(dy, fy), "{op:?} ∂y: rule {dy}, difference {fy}");
        }
        // `%` follows the spec's table (∂y = 0), not the mathematical −floor(x/y).
        let r = binop(BinOp::Mod, f(1.2), f(0.7)).unwrap();
        let [px, py] =
            binop_partials(&mut Plain, BinOp::Mod, PrimType::F64, &f(1.2), &f(0.7), &r).unwrap();
        assert_eq!(num(fwd(&px, PrimType::F64, f(1.0))), 1.0);
        assert!(py.is_zero());
        // ldexp x n: 2^n with respect to x.
        let r = binop(BinOp::Ldexp, f(1.5), Prim::I32(3)).unwrap();
        let [p, _] = binop_partials(
            &mut Plain,
            BinOp::Ldexp,
            PrimType::F64,
            &f(1.5),
            &Prim::I32(3),
            &r,
        )
        .unwrap();
        assert_eq!(num(fwd(&p, PrimType::F64, f(1.0))), 8.0);
    }

    #[test]
    fn fma_and_lerp_match_central_differences() {
        let h = 1e-6;
        let (v0, v1, t) = (1.5, -0.5, 0.3);
        let lerp = |a: f64, b: f64, c: f64| a + (b - a) * c;
        let ps = lerp_partials(&mut Plain, PrimType::F64, &f(v0), &f(v1), &f(t)).unwrap();
        let fd = [
            (lerp(v0 + h, v1, t) - lerp(v0 - h, v1, t)) / (2.0 * h),
            (lerp(v0, v1 + h, t) - lerp(v0, v1 - h, t)) / (2.0 * h),
            (lerp(v0, v1, t + h) - lerp(v0, v1, t - h)) / (2.0 * h),
        ];
        for (p, d) in ps.iter().zip(fd) {
            assert!(close(num(fwd(p, PrimType::F64, f(1.0))), d));
        }
        let ps = fma_partials::<Plain>(&f(2.0), &f(3.0));
        let got: Vec<f64> = ps
            .iter()
            .map(|p| num(fwd(p, PrimType::F64, f(1.0))))
            .collect();
        assert_eq!(got, vec![3.0, 2.0, 1.0]);
    }

    #[test]
    fn integer_rules_use_wrapping_integer_arithmetic() {
        let t = PrimType::I32;
        let i = Prim::I32;
        // x ** y: y·x^(y−1), 0 when y == 0.
        let r = binop(BinOp::Pow, i(3), i(4)).unwrap();
        let [p, q] = binop_partials(&mut Plain, BinOp::Pow, t, &i(3), &i(4), &r).unwrap();
        assert_eq!(fwd(&p, t, i(1)), i(108));
        assert!(q.is_zero());
        let [p, _] = binop_partials(&mut Plain, BinOp::Pow, t, &i(3), &i(0), &i(1)).unwrap();
        assert_eq!(fwd(&p, t, i(1)), i(0));
        // Wrapping multiplication: 1500000000 * 2 wraps.
        let [_, q] =
            binop_partials(&mut Plain, BinOp::Mul, t, &i(1500000000), &i(5), &i(0)).unwrap();
        assert_eq!(fwd(&q, t, i(2)), i(-1294967296));
        // Integer division: 1 // y and −(x // y²).
        let [p, q] = binop_partials(&mut Plain, BinOp::Quot, t, &i(7), &i(-1), &i(-7)).unwrap();
        assert_eq!((fwd(&p, t, i(1)), fwd(&q, t, i(1))), (i(-1), i(-7)));
        // Shifts: 2^y and 1 // 2^y.
        let [p, _] = binop_partials(&mut Plain, BinOp::Shl, t, &i(5), &i(3), &i(40)).unwrap();
        assert_eq!(fwd(&p, t, i(1)), i(8));
        let [p, _] = binop_partials(&mut Plain, BinOp::Shr, t, &i(5), &i(3), &i(0)).unwrap();
        assert_eq!(fwd(&p, t, i(1)), i(0));
        // Complement: the complemented primal is the factor.
        let p = unop_partial(&mut Plain, UnOp::Not, t, &i(5), &i(!5)).unwrap();
        assert_eq!(fwd(&p, t, i(2)), i(!5 * 2));
        // Bitwise operations have no derivative.
        let [p, q] = binop_partials(&mut Plain, BinOp::And, t, &i(5), &i(3), &i(1)).unwrap();
        assert!(p.is_zero() && q.is_zero());
    }

    #[test]
    fn boolean_and_comparison_rules() {
        let b = Prim::Bool;
        let t = PrimType::Bool;
        // !b: b && db.
        let p = unop_partial(&mut Plain, UnOp::Not, t, &b(false), &b(true)).unwrap();
        assert_eq!(fwd(&p, t, b(true)), b(false));
        // a && b: (b && da) || (a && db).
        let [p, q] =
            binop_partials(&mut Plain, BinOp::LogAnd, t, &b(true), &b(false), &b(false)).unwrap();
        assert_eq!(
            (fwd(&p, t, b(true)), fwd(&q, t, b(true))),
            (b(false), b(true))
        );
        // a || b: da.
        let [p, q] =
            binop_partials(&mut Plain, BinOp::LogOr, t, &b(false), &b(true), &b(true)).unwrap();
        assert_eq!(fwd(&p, t, b(true)), b(true));
        assert!(q.is_zero());
        let [p, q] = binop_partials(
            &mut Plain,
            BinOp::Lt,
            PrimType::F64,
            &f(1.0),
            &f(2.0),
            &b(true),
        )
        .unwrap();
        assert!(p.is_zero() && q.is_zero());
    }

    #[test]
    fn conversions_and_bit_reinterpretation() {
        let p: Partial<Prim> = convert_partial(PrimType::F32, PrimType::I64);
        assert_eq!(fwd(&p, PrimType::F32, Prim::F32(1.0)), Prim::I64(1));
        let back = pull_back(&mut Plain, &p, PrimType::I64, &Prim::I64(3)).unwrap();
        assert_eq!(back, Some(Prim::F32(3.0)));
        let p = unop_partial(
            &mut Plain,
            UnOp::ToBits,
            PrimType::F32,
            &Prim::F32(2.0),
            &Prim::U32(0),
        )
        .unwrap();
        assert_eq!(
            fwd(&p, PrimType::F32, Prim::F32(1.0)),
            Prim::U32(1065353216)
        );
        let back = pull_back(&mut Plain, &p, PrimType::U32, &Prim::U32(1065353216)).unwrap();
        assert_eq!(back, Some(Prim::F32(1.0)));
        // trunc: the tangent itself is truncated.
        let p = unop_partial(&mut Plain, UnOp::Trunc, PrimType::F64, &f(2.7), &f(2.0)).unwrap();
        assert_eq!(fwd(&p, PrimType::F64, f(1.0)), f(1.0));
        assert_eq!(fwd(&p, PrimType::F64, f(0.5)), f(0.0));
    }

    #[test]
    fn min_and_max_differentiate_the_operand_they_return() {
        let nan = f64::NAN;
        // (op, x, y, ∂x, ∂y): ties to the left, a NaN operand is never the one returned.
        let cases: &[(BinOp, f64, f64, f64, f64)] = &[
            (BinOp::Min, 1.0, nan, 1.0, 0.0),
            (BinOp::Min, nan, 1.0, 0.0, 1.0),
            (BinOp::Max, 1.0, nan, 1.0, 0.0),
            (BinOp::Max, nan, 1.0, 0.0, 1.0),
            (BinOp::Min, 2.0, 2.0, 1.0, 0.0),
            (BinOp::Max, 0.0, -0.0, 1.0, 0.0),
            (BinOp::Max, nan, nan, 1.0, 0.0),
        ];
        for &(op, x, y, ex, ey) in cases {
            let r = binop(op, f(x), f(y)).unwrap();
            let [px, py] = binop_partials(&mut Plain, op, PrimType::F64, &f(x), &f(y), &r).unwrap();
            let dx = num(fwd(&px, PrimType::F64, f(1.0)));
            let dy = num(fwd(&py, PrimType::F64, f(1.0)));
            assert_eq!((dx, dy), (ex, ey), "{op:?}({x}, {y})");
        }
    }

    /// The rule reads the left operand and the result; it routes the tangent exactly as
    /// the definition by the operands does (`x >= y || y != y` for `max`, `<=` for `min`)
    /// on every pair of special and ordinary values, in both float types.
    #[test]
    fn min_and_max_choose_by_the_result_as_by_the_operands() {
        let vals = [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.0,
            -0.0,
            1.0,
            -1.0,
            2.5,
            f64::MIN_POSITIVE / 4.0,
        ];
        for t in [PrimType::F32, PrimType::F64] {
            let v = |x: f64| {
                if t == PrimType::F32 {
                    Prim::F32(x as f32)
                } else {
                    f(x)
                }
            };
            for op in [BinOp::Max, BinOp::Min] {
                for &x in &vals {
                    for &y in &vals {
                        let (vx, vy) = (v(x), v(y));
                        let r = binop(op, vx, vy).unwrap();
                        let [px, py] = binop_partials(&mut Plain, op, t, &vx, &vy, &r).unwrap();
                        let dx = num(fwd(&px, t, v(1.0)));
                        let dy = num(fwd(&py, t, v(1.0)));
                        // The operands as the type holds them (a subnormal f64 is 0 in f32).
                        let (x, y) = (num(vx), num(vy));
                        let left = if op == BinOp::Max { x >= y } else { x <= y } || y.is_nan();
                        let want = if left { (1.0, 0.0) } else { (0.0, 1.0) };
                        assert_eq!((dx, dy), want, "{t:?} {op:?}({x}, {y}) = {r:?}");
                    }
                }
            }
        }
    }
}
