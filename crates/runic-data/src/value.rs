//! Run-time data values (§1.2): scalars, regular row-major arrays, and the non-data values that
//! only appear when printing results.

use crate::types::{PrimType, ValueType};
use half::f16;

/// One primitive value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
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

impl Scalar {
    pub fn elem_type(&self) -> PrimType {
        match self {
            Scalar::I8(_) => PrimType::I8,
            Scalar::I16(_) => PrimType::I16,
            Scalar::I32(_) => PrimType::I32,
            Scalar::I64(_) => PrimType::I64,
            Scalar::U8(_) => PrimType::U8,
            Scalar::U16(_) => PrimType::U16,
            Scalar::U32(_) => PrimType::U32,
            Scalar::U64(_) => PrimType::U64,
            Scalar::F16(_) => PrimType::F16,
            Scalar::F32(_) => PrimType::F32,
            Scalar::F64(_) => PrimType::F64,
            Scalar::Bool(_) => PrimType::Bool,
        }
    }

    /// The value widened to f64, for floats only.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Scalar::F16(x) => Some(x.to_f64()),
            Scalar::F32(x) => Some(x as f64),
            Scalar::F64(x) => Some(x),
            _ => None,
        }
    }

    /// The value as a mathematical integer, for integer types only.
    pub fn as_i128(&self) -> Option<i128> {
        match *self {
            Scalar::I8(x) => Some(x as i128),
            Scalar::I16(x) => Some(x as i128),
            Scalar::I32(x) => Some(x as i128),
            Scalar::I64(x) => Some(x as i128),
            Scalar::U8(x) => Some(x as i128),
            Scalar::U16(x) => Some(x as i128),
            Scalar::U32(x) => Some(x as i128),
            Scalar::U64(x) => Some(x as i128),
            _ => None,
        }
    }

    /// Equality that treats every NaN as equal to every NaN and otherwise compares floats
    /// bit for bit (so `-0.0` differs from `0.0`). Used to check round trips.
    pub fn bit_eq(&self, other: &Scalar) -> bool {
        match (self, other) {
            (Scalar::F16(a), Scalar::F16(b)) => {
                (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
            }
            (Scalar::F32(a), Scalar::F32(b)) => {
                (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
            }
            (Scalar::F64(a), Scalar::F64(b)) => {
                (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
            }
            _ => self == other,
        }
    }
}

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
macro_rules! with_buffer {
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
pub(crate) use with_buffer;

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
    pub fn get(&self, i: usize) -> Scalar {
        match self {
            Buffer::I8(v) => Scalar::I8(v[i]),
            Buffer::I16(v) => Scalar::I16(v[i]),
            Buffer::I32(v) => Scalar::I32(v[i]),
            Buffer::I64(v) => Scalar::I64(v[i]),
            Buffer::U8(v) => Scalar::U8(v[i]),
            Buffer::U16(v) => Scalar::U16(v[i]),
            Buffer::U32(v) => Scalar::U32(v[i]),
            Buffer::U64(v) => Scalar::U64(v[i]),
            Buffer::F16(v) => Scalar::F16(v[i]),
            Buffer::F32(v) => Scalar::F32(v[i]),
            Buffer::F64(v) => Scalar::F64(v[i]),
            Buffer::Bool(v) => Scalar::Bool(v[i]),
        }
    }

    /// Appends a scalar of the buffer's own type; returns false (and appends nothing) if the
    /// types differ.
    pub fn push(&mut self, s: Scalar) -> bool {
        match (self, s) {
            (Buffer::I8(v), Scalar::I8(x)) => v.push(x),
            (Buffer::I16(v), Scalar::I16(x)) => v.push(x),
            (Buffer::I32(v), Scalar::I32(x)) => v.push(x),
            (Buffer::I64(v), Scalar::I64(x)) => v.push(x),
            (Buffer::U8(v), Scalar::U8(x)) => v.push(x),
            (Buffer::U16(v), Scalar::U16(x)) => v.push(x),
            (Buffer::U32(v), Scalar::U32(x)) => v.push(x),
            (Buffer::U64(v), Scalar::U64(x)) => v.push(x),
            (Buffer::F16(v), Scalar::F16(x)) => v.push(x),
            (Buffer::F32(v), Scalar::F32(x)) => v.push(x),
            (Buffer::F64(v), Scalar::F64(x)) => v.push(x),
            (Buffer::Bool(v), Scalar::Bool(x)) => v.push(x),
            _ => return false,
        }
        true
    }
}

/// Number of elements of a shape, `None` on overflow. Any zero dimension gives 0, whatever the
/// other dimensions are.
pub fn shape_product(shape: &[usize]) -> Option<usize> {
    if shape.contains(&0) {
        return Some(0);
    }
    shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

/// A regular array: `shape` (rank ≥ 1) and its elements in row-major order.
/// Invariant: `shape_product(&shape) == Some(data.len())`.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    pub shape: Vec<usize>,
    pub data: Buffer,
}

macro_rules! array_constructors {
    ($($name:ident: $t:ty => $variant:ident;)*) => {
        $(
            #[doc = concat!("An array of `", stringify!($t), "`; `None` if the shape does not fit the data.")]
            pub fn $name(shape: Vec<usize>, data: Vec<$t>) -> Option<Array> {
                Array::new(shape, Buffer::$variant(data))
            }
        )*
    };
}

impl Array {
    /// Checks the invariant; `None` if the shape is empty or does not match the data length.
    pub fn new(shape: Vec<usize>, data: Buffer) -> Option<Array> {
        if shape.is_empty() || shape_product(&shape) != Some(data.len()) {
            return None;
        }
        Some(Array { shape, data })
    }

    array_constructors! {
        from_i8: i8 => I8;
        from_i16: i16 => I16;
        from_i32: i32 => I32;
        from_i64: i64 => I64;
        from_u8: u8 => U8;
        from_u16: u16 => U16;
        from_u32: u32 => U32;
        from_u64: u64 => U64;
        from_f16: f16 => F16;
        from_f32: f32 => F32;
        from_f64: f64 => F64;
        from_bool: bool => Bool;
    }

    /// Whether the invariant holds (rank ≥ 1, element count matches the shape). Arrays built
    /// through the public fields may break it; printers and comparisons check it rather than
    /// panic.
    pub fn is_valid(&self) -> bool {
        !self.shape.is_empty() && shape_product(&self.shape) == Some(self.data.len())
    }

    pub fn elem_type(&self) -> PrimType {
        self.data.elem_type()
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

/// A value as it crosses the program boundary. Only `Scalar` and `Array` are data values; the
/// others exist only so that results of any type can be printed (§3.6).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Scalar(Scalar),
    Array(Array),
    Tuple(Vec<Value>),
    /// Fields in any order; printing sorts them by name.
    Record(Vec<(String, Value)>),
    /// Constructor name (without `#`) and payload.
    Sum(String, Vec<Value>),
    /// Printed verbatim, e.g. `#<fun>`.
    Opaque(String),
}

impl Value {
    /// The data type (element type and fully known shape); `None` for non-data values.
    pub fn value_type(&self) -> Option<ValueType> {
        match self {
            Value::Scalar(s) => Some(ValueType::scalar(s.elem_type())),
            Value::Array(a) => Some(ValueType::with_shape(a.elem_type(), &a.shape)),
            _ => None,
        }
    }

    pub fn is_data(&self) -> bool {
        matches!(self, Value::Scalar(_) | Value::Array(_))
    }

    /// The shape: empty for a scalar, `None` for non-data values.
    pub fn shape(&self) -> Option<&[usize]> {
        match self {
            Value::Scalar(_) => Some(&[]),
            Value::Array(a) => Some(&a.shape),
            _ => None,
        }
    }

    pub fn as_scalar(&self) -> Option<Scalar> {
        match self {
            Value::Scalar(s) => Some(*s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&Array> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// An integer scalar of any integer type as i64 (u64 values above `i64::MAX` give `None`).
    pub fn as_i64(&self) -> Option<i64> {
        self.as_scalar()?
            .as_i128()
            .and_then(|x| i64::try_from(x).ok())
    }

    /// A float scalar of any float type, widened to f64.
    pub fn as_f64(&self) -> Option<f64> {
        self.as_scalar()?.as_f64()
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Scalar(Scalar::Bool(b)) => Some(*b),
            _ => None,
        }
    }

    /// Structural equality where NaN equals NaN and floats are otherwise compared bit for bit.
    pub fn bit_eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Scalar(a), Value::Scalar(b)) => a.bit_eq(b),
            (Value::Array(a), Value::Array(b)) => {
                a.shape == b.shape
                    && a.elem_type() == b.elem_type()
                    && (0..a.len()).all(|i| a.data.get(i).bit_eq(&b.data.get(i)))
            }
            (Value::Tuple(a), Value::Tuple(b)) | (Value::Sum(_, a), Value::Sum(_, b)) => {
                a.len() == b.len()
                    && a.iter().zip(b).all(|(x, y)| x.bit_eq(y))
                    && match (self, other) {
                        (Value::Sum(s, _), Value::Sum(t, _)) => s == t,
                        _ => true,
                    }
            }
            (Value::Record(a), Value::Record(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|((n, x), (m, y))| n == m && x.bit_eq(y))
            }
            (Value::Opaque(a), Value::Opaque(b)) => a == b,
            _ => false,
        }
    }
}

impl From<Scalar> for Value {
    fn from(s: Scalar) -> Value {
        Value::Scalar(s)
    }
}

impl From<Array> for Value {
    fn from(a: Array) -> Value {
        Value::Array(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_product_handles_zero_and_overflow() {
        assert_eq!(shape_product(&[2, 3]), Some(6));
        assert_eq!(shape_product(&[usize::MAX, 4, 0]), Some(0));
        assert_eq!(shape_product(&[usize::MAX, 4]), None);
        assert_eq!(shape_product(&[]), Some(1));
    }

    #[test]
    fn array_invariant() {
        assert!(Array::from_i32(vec![2, 2], vec![1, 2, 3, 4]).is_some());
        assert!(Array::from_i32(vec![2, 2], vec![1, 2, 3]).is_none());
        assert!(Array::from_i32(vec![], vec![1]).is_none());
        let bad = Array {
            shape: vec![0],
            data: Buffer::I8(vec![1]),
        };
        assert!(!bad.is_valid());
        let a = Array::from_f32(vec![0, 3], vec![]).unwrap();
        assert_eq!(
            Value::from(a).value_type().unwrap().to_string(),
            "[0][3]f32"
        );
    }

    #[test]
    fn accessors() {
        assert_eq!(Value::Scalar(Scalar::U64(u64::MAX)).as_i64(), None);
        assert_eq!(Value::Scalar(Scalar::I8(-3)).as_i64(), Some(-3));
        assert_eq!(
            Value::Scalar(Scalar::F16(f16::from_f32(1.5))).as_f64(),
            Some(1.5)
        );
        let nan = Value::Scalar(Scalar::F32(f32::NAN));
        assert!(nan.bit_eq(&Value::Scalar(Scalar::F32(-f32::NAN))));
        assert!(!Value::Scalar(Scalar::F32(0.0)).bit_eq(&Value::Scalar(Scalar::F32(-0.0))));
    }
}
