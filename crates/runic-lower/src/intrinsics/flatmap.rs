//! `flatmap f xs` (and `flatmap'`): segments of any length, concatenated.
//!
//! A map cannot return irregular rows, so this takes two passes over `xs`: a map computing
//! each segment's length (and value, for `flatmap`), which also raises any error of `f` in
//! the interpreter's order; then, once the total length is known, a sequential loop that
//! recomputes each segment (`f` is pure) and writes its rows at its offset in place.

use crate::intrinsics::{arrays, outer};
use crate::lower::{unsupported, Lower, R};
use crate::val::Val;
use runic_ir::traverse::binders;
use runic_ir::*;
use runic_syntax::Span;

/// The segment part of `f`'s result.
fn segment<'a>(r: &Val<'a>, with_values: bool) -> Option<Val<'a>> {
    if with_values {
        r.field("0").cloned()
    } else {
        Some(r.clone())
    }
}

pub fn flatmap<'a>(
    l: &mut Lower<'a>,
    f: &Val<'a>,
    xs: &Val<'a>,
    with_values: bool,
    span: Span,
) -> R<Val<'a>> {
    let n = outer(l, xs, span)?;
    // Pass 1: lengths (and values) of the segments.
    let mut seg_template: Option<Val<'a>> = None;
    let fv = f.clone();
    let lens = l.soac_map_with(std::slice::from_ref(xs), span, |l, rows| {
        let r = l.apply_many(fv, rows, span)?;
        let seg = match segment(&r, with_values) {
            Some(s) => s,
            None => return unsupported("flatmap whose function returns no pair", Some(span)),
        };
        let k = outer(l, &seg, span)?;
        seg_template = Some(seg);
        let k = l.leaf_of(k)?;
        Ok(if with_values {
            let c = r.field("1").cloned().unwrap_or(Val::unit());
            Val::Rec(vec![("0".into(), k), ("1".into(), c)])
        } else {
            k
        })
    })?;
    let seg_template = match seg_template {
        Some(s) => s,
        None => return unsupported("flatmap", Some(span)),
    };
    // The segments' row types must not depend on the element: they may not name variables
    // bound in the map's lambda (the statement just added).
    let local = match l.frames.last().and_then(|f| f.last()).map(|s| &s.exp) {
        Some(Exp::Soac(Soac::Map { lam, .. })) => binders(lam),
        _ => return unsupported("flatmap", Some(span)),
    };
    let mut rows: Vec<(PrimType, Vec<SubExp>)> = Vec::new();
    for (_, t) in l.leaves(&seg_template, span)? {
        let (elem, shape) = match t {
            Type::Array { elem, shape } => (elem, shape),
            _ => return unsupported("flatmap segments that are not arrays", Some(span)),
        };
        let inner = shape[1..].to_vec();
        if inner
            .iter()
            .any(|d| d.as_var().is_some_and(|v| local.contains(&v)))
        {
            return unsupported(
                "flatmap segments whose rows' shape depends on the element",
                Some(span),
            );
        }
        rows.push((elem, inner));
    }
    let (sizes, values) = if with_values {
        (
            lens.field("0").cloned().unwrap_or(Val::unit()),
            lens.field("1").cloned(),
        )
    } else {
        (lens, None)
    };
    let sizes_v = arrays(l, &sizes, span)?[0];
    // Offsets: inclusive prefix sums minus the sizes; m is the last inclusive sum.
    let incl = {
        let mut b = l.b();
        let add = b.binop_lam(BinOp::Add, PrimType::I64);
        let scan = Soac::Scan {
            w: n.clone(),
            arrs: vec![sizes_v],
            pre: None,
            lam: add,
            neutral: vec![SubExp::i64(0)],
        };
        b.let_exp("incl", Exp::Soac(scan))?[0]
    };
    let incl_val = l.leaf_of(SubExp::Var(incl))?;
    let offsets = l.soac_map_with(&[incl_val, sizes.clone()], span, |l, v| {
        let (a, _) = l.prim_leaf(&v[0], span)?;
        let (b, _) = l.prim_leaf(&v[1], span)?;
        let d = l.b().sub_i64(a, b);
        l.leaf_of(d)
    })?;
    let offsets_v = arrays(l, &offsets, span)?[0];
    let empty = l.b().op2(BinOp::Eq, n.clone(), SubExp::i64(0))?;
    let nn = n.clone();
    let m = l.if_val(
        empty,
        span,
        |l| l.leaf_of(SubExp::i64(0)),
        |l| {
            let last = l.b().sub_i64(nn, SubExp::i64(1));
            let r = l
                .b()
                .let_basic("m", BasicOp::Index(incl, vec![DimIndex::Fix(last)]))?;
            l.leaf_of(r)
        },
    )?;
    let (m, _) = l.prim_leaf(&m, span)?;
    // Flags: true at the offset of every non-empty segment.
    let heads = l.soac_map_with(&[sizes.clone(), offsets.clone()], span, |l, v| {
        let (k, _) = l.prim_leaf(&v[0], span)?;
        let (o, _) = l.prim_leaf(&v[1], span)?;
        let some = l.b().op2(BinOp::Lt, SubExp::i64(0), k)?;
        l.if_val(some, span, |l| l.leaf_of(o), |l| l.leaf_of(SubExp::i64(-1)))
    })?;
    let heads_v = arrays(l, &heads, span)?[0];
    let flags = {
        let mut b = l.b();
        let all = |n: &SubExp, v| BasicOp::Replicate(vec![n.clone()], SubExp::Const(Prim::Bool(v)));
        let falses = b.let_exp("falses", Exp::Basic(all(&m, false)))?[0];
        let trues = b.let_exp("trues", Exp::Basic(all(&n, true)))?[0];
        let scatter = Soac::Scatter {
            w: n.clone(),
            dests: vec![falses],
            is: vec![heads_v],
            vals: vec![trues],
        };
        b.let1("flags", Exp::Soac(scatter))?
    };
    // Pass 2: write every segment's rows at its offset.
    let mut params = Vec::new();
    for (elem, inner) in &rows {
        let mut shape = vec![m.clone()];
        shape.extend(inner.iter().cloned());
        let init = l.b().let_basic("data", BasicOp::Scratch(*elem, shape))?;
        let ty = l.type_of(&init)?;
        let p = l.b().param("acc", ty);
        params.push((p, init));
    }
    let i = l.names.fresh_typed("i", Type::Prim(PrimType::I64));
    let f = f.clone();
    let xs2 = xs.clone();
    let accs: Vec<Param> = params.iter().map(|(p, _)| p.clone()).collect();
    let (stms, result) = l.nested(|l| {
        let row = l.index_val(&xs2, &[DimIndex::Fix(SubExp::Var(i))], span)?;
        let r = l.apply_many(f, vec![row], span)?;
        let seg = match segment(&r, with_values) {
            Some(s) => s,
            None => return unsupported("flatmap whose function returns no pair", Some(span)),
        };
        let k = outer(l, &seg, span)?;
        let off = BasicOp::Index(offsets_v, vec![DimIndex::Fix(SubExp::Var(i))]);
        let off = l.b().let_basic("off", off)?;
        let seg_leaves = l.leaves(&seg, span)?;
        let j = l.names.fresh_typed("j", Type::Prim(PrimType::I64));
        let mut inner_params = Vec::new();
        for acc in &accs {
            let p = l.b().param("acc", acc.ty.clone());
            inner_params.push((p, SubExp::Var(acc.name)));
        }
        let (istms, ires) = l.nested(|l| {
            let at = l.b().add_i64(off.clone(), SubExp::Var(j));
            let mut out = Vec::new();
            for ((s, _), (p, _)) in seg_leaves.iter().zip(&inner_params) {
                let sv = l.arr_var(s, span)?;
                let x = BasicOp::Index(sv, vec![DimIndex::Fix(SubExp::Var(j))]);
                let x = l.b().let_basic("x", x)?;
                let u = BasicOp::Update(p.name, vec![DimIndex::Fix(at.clone())], x);
                out.push(l.b().let_basic("upd", u)?);
            }
            Ok(out)
        })?;
        let seg_loop = Exp::Loop {
            params: inner_params,
            form: LoopForm::For { i: j, bound: k },
            body: Body {
                stms: istms,
                result: ires,
            },
        };
        let outs = l.b().let_exp("seg", seg_loop)?;
        Ok(outs.into_iter().map(SubExp::Var).collect::<Vec<_>>())
    })?;
    let flat_loop = Exp::Loop {
        params,
        form: LoopForm::For { i, bound: n },
        body: Body { stms, result },
    };
    let data = l.let_val("flat", flat_loop, &seg_template)?;
    let mut out = vec![
        ("0".to_string(), sizes),
        ("1".to_string(), l.leaf_of(flags)?),
        ("2".to_string(), offsets),
        ("3".to_string(), data),
    ];
    if let Some(v) = values {
        out.push(("4".to_string(), v));
    }
    Ok(Val::Rec(out))
}
