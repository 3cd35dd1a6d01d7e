//! `flatmap f xs` (and `flatmap'`): segments of any length, concatenated.
//!
//! A map cannot return irregular rows, so this takes two passes over `xs`: a map computing
//! each segment's length (and value, for `flatmap`), which also raises any error of `f` in
//! the interpreter's order; then, once the total length is known, a sequential loop that
//! recomputes each segment (`f` is pure) and writes its rows at its offset in place.

use crate::intrinsics::{arrays, leaf, outer};
use crate::lower::{unsupported, Lower, R};
use crate::val::Val;
use runic_ir::*;
use runic_syntax::Span;

fn i64_ty() -> Type {
    Type::Prim(PrimType::I64)
}

fn arr_ty(elem: PrimType, shape: Vec<SubExp>) -> Type {
    Type::Array { elem, shape }
}

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
    // Pass 1: lengths (and values) of the segments; the segments' row types must not depend
    // on the element (variables made inside the map are newer than `first_local`).
    let first_local = l.names.len() as u32;
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
        Ok(if with_values {
            let c = r.field("1").cloned().unwrap_or(Val::unit());
            Val::Rec(vec![("0".into(), leaf(k, i64_ty())), ("1".into(), c)])
        } else {
            leaf(k, i64_ty())
        })
    })?;
    let seg_template = match seg_template {
        Some(s) => s,
        None => return unsupported("flatmap", Some(span)),
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
            .any(|d| matches!(d, SubExp::Var(v) if v.0 >= first_local))
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
    let n_ty = arr_ty(PrimType::I64, vec![n.clone()]);
    // Offsets: inclusive prefix sums minus the sizes; m is the last inclusive sum.
    let add = runic_ir::builder::binop_lambda(&mut l.names, BinOp::Add, PrimType::I64);
    for p in &add.params {
        l.var_types.insert(p.name, p.ty.clone());
    }
    let incl = l.emit1(
        "incl",
        Exp::Soac(Soac::Scan {
            w: n.clone(),
            arrs: vec![sizes_v],
            pre: None,
            lam: add,
            neutral: vec![SubExp::i64(0)],
        }),
        n_ty.clone(),
    );
    let incl_v = l.arr_var(&incl, span)?;
    let incl_val = leaf(incl.clone(), n_ty.clone());
    let offsets = l.soac_map_with(&[incl_val, sizes.clone()], span, |l, v| {
        let (a, _) = l.prim_leaf(&v[0], span)?;
        let (b, _) = l.prim_leaf(&v[1], span)?;
        Ok(leaf(l.sub64(a, b), i64_ty()))
    })?;
    let offsets_v = arrays(l, &offsets, span)?[0];
    let empty = l.binop(BinOp::Eq, n.clone(), SubExp::i64(0), PrimType::I64);
    let nn = n.clone();
    let m = l.if_val(
        empty,
        span,
        |_| Ok(leaf(SubExp::i64(0), i64_ty())),
        |l| {
            let last = l.sub64(nn, SubExp::i64(1));
            let r = l.basic(
                "m",
                BasicOp::Index(incl_v, vec![DimIndex::Fix(last)]),
                i64_ty(),
            );
            Ok(leaf(r, i64_ty()))
        },
    )?;
    let (m, _) = l.prim_leaf(&m, span)?;
    // Flags: true at the offset of every non-empty segment.
    let heads = l.soac_map_with(&[sizes.clone(), offsets.clone()], span, |l, v| {
        let (k, _) = l.prim_leaf(&v[0], span)?;
        let (o, _) = l.prim_leaf(&v[1], span)?;
        let some = l.binop(BinOp::Lt, SubExp::i64(0), k, PrimType::I64);
        let r = l.if_val(
            some,
            span,
            |_| Ok(leaf(o, i64_ty())),
            |_| Ok(leaf(SubExp::i64(-1), i64_ty())),
        )?;
        Ok(r)
    })?;
    let heads_v = arrays(l, &heads, span)?[0];
    let bool_m = arr_ty(PrimType::Bool, vec![m.clone()]);
    let falses = l.basic(
        "falses",
        BasicOp::Replicate(vec![m.clone()], SubExp::Const(Prim::Bool(false))),
        bool_m.clone(),
    );
    let trues = l.basic(
        "trues",
        BasicOp::Replicate(vec![n.clone()], SubExp::Const(Prim::Bool(true))),
        arr_ty(PrimType::Bool, vec![n.clone()]),
    );
    let flags = l.emit1(
        "flags",
        Exp::Soac(Soac::Scatter {
            w: n.clone(),
            dests: vec![l.arr_var(&falses, span)?],
            is: vec![heads_v],
            vals: vec![l.arr_var(&trues, span)?],
        }),
        bool_m,
    );
    // Pass 2: write every segment's rows at its offset.
    let mut params = Vec::new();
    let mut data_types = Vec::new();
    for (elem, inner) in &rows {
        let mut shape = vec![m.clone()];
        shape.extend(inner.iter().cloned());
        let ty = arr_ty(*elem, shape.clone());
        let init = l.basic("data", BasicOp::Scratch(*elem, shape), ty.clone());
        let p = Param {
            name: l.names.fresh("acc"),
            ty: ty.clone(),
        };
        l.var_types.insert(p.name, ty.clone());
        params.push((p, init));
        data_types.push(ty);
    }
    let i = l.names.fresh("i");
    l.var_types.insert(i, i64_ty());
    let f = f.clone();
    let xs2 = xs.clone();
    let accs: Vec<VName> = params.iter().map(|(p, _)| p.name).collect();
    let types2 = data_types.clone();
    let (stms, result) = l.nested(|l| {
        let row = l.index_val(&xs2, &[DimIndex::Fix(SubExp::Var(i))], span)?;
        let r = l.apply_many(f, vec![row], span)?;
        let seg = match segment(&r, with_values) {
            Some(s) => s,
            None => return unsupported("flatmap whose function returns no pair", Some(span)),
        };
        let k = outer(l, &seg, span)?;
        let off = l.basic(
            "off",
            BasicOp::Index(offsets_v, vec![DimIndex::Fix(SubExp::Var(i))]),
            i64_ty(),
        );
        let seg_leaves = l.leaves(&seg, span)?;
        let j = l.names.fresh("j");
        l.var_types.insert(j, i64_ty());
        let mut inner_params = Vec::new();
        for (acc, ty) in accs.iter().zip(&types2) {
            let p = Param {
                name: l.names.fresh("acc"),
                ty: ty.clone(),
            };
            l.var_types.insert(p.name, ty.clone());
            inner_params.push((p, SubExp::Var(*acc)));
        }
        let (istms, ires) = l.nested(|l| {
            let at = l.binop(BinOp::Add, off.clone(), SubExp::Var(j), PrimType::I64);
            let mut out = Vec::new();
            for ((s, t), (p, _)) in seg_leaves.iter().zip(&inner_params) {
                let sv = l.arr_var(s, span)?;
                let rt = t.row();
                let x = l.basic(
                    "x",
                    BasicOp::Index(sv, vec![DimIndex::Fix(SubExp::Var(j))]),
                    rt,
                );
                let u = l.basic(
                    "upd",
                    BasicOp::Update(p.name, vec![DimIndex::Fix(at.clone())], x),
                    p.ty.clone(),
                );
                out.push(u);
            }
            Ok(out)
        })?;
        let outs = l.emit(
            &["seg"],
            Exp::Loop {
                params: inner_params,
                form: LoopForm::For { i: j, bound: k },
                body: Body {
                    stms: istms,
                    result: ires,
                },
            },
            types2.clone(),
        );
        Ok(outs.into_iter().map(SubExp::Var).collect::<Vec<_>>())
    })?;
    let datas = l.emit(
        &["flat"],
        Exp::Loop {
            params,
            form: LoopForm::For { i, bound: n },
            body: Body { stms, result },
        },
        data_types.clone(),
    );
    let mut data_leaves = datas.into_iter().map(SubExp::Var).zip(data_types);
    let data = seg_template.rebuild(&mut data_leaves);
    let mut out = vec![
        ("0".to_string(), sizes),
        (
            "1".to_string(),
            leaf(flags, arr_ty(PrimType::Bool, vec![m])),
        ),
        ("2".to_string(), offsets),
        ("3".to_string(), data),
    ];
    if let Some(v) = values {
        out.push(("4".to_string(), v));
    }
    Ok(Val::Rec(out))
}
