//! A parallel stable sort of small non-negative integer keys (a radix sort), for the general
//! `reduce_by_index` rule: one pass per bit of the largest key, each a map, a scan and a
//! scatter. Work O(n log k), span O(log n log k) for keys below k.

use super::R;
use runic_ir::*;

/// Sort `keys` (values in `0..=max`) stably; the sorted keys and, for each sorted position,
/// the original position.
pub fn sort_by_key(b: &mut Builder, w: &SubExp, keys: VName, max: SubExp) -> R<(VName, VName)> {
    let arr_t = b.type_of(&SubExp::Var(keys))?;
    let perm0 = b.iota(w.clone());
    // loop (bit, more, keys, perm) = (0, max > 0, keys, iota n) while more do one pass
    let mut sb = Builder::new(b.names);
    sb.src = b.src.clone();
    let bit = sb.param("bit", Type::Prim(PrimType::I64));
    let more = sb.param("more", Type::Prim(PrimType::Bool));
    let ks = sb.param("keys", arr_t.clone());
    let ps = sb.param("perm", arr_t);
    let (k2, p2) = pass(&mut sb, w, ks.name, ps.name, SubExp::Var(bit.name))?;
    let next = sb.add_(SubExp::Var(bit.name), SubExp::i64(1))?;
    let rest = sb.op2(BinOp::Shr, max.clone(), next.clone())?;
    let more2 = sb.op2(BinOp::Gt, rest, SubExp::i64(0))?;
    let body = sb.finish(vec![next, more2, SubExp::Var(k2), SubExp::Var(p2)]);
    let more0 = b.op2(BinOp::Gt, max, SubExp::i64(0))?;
    let sorted = Exp::Loop {
        params: vec![
            (bit, SubExp::i64(0)),
            (more.clone(), more0),
            (ks, SubExp::Var(keys)),
            (ps, SubExp::Var(perm0)),
        ],
        form: LoopForm::While { cond: more.name },
        body,
    };
    let out = b.let_exp("sorted", sorted)?;
    Ok((out[2], out[3]))
}

/// One stable partition by bit `bit`: zeros first.
fn pass(b: &mut Builder, w: &SubExp, keys: VName, perm: VName, bit: SubExp) -> R<(VName, VName)> {
    let flags = b.map_fn("m", w.clone(), vec![keys], |b, k| -> R<_> {
        let s = b.op2(BinOp::Shr, k[0].clone(), bit)?;
        Ok(vec![b.op2(BinOp::And, s, SubExp::i64(1))?])
    })?;
    let plus = b.binop_lam(BinOp::Add, PrimType::I64);
    let ones = b.scan(
        "ones",
        w.clone(),
        plus.clone(),
        vec![SubExp::i64(0)],
        flags.clone(),
    )?;
    let plus = b.renamed(&plus);
    let total1 = b.reduce_comm(
        "total",
        w.clone(),
        plus,
        vec![SubExp::i64(0)],
        flags.clone(),
    )?;
    let total0 = b.sub_(w.clone(), total1[0].clone())?;
    let iota = b.iota(w.clone());
    let pos = b.map_fn(
        "m",
        w.clone(),
        vec![iota, flags[0], ones[0]],
        |b, ps| -> R<_> {
            let (j, f, incl) = (ps[0].clone(), ps[1].clone(), ps[2].clone());
            let before = b.sub_(incl, f.clone())?;
            let one_pos = b.add_(total0, before.clone())?;
            let zero_pos = b.sub_(j, before)?;
            let is_one = b.op2(BinOp::Eq, f, SubExp::i64(1))?;
            Ok(vec![b.select(is_one, one_pos, zero_pos)?])
        },
    )?;
    let mut out = Vec::new();
    for src in [keys, perm] {
        let dest = b.let_exp(
            "dest",
            Exp::Basic(BasicOp::Scratch(PrimType::I64, vec![w.clone()])),
        )?;
        let part = Soac::Scatter {
            w: w.clone(),
            dests: dest,
            is: pos.clone(),
            vals: vec![src],
        };
        out.push(b.let_exp("part", Exp::Soac(part))?[0]);
    }
    Ok((out[0], out[1]))
}
