//! Traced values and their scalar and element-wise operations.
//!
//! A [`Tracer`] stands for a scalar or an array computed by the function being traced.
//! Scalar operations become IR statements; on arrays they apply element-wise, as maps (an
//! array and a scalar: the scalar is used for every element), so `xs * 2.0` is
//! `map (\x -> x * 2) xs` exactly as the front end writes it.

use crate::ctx::{self, Ctx};
use runic_ir::{BasicOp, BinOp, Prim, PrimType, SubExp, Type, UnOp};
use std::ops::{Add, Div, Mul, Neg, Sub};

/// A value of the function being traced: a scalar or an array of primitives.
///
/// Tracers are handles into the running trace (cheap to copy). They are valid only inside
/// the closure given to [`crate::trace`] (or `grad`, `vjp`, `jvp`); a value made inside the
/// closure of a `map`, `reduce` or `scan` cannot be used after that closure returns (the
/// trace then returns an error).
///
/// # Panics
///
/// Operations on a tracer panic when no trace is running on the thread (a tracer kept
/// after its trace returned, or sent to another thread): there is no trace to report to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tracer {
    pub(crate) id: u32,
    pub(crate) gen: u32,
}

/// An operand: a tracer or a Rust literal, which takes the element type of the tracer it
/// meets (`x * 2.0` multiplies at `x`'s type).
#[derive(Clone, Copy, Debug)]
pub enum Operand {
    T(Tracer),
    F(f64),
    I(i64),
    B(bool),
}

impl From<Tracer> for Operand {
    fn from(t: Tracer) -> Operand {
        Operand::T(t)
    }
}
impl From<&Tracer> for Operand {
    fn from(t: &Tracer) -> Operand {
        Operand::T(*t)
    }
}
impl From<f64> for Operand {
    fn from(x: f64) -> Operand {
        Operand::F(x)
    }
}
impl From<f32> for Operand {
    fn from(x: f32) -> Operand {
        Operand::F(x as f64)
    }
}
impl From<i64> for Operand {
    fn from(x: i64) -> Operand {
        Operand::I(x)
    }
}
impl From<i32> for Operand {
    fn from(x: i32) -> Operand {
        Operand::I(x as i64)
    }
}
impl From<usize> for Operand {
    fn from(x: usize) -> Operand {
        Operand::I(x as i64)
    }
}
impl From<bool> for Operand {
    fn from(x: bool) -> Operand {
        Operand::B(x)
    }
}

impl Operand {
    /// This operand at element type `t` (a literal becomes a constant of that type).
    pub(crate) fn at(self, cx: &mut Ctx, t: PrimType) -> Tracer {
        let p = match self {
            Operand::T(x) => return x,
            Operand::F(v) => Prim::float(t, v),
            Operand::I(v) => Prim::int(t, v as i128),
            Operand::B(v) => Prim::Bool(v),
        };
        cx.new_val(SubExp::Const(p), Type::Prim(t))
    }

    /// The element type a literal takes when nothing else decides it.
    fn default_type(self) -> PrimType {
        match self {
            Operand::F(_) | Operand::T(_) => PrimType::F64,
            Operand::I(_) => PrimType::I64,
            Operand::B(_) => PrimType::Bool,
        }
    }
}

/// A constant of type `t`: `constant(PrimType::F32, 1.0)`.
pub fn constant(t: PrimType, v: impl Into<Operand>) -> Tracer {
    ctx::with(|cx| v.into().at(cx, t))
}

/// Resolves two operands to tracers of one element type (literals take the tracer's).
fn pair(cx: &mut Ctx, a: Operand, b: Operand) -> (Tracer, Tracer) {
    let t = match (a, b) {
        (Operand::T(x), _) | (_, Operand::T(x)) => cx.ty(x).elem().unwrap_or(PrimType::F32),
        _ => a.default_type(),
    };
    (a.at(cx, t), b.at(cx, t))
}

/// `a op b`, element-wise over arrays.
pub(crate) fn binary(op: BinOp, a: Operand, b: Operand) -> Tracer {
    let (x, y) = ctx::with(|cx| pair(cx, a, b));
    let (tx, ty) = ctx::with(|cx| (cx.ty(x), cx.ty(y)));
    match (tx.rank(), ty.rank()) {
        (0, 0) => ctx::with(|cx| {
            let (Some((sa, _)), Some((sb, _))) = (cx.get(x), cx.get(y)) else {
                return cx.dummy();
            };
            if let (Some(p), Some(q)) = (tx.elem(), ty.elem()) {
                if p != q {
                    cx.fail(format!("{op:?} of {p} and {q}"));
                    return cx.dummy();
                }
            }
            cx.emit(1, |b| Ok(vec![b.op2(op, sa, sb)?]))[0]
        }),
        (_, 0) => x.map(|r| binary(op, r.into(), y.into())),
        (0, _) => y.map(|r| binary(op, x.into(), r.into())),
        _ => crate::map2(x, y, |r, s| binary(op, r.into(), s.into())),
    }
}

/// `op a`, element-wise over arrays.
pub(crate) fn unary(op: UnOp, a: Tracer) -> Tracer {
    let t = ctx::with(|cx| cx.ty(a));
    if t.rank() > 0 {
        return a.map(|r| unary(op, r));
    }
    ctx::with(|cx| {
        let Some((s, _)) = cx.get(a) else {
            return cx.dummy();
        };
        cx.emit(1, |b| Ok(vec![b.op1(op, s)?]))[0]
    })
}

/// `max a b` (element-wise over arrays); literals take the other operand's type.
pub fn max(a: impl Into<Operand>, b: impl Into<Operand>) -> Tracer {
    binary(BinOp::Max, a.into(), b.into())
}

/// `min a b` (element-wise over arrays).
pub fn min(a: impl Into<Operand>, b: impl Into<Operand>) -> Tracer {
    binary(BinOp::Min, a.into(), b.into())
}

/// `if c then a else b` on scalars (`c` a `bool` tracer).
pub fn select(c: Tracer, a: impl Into<Operand>, b: impl Into<Operand>) -> Tracer {
    let (x, y) = ctx::with(|cx| pair(cx, a.into(), b.into()));
    ctx::with(|cx| {
        let (Some((sc, tc)), Some((sa, ta)), Some((sb, tb))) = (cx.get(c), cx.get(x), cx.get(y))
        else {
            return cx.dummy();
        };
        if tc != Type::Prim(PrimType::Bool) || ta.rank() != tb.rank() || ta.elem() != tb.elem() {
            cx.fail("select needs a bool condition and two values of one type");
            return cx.dummy();
        }
        cx.emit(1, |b| Ok(vec![b.select(sc, sa, sb)?]))[0]
    })
}

macro_rules! unary_methods {
    ($($(#[$doc:meta])* $name:ident => $op:ident;)*) => {
        impl Tracer {
            $($(#[$doc])* pub fn $name(self) -> Tracer {
                unary(UnOp::$op, self)
            })*
        }
    };
}

unary_methods! {
    /// `e^x`.
    exp => Exp;
    /// The natural logarithm.
    log => Log;
    sin => Sin;
    cos => Cos;
    tanh => Tanh;
    sqrt => Sqrt;
    abs => Abs;
}

macro_rules! binary_methods {
    ($($(#[$doc:meta])* $name:ident => $op:ident;)*) => {
        impl Tracer {
            $($(#[$doc])* pub fn $name(self, other: impl Into<Operand>) -> Tracer {
                binary(BinOp::$op, self.into(), other.into())
            })*
        }
    };
}

binary_methods! {
    /// The larger of two values (`f32.max`).
    max => Max;
    /// The smaller of two values.
    min => Min;
    /// `self ** other`.
    pow => Pow;
    /// `self < other` (a `bool`).
    lt => Lt;
    le => Le;
    gt => Gt;
    ge => Ge;
    /// `self == other` (a `bool`; named so as not to clash with `PartialEq`).
    eq_ => Eq;
    ne_ => Neq;
}

impl Tracer {
    /// The IR type of this value.
    pub fn ty(self) -> Type {
        ctx::with(|cx| cx.ty(self))
    }

    /// The element type.
    pub fn elem(self) -> PrimType {
        self.ty().elem().unwrap_or(PrimType::F32)
    }

    /// The number of dimensions (0 for a scalar).
    pub fn rank(self) -> usize {
        self.ty().rank()
    }

    /// The size of dimension `d`, an `i64`.
    pub fn size(self, d: usize) -> Tracer {
        ctx::with(|cx| match cx.ty(self) {
            Type::Array { shape, .. } if d < shape.len() => {
                cx.sibling(self, shape[d].clone(), Type::Prim(PrimType::I64))
            }
            t => {
                cx.fail(format!(
                    "size of dimension {d} of a value of rank {}",
                    t.rank()
                ));
                cx.dummy()
            }
        })
    }

    /// The outer size (`length`), an `i64`.
    pub fn len(self) -> Tracer {
        self.size(0)
    }

    /// The size of every dimension.
    pub fn shape(self) -> Vec<Tracer> {
        (0..self.rank()).map(|d| self.size(d)).collect()
    }

    /// This scalar converted to type `t` (`f32.i64 n` is `n.to(PrimType::F32)`).
    pub fn to(self, t: PrimType) -> Tracer {
        ctx::with(|cx| {
            let Some((s, ty)) = cx.get(self) else {
                return cx.dummy();
            };
            if ty.rank() != 0 {
                cx.fail("conversion of an array (map it over the elements)");
                return cx.dummy();
            }
            cx.emit(1, |b| Ok(vec![b.convert_to(t, s)?]))[0]
        })
    }

    /// `self[i]`: an element of a one-dimensional array, or a row of a larger one.
    pub fn at(self, i: impl Into<Operand>) -> Tracer {
        ctx::with(|cx| {
            let i = i.into().at(cx, PrimType::I64);
            let (Some((a, ta)), Some((si, ti))) = (cx.get(self), cx.get(i)) else {
                return cx.dummy();
            };
            let Some(v) = a.as_var().filter(|_| ta.rank() > 0) else {
                cx.fail("indexing a scalar");
                return cx.dummy();
            };
            if ti != Type::Prim(PrimType::I64) {
                cx.fail(format!("an index of type {ti:?} (indices are i64)"));
                return cx.dummy();
            }
            cx.emit(1, |b| Ok(vec![b.index1(v, si)?]))[0]
        })
    }

    /// The transpose of a two-dimensional array.
    pub fn transpose(self) -> Tracer {
        ctx::with(|cx| {
            let Some((a, ta)) = cx.get(self) else {
                return cx.dummy();
            };
            match a.as_var() {
                Some(v) if ta.rank() == 2 => cx.emit(1, |b| {
                    Ok(vec![b.let_basic("tr", BasicOp::Rearrange(vec![1, 0], v))?])
                })[0],
                _ => {
                    cx.fail("transpose of a value that is not two-dimensional");
                    cx.dummy()
                }
            }
        })
    }
}

macro_rules! operator {
    ($tr:ident, $method:ident, $op:ident) => {
        impl<R: Into<Operand>> $tr<R> for Tracer {
            type Output = Tracer;
            fn $method(self, rhs: R) -> Tracer {
                binary(BinOp::$op, self.into(), rhs.into())
            }
        }
        impl<R: Into<Operand>> $tr<R> for &Tracer {
            type Output = Tracer;
            fn $method(self, rhs: R) -> Tracer {
                binary(BinOp::$op, (*self).into(), rhs.into())
            }
        }
        impl $tr<Tracer> for f64 {
            type Output = Tracer;
            fn $method(self, rhs: Tracer) -> Tracer {
                binary(BinOp::$op, self.into(), rhs.into())
            }
        }
        impl $tr<Tracer> for f32 {
            type Output = Tracer;
            fn $method(self, rhs: Tracer) -> Tracer {
                binary(BinOp::$op, self.into(), rhs.into())
            }
        }
        impl $tr<Tracer> for i64 {
            type Output = Tracer;
            fn $method(self, rhs: Tracer) -> Tracer {
                binary(BinOp::$op, self.into(), rhs.into())
            }
        }
    };
}

operator!(Add, add, Add);
operator!(Sub, sub, Sub);
operator!(Mul, mul, Mul);
operator!(Div, div, Div);

impl Neg for Tracer {
    type Output = Tracer;
    fn neg(self) -> Tracer {
        unary(UnOp::Neg, self)
    }
}
