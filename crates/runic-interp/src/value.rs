//! Run-time values of the interpreter.
//!
//! Arrays of any rank are one [`Array`]: a full shape plus row-major data, which is either a
//! flat typed buffer (arrays of primitives, the fast path) or a vector of boxed element values
//! (arrays of tuples, records, sums or functions, and of active AD scalars). Compound
//! values sit behind `Rc` so that copying a value is cheap and in-place updates can reuse a
//! buffer that nobody else holds (`Rc::make_mut`).

use crate::env::Env;
use crate::prim::Prim;
use half::f16;
use runic_syntax::ast::{Exp, Pat, PrimType, ProjStep, TypeExp, TypeParam};
use std::rc::Rc;

#[derive(Clone, Debug)]
pub enum Value<'a> {
    Prim(Prim),
    Array(Rc<Array<'a>>),
    /// Tuples, including the unit value `()`.
    Tuple(Rc<Vec<Value<'a>>>),
    /// Records with non-tuple field names, fields in canonical order.
    Record(Rc<Vec<(&'a str, Value<'a>)>>),
    Sum(Rc<(&'a str, Vec<Value<'a>>)>),
    Fun(Rc<Fun<'a>>),
    /// A scalar carrying derivative information for an open AD operator (see `ad`).
    Active(Rc<crate::ad::Act>),
}

impl<'a> Value<'a> {
    pub fn unit() -> Value<'a> {
        Value::Tuple(Rc::new(Vec::new()))
    }
    pub fn i64(v: i64) -> Value<'a> {
        Value::Prim(Prim::I64(v))
    }
    pub fn bool(b: bool) -> Value<'a> {
        Value::Prim(Prim::Bool(b))
    }
    /// The primitive value; an active scalar gives its plain value (used where the value is
    /// not differentiated: indices, sizes, conditions).
    pub fn as_prim(&self) -> Option<Prim> {
        match self {
            Value::Prim(p) => Some(*p),
            Value::Active(a) => Some(crate::ad::S::A(a.clone()).strip()),
            _ => None,
        }
    }
    /// The shape of an array value; empty for anything else.
    pub fn shape(&self) -> &[usize] {
        match self {
            Value::Array(a) => &a.shape,
            _ => &[],
        }
    }
}

/// Function values: user closures, built-ins (possibly partially applied) and sections.
#[derive(Debug)]
pub enum Fun<'a> {
    Closure(Closure<'a>),
    Builtin(BuiltinFn<'a>),
    /// `(op e)`: `\x -> op x e`.
    RightSection {
        op: Value<'a>,
        rhs: Value<'a>,
    },
    /// `(.f[i])`: projection steps evaluated in `env` when applied.
    Proj {
        steps: &'a [ProjStep],
        env: Env<'a>,
    },
}

#[derive(Debug, Clone)]
pub struct Closure<'a> {
    pub params: &'a [Pat],
    pub body: &'a Exp,
    pub ret: Option<&'a TypeExp>,
    pub type_params: &'a [TypeParam],
    pub env: Env<'a>,
    /// Size parameters known at the occurrence that created this value.
    pub sizes: Vec<(&'a str, i64)>,
    /// Arguments supplied so far (fewer than `params.len()`).
    pub args: Vec<Value<'a>>,
}

#[derive(Debug, Clone)]
pub struct BuiltinFn<'a> {
    pub op: crate::builtins::Builtin,
    pub arity: usize,
    pub args: Vec<Value<'a>>,
    /// Size parameters recorded at the occurrence (by name), when they could be evaluated.
    pub sizes: Vec<(&'a str, i64)>,
}

/// Typed row-major element storage.
#[derive(Clone, Debug, PartialEq)]
pub enum Buf {
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    F16(Vec<f16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
}

macro_rules! with_buf {
    ($buf:expr, $v:ident => $body:expr) => {
        match $buf {
            Buf::I8($v) => $body,
            Buf::I16($v) => $body,
            Buf::I32($v) => $body,
            Buf::I64($v) => $body,
            Buf::U8($v) => $body,
            Buf::U16($v) => $body,
            Buf::U32($v) => $body,
            Buf::U64($v) => $body,
            Buf::F16($v) => $body,
            Buf::F32($v) => $body,
            Buf::F64($v) => $body,
            Buf::Bool($v) => $body,
        }
    };
}

/// Same-variant pairs of buffers.
macro_rules! with_buf2 {
    ($a:expr, $b:expr, $x:ident, $y:ident => $body:expr, $else:expr) => {
        match ($a, $b) {
            (Buf::I8($x), Buf::I8($y)) => $body,
            (Buf::I16($x), Buf::I16($y)) => $body,
            (Buf::I32($x), Buf::I32($y)) => $body,
            (Buf::I64($x), Buf::I64($y)) => $body,
            (Buf::U8($x), Buf::U8($y)) => $body,
            (Buf::U16($x), Buf::U16($y)) => $body,
            (Buf::U32($x), Buf::U32($y)) => $body,
            (Buf::U64($x), Buf::U64($y)) => $body,
            (Buf::F16($x), Buf::F16($y)) => $body,
            (Buf::F32($x), Buf::F32($y)) => $body,
            (Buf::F64($x), Buf::F64($y)) => $body,
            (Buf::Bool($x), Buf::Bool($y)) => $body,
            _ => $else,
        }
    };
}

impl Buf {
    pub fn with_capacity(t: PrimType, n: usize) -> Buf {
        match t {
            PrimType::I8 => Buf::I8(Vec::with_capacity(n)),
            PrimType::I16 => Buf::I16(Vec::with_capacity(n)),
            PrimType::I32 => Buf::I32(Vec::with_capacity(n)),
            PrimType::I64 => Buf::I64(Vec::with_capacity(n)),
            PrimType::U8 => Buf::U8(Vec::with_capacity(n)),
            PrimType::U16 => Buf::U16(Vec::with_capacity(n)),
            PrimType::U32 => Buf::U32(Vec::with_capacity(n)),
            PrimType::U64 => Buf::U64(Vec::with_capacity(n)),
            PrimType::F16 => Buf::F16(Vec::with_capacity(n)),
            PrimType::F32 => Buf::F32(Vec::with_capacity(n)),
            PrimType::F64 => Buf::F64(Vec::with_capacity(n)),
            PrimType::Bool => Buf::Bool(Vec::with_capacity(n)),
        }
    }
    pub fn elem(&self) -> PrimType {
        match self {
            Buf::I8(_) => PrimType::I8,
            Buf::I16(_) => PrimType::I16,
            Buf::I32(_) => PrimType::I32,
            Buf::I64(_) => PrimType::I64,
            Buf::U8(_) => PrimType::U8,
            Buf::U16(_) => PrimType::U16,
            Buf::U32(_) => PrimType::U32,
            Buf::U64(_) => PrimType::U64,
            Buf::F16(_) => PrimType::F16,
            Buf::F32(_) => PrimType::F32,
            Buf::F64(_) => PrimType::F64,
            Buf::Bool(_) => PrimType::Bool,
        }
    }
    pub fn len(&self) -> usize {
        with_buf!(self, v => v.len())
    }
    pub fn get(&self, i: usize) -> Prim {
        match self {
            Buf::I8(v) => Prim::I8(v[i]),
            Buf::I16(v) => Prim::I16(v[i]),
            Buf::I32(v) => Prim::I32(v[i]),
            Buf::I64(v) => Prim::I64(v[i]),
            Buf::U8(v) => Prim::U8(v[i]),
            Buf::U16(v) => Prim::U16(v[i]),
            Buf::U32(v) => Prim::U32(v[i]),
            Buf::U64(v) => Prim::U64(v[i]),
            Buf::F16(v) => Prim::F16(v[i]),
            Buf::F32(v) => Prim::F32(v[i]),
            Buf::F64(v) => Prim::F64(v[i]),
            Buf::Bool(v) => Prim::Bool(v[i]),
        }
    }
    /// Append `p`; false if its type differs from the buffer's.
    pub fn push(&mut self, p: Prim) -> bool {
        match (self, p) {
            (Buf::I8(v), Prim::I8(x)) => v.push(x),
            (Buf::I16(v), Prim::I16(x)) => v.push(x),
            (Buf::I32(v), Prim::I32(x)) => v.push(x),
            (Buf::I64(v), Prim::I64(x)) => v.push(x),
            (Buf::U8(v), Prim::U8(x)) => v.push(x),
            (Buf::U16(v), Prim::U16(x)) => v.push(x),
            (Buf::U32(v), Prim::U32(x)) => v.push(x),
            (Buf::U64(v), Prim::U64(x)) => v.push(x),
            (Buf::F16(v), Prim::F16(x)) => v.push(x),
            (Buf::F32(v), Prim::F32(x)) => v.push(x),
            (Buf::F64(v), Prim::F64(x)) => v.push(x),
            (Buf::Bool(v), Prim::Bool(x)) => v.push(x),
            _ => return false,
        }
        true
    }
    pub fn set(&mut self, i: usize, p: Prim) -> bool {
        match (self, p) {
            (Buf::I8(v), Prim::I8(x)) => v[i] = x,
            (Buf::I16(v), Prim::I16(x)) => v[i] = x,
            (Buf::I32(v), Prim::I32(x)) => v[i] = x,
            (Buf::I64(v), Prim::I64(x)) => v[i] = x,
            (Buf::U8(v), Prim::U8(x)) => v[i] = x,
            (Buf::U16(v), Prim::U16(x)) => v[i] = x,
            (Buf::U32(v), Prim::U32(x)) => v[i] = x,
            (Buf::U64(v), Prim::U64(x)) => v[i] = x,
            (Buf::F16(v), Prim::F16(x)) => v[i] = x,
            (Buf::F32(v), Prim::F32(x)) => v[i] = x,
            (Buf::F64(v), Prim::F64(x)) => v[i] = x,
            (Buf::Bool(v), Prim::Bool(x)) => v[i] = x,
            _ => return false,
        }
        true
    }
    /// Append `src[start..start+len]`; false on a type mismatch.
    pub fn extend_from(&mut self, src: &Buf, start: usize, len: usize) -> bool {
        with_buf2!(self, src, d, s => { d.extend_from_slice(&s[start..start + len]); true }, false)
    }
    /// Copy `src[src_start..+len]` over `self[dst_start..+len]`.
    pub fn copy_within_from(
        &mut self,
        dst_start: usize,
        src: &Buf,
        src_start: usize,
        len: usize,
    ) -> bool {
        with_buf2!(self, src, d, s => {
            d[dst_start..dst_start + len].clone_from_slice(&s[src_start..src_start + len]);
            true
        }, false)
    }
    /// The elements at the given positions.
    pub fn gather(&self, idx: &[usize]) -> Buf {
        match self {
            Buf::I8(v) => Buf::I8(idx.iter().map(|&i| v[i]).collect()),
            Buf::I16(v) => Buf::I16(idx.iter().map(|&i| v[i]).collect()),
            Buf::I32(v) => Buf::I32(idx.iter().map(|&i| v[i]).collect()),
            Buf::I64(v) => Buf::I64(idx.iter().map(|&i| v[i]).collect()),
            Buf::U8(v) => Buf::U8(idx.iter().map(|&i| v[i]).collect()),
            Buf::U16(v) => Buf::U16(idx.iter().map(|&i| v[i]).collect()),
            Buf::U32(v) => Buf::U32(idx.iter().map(|&i| v[i]).collect()),
            Buf::U64(v) => Buf::U64(idx.iter().map(|&i| v[i]).collect()),
            Buf::F16(v) => Buf::F16(idx.iter().map(|&i| v[i]).collect()),
            Buf::F32(v) => Buf::F32(idx.iter().map(|&i| v[i]).collect()),
            Buf::F64(v) => Buf::F64(idx.iter().map(|&i| v[i]).collect()),
            Buf::Bool(v) => Buf::Bool(idx.iter().map(|&i| v[i]).collect()),
        }
    }
}

/// Row-major element storage of an array.
#[derive(Clone, Debug)]
pub enum Data<'a> {
    Flat(Buf),
    Boxed(Vec<Value<'a>>),
}

impl<'a> Data<'a> {
    pub fn len(&self) -> usize {
        match self {
            Data::Flat(b) => b.len(),
            Data::Boxed(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn get(&self, i: usize) -> Value<'a> {
        match self {
            Data::Flat(b) => Value::Prim(b.get(i)),
            Data::Boxed(v) => v[i].clone(),
        }
    }
    pub fn gather(&self, idx: &[usize]) -> Data<'a> {
        match self {
            Data::Flat(b) => Data::Flat(b.gather(idx)),
            Data::Boxed(v) => Data::Boxed(idx.iter().map(|&i| v[i].clone()).collect()),
        }
    }
    pub fn slice(&self, start: usize, len: usize) -> Data<'a> {
        match self {
            Data::Flat(b) => {
                let mut out = Buf::with_capacity(b.elem(), len);
                out.extend_from(b, start, len);
                Data::Flat(out)
            }
            Data::Boxed(v) => Data::Boxed(v[start..start + len].to_vec()),
        }
    }
    /// Set element `i`, switching to boxed storage if the value does not fit the buffer.
    pub fn set(&mut self, i: usize, v: Value<'a>) {
        if let (Data::Flat(b), Value::Prim(p)) = (&mut *self, &v) {
            if b.set(i, *p) {
                return;
            }
        }
        self.make_boxed();
        if let Data::Boxed(vs) = self {
            vs[i] = v;
        }
    }
    pub fn make_boxed(&mut self) {
        if let Data::Flat(b) = self {
            let vs = (0..b.len()).map(|i| Value::Prim(b.get(i))).collect();
            *self = Data::Boxed(vs);
        }
    }
    /// Copy `len` elements of `src` from `src_start` over `self` from `dst_start`.
    pub fn copy_from(&mut self, dst_start: usize, src: &Data<'a>, src_start: usize, len: usize) {
        if let (Data::Flat(d), Data::Flat(s)) = (&mut *self, src) {
            if d.copy_within_from(dst_start, s, src_start, len) {
                return;
            }
        }
        for k in 0..len {
            self.set(dst_start + k, src.get(src_start + k));
        }
    }
    /// Append `len` elements of `src` from `start`.
    pub fn extend_from(&mut self, src: &Data<'a>, start: usize, len: usize) {
        if let (Data::Flat(d), Data::Flat(s)) = (&mut *self, src) {
            if d.extend_from(s, start, len) {
                return;
            }
        }
        if len == 0 {
            return;
        }
        if self.is_empty() {
            if let (Data::Boxed(_), Data::Flat(s)) = (&*self, src) {
                let mut b = Buf::with_capacity(s.elem(), len);
                b.extend_from(s, start, len);
                *self = Data::Flat(b);
                return;
            }
        }
        self.make_boxed();
        if let Data::Boxed(vs) = self {
            for k in 0..len {
                vs.push(src.get(start + k));
            }
        }
    }
    /// Collect element values into storage, flat when they are primitives of one type.
    pub fn from_values(vals: Vec<Value<'a>>) -> Data<'a> {
        if let Some(Value::Prim(p0)) = vals.first() {
            let mut b = Buf::with_capacity(p0.ty(), vals.len());
            let mut ok = true;
            for v in &vals {
                match v {
                    Value::Prim(p) if b.push(*p) => {}
                    _ => {
                        ok = false;
                        break;
                    }
                }
            }
            if ok {
                return Data::Flat(b);
            }
        }
        Data::Boxed(vals)
    }
}

#[derive(Clone, Debug)]
pub struct Array<'a> {
    pub shape: Vec<usize>,
    pub data: Data<'a>,
}

impl<'a> Array<'a> {
    pub fn new(shape: Vec<usize>, data: Data<'a>) -> Array<'a> {
        Array { shape, data }
    }
    pub fn len(&self) -> usize {
        self.shape.first().copied().unwrap_or(0)
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Number of elements in one row (product of the inner dimensions).
    pub fn row_size(&self) -> usize {
        self.shape[1..].iter().product()
    }
    /// Row `i` (an element value for rank 1, a sub-array otherwise). `i` must be in bounds.
    pub fn row(&self, i: usize) -> Value<'a> {
        if self.shape.len() == 1 {
            self.data.get(i)
        } else {
            let rs = self.row_size();
            Value::Array(Rc::new(Array::new(
                self.shape[1..].to_vec(),
                self.data.slice(i * rs, rs),
            )))
        }
    }
    pub fn rows(&self) -> impl Iterator<Item = Value<'a>> + '_ {
        (0..self.len()).map(move |i| self.row(i))
    }
    pub fn elem_prim(&self) -> Option<PrimType> {
        match &self.data {
            Data::Flat(b) => Some(b.elem()),
            Data::Boxed(_) => None,
        }
    }
}

/// The deep shape of a value, for regularity checks: array shapes, and for tuples and
/// records the shapes of their components.
pub fn same_shape(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            if x.shape != y.shape {
                return false;
            }
            match (&x.data, &y.data) {
                (Data::Boxed(u), Data::Boxed(v)) if !u.is_empty() && !v.is_empty() => {
                    same_shape(&u[0], &v[0])
                }
                _ => true,
            }
        }
        (Value::Tuple(x), Value::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(u, v)| same_shape(u, v))
        }
        (Value::Record(x), Value::Record(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|((_, u), (_, v))| same_shape(u, v))
        }
        (Value::Array(_), _) | (_, Value::Array(_)) => false,
        _ => true,
    }
}

/// Build an array from its rows; `Err` with the two differing shapes if they are irregular.
/// An empty list gives a `[0]` array with boxed (typeless) storage unless `elem` is known.
pub fn array_from_rows<'a>(
    rows: Vec<Value<'a>>,
    elem: Option<PrimType>,
) -> Result<Value<'a>, (Vec<usize>, Vec<usize>)> {
    let n = rows.len();
    let first_shape: Vec<usize> = match rows.first() {
        None => {
            let data = match elem {
                Some(t) => Data::Flat(Buf::with_capacity(t, 0)),
                None => Data::Boxed(Vec::new()),
            };
            return Ok(Value::Array(Rc::new(Array::new(vec![0], data))));
        }
        Some(r) => r.shape().to_vec(),
    };
    for r in &rows[1..] {
        if !same_shape(&rows[0], r) {
            return Err((first_shape, r.shape().to_vec()));
        }
    }
    if first_shape.is_empty() {
        let data = Data::from_values(rows);
        return Ok(Value::Array(Rc::new(Array::new(vec![n], data))));
    }
    let mut shape = vec![n];
    shape.extend_from_slice(&first_shape);
    let rs: usize = first_shape.iter().product();
    let mut data: Option<Data<'a>> = None;
    for r in &rows {
        if let Value::Array(a) = r {
            match &mut data {
                None => {
                    let mut d = match &a.data {
                        Data::Flat(b) => Data::Flat(Buf::with_capacity(b.elem(), rs * n)),
                        Data::Boxed(_) => Data::Boxed(Vec::with_capacity(rs * n)),
                    };
                    d.extend_from(&a.data, 0, rs);
                    data = Some(d);
                }
                Some(d) => d.extend_from(&a.data, 0, rs),
            }
        }
    }
    Ok(Value::Array(Rc::new(Array::new(
        shape,
        data.unwrap_or(Data::Boxed(Vec::new())),
    ))))
}

/// Structural equality of §9.5 (floats by IEEE equality).
pub fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Active(_), _) | (_, Value::Active(_)) => match (a.as_prim(), b.as_prim()) {
            (Some(x), Some(y)) => values_equal(&Value::Prim(x), &Value::Prim(y)),
            _ => false,
        },
        (Value::Prim(x), Value::Prim(y)) => {
            matches!(
                crate::prim::binop(crate::prim::BinOp::Eq, *x, *y),
                Ok(Prim::Bool(true))
            )
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.shape != y.shape {
                return false;
            }
            if let (Data::Flat(u), Data::Flat(v)) = (&x.data, &y.data) {
                if u.elem() == v.elem() && !matches!(u, Buf::F16(_) | Buf::F32(_) | Buf::F64(_)) {
                    return u == v;
                }
            }
            (0..x.data.len()).all(|i| values_equal(&x.data.get(i), &y.data.get(i)))
        }
        (Value::Tuple(x), Value::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(u, v)| values_equal(u, v))
        }
        (Value::Record(x), Value::Record(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|((n, u), (m, v))| n == m && values_equal(u, v))
        }
        (Value::Sum(x), Value::Sum(y)) => {
            x.0 == y.0
                && x.1.len() == y.1.len()
                && x.1.iter().zip(y.1.iter()).all(|(u, v)| values_equal(u, v))
        }
        _ => false,
    }
}

pub use runic_prim::index::shape_string;
