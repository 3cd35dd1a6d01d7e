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
    /// Any other type (a tuple, record, sum or function): it cannot be passed from the host.
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
    match ty {
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
        _ => None,
    }
    .unwrap_or_else(|| ParamType::Opaque(ty.to_string()))
}

/// A signature from an IR function with entry information (a program given as IR).
pub fn of_ir(f: &runic_ir::FunDef, info: &runic_ir::EntryInfo) -> Signature {
    use runic_ir::{SubExp, Type};
    let ty = |t: &Type| match t {
        Type::Prim(p) => ParamType::Scalar(*p),
        Type::Array { elem, shape } => ParamType::Array {
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
        Type::Acc { .. } => ParamType::Opaque("accumulator".to_string()),
    };
    Signature {
        name: info.name.clone(),
        params: f
            .params
            .iter()
            .map(|p| Param {
                name: None,
                ty: ty(&p.ty),
            })
            .collect(),
        results: info.results.iter().map(|r| r.type_text.clone()).collect(),
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
    // Where each named size was first bound: (size, argument index, dimension).
    let mut sizes: HashMap<&str, (usize, usize, usize)> = HashMap::new();
    for (index, (p, v)) in sig.params.iter().zip(args).enumerate() {
        let fail = |message: String| Error::Argument {
            entry: sig.name.clone(),
            index,
            name: p.name.clone(),
            message,
        };
        let mismatch = || fail(format!("expected type {}, got {}", p.ty, describe(v)));
        match (&p.ty, v) {
            (ParamType::Scalar(t), Value::Scalar(s)) if s.ty() == *t => {}
            (ParamType::Array { elem, dims }, Value::Array(a))
                if a.elem_type() == *elem && a.rank() == dims.len() && a.is_valid() =>
            {
                for (k, (d, &have)) in dims.iter().zip(&a.shape).enumerate() {
                    match d {
                        Dim::Fixed(want) if *want != have => {
                            return Err(fail(format!(
                                "expected type {}, got {}: dimension {} is {have}, not {want}",
                                p.ty,
                                describe(v),
                                k + 1
                            )))
                        }
                        Dim::Named(n) => match sizes.get(n.as_str()) {
                            Some(&(want, i, j)) if want != have => {
                                return Err(fail(format!(
                                    "expected type {}, got {}: dimension {} is {have}, but \
                                     size {n} is {want} (dimension {} of argument {})",
                                    p.ty,
                                    describe(v),
                                    k + 1,
                                    j + 1,
                                    i + 1
                                )))
                            }
                            Some(_) => {}
                            None => {
                                sizes.insert(n, (have, index, k));
                            }
                        },
                        _ => {}
                    }
                }
            }
            (ParamType::Opaque(t), _) => {
                return Err(fail(format!(
                    "parameters of type {t} cannot be given from the host (only scalars and \
                     arrays of primitive types)"
                )))
            }
            _ => return Err(mismatch()),
        }
    }
    Ok(())
}
