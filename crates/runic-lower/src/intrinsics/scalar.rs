//! Members of the numeric modules (`f32.sqrt`, `i32.get_bit`, `f64.sum`, conversions, …).

use super::*;
use crate::lower::{unsupported, Lower, R};
use crate::val::Val;
use runic_syntax::Span;

pub(super) fn member<'a>(
    l: &mut Lower<'a>,
    t: PrimType,
    name: &str,
    args: Vec<Val<'a>>,
    span: Span,
) -> R<Val<'a>> {
    if let Some(to) = PrimType::from_name(name).map(|_| t).or(match name {
        "to_i64" => Some(PrimType::I64),
        "to_f64" => Some(PrimType::F64),
        _ => None,
    }) {
        let (s, _) = l.prim_leaf(&args[0], span)?;
        let r = l.b().convert_to(to, s)?;
        return l.leaf_of(r);
    }
    match name {
        "sum" => return l.reduce_prim(BinOp::Add, Prim::zero(t), &args[0], span),
        "product" => return l.reduce_prim(BinOp::Mul, Prim::one(t), &args[0], span),
        "maximum" => return l.reduce_prim(BinOp::Max, lowest(t), &args[0], span),
        "minimum" => return l.reduce_prim(BinOp::Min, highest(t), &args[0], span),
        _ => {}
    }
    let ps: Vec<(SubExp, PrimType)> = args
        .iter()
        .map(|a| l.prim_leaf(a, span))
        .collect::<R<_>>()?;
    if let Some(op) = unop_of(name) {
        let r = l.b().op1(op, ps[0].0.clone())?;
        return l.leaf_of(r);
    }
    if name == "get_bit" {
        let op = BasicOp::BinOp(BinOp::GetBit, ps[0].0.clone(), ps[1].0.clone());
        let r = l.b().let_basic("bit", op)?;
        return l.leaf_of(r);
    }
    if name == "from_fraction" {
        // `n / d` in the module's float type, each `i64` rounded through `f64` first, as
        // the interpreter does (dividing two values of type `t` rounds like dividing them
        // in f64 and rounding once, since f64 has more than twice their precision).
        let mut b = l.b();
        let to_t = |b: &mut Builder, x: &SubExp| {
            let wide = b.convert(PrimType::F64, x.clone());
            b.convert(t, wide)
        };
        let (n, d) = (to_t(&mut b, &ps[0].0), to_t(&mut b, &ps[1].0));
        let r = b.op2(BinOp::Div, n, d)?;
        drop(b);
        return l.leaf_of(r);
    }
    if let Some(op) = member_binop(name) {
        return l.prim_binop(op, &args[0], &args[1], span);
    }
    let tern = match name {
        "set_bit" => TernOp::SetBit,
        "mad_hi" => TernOp::MadHi,
        "lerp" => TernOp::Lerp,
        "mad" => TernOp::Mad,
        "fma" => TernOp::Fma,
        _ => return unsupported(&format!("{t}.{name}"), Some(span)),
    };
    let op = BasicOp::TernOp(tern, ps[0].0.clone(), ps[1].0.clone(), ps[2].0.clone());
    let r = l.b().let_basic("t", op)?;
    l.leaf_of(r)
}

fn lowest(t: PrimType) -> Prim {
    if t.is_float() {
        Prim::float(t, f64::NEG_INFINITY)
    } else {
        Prim::lowest(t)
    }
}

fn highest(t: PrimType) -> Prim {
    if t.is_float() {
        Prim::float(t, f64::INFINITY)
    } else {
        Prim::highest(t)
    }
}
