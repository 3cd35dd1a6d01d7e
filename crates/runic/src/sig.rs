//! Entry-point signatures as the host sees them, and the check of a call's arguments against
//! them (element type, rank, constant sizes, and sizes shared by name between parameters).

use crate::Error;
use runic_data::{PrimType, Value};
use std::collections::HashMap;
use std::fmt;

/// The host-visible type of an entry point's parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamType {
    /// A scalar of a primitive type.
    Scalar(PrimType),
    /// An array of primitives; one [`Dim`] per dimension.
    Array { elem: PrimType, dims: Vec<Dim> },
    /// A tuple of these: passed as a Rust tuple (or a `Value::Tuple`).
    Tuple(Vec<ParamType>),
    /// A record of these, fields in the order the type lists them: passed as a
    /// [`Record`](crate::Record) (or a `Value::Record`), fields in any order.
    Record(Vec<(String, ParamType)>),
    /// Any other type (a sum, a function, an array of tuples): it cannot be passed from the
    /// host.
    Opaque(String),
}

/// One dimension of an array parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum Dim {
    /// A literal size (`[3]f32`).
    Fixed(usize),
    /// A size named in the signature (`[n]f32`): every use of the name must agree.
    Named(String),
    /// A size given by an expression: checked by the program when it runs.
    Any,
}

/// A parameter of an entry point.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// The parameter's name when it is a plain variable in the source.
    pub name: Option<String>,
    pub ty: ParamType,
}

/// The signature of an entry point: its name, parameters, and the types of its results as
/// text (a tuple result is split one level, as the CLI prints it).
#[derive(Clone, Debug, PartialEq)]
pub struct Signature {
    pub name: String,
    pub params: Vec<Param>,
    pub results: Vec<String>,
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Fixed(k) => write!(f, "[{k}]"),
            Dim::Named(n) => write!(f, "[{n}]"),
            Dim::Any => f.write_str("[]"),
        }
    }
}

impl fmt::Display for ParamType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamType::Scalar(p) => write!(f, "{p}"),
            ParamType::Array { elem, dims } => {
                for d in dims {
                    write!(f, "{d}")?;
                }
                write!(f, "{elem}")
            }
            ParamType::Tuple(items) => {
                let items: Vec<String> = items.iter().map(|t| t.to_string()).collect();
                write!(f, "({})", items.join(", "))
            }
            ParamType::Record(fields) => {
                let fields: Vec<String> = fields.iter().map(|(n, t)| format!("{n}: {t}")).collect();
                write!(f, "{{{}}}", fields.join(", "))
            }
            ParamType::Opaque(t) => f.write_str(t),
        }
    }
}

/// A signature from the type checker's entry point.
pub fn of_entry(e: &runic_types::EntryPoint) -> Signature {
    Signature {
        name: e.name.to_string(),
        params: e
            .params
            .iter()
            .map(|p| Param {
                name: p.name.as_ref().map(|n| n.to_string()),
                ty: of_source_type(&p.ty),
            })
            .collect(),
        results: e.results.iter().map(|t| t.to_string()).collect(),
    }
}

fn of_source_type(ty: &runic_types::Type) -> ParamType {
    use runic_types::{Size, Type};
    let prim = |t: &Type| match t {
        Type::Prim(p) => PrimType::from_name(p.name()),
        _ => None,
    };
    let data = match ty {
        Type::Prim(_) => prim(ty).map(ParamType::Scalar),
        Type::Array { elem, shape } => prim(elem).map(|elem| ParamType::Array {
            elem,
            dims: shape
                .iter()
                .map(|s| match s {
                    Size::Const(k) => usize::try_from(*k).map_or(Dim::Any, Dim::Fixed),
                    Size::Var(n) => Dim::Named(n.to_string()),
                    _ => Dim::Any,
                })
                .collect(),
        }),
        Type::Record(fields) if !fields.is_empty() => {
            let parts: Vec<(String, ParamType)> = fields
                .iter()
                .map(|(n, t)| (n.to_string(), of_source_type(t)))
                .collect();
            if parts.iter().any(|(_, t)| matches!(t, ParamType::Opaque(_))) {
                None
            } else if ty.as_tuple().is_some() {
                Some(ParamType::Tuple(
                    parts.into_iter().map(|(_, t)| t).collect(),
                ))
            } else {
                Some(ParamType::Record(parts))
            }
        }
        _ => None,
    };
    data.unwrap_or_else(|| ParamType::Opaque(ty.to_string()))
}

/// A signature from an IR function with entry information (a program given as IR).
pub fn of_ir(f: &runic_ir::FunDef, info: &runic_ir::EntryInfo) -> Signature {
    let mut ir_params = f.params.iter();
    Signature {
        name: info.name.clone(),
        params: info
            .params
            .iter()
            .map(|p| Param {
                name: None,
                ty: of_layout(&p.layout, &mut ir_params),
            })
            .collect(),
        results: info.results.iter().map(|r| r.type_text.clone()).collect(),
    }
}

/// A parameter's host type from its layout over the IR parameters (taken in order).
fn of_layout<'a>(
    layout: &runic_ir::ValueLayout,
    ir_params: &mut impl Iterator<Item = &'a runic_ir::Param>,
) -> ParamType {
    use runic_ir::{SubExp, Type, ValueLayout};
    match layout {
        ValueLayout::Tuple(parts) => {
            ParamType::Tuple(parts.iter().map(|l| of_layout(l, ir_params)).collect())
        }
        ValueLayout::Record(fields) => ParamType::Record(
            fields
                .iter()
                .map(|(n, l)| (n.clone(), of_layout(l, ir_params)))
                .collect(),
        ),
        ValueLayout::Value => match ir_params.next().map(|p| &p.ty) {
            Some(Type::Prim(p)) => ParamType::Scalar(*p),
            Some(Type::Array { elem, shape }) => ParamType::Array {
                elem: *elem,
                dims: shape
                    .iter()
                    .map(|d| match d {
                        SubExp::Const(c) => c
                            .to_i64()
                            .and_then(|k| usize::try_from(k).ok())
                            .map_or(Dim::Any, Dim::Fixed),
                        SubExp::Var(v) => Dim::Named(v.to_string()),
                    })
                    .collect(),
            },
            Some(Type::Acc { .. }) => ParamType::Opaque("accumulator".to_string()),
            None => ParamType::Opaque("a parameter the IR function lacks".to_string()),
        },
    }
}

/// The type of a value as the host gave it, for error messages: `[2][3]f32`, `f64`.
pub fn describe(v: &Value) -> String {
    match v {
        Value::Scalar(p) => p.ty().to_string(),
        Value::Array(a) => {
            let dims: String = a.shape.iter().map(|d| format!("[{d}]")).collect();
            format!("{dims}{}", a.elem_type())
        }
        Value::Tuple(items) => {
            let items: Vec<String> = items.iter().map(describe).collect();
            format!("({})", items.join(", "))
        }
        Value::Record(fields) => {
            let fields: Vec<String> = fields
                .iter()
                .map(|(n, v)| format!("{n}: {}", describe(v)))
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        Value::Sum(c, _) => format!("#{c}"),
        Value::Opaque(t) => t.clone(),
    }
}

/// Check a call's arguments against the signature; the first misfit is the error.
pub fn check_args(sig: &Signature, args: &[Value]) -> Result<(), Error> {
    if args.len() != sig.params.len() {
        return Err(Error::Arity {
            entry: sig.name.clone(),
            expected: sig.params.len(),
            given: args.len(),
        });
    }
    let mut sizes = Sizes::new();
    for (index, (p, v)) in sig.params.iter().zip(args).enumerate() {
        check_value(&p.ty, v, index, &mut sizes).map_err(|message| Error::Argument {
            entry: sig.name.clone(),
            index,
            name: p.name.clone(),
            message,
        })?;
    }
    Ok(())
}

/// Where each named size was first bound: (size, argument index, dimension).
type Sizes<'a> = HashMap<&'a str, (usize, usize, usize)>;

/// Check one value (an argument, or a component or field of one) against its type.
fn check_value<'a>(
    ty: &'a ParamType,
    v: &Value,
    index: usize,
    sizes: &mut Sizes<'a>,
) -> Result<(), String> {
    let mismatch = || format!("expected type {ty}, got {}", describe(v));
    match (ty, v) {
        (ParamType::Scalar(t), Value::Scalar(s)) if s.ty() == *t => Ok(()),
        (ParamType::Array { elem, dims }, Value::Array(a))
            if a.elem_type() == *elem && a.rank() == dims.len() && a.is_valid() =>
        {
            check_dims(ty, dims, v, &a.shape, index, sizes)
        }
        (ParamType::Tuple(items), Value::Tuple(given)) if items.len() == given.len() => {
            for (k, (t, v)) in items.iter().zip(given).enumerate() {
                check_value(t, v, index, sizes)
                    .map_err(|e| format!("component {} of the tuple: {e}", k + 1))?;
            }
            Ok(())
        }
        (ParamType::Record(fields), Value::Record(given)) => {
            if let Some((extra, _)) = given
                .iter()
                .find(|(n, _)| !fields.iter().any(|(f, _)| f == n))
            {
                return Err(format!("{}: the record has no field {extra}", mismatch()));
            }
            for (name, t) in fields {
                let Some((_, v)) = given.iter().find(|(n, _)| n == name) else {
                    return Err(format!("{}: field {name} is missing", mismatch()));
                };
                check_value(t, v, index, sizes).map_err(|e| format!("field {name}: {e}"))?;
            }
            Ok(())
        }
        (ParamType::Opaque(t), _) => Err(format!(
            "parameters of type {t} cannot be given from the host (only scalars, arrays of \
             primitive types, and tuples and records of them)"
        )),
        _ => Err(mismatch()),
    }
}

/// An array's dimensions against its type's: literal sizes must match, and a named size
/// must agree with its first use (in this argument or an earlier one).
fn check_dims<'a>(
    ty: &ParamType,
    dims: &'a [Dim],
    v: &Value,
    shape: &[usize],
    index: usize,
    sizes: &mut Sizes<'a>,
) -> Result<(), String> {
    for (k, (d, &have)) in dims.iter().zip(shape).enumerate() {
        match d {
            Dim::Fixed(want) if *want != have => {
                return Err(format!(
                    "expected type {ty}, got {}: dimension {} is {have}, not {want}",
                    describe(v),
                    k + 1
                ))
            }
            Dim::Named(n) => match sizes.get(n.as_str()) {
                Some(&(want, i, j)) if want != have => {
                    return Err(format!(
                        "expected type {ty}, got {}: dimension {} is {have}, but size {n} is \
                         {want} (dimension {} of argument {})",
                        describe(v),
                        k + 1,
                        j + 1,
                        i + 1
                    ))
                }
                Some(_) => {}
                None => {
                    sizes.insert(n, (have, index, k));
                }
            },
            _ => {}
        }
    }
    Ok(())
}
