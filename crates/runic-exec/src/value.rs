//! Run-time values of the ir backend: scalars, arrays (flat typed buffers with a shape,
//! shared by reference count and updated in place when unshared) and accumulators.

use crate::error::{err, R};
use runic_data::{Array, Buffer};
use runic_prim::{Prim, PrimType};
use std::sync::{Arc, Mutex};

#[derive(Clone, Debug, Default)]
pub enum Val {
    /// A slot that has not been bound yet.
    #[default]
    Unset,
    Prim(Prim),
    Arr(Arc<Array>),
    Acc(Arc<AccCell>),
}

/// The state of a `with_acc` accumulator: the arrays it writes into and its combining
/// operator. Shared between the workers of a parallel map, hence the lock.
#[derive(Debug)]
pub struct AccCell {
    pub arrays: Mutex<Vec<Array>>,
    /// Outer (indexed) dimensions.
    pub shape: Vec<usize>,
    /// Index of the `with_acc` input (for the combining operator).
    pub op: Option<(runic_ir::Lambda, Vec<Val>)>,
    /// The values in scope at `with_acc`, for an operator that is not a simple binary
    /// operation: its body may read variables bound outside it (such as a size).
    pub env: Option<Vec<Val>>,
}

impl Val {
    pub fn prim(&self) -> R<Prim> {
        match self {
            Val::Prim(p) => Ok(*p),
            _ => err("internal error: expected a scalar"),
        }
    }
    pub fn arr(&self) -> R<&Arc<Array>> {
        match self {
            Val::Arr(a) => Ok(a),
            _ => err("internal error: expected an array"),
        }
    }
    pub fn i64(&self) -> R<i64> {
        self.prim()?
            .to_i64()
            .ok_or_else(|| crate::error::ExecError::new("internal error: expected an integer"))
    }
    pub fn bool(&self) -> R<bool> {
        self.prim()?
            .as_bool()
            .ok_or_else(|| crate::error::ExecError::new("internal error: expected a boolean"))
    }
    /// The shape of a value (empty for scalars).
    pub fn shape(&self) -> &[usize] {
        match self {
            Val::Arr(a) => &a.shape,
            _ => &[],
        }
    }
}

/// Applies `$body` to the vector inside any `Buffer` variant, bound as `$v`.
macro_rules! with_buf {
    ($buf:expr, $v:ident => $body:expr) => {
        match $buf {
            Buffer::I8($v) => $body,
            Buffer::I16($v) => $body,
            Buffer::I32($v) => $body,
            Buffer::I64($v) => $body,
            Buffer::U8($v) => $body,
            Buffer::U16($v) => $body,
            Buffer::U32($v) => $body,
            Buffer::U64($v) => $body,
            Buffer::F16($v) => $body,
            Buffer::F32($v) => $body,
            Buffer::F64($v) => $body,
            Buffer::Bool($v) => $body,
        }
    };
}

/// Applies `$body` to two buffers of the same variant (`$same` otherwise).
macro_rules! with_buf2 {
    ($a:expr, $b:expr, $x:ident, $y:ident => $body:expr, $same:expr) => {
        match ($a, $b) {
            (Buffer::I8($x), Buffer::I8($y)) => $body,
            (Buffer::I16($x), Buffer::I16($y)) => $body,
            (Buffer::I32($x), Buffer::I32($y)) => $body,
            (Buffer::I64($x), Buffer::I64($y)) => $body,
            (Buffer::U8($x), Buffer::U8($y)) => $body,
            (Buffer::U16($x), Buffer::U16($y)) => $body,
            (Buffer::U32($x), Buffer::U32($y)) => $body,
            (Buffer::U64($x), Buffer::U64($y)) => $body,
            (Buffer::F16($x), Buffer::F16($y)) => $body,
            (Buffer::F32($x), Buffer::F32($y)) => $body,
            (Buffer::F64($x), Buffer::F64($y)) => $body,
            (Buffer::Bool($x), Buffer::Bool($y)) => $body,
            _ => $same,
        }
    };
}

pub(crate) use with_buf;
pub(crate) use with_buf2;

pub fn buf_elem(b: &Buffer) -> PrimType {
    b.elem_type()
}

pub fn buf_get(b: &Buffer, i: usize) -> Prim {
    b.get(i)
}

/// Store `p` at `i` (converting if the types differ, which a verified program never does).
pub fn buf_set(b: &mut Buffer, i: usize, p: Prim) {
    let p = runic_prim::convert(p, buf_elem(b));
    match (b, p) {
        (Buffer::I8(v), Prim::I8(x)) => v[i] = x,
        (Buffer::I16(v), Prim::I16(x)) => v[i] = x,
        (Buffer::I32(v), Prim::I32(x)) => v[i] = x,
        (Buffer::I64(v), Prim::I64(x)) => v[i] = x,
        (Buffer::U8(v), Prim::U8(x)) => v[i] = x,
        (Buffer::U16(v), Prim::U16(x)) => v[i] = x,
        (Buffer::U32(v), Prim::U32(x)) => v[i] = x,
        (Buffer::U64(v), Prim::U64(x)) => v[i] = x,
        (Buffer::F16(v), Prim::F16(x)) => v[i] = x,
        (Buffer::F32(v), Prim::F32(x)) => v[i] = x,
        (Buffer::F64(v), Prim::F64(x)) => v[i] = x,
        (Buffer::Bool(v), Prim::Bool(x)) => v[i] = x,
        _ => {}
    }
}

pub fn buf_push(b: &mut Buffer, p: Prim) {
    let t = buf_elem(b);
    b.push(runic_prim::convert(p, t));
}

/// A buffer of `n` copies of `p`.
pub fn buf_filled(t: PrimType, n: usize, p: Prim) -> Buffer {
    let p = runic_prim::convert(p, t);
    match p {
        Prim::I8(x) => Buffer::I8(vec![x; n]),
        Prim::I16(x) => Buffer::I16(vec![x; n]),
        Prim::I32(x) => Buffer::I32(vec![x; n]),
        Prim::I64(x) => Buffer::I64(vec![x; n]),
        Prim::U8(x) => Buffer::U8(vec![x; n]),
        Prim::U16(x) => Buffer::U16(vec![x; n]),
        Prim::U32(x) => Buffer::U32(vec![x; n]),
        Prim::U64(x) => Buffer::U64(vec![x; n]),
        Prim::F16(x) => Buffer::F16(vec![x; n]),
        Prim::F32(x) => Buffer::F32(vec![x; n]),
        Prim::F64(x) => Buffer::F64(vec![x; n]),
        Prim::Bool(x) => Buffer::Bool(vec![x; n]),
    }
}

pub fn buf_with_capacity(t: PrimType, n: usize) -> Buffer {
    Buffer::with_capacity(t, n)
}

/// Elements `off..off+len` as a new buffer.
pub fn buf_slice(b: &Buffer, off: usize, len: usize) -> Buffer {
    with_buf!(b, v => v[off..off + len].to_vec().into_buffer())
}

/// Append `src[off..off+len]` to `dst` (same element type).
pub fn buf_extend(dst: &mut Buffer, src: &Buffer, off: usize, len: usize) {
    with_buf2!(&mut *dst, src, d, s => d.extend_from_slice(&s[off..off + len]), {
        for k in off..off + len {
            buf_push(dst, buf_get(src, k));
        }
    })
}

/// Overwrite `dst[doff..doff+len]` with `src[soff..soff+len]`.
pub fn buf_copy(dst: &mut Buffer, doff: usize, src: &Buffer, soff: usize, len: usize) {
    with_buf2!(&mut *dst, src, d, s => d[doff..doff + len].copy_from_slice(&s[soff..soff + len]), {
        for k in 0..len {
            buf_set(dst, doff + k, buf_get(src, soff + k));
        }
    })
}

/// The elements at the given flat offsets.
/// Elements `start, start + stride, …` (`count` of them, all in bounds).
pub fn buf_strided(b: &Buffer, start: i64, count: usize, stride: i64) -> Buffer {
    with_buf!(b, v => (0..count as i64)
        .map(|k| v[(start + k * stride) as usize])
        .collect::<Vec<_>>()
        .into_buffer())
}

pub fn buf_gather(b: &Buffer, idx: &[usize]) -> Buffer {
    with_buf!(b, v => idx.iter().map(|&i| v[i]).collect::<Vec<_>>().into_buffer())
}

/// Conversions from typed vectors, so that macros can rebuild a buffer of the same variant.
pub trait IntoBuffer {
    fn into_buffer(self) -> Buffer;
}

macro_rules! into_buffer {
    ($($t:ty => $v:ident),*) => {$(
        impl IntoBuffer for Vec<$t> {
            fn into_buffer(self) -> Buffer { Buffer::$v(self) }
        }
    )*};
}
into_buffer!(i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8, u16 => U16, u32 => U32,
    u64 => U64, half::f16 => F16, f32 => F32, f64 => F64, bool => Bool);

/// An array value (rank ≥ 1 is the caller's concern; rank 0 arrays never exist).
pub fn arr(shape: Vec<usize>, data: Buffer) -> Val {
    Val::Arr(Arc::new(Array { shape, data }))
}

/// Row `i` of an array: a scalar for rank 1, otherwise a copied sub-array.
pub fn row(a: &Array, i: usize) -> Val {
    if a.shape.len() == 1 {
        Val::Prim(buf_get(&a.data, i))
    } else {
        let inner: usize = a.shape[1..].iter().product();
        arr(a.shape[1..].to_vec(), buf_slice(&a.data, i * inner, inner))
    }
}

pub use runic_prim::index::shape_string;

/// Append a value (a scalar or an array of the row shape) to a buffer of rows.
pub fn push_row(dst: &mut Buffer, v: &Val) -> R<()> {
    match v {
        Val::Prim(p) => buf_push(dst, *p),
        Val::Arr(a) => buf_extend(dst, &a.data, 0, a.data.len()),
        _ => return err("internal error: an accumulator as an array element"),
    }
    Ok(())
}
