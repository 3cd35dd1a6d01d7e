//! Semantic types, as computed by the type checker and consumed by the interpreter and the
//! lowering.

use runic_syntax::ast::{Exp, Name, PrimType};
use std::fmt;

/// The size of one array dimension, as a term in the scope where the type occurs.
#[derive(Clone, Debug, PartialEq)]
pub enum Size {
    /// An `i64` name in scope: a size parameter, a parameter, a `let`-bound variable or a
    /// top-level constant.
    Var(Name),
    /// A literal size.
    Const(i64),
    /// Any other `i64` expression without binding constructs (`n+1`, `n*m`, `length xs`).
    Exp(Box<Exp>),
    /// A rigid unknown: a size that exists at run time but has no source-level name
    /// (results of `filter`, branches of different sizes, ...). Numbered per definition.
    Unknown(u32),
}

/// A fully resolved type. Tuples are records whose fields are `"0"`, `"1"`, ...; the unit
/// type is the empty record.
#[derive(Clone, Debug, PartialEq)]
pub enum Type {
    Prim(PrimType),
    /// An array of rank `shape.len() >= 1` whose element type `elem` is not itself an array.
    Array {
        elem: Box<Type>,
        shape: Vec<Size>,
    },
    /// Fields in canonical order (see [`canonical_field_order`]).
    Record(Vec<(Name, Type)>),
    /// Constructors sorted by name, each with its payload types.
    Sum(Vec<(Name, Vec<Type>)>),
    /// `t1 -> t2`, or `(x: t1) -> t2` when the parameter is named.
    Arrow {
        param_name: Option<Name>,
        param: Box<Type>,
        ret: Box<Type>,
    },
    /// A type parameter of the enclosing polymorphic definition (explicit, or generalised).
    Param(Name),
}

/// Numeric field names first, by value; then other names alphabetically.
pub fn canonical_field_order(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.parse::<u64>(), b.parse::<u64>()) {
        (Ok(x), Ok(y)) => x.cmp(&y),
        (Ok(_), Err(_)) => std::cmp::Ordering::Less,
        (Err(_), Ok(_)) => std::cmp::Ordering::Greater,
        (Err(_), Err(_)) => a.cmp(b),
    }
}

impl Type {
    pub fn unit() -> Type {
        Type::Record(Vec::new())
    }
    pub fn tuple(items: Vec<Type>) -> Type {
        Type::Record(
            items
                .into_iter()
                .enumerate()
                .map(|(i, t)| (i.to_string(), t))
                .collect(),
        )
    }
    /// The components if this is a tuple type (a record with fields 0..n-1, n >= 2).
    pub fn as_tuple(&self) -> Option<Vec<&Type>> {
        match self {
            Type::Record(fs)
                if fs.len() >= 2
                    && fs.iter().enumerate().all(|(i, (n, _))| *n == i.to_string()) =>
            {
                Some(fs.iter().map(|(_, t)| t).collect())
            }
            _ => None,
        }
    }
    /// Wrap in `dims` more outer dimensions.
    pub fn array_of(self, mut dims: Vec<Size>) -> Type {
        match self {
            Type::Array { elem, shape } => {
                dims.extend(shape);
                Type::Array { elem, shape: dims }
            }
            t if dims.is_empty() => t,
            t => Type::Array {
                elem: Box::new(t),
                shape: dims,
            },
        }
    }
    pub fn rank(&self) -> usize {
        match self {
            Type::Array { shape, .. } => shape.len(),
            _ => 0,
        }
    }
    /// The element type after removing all array dimensions.
    pub fn scalar(&self) -> &Type {
        match self {
            Type::Array { elem, .. } => elem,
            t => t,
        }
    }
    /// True for a function type, or a record/sum containing one.
    pub fn is_functional(&self) -> bool {
        match self {
            Type::Arrow { .. } => true,
            Type::Array { elem, .. } => elem.is_functional(),
            Type::Record(fs) => fs.iter().any(|(_, t)| t.is_functional()),
            Type::Sum(cs) => cs.iter().any(|(_, ts)| ts.iter().any(Type::is_functional)),
            Type::Prim(_) | Type::Param(_) => false,
        }
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Size::Var(n) => write!(f, "{n}"),
            Size::Const(k) => write!(f, "{k}"),
            Size::Exp(_) => write!(f, "?"),
            Size::Unknown(k) => write!(f, "?{k}"),
        }
    }
}

/// Types print in source notation: `[n][3]f32`, `(i32, f64)`, `{x: f32}`, `a -> b`.
impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Prim(p) => write!(f, "{p}"),
            Type::Array { elem, shape } => {
                for s in shape {
                    match s {
                        Size::Unknown(_) => write!(f, "[]")?,
                        s => write!(f, "[{s}]")?,
                    }
                }
                match **elem {
                    Type::Arrow { .. } => write!(f, "({elem})"),
                    _ => write!(f, "{elem}"),
                }
            }
            Type::Record(fs) => {
                if let Some(ts) = self.as_tuple() {
                    write!(f, "(")?;
                    for (i, t) in ts.iter().enumerate() {
                        if i > 0 {
                            write!(f, ", ")?;
                        }
                        write!(f, "{t}")?;
                    }
                    write!(f, ")")
                } else if fs.is_empty() {
                    write!(f, "()")
                } else {
                    write!(f, "{{")?;
                    for (i, (n, t)) in fs.iter().enumerate() {
                        if i > 0 {
                            write!(f, ", ")?;
                        }
                        write!(f, "{n}: {t}")?;
                    }
                    write!(f, "}}")
                }
            }
            Type::Sum(cs) => {
                for (i, (c, ts)) in cs.iter().enumerate() {
                    if i > 0 {
                        write!(f, " | ")?;
                    }
                    write!(f, "#{c}")?;
                    for t in ts {
                        match t {
                            Type::Prim(_) | Type::Param(_) | Type::Record(_) => write!(f, " {t}")?,
                            _ => write!(f, " ({t})")?,
                        }
                    }
                }
                Ok(())
            }
            Type::Arrow {
                param_name,
                param,
                ret,
            } => {
                match (param_name, &**param) {
                    (Some(n), p) => write!(f, "({n}: {p})")?,
                    (None, p @ (Type::Arrow { .. } | Type::Sum(_))) => write!(f, "({p})")?,
                    (None, p) => write!(f, "{p}")?,
                }
                write!(f, " -> {ret}")
            }
            Type::Param(n) => write!(f, "{n}"),
        }
    }
}
