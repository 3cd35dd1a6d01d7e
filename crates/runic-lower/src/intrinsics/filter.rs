//! `filter` and `partition`: flags, prefix sums of them for positions, and a scatter.

use super::*;
use crate::lower::{unsupported, Lower, R};
use crate::val::Val;
use runic_syntax::Span;

/// The filtering intrinsics; `None` if `name` is not one of them.
pub(super) fn call<'a>(
    l: &mut Lower<'a>,
    name: &str,
    args: &[Val<'a>],
    span: Span,
) -> R<Option<Val<'a>>> {
    let v = match name {
        "filter" => filter(l, &args[0], &args[1], span),
        "partition" => {
            let flags = l.soac_map(&args[0], &args[1..2], span)?;
            let no = not_flags(l, &flags, span)?;
            let yes_part = filter_by(l, &flags, &args[1], span)?;
            let no_part = filter_by(l, &no, &args[1], span)?;
            Ok(Val::Rec(vec![
                ("0".into(), yes_part),
                ("1".into(), no_part),
            ]))
        }
        "partition2" => {
            let k1 = l.soac_map(&args[0], &args[2..3], span)?;
            let k2 = l.soac_map(&args[1], &args[2..3], span)?;
            let n1 = not_flags(l, &k1, span)?;
            let n2 = not_flags(l, &k2, span)?;
            let second = and_flags(l, &n1, &k2, span)?;
            let third = and_flags(l, &n1, &n2, span)?;
            let a = filter_by(l, &k1, &args[2], span)?;
            let b = filter_by(l, &second, &args[2], span)?;
            let c = filter_by(l, &third, &args[2], span)?;
            Ok(Val::Rec(vec![
                ("0".into(), a),
                ("1".into(), b),
                ("2".into(), c),
            ]))
        }
        _ => return Ok(None),
    }?;
    Ok(Some(v))
}

fn not_flags<'a>(l: &mut Lower<'a>, flags: &Val<'a>, span: Span) -> R<Val<'a>> {
    l.soac_map_with(std::slice::from_ref(flags), span, |l, fv| {
        let (f, _) = l.prim_leaf(&fv[0], span)?;
        let r = l.unop(UnOp::Not, f, PrimType::Bool);
        Ok(leaf(r, Type::Prim(PrimType::Bool)))
    })
}

fn and_flags<'a>(l: &mut Lower<'a>, a: &Val<'a>, b: &Val<'a>, span: Span) -> R<Val<'a>> {
    l.soac_map_with(&[a.clone(), b.clone()], span, |l, fv| {
        let (x, _) = l.prim_leaf(&fv[0], span)?;
        let (y, _) = l.prim_leaf(&fv[1], span)?;
        let r = l.binop(BinOp::LogAnd, x, y, PrimType::Bool);
        Ok(leaf(r, Type::Prim(PrimType::Bool)))
    })
}

/// `filter p xs`: flags, an exclusive prefix sum of them for target positions, and a
/// scatter into an array of the counted size.
fn filter<'a>(l: &mut Lower<'a>, p: &Val<'a>, xs: &Val<'a>, span: Span) -> R<Val<'a>> {
    let flags = l.soac_map(p, std::slice::from_ref(xs), span)?;
    filter_by(l, &flags, xs, span)
}

/// The rows of `xs` whose flag (an array of bools) is set, in order.
fn filter_by<'a>(l: &mut Lower<'a>, flags: &Val<'a>, xs: &Val<'a>, span: Span) -> R<Val<'a>> {
    let n = outer(l, xs, span)?;
    let fv = l.arr_var(
        &flags.first_leaf().map(|x| x.0).unwrap_or(SubExp::i64(0)),
        span,
    )?;
    // ones = map i64.bool flags; offs = scan (+) 0 ones
    let bp = Param {
        name: l.names.fresh("f"),
        ty: Type::Prim(PrimType::Bool),
    };
    l.var_types.insert(bp.name, bp.ty.clone());
    let (stms, one) = l.nested(|l| Ok(l.convert(PrimType::I64, SubExp::Var(bp.name))))?;
    let ones_lam = Lambda {
        id: runic_ir::LamId::fresh(),
        params: vec![bp],
        body: Body {
            stms,
            result: vec![one],
        },
        ret: vec![Type::Prim(PrimType::I64)],
    };
    let arr_i64 = Type::Array {
        elem: PrimType::I64,
        shape: vec![n.clone()],
    };
    let add = runic_ir::builder::binop_lambda(&mut l.names, BinOp::Add, PrimType::I64);
    let offs = l.emit1(
        "offs",
        Exp::Soac(Soac::Scan {
            w: n.clone(),
            arrs: vec![fv],
            pre: Some(ones_lam),
            lam: add,
            neutral: vec![SubExp::i64(0)],
        }),
        arr_i64.clone(),
    );
    let offv = l.arr_var(&offs, span)?;
    // count = if n == 0 then 0 else offs[n-1]
    let c0 = l.binop(BinOp::Eq, n.clone(), SubExp::i64(0), PrimType::I64);
    let nn = n.clone();
    let cnt = l.if_val(
        c0,
        span,
        |_| Ok(leaf(SubExp::i64(0), Type::Prim(PrimType::I64))),
        |l| {
            let j = l.sub64(nn, SubExp::i64(1));
            let r = l.basic(
                "cnt",
                BasicOp::Index(offv, vec![DimIndex::Fix(j)]),
                Type::Prim(PrimType::I64),
            );
            Ok(leaf(r, Type::Prim(PrimType::I64)))
        },
    )?;
    let (cnt, _) = l.prim_leaf(&cnt, span)?;
    // dest index: if flag then off-1 else -1
    let fp = Param {
        name: l.names.fresh("f"),
        ty: Type::Prim(PrimType::Bool),
    };
    let op = Param {
        name: l.names.fresh("o"),
        ty: Type::Prim(PrimType::I64),
    };
    l.var_types.insert(fp.name, fp.ty.clone());
    l.var_types.insert(op.name, op.ty.clone());
    let (fname, oname) = (fp.name, op.name);
    let (stms, r) = l.nested(|l| {
        let v = l.if_val(
            SubExp::Var(fname),
            span,
            |l| {
                let d = l.sub64(SubExp::Var(oname), SubExp::i64(1));
                Ok(leaf(d, Type::Prim(PrimType::I64)))
            },
            |_| Ok(leaf(SubExp::i64(-1), Type::Prim(PrimType::I64))),
        )?;
        Ok(l.prim_leaf(&v, span)?.0)
    })?;
    let idx_lam = Lambda {
        id: runic_ir::LamId::fresh(),
        params: vec![fp, op],
        body: Body {
            stms,
            result: vec![r],
        },
        ret: vec![Type::Prim(PrimType::I64)],
    };
    let is = l.emit1(
        "dst",
        Exp::Soac(Soac::Map {
            w: n.clone(),
            lam: idx_lam,
            arrs: vec![fv, offv],
        }),
        arr_i64,
    );
    let isv = l.arr_var(&is, span)?;
    let ls = l.leaves(xs, span)?;
    let mut dests = Vec::new();
    let mut vals = Vec::new();
    let mut types = Vec::new();
    for (s, t) in ls {
        let (elem, shape) = match &t {
            Type::Array { elem, shape } => (*elem, shape.clone()),
            _ => return unsupported("filter", Some(span)),
        };
        let mut sh = shape.clone();
        sh[0] = cnt.clone();
        let ty = Type::Array {
            elem,
            shape: sh.clone(),
        };
        let d = l.basic("scratch", BasicOp::Scratch(elem, sh), ty.clone());
        dests.push(l.arr_var(&d, span)?);
        vals.push(l.arr_var(&s, span)?);
        types.push(ty);
    }
    let outs = l.emit(
        &["filtered"],
        Exp::Soac(Soac::Scatter {
            w: n,
            dests,
            is: vec![isv],
            vals,
        }),
        types.clone(),
    );
    let leaves: Vec<(SubExp, Type)> = outs.into_iter().map(SubExp::Var).zip(types).collect();
    Ok(xs.rebuild(&mut leaves.into_iter()))
}
