//! Run-time values of the interpreter.
//!
//! Arrays of any rank are one [`Array`]: a full shape plus row-major data, which is either a
//! flat typed buffer (arrays of primitives, the fast path) or a vector of boxed element values
//! (arrays of tuples, records, sums or functions, and of active AD scalars). Compound
//! values sit behind `Rc` so that copying a value is cheap and in-place updates can reuse a
//! buffer that nobody else holds (`Rc::make_mut`).

use crate::env::Env;
use crate::prim::Prim;
use runic_data::Buffer;
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
    /// A function value bound to a parameter declared with a function type whose result is
    /// an array (`f: [n]i32 -> [n]i32`, or `f: t -> t` with `t` an array): once `arity`
    /// more arguments are applied, its result must have the expected shape.
    Checked {
        inner: Value<'a>,
        ret: runic_syntax::ast::Expect<'a, Value<'a>>,
        /// Arguments given so far, and still to come.
        given: usize,
        arity: usize,
        env: Env<'a>,
        span: runic_syntax::Span,
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

/// Row-major element storage of an array.
#[derive(Clone, Debug)]
pub enum Data<'a> {
    Flat(Buffer),
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
            Data::Flat(b) => Data::Flat(b.slice(start, len)),
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
            if d.copy_from(dst_start, s, src_start, len) {
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
                let mut b = Buffer::with_capacity(s.elem_type(), len);
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
            let mut b = Buffer::with_capacity(p0.ty(), vals.len());
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
            Data::Flat(b) => Some(b.elem_type()),
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
                Some(t) => Data::Flat(Buffer::with_capacity(t, 0)),
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
                        Data::Flat(b) => Data::Flat(Buffer::with_capacity(b.elem_type(), rs * n)),
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
                if u.elem_type() == v.elem_type() && !u.elem_type().is_float() {
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
