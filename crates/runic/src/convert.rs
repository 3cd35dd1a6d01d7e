//! Host values in and out: scalars of the twelve primitive types and `ndarray` arrays of them
//! become [`Value`]s ([`IntoValue`], [`IntoArgs`]); results come back out ([`FromValue`]).
//!
//! Owned arrays in standard (row-major, contiguous) layout are moved in without copying
//! their elements; views and arrays in other layouts are copied once, in row-major order.
//! Array results are moved out without copying.

use half::f16;
use ndarray::{Array, ArrayBase, ArrayView, Data, Dimension, IxDyn};
use runic_data::{Buffer, Prim, PrimType, Store, Value};

/// The twelve primitive element types: `i8`…`i64`, `u8`…`u64`, `f16` (from the `half`
/// crate), `f32`, `f64` and `bool`.
pub trait Element: Copy + Send + Sync + 'static + private::Sealed {
    /// The runic type of this element.
    const TYPE: PrimType;
    #[doc(hidden)]
    fn into_prim(self) -> Prim;
    #[doc(hidden)]
    fn from_prim(p: Prim) -> Option<Self>;
    #[doc(hidden)]
    fn into_buffer(v: Vec<Self>) -> Buffer;
    /// The buffer of these elements, owned or borrowed from a host ([`Store`]).
    fn store_buffer(s: Store<Self>) -> Buffer;
    #[doc(hidden)]
    fn from_buffer(b: Buffer) -> Result<Vec<Self>, Buffer>;
}

mod private {
    pub trait Sealed {}
}

macro_rules! elements {
    ($($t:ty => $variant:ident, $ty:ident;)*) => {$(
        impl private::Sealed for $t {}
        impl Element for $t {
            const TYPE: PrimType = PrimType::$ty;
            fn into_prim(self) -> Prim {
                Prim::$variant(self)
            }
            fn from_prim(p: Prim) -> Option<Self> {
                match p {
                    Prim::$variant(x) => Some(x),
                    _ => None,
                }
            }
            fn into_buffer(v: Vec<Self>) -> Buffer {
                Buffer::$variant(v.into())
            }
            fn store_buffer(s: Store<Self>) -> Buffer {
                Buffer::$variant(s)
            }
            fn from_buffer(b: Buffer) -> Result<Vec<Self>, Buffer> {
                match b {
                    Buffer::$variant(v) => Ok(v.into_vec()),
                    other => Err(other),
                }
            }
        }
        impl IntoValue for $t {
            fn into_value(self) -> Value {
                Value::Scalar(self.into_prim())
            }
        }
        impl FromValue for $t {
            fn from_value(v: Value) -> Result<Self, String> {
                match v {
                    Value::Scalar(p) => <$t>::from_prim(p).ok_or_else(|| expected(&v, stringify!($t))),
                    _ => Err(expected(&v, stringify!($t))),
                }
            }
        }
    )*};
}

elements! {
    i8 => I8, I8;
    i16 => I16, I16;
    i32 => I32, I32;
    i64 => I64, I64;
    u8 => U8, U8;
    u16 => U16, U16;
    u32 => U32, U32;
    u64 => U64, U64;
    f16 => F16, F16;
    f32 => F32, F32;
    f64 => F64, F64;
    bool => Bool, Bool;
}

fn expected(v: &Value, want: &str) -> String {
    format!("expected {want}, got {}", crate::sig::describe(v))
}

/// A host value that can be passed to an entry point.
pub trait IntoValue {
    fn into_value(self) -> Value;
}

/// A host value that a result can be turned into. The error says what was expected and
/// what the result is.
pub trait FromValue: Sized {
    fn from_value(v: Value) -> Result<Self, String>;
}

impl IntoValue for Value {
    fn into_value(self) -> Value {
        self
    }
}

impl FromValue for Value {
    fn from_value(v: Value) -> Result<Self, String> {
        Ok(v)
    }
}

/// An owned array: moved when it is in standard layout, copied otherwise. A 0-dimensional
/// array is a scalar.
impl<T: Element, D: Dimension> IntoValue for Array<T, D> {
    fn into_value(self) -> Value {
        let shape = self.shape().to_vec();
        let data = if self.is_standard_layout() {
            let (mut v, offset) = self.into_raw_vec_and_offset();
            // A standard-layout array may still start past the beginning of its storage
            // (after slicing in place); its elements are the `len` after `offset`.
            let start = offset.unwrap_or(0);
            v.drain(..start);
            v.truncate(shape.iter().product());
            v
        } else {
            self.iter().copied().collect()
        };
        array_value(shape, data)
    }
}

/// A view (or a reference to an array): copied once, in row-major order.
impl<T: Element, D: Dimension> IntoValue for ArrayView<'_, T, D> {
    fn into_value(self) -> Value {
        let shape = self.shape().to_vec();
        let data = match self.as_slice() {
            Some(s) => s.to_vec(),
            None => self.iter().copied().collect(),
        };
        array_value(shape, data)
    }
}

impl<T: Element, S: Data<Elem = T>, D: Dimension> IntoValue for &ArrayBase<S, D> {
    fn into_value(self) -> Value {
        self.view().into_value()
    }
}

/// A slice is a one-dimensional array.
impl<T: Element> IntoValue for &[T] {
    fn into_value(self) -> Value {
        array_value(vec![self.len()], self.to_vec())
    }
}

impl<T: Element> IntoValue for Vec<T> {
    fn into_value(self) -> Value {
        array_value(vec![self.len()], self)
    }
}

fn array_value<T: Element>(shape: Vec<usize>, data: Vec<T>) -> Value {
    if shape.is_empty() {
        return Value::Scalar(data[0].into_prim());
    }
    Value::Array(runic_data::Array {
        shape,
        data: T::into_buffer(data),
    })
}

/// An array result of any rank ([`ndarray::ArrayD`]) or of a fixed rank (`Array2<f32>`, …).
/// A scalar result is a 0-dimensional array.
impl<T: Element, D: Dimension> FromValue for Array<T, D> {
    fn from_value(v: Value) -> Result<Self, String> {
        let want = || format!("an array of {}", T::TYPE);
        let (shape, data) = match v {
            Value::Array(a) => match T::from_buffer(a.data) {
                Ok(data) => (a.shape, data),
                Err(data) => {
                    let got = Value::Array(runic_data::Array {
                        shape: a.shape,
                        data,
                    });
                    return Err(expected(&got, &want()));
                }
            },
            Value::Scalar(p) => match T::from_prim(p) {
                Some(x) => (Vec::new(), vec![x]),
                None => return Err(expected(&v, &want())),
            },
            other => return Err(expected(&other, &want())),
        };
        let rank = shape.len();
        let dynamic = Array::from_shape_vec(IxDyn(&shape), data)
            .map_err(|e| format!("internal error: a result array of invalid shape: {e}"))?;
        dynamic.into_dimensionality::<D>().map_err(|_| {
            let want_rank = D::NDIM.map_or("any".to_string(), |n| n.to_string());
            format!("expected an array of rank {want_rank}, got one of rank {rank}")
        })
    }
}

macro_rules! tuples {
    ($(($($name:ident $idx:tt),+))*) => {$(
        /// A tuple value.
        impl<$($name: IntoValue),+> IntoValue for ($($name,)+) {
            fn into_value(self) -> Value {
                Value::Tuple(vec![$(self.$idx.into_value()),+])
            }
        }
        /// A tuple result, component by component.
        impl<$($name: FromValue),+> FromValue for ($($name,)+) {
            fn from_value(v: Value) -> Result<Self, String> {
                let n = [$($idx),+].len();
                match v {
                    Value::Tuple(items) if items.len() == n => {
                        let mut it = items.into_iter();
                        Ok(($($name::from_value(it.next().expect("length checked"))
                            .map_err(|e| format!("component {}: {e}", $idx + 1))?,)+))
                    }
                    other => Err(expected(&other, &format!("a tuple of {n} components"))),
                }
            }
        }
        /// The arguments of a call, one per component.
        impl<$($name: IntoValue),+> IntoArgs for ($($name,)+) {
            fn into_args(self) -> Vec<Value> {
                vec![$(self.$idx.into_value()),+]
            }
        }
    )*};
}

/// A record value, for a parameter or result of record type: fields by name, in any order.
///
/// ```
/// use ndarray::array;
/// let r = runic::Record::new().field("w", array![1.0f32, 2.0]).field("b", 0.5f32);
/// let mut r2 = r.clone();
/// let b: f32 = r2.take("b")?;
/// assert_eq!(b, 0.5);
/// assert!(r2.take::<f32>("b").is_err()); // taken already
/// # Ok::<(), runic::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Record {
    fields: Vec<(String, Value)>,
}

impl Record {
    pub fn new() -> Record {
        Record::default()
    }

    /// The record with field `name` set to `value` (replacing an earlier value).
    pub fn field(mut self, name: &str, value: impl IntoValue) -> Record {
        let value = value.into_value();
        match self.fields.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = value,
            None => self.fields.push((name.to_string(), value)),
        }
        self
    }

    /// The names of the fields still here.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|(n, _)| n.as_str())
    }

    /// Field `name` as a `T`, moved out (arrays are not copied).
    pub fn take<T: FromValue>(&mut self, name: &str) -> Result<T, crate::Error> {
        let Some(k) = self.fields.iter().position(|(n, _)| n == name) else {
            let have: Vec<&str> = self.names().collect();
            return Err(crate::Error::Field {
                name: name.to_string(),
                message: format!("there is no such field (fields: {})", have.join(", ")),
            });
        };
        let (_, v) = self.fields.remove(k);
        T::from_value(v).map_err(|message| crate::Error::Field {
            name: name.to_string(),
            message,
        })
    }
}

impl IntoValue for Record {
    fn into_value(self) -> Value {
        Value::Record(self.fields)
    }
}

impl FromValue for Record {
    fn from_value(v: Value) -> Result<Self, String> {
        match v {
            Value::Record(fields) => Ok(Record { fields }),
            other => Err(expected(&other, "a record")),
        }
    }
}

/// The arguments of a call: a tuple of [`IntoValue`]s (`(x.view(), 3.0f32)`), `()` for
/// none, or values already built (`Vec<Value>`, `&[Value]`, `[Value; N]`).
pub trait IntoArgs {
    fn into_args(self) -> Vec<Value>;
}

impl IntoArgs for () {
    fn into_args(self) -> Vec<Value> {
        Vec::new()
    }
}

impl IntoArgs for Vec<Value> {
    fn into_args(self) -> Vec<Value> {
        self
    }
}

impl IntoArgs for &[Value] {
    fn into_args(self) -> Vec<Value> {
        self.to_vec()
    }
}

impl<const N: usize> IntoArgs for [Value; N] {
    fn into_args(self) -> Vec<Value> {
        self.into()
    }
}

tuples! {
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
}
