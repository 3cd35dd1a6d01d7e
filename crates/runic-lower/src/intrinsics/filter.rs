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
        let r = l.b().op1(UnOp::Not, f)?;
        l.leaf_of(r)
    })
}

fn and_flags<'a>(l: &mut Lower<'a>, a: &Val<'a>, b: &Val<'a>, span: Span) -> R<Val<'a>> {
    l.soac_map_with(&[a.clone(), b.clone()], span, |l, fv| {
        let (x, _) = l.prim_leaf(&fv[0], span)?;
        let (y, _) = l.prim_leaf(&fv[1], span)?;
        let r = l.b().op2(BinOp::LogAnd, x, y)?;
        l.leaf_of(r)
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
    let offs = {
        let mut b = l.b();
        let ones = b.lam(vec![("f", Type::Prim(PrimType::Bool))], |b, f| {
            Ok::<_, TypeError>(vec![b.convert_to(PrimType::I64, f[0].clone())?])
        })?;
        let add = b.binop_lam(BinOp::Add, PrimType::I64);
        let scan = Soac::Scan {
            w: n.clone(),
            arrs: vec![fv],
            pre: Some(ones),
            lam: add,
            neutral: vec![SubExp::i64(0)],
        };
        b.let_exp("offs", Exp::Soac(scan))?[0]
    };
    // count = if n == 0 then 0 else offs[n-1]
    let c0 = l.b().op2(BinOp::Eq, n.clone(), SubExp::i64(0))?;
    let nn = n.clone();
    let cnt = l.if_val(
        c0,
        span,
        |l| l.leaf_of(SubExp::i64(0)),
        |l| {
            let j = l.b().sub_i64(nn, SubExp::i64(1));
            let last = BasicOp::Index(offs, vec![DimIndex::Fix(j)]);
            let r = l.b().let_basic("cnt", last)?;
            l.leaf_of(r)
        },
    )?;
    let (cnt, _) = l.prim_leaf(&cnt, span)?;
    // dest index: if flag then off-1 else -1
    let fp = l.b().param("f", Type::Prim(PrimType::Bool));
    let op = l.b().param("o", Type::Prim(PrimType::I64));
    let (f, o) = (SubExp::Var(fp.name), SubExp::Var(op.name));
    let (stms, r) = l.nested(|l| {
        let v = l.if_val(
            f,
            span,
            |l| {
                let d = l.b().sub_i64(o, SubExp::i64(1));
                l.leaf_of(d)
            },
            |l| l.leaf_of(SubExp::i64(-1)),
        )?;
        Ok(l.prim_leaf(&v, span)?.0)
    })?;
    let ret = vec![l.type_of(&r)?];
    let body = Body {
        stms,
        result: vec![r],
    };
    let idx_lam = Lambda::new(vec![fp, op], body, ret);
    let map = Soac::Map {
        w: n.clone(),
        lam: idx_lam,
        arrs: vec![fv, offs],
    };
    let is = l.b().let_exp("dst", Exp::Soac(map))?[0];
    let mut dests = Vec::new();
    let mut vals = Vec::new();
    for (s, t) in l.leaves(xs, span)? {
        let Type::Array { elem, shape } = t else {
            return unsupported("filter", Some(span));
        };
        let mut sh = shape;
        sh[0] = cnt.clone();
        dests.push(
            l.b()
                .let_exp("scratch", Exp::Basic(BasicOp::Scratch(elem, sh)))?[0],
        );
        vals.push(l.arr_var(&s, span)?);
    }
    let scatter = Soac::Scatter {
        w: n,
        dests,
        is: vec![is],
        vals,
    };
    l.let_val("filtered", Exp::Soac(scatter), xs)
}
