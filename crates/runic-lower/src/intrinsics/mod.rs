//! Intrinsics and numeric-module members: arities, dispatch to one submodule per family.

use crate::lower::{unsupported, Lower, R};
use crate::val::{Builtin, Val};
use runic_ir::*;
use runic_syntax::Span;

mod ad;
mod array;
mod filter;
mod flatmap;
mod scalar;
mod soac;

/// The arity of an unqualified intrinsic (operators included).
pub fn arity(name: &str) -> Option<usize> {
    if BinOp::from_symbol(name).is_some() {
        return Some(2);
    }
    runic_types::intrinsics::arity(name)
}

fn unop_of(name: &str) -> Option<UnOp> {
    UnOp::from_member_name(name)
}

fn member_binop(name: &str) -> Option<BinOp> {
    BinOp::from_member_name(name)
}

pub fn member_arity(t: PrimType, name: &str) -> Option<usize> {
    if PrimType::from_name(name).is_some() || name == "to_i64" || name == "to_f64" {
        return Some(1);
    }
    if t == PrimType::Bool {
        return None;
    }
    if member_binop(name).is_some() {
        return Some(2);
    }
    if unop_of(name).is_some() {
        return Some(1);
    }
    match name {
        "get_bit" | "from_fraction" => Some(2),
        "set_bit" | "mad_hi" | "lerp" | "mad" | "fma" => Some(3),
        "sum" | "product" | "maximum" | "minimum" => Some(1),
        _ => None,
    }
}

pub fn member_const(t: PrimType, name: &str) -> Option<Prim> {
    if t == PrimType::Bool {
        return None;
    }
    Some(match name {
        "highest" => Prim::highest(t),
        "lowest" => Prim::lowest(t),
        "num_bits" => Prim::I32(t.bits() as i32),
        "inf" if t.is_float() => Prim::float(t, f64::INFINITY),
        "nan" if t.is_float() => Prim::float(t, f64::NAN),
        "pi" if t.is_float() => Prim::float(t, std::f64::consts::PI),
        "e" if t.is_float() => Prim::float(t, std::f64::consts::E),
        "epsilon" if t.is_float() => Prim::float(
            t,
            match t {
                PrimType::F16 => 2f64.powi(-10),
                PrimType::F32 => 2f64.powi(-23),
                _ => f64::EPSILON,
            },
        ),
        _ => return None,
    })
}

pub(crate) fn leaf<'a>(s: SubExp, t: Type) -> Val<'a> {
    Val::Leaf(s, t)
}

/// The outer size of an array value.
pub(crate) fn outer<'a>(l: &Lower<'a>, v: &Val<'a>, span: Span) -> R<SubExp> {
    match v.first_leaf() {
        Some((_, Type::Array { shape, .. })) => Ok(shape[0].clone()),
        _ => {
            let _ = l;
            unsupported(
                "an array operation on a value without array leaves",
                Some(span),
            )
        }
    }
}

/// One row of an array value, as a template for lambda parameters.
fn row_template<'a>(v: &Val<'a>) -> Option<Val<'a>> {
    let leaves: Vec<(SubExp, Type)> = v.leaves()?.into_iter().map(|(s, t)| (s, t.row())).collect();
    Some(v.rebuild(&mut leaves.into_iter()))
}

pub(crate) fn arrays<'a>(l: &Lower<'a>, v: &Val<'a>, span: Span) -> R<Vec<VName>> {
    l.leaves(v, span)?
        .iter()
        .map(|(s, _)| l.arr_var(s, span))
        .collect()
}

/// The arrays whose rows are the leaves of a row of `v` (the operands of a SOAC whose
/// lambda takes rows): those of `v` but the witnesses of arrays of empty records.
pub(crate) fn row_arrays<'a>(l: &Lower<'a>, v: &Val<'a>, span: Span) -> R<Vec<VName>> {
    let leaves = v.row_leaves(1).map_or_else(
        || unsupported("a function value inside an array", Some(span)),
        Ok,
    )?;
    leaves.iter().map(|(s, _)| l.arr_var(s, span)).collect()
}

fn size_arg(sizes: &[(String, Option<SubExp>)], k: usize, what: &str, span: Span) -> R<SubExp> {
    match sizes.get(k).and_then(|(_, s)| s.clone()) {
        Some(s) => Ok(s),
        None => unsupported(
            &format!("{what} with a size not known statically"),
            Some(span),
        ),
    }
}

/// Apply an intrinsic to all its arguments.
pub fn call<'a>(
    l: &mut Lower<'a>,
    b: &Builtin,
    args: Vec<Val<'a>>,
    sizes: &[(String, Option<SubExp>)],
    span: Span,
) -> R<Val<'a>> {
    match b {
        Builtin::Member(t, name) => scalar::member(l, *t, name, args, span),
        Builtin::Named(name) => named(l, name, args, sizes, span),
    }
}

/// An unqualified intrinsic: an operator, or one of a family (their names are disjoint).
fn named<'a>(
    l: &mut Lower<'a>,
    name: &str,
    mut args: Vec<Val<'a>>,
    sizes: &[(String, Option<SubExp>)],
    span: Span,
) -> R<Val<'a>> {
    if let Some(op) = BinOp::from_symbol(name) {
        return l.prim_binop(op, &args[0], &args[1], span);
    }
    if let "flatmap" | "flatmap'" = name {
        return flatmap::flatmap(l, &args[0], &args[1], name == "flatmap", span);
    }
    if let Some(v) = soac::call(l, name, &mut args, sizes, span)? {
        return Ok(v);
    }
    if let Some(v) = array::call(l, name, &mut args, sizes, span)? {
        return Ok(v);
    }
    if let Some(v) = filter::call(l, name, &args, span)? {
        return Ok(v);
    }
    if let Some(v) = ad::call(l, name, &args, span)? {
        return Ok(v);
    }
    unsupported(&format!("the intrinsic {name}"), Some(span))
}
