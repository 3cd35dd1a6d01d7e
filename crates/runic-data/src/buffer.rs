//! [`Buffer`]: the typed, flat row-major element storage of arrays, shared by the data formats,
//! the interpreter and the executor; its elements are read and written as [`Prim`] scalars.

use half::f16;
use runic_prim::{Prim, PrimType};

/// A typed, flat element buffer (row-major data of an array).
#[derive(Clone, Debug, PartialEq)]
pub enum Buffer {
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

/// Applies `$body` to the vector inside any `Buffer` variant, bound as `$v`.
#[macro_export]
macro_rules! with_buffer {
    ($buf:expr, $v:ident => $body:expr) => {
        match $buf {
            $crate::Buffer::I8($v) => $body,
            $crate::Buffer::I16($v) => $body,
            $crate::Buffer::I32($v) => $body,
            $crate::Buffer::I64($v) => $body,
            $crate::Buffer::U8($v) => $body,
            $crate::Buffer::U16($v) => $body,
            $crate::Buffer::U32($v) => $body,
            $crate::Buffer::U64($v) => $body,
            $crate::Buffer::F16($v) => $body,
            $crate::Buffer::F32($v) => $body,
            $crate::Buffer::F64($v) => $body,
            $crate::Buffer::Bool($v) => $body,
        }
    };
}

impl Buffer {
    /// An empty buffer of the given type with room for `capacity` elements.
    pub fn with_capacity(elem: PrimType, capacity: usize) -> Buffer {
        match elem {
            PrimType::I8 => Buffer::I8(Vec::with_capacity(capacity)),
            PrimType::I16 => Buffer::I16(Vec::with_capacity(capacity)),
            PrimType::I32 => Buffer::I32(Vec::with_capacity(capacity)),
            PrimType::I64 => Buffer::I64(Vec::with_capacity(capacity)),
            PrimType::U8 => Buffer::U8(Vec::with_capacity(capacity)),
            PrimType::U16 => Buffer::U16(Vec::with_capacity(capacity)),
            PrimType::U32 => Buffer::U32(Vec::with_capacity(capacity)),
            PrimType::U64 => Buffer::U64(Vec::with_capacity(capacity)),
            PrimType::F16 => Buffer::F16(Vec::with_capacity(capacity)),
            PrimType::F32 => Buffer::F32(Vec::with_capacity(capacity)),
            PrimType::F64 => Buffer::F64(Vec::with_capacity(capacity)),
            PrimType::Bool => Buffer::Bool(Vec::with_capacity(capacity)),
        }
    }

    pub fn new(elem: PrimType) -> Buffer {
        Buffer::with_capacity(elem, 0)
    }

    pub fn len(&self) -> usize {
        with_buffer!(self, v => v.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn elem_type(&self) -> PrimType {
        match self {
            Buffer::I8(_) => PrimType::I8,
            Buffer::I16(_) => PrimType::I16,
            Buffer::I32(_) => PrimType::I32,
            Buffer::I64(_) => PrimType::I64,
            Buffer::U8(_) => PrimType::U8,
            Buffer::U16(_) => PrimType::U16,
            Buffer::U32(_) => PrimType::U32,
            Buffer::U64(_) => PrimType::U64,
            Buffer::F16(_) => PrimType::F16,
            Buffer::F32(_) => PrimType::F32,
            Buffer::F64(_) => PrimType::F64,
            Buffer::Bool(_) => PrimType::Bool,
        }
    }

    /// Element `i`. Panics if `i >= len()` (an internal invariant, like slice indexing).
    pub fn get(&self, i: usize) -> Prim {
        match self {
            Buffer::I8(v) => Prim::I8(v[i]),
            Buffer::I16(v) => Prim::I16(v[i]),
            Buffer::I32(v) => Prim::I32(v[i]),
            Buffer::I64(v) => Prim::I64(v[i]),
            Buffer::U8(v) => Prim::U8(v[i]),
            Buffer::U16(v) => Prim::U16(v[i]),
            Buffer::U32(v) => Prim::U32(v[i]),
            Buffer::U64(v) => Prim::U64(v[i]),
            Buffer::F16(v) => Prim::F16(v[i]),
            Buffer::F32(v) => Prim::F32(v[i]),
            Buffer::F64(v) => Prim::F64(v[i]),
            Buffer::Bool(v) => Prim::Bool(v[i]),
        }
    }

    /// Appends a scalar of the buffer's own type; returns false (and appends nothing) if the
    /// types differ.
    pub fn push(&mut self, p: Prim) -> bool {
        match (self, p) {
            (Buffer::I8(v), Prim::I8(x)) => v.push(x),
            (Buffer::I16(v), Prim::I16(x)) => v.push(x),
            (Buffer::I32(v), Prim::I32(x)) => v.push(x),
            (Buffer::I64(v), Prim::I64(x)) => v.push(x),
            (Buffer::U8(v), Prim::U8(x)) => v.push(x),
            (Buffer::U16(v), Prim::U16(x)) => v.push(x),
            (Buffer::U32(v), Prim::U32(x)) => v.push(x),
            (Buffer::U64(v), Prim::U64(x)) => v.push(x),
            (Buffer::F16(v), Prim::F16(x)) => v.push(x),
            (Buffer::F32(v), Prim::F32(x)) => v.push(x),
            (Buffer::F64(v), Prim::F64(x)) => v.push(x),
            (Buffer::Bool(v), Prim::Bool(x)) => v.push(x),
            _ => return false,
        }
        true
    }
}
