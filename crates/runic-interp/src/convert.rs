//! Conversion between interpreter values and `runic_data` values at the program boundary.

use crate::value::{Array, Data, Value};
use runic_data::Buffer;
use runic_types::{Size, Type};
use std::collections::HashMap;
use std::rc::Rc;

/// An input data value as an interpreter value; `ty`, the parameter's type, names the
/// fields of records (interpreter records borrow their field names from the program).
pub fn from_data<'a>(v: runic_data::Value, ty: Option<&'a Type>) -> Value<'a> {
    match v {
        runic_data::Value::Scalar(s) => Value::Prim(s),
        runic_data::Value::Array(a) => {
            Value::Array(Rc::new(Array::new(a.shape, Data::Flat(a.data))))
        }
        runic_data::Value::Tuple(vs) => {
            let types = ty.and_then(Type::as_tuple);
            let items = vs
                .into_iter()
                .enumerate()
                .map(|(k, v)| from_data(v, types.as_ref().and_then(|ts| ts.get(k).copied())))
                .collect();
            Value::Tuple(Rc::new(items))
        }
        runic_data::Value::Record(mut given) => match ty {
            // In the type's field order; the host's checks made sure every field is given.
            Some(Type::Record(fields)) => Value::Record(Rc::new(
                fields
                    .iter()
                    .filter_map(|(name, t)| {
                        let k = given.iter().position(|(n, _)| n == name)?;
                        Some((name.as_str(), from_data(given.swap_remove(k).1, Some(t))))
                    })
                    .collect(),
            )),
            _ => Value::unit(),
        },
        _ => Value::unit(),
    }
}

/// Size bindings known at the boundary (entry-point size parameters), for empty arrays.
pub type SizeEnv = HashMap<String, i64>;

/// An interpreter value as a data value; `ty` (the static type, when known) fixes the
/// element type and inner shape of empty arrays.
pub fn to_data(v: &Value, ty: Option<&Type>, sizes: &SizeEnv) -> runic_data::Value {
    match v {
        Value::Prim(p) => runic_data::Value::Scalar(*p),
        Value::Active(_) => match v.as_prim() {
            Some(p) => runic_data::Value::Scalar(p),
            None => runic_data::Value::Tuple(Vec::new()),
        },
        Value::Array(a) => array_to_data(a, ty, sizes),
        Value::Tuple(items) => {
            let tys: Option<Vec<&Type>> = match ty {
                Some(Type::Record(fs)) if fs.len() == items.len() => {
                    Some(fs.iter().map(|(_, t)| t).collect())
                }
                _ => None,
            };
            runic_data::Value::Tuple(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, x)| to_data(x, tys.as_ref().map(|t| t[i]), sizes))
                    .collect(),
            )
        }
        Value::Record(fields) => runic_data::Value::Record(
            fields
                .iter()
                .map(|(n, x)| {
                    let ft = match ty {
                        Some(Type::Record(fs)) => fs.iter().find(|(m, _)| m == n).map(|(_, t)| t),
                        _ => None,
                    };
                    (n.to_string(), to_data(x, ft, sizes))
                })
                .collect(),
        ),
        Value::Sum(s) => {
            let payload_tys: Option<&Vec<Type>> = match ty {
                Some(Type::Sum(cs)) => cs.iter().find(|(c, _)| c == s.0).map(|(_, ts)| ts),
                _ => None,
            };
            runic_data::Value::Sum(
                s.0.to_string(),
                s.1.iter()
                    .enumerate()
                    .map(|(i, x)| to_data(x, payload_tys.and_then(|t| t.get(i)), sizes))
                    .collect(),
            )
        }
        Value::Fun(_) => runic_data::Value::Opaque("#<fun>".into()),
    }
}

fn array_to_data(a: &Array, ty: Option<&Type>, sizes: &SizeEnv) -> runic_data::Value {
    let (elem_ty, dims) = match ty {
        Some(Type::Array { elem, shape }) => (Some(&**elem), Some(shape)),
        _ => (None, None),
    };
    match &a.data {
        Data::Flat(b) => runic_data::Value::Array(runic_data::Array {
            shape: a.shape.clone(),
            data: b.clone(),
        }),
        Data::Boxed(items) if items.is_empty() => {
            let mut shape = a.shape.clone();
            if let Some(dims) = dims {
                for (k, s) in dims.iter().enumerate().skip(shape.len()) {
                    let _ = k;
                    shape.push(match s {
                        Size::Const(c) => (*c).max(0) as usize,
                        Size::Var(n) => sizes.get(n).copied().unwrap_or(0).max(0) as usize,
                        _ => 0,
                    });
                }
            }
            match elem_ty {
                Some(Type::Prim(p)) => runic_data::Value::Array(runic_data::Array {
                    shape,
                    data: Buffer::new(*p),
                }),
                _ => runic_data::Value::Opaque(format!(
                    "empty({}t)",
                    crate::value::shape_string(&shape)
                )),
            }
        }
        Data::Boxed(items) => {
            // Arrays of non-primitives are opaque at the boundary; show them row by row.
            let _ = items;
            let rows: Vec<String> = a.rows().map(|r| show(&r)).collect();
            runic_data::Value::Opaque(format!("[{}]", rows.join(", ")))
        }
    }
}

/// A value in REPL-like notation (for `trace` and opaque results).
pub fn show(v: &Value) -> String {
    runic_data::print_value_repl(&to_data(v, None, &SizeEnv::new()))
}
