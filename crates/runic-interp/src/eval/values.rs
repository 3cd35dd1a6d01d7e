//! Evaluator-free operations on values: records, projection, operators on (active) scalars.

use super::R;
use crate::error::RuntimeError;
use crate::prim::{self, BinOp, UnOp};
use crate::value::{values_equal, Value};
use runic_syntax::ast::*;
use std::rc::Rc;

/// Build a record value; fields named `0..n-1` make a tuple.
pub fn make_record<'a>(mut vs: Vec<(&'a str, Value<'a>)>) -> Value<'a> {
    vs.sort_by(|a, b| runic_types::ty::canonical_field_order(a.0, b.0));
    let is_tuple = !vs.is_empty()
        && vs
            .iter()
            .enumerate()
            .all(|(i, (n, _))| n.parse::<usize>() == Ok(i));
    if is_tuple || vs.is_empty() {
        Value::Tuple(Rc::new(vs.into_iter().map(|(_, v)| v).collect()))
    } else {
        Value::Record(Rc::new(vs))
    }
}

/// `v.f`
pub fn project<'a>(v: &Value<'a>, f: &str) -> R<Value<'a>> {
    match v {
        Value::Tuple(items) => f
            .parse::<usize>()
            .ok()
            .and_then(|i| items.get(i).cloned())
            .ok_or_else(|| RuntimeError::new(format!("internal error: no field {f}"))),
        Value::Record(items) => items
            .iter()
            .find(|(n, _)| *n == f)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| RuntimeError::new(format!("internal error: no field {f}"))),
        _ => Err(RuntimeError::new(format!(
            "internal error: projection of field {f} from a non-record"
        ))),
    }
}

/// A unary operation on a (possibly active) scalar value.
pub fn unop_value<'a>(op: UnOp, v: &Value<'a>) -> R<Value<'a>> {
    match crate::ad::to_s(v) {
        Some(s) => crate::ad::unop(op, &s).map(crate::ad::from_s),
        None => Err(RuntimeError::new(
            "internal error: unary operation on a non-scalar",
        )),
    }
}

/// Conversion of a (possibly active) scalar value.
pub fn convert_value<'a>(v: &Value<'a>, t: PrimType) -> R<Value<'a>> {
    match crate::ad::to_s(v) {
        Some(s) => crate::ad::convert(&s, t).map(crate::ad::from_s),
        None => Err(RuntimeError::new(
            "internal error: conversion of a non-scalar",
        )),
    }
}

/// A built-in binary operator on two values (structural for `==`/`!=`).
pub fn binop_values<'a>(op: BinOp, a: &Value<'a>, b: &Value<'a>) -> R<Value<'a>> {
    match (a, b) {
        (Value::Prim(x), Value::Prim(y)) => match prim::binop(op, *x, *y) {
            Ok(p) => Ok(Value::Prim(p)),
            Err(er) => Err(RuntimeError::new(er.message())),
        },
        (Value::Prim(_) | Value::Active(_), Value::Prim(_) | Value::Active(_)) => {
            match (crate::ad::to_s(a), crate::ad::to_s(b)) {
                (Some(x), Some(y)) => crate::ad::binop(op, &x, &y).map(crate::ad::from_s),
                _ => Err(RuntimeError::new("internal error: operator on non-scalars")),
            }
        }
        _ => match op {
            BinOp::Eq => Ok(Value::bool(values_equal(a, b))),
            BinOp::Neq => Ok(Value::bool(!values_equal(a, b))),
            _ => Err(RuntimeError::new(
                "internal error: operator on non-primitive values",
            )),
        },
    }
}
