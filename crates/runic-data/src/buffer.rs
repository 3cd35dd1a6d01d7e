//! [`Buffer`]: the typed, flat row-major element storage of arrays, shared by the data formats,
//! the interpreter and the executor; its elements are read and written as [`Prim`] scalars.

use crate::store::Store;
use half::f16;
use runic_prim::{Prim, PrimType};

/// A typed, flat element buffer (row-major data of an array): each variant's [`Store`] is
/// a `Vec` runic owns or, for arguments from a host, memory read in place.
#[derive(Clone, Debug, PartialEq)]
pub enum Buffer {
    I8(Store<i8>),
    I16(Store<i16>),
    I32(Store<i32>),
    I64(Store<i64>),
    U8(Store<u8>),
    U16(Store<u16>),
    U32(Store<u32>),
    U64(Store<u64>),
    F16(Store<f16>),
    F32(Store<f32>),
    F64(Store<f64>),
    Bool(Store<bool>),
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

/// Applies `$body` to the vectors inside two buffers of the same variant, bound as `$x` and
/// `$y`; `$else` if their variants differ.
#[macro_export]
macro_rules! with_buffer2 {
    ($a:expr, $b:expr, $x:ident, $y:ident => $body:expr, $else:expr) => {
        match ($a, $b) {
            ($crate::Buffer::I8($x), $crate::Buffer::I8($y)) => $body,
            ($crate::Buffer::I16($x), $crate::Buffer::I16($y)) => $body,
            ($crate::Buffer::I32($x), $crate::Buffer::I32($y)) => $body,
            ($crate::Buffer::I64($x), $crate::Buffer::I64($y)) => $body,
            ($crate::Buffer::U8($x), $crate::Buffer::U8($y)) => $body,
            ($crate::Buffer::U16($x), $crate::Buffer::U16($y)) => $body,
            ($crate::Buffer::U32($x), $crate::Buffer::U32($y)) => $body,
            ($crate::Buffer::U64($x), $crate::Buffer::U64($y)) => $body,
            ($crate::Buffer::F16($x), $crate::Buffer::F16($y)) => $body,
            ($crate::Buffer::F32($x), $crate::Buffer::F32($y)) => $body,
            ($crate::Buffer::F64($x), $crate::Buffer::F64($y)) => $body,
            ($crate::Buffer::Bool($x), $crate::Buffer::Bool($y)) => $body,
            _ => $else,
        }
    };
}

macro_rules! buffer_from_vec {
    ($($t:ty => $variant:ident),*) => {$(
        impl From<Vec<$t>> for Buffer {
            fn from(v: Vec<$t>) -> Buffer {
                Buffer::$variant(v.into())
            }
        }
    )*};
}
buffer_from_vec!(i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8, u16 => U16,
    u32 => U32, u64 => U64, f16 => F16, f32 => F32, f64 => F64, bool => Bool);

impl Buffer {
    /// An empty buffer of the given type with room for `capacity` elements.
    pub fn with_capacity(elem: PrimType, capacity: usize) -> Buffer {
        match elem {
            PrimType::I8 => Buffer::I8(Vec::with_capacity(capacity).into()),
            PrimType::I16 => Buffer::I16(Vec::with_capacity(capacity).into()),
            PrimType::I32 => Buffer::I32(Vec::with_capacity(capacity).into()),
            PrimType::I64 => Buffer::I64(Vec::with_capacity(capacity).into()),
            PrimType::U8 => Buffer::U8(Vec::with_capacity(capacity).into()),
            PrimType::U16 => Buffer::U16(Vec::with_capacity(capacity).into()),
            PrimType::U32 => Buffer::U32(Vec::with_capacity(capacity).into()),
            PrimType::U64 => Buffer::U64(Vec::with_capacity(capacity).into()),
            PrimType::F16 => Buffer::F16(Vec::with_capacity(capacity).into()),
            PrimType::F32 => Buffer::F32(Vec::with_capacity(capacity).into()),
            PrimType::F64 => Buffer::F64(Vec::with_capacity(capacity).into()),
            PrimType::Bool => Buffer::Bool(Vec::with_capacity(capacity).into()),
        }
    }

    pub fn new(elem: PrimType) -> Buffer {
        Buffer::with_capacity(elem, 0)
    }

    /// A buffer of type `elem` holding `n` copies of `p` converted to `elem`.
    pub fn filled(elem: PrimType, n: usize, p: Prim) -> Buffer {
        match runic_prim::convert(p, elem) {
            Prim::I8(x) => Buffer::I8(vec![x; n].into()),
            Prim::I16(x) => Buffer::I16(vec![x; n].into()),
            Prim::I32(x) => Buffer::I32(vec![x; n].into()),
            Prim::I64(x) => Buffer::I64(vec![x; n].into()),
            Prim::U8(x) => Buffer::U8(vec![x; n].into()),
            Prim::U16(x) => Buffer::U16(vec![x; n].into()),
            Prim::U32(x) => Buffer::U32(vec![x; n].into()),
            Prim::U64(x) => Buffer::U64(vec![x; n].into()),
            Prim::F16(x) => Buffer::F16(vec![x; n].into()),
            Prim::F32(x) => Buffer::F32(vec![x; n].into()),
            Prim::F64(x) => Buffer::F64(vec![x; n].into()),
            Prim::Bool(x) => Buffer::Bool(vec![x; n].into()),
        }
    }

    pub fn len(&self) -> usize {
        with_buffer!(self, v => v.len())
    }

    /// How many elements the buffer has room for without reallocating (its length, for a
    /// host's memory).
    pub fn capacity(&self) -> usize {
        with_buffer!(self, v => v.capacity())
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

    /// Stores a scalar of the buffer's own type at `i`; returns false (and stores nothing) if
    /// the types differ.
    pub fn set(&mut self, i: usize, p: Prim) -> bool {
        match (self, p) {
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
            _ => return false,
        }
        true
    }

    /// Appends `p` converted to the buffer's type.
    pub fn push_converted(&mut self, p: Prim) {
        let t = self.elem_type();
        self.push(runic_prim::convert(p, t));
    }

    /// Stores `p` converted to the buffer's type at `i`.
    pub fn set_converted(&mut self, i: usize, p: Prim) {
        let t = self.elem_type();
        self.set(i, runic_prim::convert(p, t));
    }

    /// Appends `src[start..start + len]`; returns false (and appends nothing) if the types
    /// differ.
    pub fn extend_from(&mut self, src: &Buffer, start: usize, len: usize) -> bool {
        with_buffer2!(self, src, d, s => {
            d.extend_from_slice(&s[start..start + len]);
            true
        }, false)
    }

    /// Appends `src[start..start + len]`, converting the elements if the types differ.
    pub fn extend_converted(&mut self, src: &Buffer, start: usize, len: usize) {
        if !self.extend_from(src, start, len) {
            for k in start..start + len {
                self.push_converted(src.get(k));
            }
        }
    }

    /// Overwrites `self[dst_start..dst_start + len]` with `src[src_start..src_start + len]`;
    /// returns false (and copies nothing) if the types differ.
    pub fn copy_from(
        &mut self,
        dst_start: usize,
        src: &Buffer,
        src_start: usize,
        len: usize,
    ) -> bool {
        with_buffer2!(self, src, d, s => {
            d[dst_start..dst_start + len].copy_from_slice(&s[src_start..src_start + len]);
            true
        }, false)
    }

    /// Overwrites `self[dst_start..dst_start + len]` with `src[src_start..src_start + len]`,
    /// converting the elements if the types differ.
    pub fn copy_converted(&mut self, dst_start: usize, src: &Buffer, src_start: usize, len: usize) {
        if !self.copy_from(dst_start, src, src_start, len) {
            for k in 0..len {
                self.set_converted(dst_start + k, src.get(src_start + k));
            }
        }
    }

    /// Elements `start..start + len` read in place, not copied: a borrowed [`Store`] that
    /// `owner` keeps alive (a write to the view copies it first, as for a host's memory).
    ///
    /// # Safety
    /// `owner` must own this buffer (so that it stays where it is while `owner` lives), and
    /// nothing may write the buffer while `owner` or a view is alive; `start + len` must
    /// not exceed its length.
    pub unsafe fn view(
        &self,
        start: usize,
        len: usize,
        owner: std::sync::Arc<dyn std::any::Any + Send + Sync>,
    ) -> Buffer {
        macro_rules! views {
            ($($v:ident),*) => {
                match self {
                    $(Buffer::$v(s) => Buffer::$v(Store::borrowed(s.as_ptr().add(start), len, owner)),)*
                }
            };
        }
        views!(I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64, Bool)
    }

    /// Elements `start..start + len` as a new buffer.
    pub fn slice(&self, start: usize, len: usize) -> Buffer {
        with_buffer!(self, v => Buffer::from(v[start..start + len].to_vec()))
    }

    /// Elements `start, start + stride, …` (`count` of them, all in bounds) as a new buffer.
    pub fn strided(&self, start: i64, count: usize, stride: i64) -> Buffer {
        with_buffer!(self, v => Buffer::from(
            (0..count as i64)
                .map(|k| v[(start + k * stride) as usize])
                .collect::<Vec<_>>()
        ))
    }

    /// The elements at the given positions.
    pub fn gather(&self, idx: &[usize]) -> Buffer {
        with_buffer!(self, v => Buffer::from(idx.iter().map(|&i| v[i]).collect::<Vec<_>>()))
    }
}
