//! Run-time data values (§1.2): scalars, regular row-major arrays, and the non-data values that
//! only appear when printing results.

use crate::buffer::Buffer;
use crate::types::{PrimType, ValueType};
use half::f16;
use runic_prim::Prim;

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
                Array::new(shape, Buffer::$variant(data.into()))
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
    Scalar(Prim),
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
            Value::Scalar(s) => Some(ValueType::scalar(s.ty())),
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

    pub fn as_scalar(&self) -> Option<Prim> {
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
            .as_int()
            .and_then(|x| i64::try_from(x).ok())
    }

    /// A float scalar of any float type, widened to f64.
    pub fn as_f64(&self) -> Option<f64> {
        self.as_scalar()?.as_float()
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Scalar(Prim::Bool(b)) => Some(*b),
            _ => None,
        }
    }

    /// Structural equality where NaN equals NaN and floats are otherwise compared bit for bit.
    pub fn bit_eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Scalar(a), Value::Scalar(b)) => prim_bit_eq(a, b),
            (Value::Array(a), Value::Array(b)) => {
                a.shape == b.shape
                    && a.elem_type() == b.elem_type()
                    && (0..a.len()).all(|i| prim_bit_eq(&a.data.get(i), &b.data.get(i)))
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

/// Equality that treats every NaN as equal to every NaN and otherwise compares floats bit for
/// bit (so `-0.0` differs from `0.0`). Used to check round trips.
fn prim_bit_eq(a: &Prim, b: &Prim) -> bool {
    match (a, b) {
        (Prim::F16(x), Prim::F16(y)) => (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits(),
        (Prim::F32(x), Prim::F32(y)) => (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits(),
        (Prim::F64(x), Prim::F64(y)) => (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits(),
        _ => a == b,
    }
}

impl From<Prim> for Value {
    fn from(s: Prim) -> Value {
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
            data: Buffer::I8(vec![1].into()),
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
        assert_eq!(Value::Scalar(Prim::U64(u64::MAX)).as_i64(), None);
        assert_eq!(Value::Scalar(Prim::I8(-3)).as_i64(), Some(-3));
        assert_eq!(
            Value::Scalar(Prim::F16(f16::from_f32(1.5))).as_f64(),
            Some(1.5)
        );
        let nan = Value::Scalar(Prim::F32(f32::NAN));
        assert!(nan.bit_eq(&Value::Scalar(Prim::F32(-f32::NAN))));
        assert!(!Value::Scalar(Prim::F32(0.0)).bit_eq(&Value::Scalar(Prim::F32(-0.0))));
    }
}
