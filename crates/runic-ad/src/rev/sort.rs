//! A parallel stable sort of small non-negative integer keys (a radix sort), for the general
//! `reduce_by_index` rule: one pass per bit of the largest key, each a map, a scan and a
//! scatter. Work O(n log k), span O(log n log k) for keys below k.

use super::{build, Rev, R};
use runic_ir::*;

/// Sort `keys` (values in `0..=max`) stably; the sorted keys and, for each sorted position,
/// the original position.
pub fn sort_by_key(
    rev: &mut Rev,
    b: &mut Builder,
    w: &SubExp,
    keys: VName,
    max: SubExp,
) -> R<(VName, VName)> {
    let i64t = PrimType::I64;
    let arr_t = Type::Prim(i64t).array_of(w.clone());
    let perm0 = build::iota(rev, b, w.clone());
    // loop (bit, more, keys, perm) = (0, max > 0, keys, iota n) while more do one pass
    let mut sb = Builder::new(b.names);
    sb.src = b.src.clone();
    let bit = rev.fresh_param(&mut sb, "bit", &Type::Prim(i64t));
    let more = rev.fresh_param(&mut sb, "more", &Type::Prim(PrimType::Bool));
    let ks = rev.fresh_param(&mut sb, "keys", &arr_t);
    let ps = rev.fresh_param(&mut sb, "perm", &arr_t);
    let (k2, p2) = pass(rev, &mut sb, w, ks.name, ps.name, SubExp::Var(bit.name))?;
    let next = build::binop(
        rev,
        &mut sb,
        BinOp::Add,
        SubExp::Var(bit.name),
        SubExp::i64(1),
        i64t,
    );
    let rest = build::binop(rev, &mut sb, BinOp::Shr, max.clone(), next.clone(), i64t);
    let more2 = build::binop(rev, &mut sb, BinOp::Gt, rest, SubExp::i64(0), i64t);
    let body = sb.finish(vec![next, more2, SubExp::Var(k2), SubExp::Var(p2)]);
    let more0 = build::binop(rev, b, BinOp::Gt, max, SubExp::i64(0), i64t);
    let out = rev.bind_many(
        b,
        "sorted",
        Exp::Loop {
            params: vec![
                (bit, SubExp::i64(0)),
                (more.clone(), more0),
                (ks, SubExp::Var(keys)),
                (ps, SubExp::Var(perm0)),
            ],
            form: LoopForm::While { cond: more.name },
            body,
        },
        vec![
            Type::Prim(i64t),
            Type::Prim(PrimType::Bool),
            arr_t.clone(),
            arr_t,
        ],
    );
    Ok((out[2], out[3]))
}

/// One stable partition by bit `bit`: zeros first.
fn pass(
    rev: &mut Rev,
    b: &mut Builder,
    w: &SubExp,
    keys: VName,
    perm: VName,
    bit: SubExp,
) -> R<(VName, VName)> {
    let i64t = PrimType::I64;
    let it = Type::Prim(i64t);
    let arr_t = it.array_of(w.clone());
    let flags = build::map(rev, b, w, vec![keys], vec![it.clone()], |rev, b, ps| {
        let s = build::binop(rev, b, BinOp::Shr, SubExp::Var(ps[0]), bit.clone(), i64t);
        Ok(vec![build::binop(
            rev,
            b,
            BinOp::And,
            s,
            SubExp::i64(1),
            i64t,
        )])
    })?;
    let plus = runic_ir::builder::binop_lambda(b.names, BinOp::Add, i64t);
    b.names.record_types(&plus);
    let ones = rev.bind(
        b,
        "ones",
        Exp::Soac(Soac::Scan {
            w: w.clone(),
            arrs: vec![flags[0]],
            pre: None,
            lam: plus.clone(),
            neutral: vec![SubExp::i64(0)],
        }),
        arr_t.clone(),
    );
    let plus2 = rev.renamed(b, &plus);
    let total1 = rev.bind(
        b,
        "total",
        Exp::Soac(Soac::Reduce {
            w: w.clone(),
            arrs: vec![flags[0]],
            pre: None,
            lam: plus2,
            neutral: vec![SubExp::i64(0)],
            commutative: true,
        }),
        it.clone(),
    );
    let total0 = build::binop(rev, b, BinOp::Sub, w.clone(), SubExp::Var(total1), i64t);
    let iota = build::iota(rev, b, w.clone());
    let pos = build::map(
        rev,
        b,
        w,
        vec![iota, flags[0], ones],
        vec![it.clone()],
        |rev, b, ps| {
            let (j, f, incl) = (SubExp::Var(ps[0]), SubExp::Var(ps[1]), SubExp::Var(ps[2]));
            let before = build::binop(rev, b, BinOp::Sub, incl, f.clone(), i64t);
            let one_pos = build::binop(rev, b, BinOp::Add, total0.clone(), before.clone(), i64t);
            let zero_pos = build::binop(rev, b, BinOp::Sub, j, before, i64t);
            let is_one = build::binop(rev, b, BinOp::Eq, f, SubExp::i64(1), i64t);
            Ok(vec![build::select(rev, b, i64t, is_one, one_pos, zero_pos)])
        },
    )?;
    let mut out = Vec::new();
    for src in [keys, perm] {
        let dest = rev.bind(
            b,
            "dest",
            Exp::Basic(BasicOp::Scratch(i64t, vec![w.clone()])),
            arr_t.clone(),
        );
        out.push(rev.bind(
            b,
            "part",
            Exp::Soac(Soac::Scatter {
                w: w.clone(),
                dests: vec![dest],
                is: vec![pos[0]],
                vals: vec![src],
            }),
            arr_t.clone(),
        ));
    }
    Ok((out[0], out[1]))
}
