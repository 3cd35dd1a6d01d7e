//! `r = scatter d is vs` (the largest position wins duplicate indices; out-of-range indices
//! write nothing).
//!
//! The winner of every written position is found with a histogram (`max` of positions);
//! then `v̄ⱼ += r̄[isⱼ]` for the winners (zero for the others and for out-of-range indices)
//! and `d̄ += r̄` with the written positions zeroed (a scatter of zeros). The forward sweep
//! scattered into a copy of `d`, so the original stays available. Work O(n + |is|),
//! span O(log) (the histogram).

use super::{common, Rev, R};
use crate::error::AdError;
use runic_ir::*;

pub fn reverse(
    rev: &mut Rev,
    b: &mut Builder,
    pat: &[Param],
    w: SubExp,
    dests: Vec<VName>,
    is: Vec<VName>,
    vals: Vec<VName>,
) -> R<()> {
    let Some(&d0) = dests.first() else {
        return Ok(());
    };
    let Type::Array { shape, .. } = b.type_of(&SubExp::Var(d0))? else {
        return Err(AdError::internal("scatter into a non-array"));
    };
    let dims: Vec<SubExp> = shape[..is.len()].to_vec();
    let win = winners(b, &w, &dims, &is)?;
    for ((p, d), v) in pat.iter().zip(&dests).zip(&vals) {
        if !rev.adjs.contains_key(&p.name) {
            continue;
        }
        let rbar = rev.adj(b, p.name)?;
        let rbar = rbar
            .as_var()
            .ok_or_else(|| AdError::internal("scatter adjoint is a scalar"))?;
        let row = b.type_of(&SubExp::Var(*v))?.row();
        if let (true, Type::Prim(t)) = (rev.active.contains(v), &row) {
            // Scalar values: straight-line code (a column program in the executor).
            let zero = SubExp::Const(Prim::zero(*t));
            let vbar = common::bin_map(
                b,
                &w,
                vec![],
                &is,
                &dims,
                vec![Prim::zero(*t)],
                |b, bin, j, _| {
                    let wj = b.let_basic("win", BasicOp::Index(win, bin.clone()))?;
                    let mine = b.op2(BinOp::Eq, wj, j)?;
                    let got = b.let_basic("adj", BasicOp::Index(rbar, bin))?;
                    Ok(vec![b.select(mine, got, zero)?])
                },
            )?;
            rev.owned.insert(vbar[0]);
            rev.add_adj(b, &SubExp::Var(*v), SubExp::Var(vbar[0]))?;
        } else if rev.active.contains(v) {
            let iota = b.iota(w.clone());
            let arrs = [vec![iota], is.clone()].concat();
            let vbar = b.map_fn("m", w.clone(), arrs, |b, ps| -> R<_> {
                let (j, idx) = (ps[0].clone(), &ps[1..]);
                let ok = common::in_range(b, idx, &dims)?;
                let bin: Vec<DimIndex> = idx.iter().cloned().map(DimIndex::Fix).collect();
                b.let_if(
                    "r",
                    ok,
                    |b| -> R<_> {
                        let wj = b.let_basic("win", BasicOp::Index(win, bin.clone()))?;
                        let mine = b.op2(BinOp::Eq, wj, j)?;
                        b.let_if(
                            "r",
                            mine,
                            |b| Ok(vec![b.let_basic("adj", BasicOp::Index(rbar, bin))?]),
                            |b| Ok(vec![b.zeros(&row)?]),
                        )
                    },
                    |b| Ok(vec![b.zeros(&row)?]),
                )
            })?;
            rev.owned.insert(vbar[0]);
            rev.add_adj(b, &SubExp::Var(*v), SubExp::Var(vbar[0]))?;
        }
        if rev.active.contains(d) {
            // d̄ = r̄ with the written positions zeroed.
            let base = b.let_exp("adj", Exp::Basic(BasicOp::Copy(rbar)))?[0];
            let z = rev.zeros(b, &row)?;
            let zs = b.let_exp("zeros", Exp::Basic(BasicOp::Replicate(vec![w.clone()], z)))?;
            let cleared = Soac::Scatter {
                w: w.clone(),
                dests: vec![base],
                is: is.clone(),
                vals: zs,
            };
            let cleared = b.let_exp("adj", Exp::Soac(cleared))?[0];
            rev.owned.insert(cleared);
            rev.add_adj(b, &SubExp::Var(*d), SubExp::Var(cleared))?;
        }
    }
    Ok(())
}

/// For every position of the destination (of leading shape `dims`), the largest `j` with
/// `is[j]` there, or −1.
pub fn winners(b: &mut Builder, w: &SubExp, dims: &[SubExp], is: &[VName]) -> R<VName> {
    let none = SubExp::i64(-1);
    let init = b.let_exp(
        "win",
        Exp::Basic(BasicOp::Replicate(dims.to_vec(), none.clone())),
    )?;
    let iota = b.iota(w.clone());
    let max = b.binop_lam(BinOp::Max, PrimType::I64);
    let hist = Soac::Hist {
        w: w.clone(),
        dests: init,
        lam: max,
        neutral: vec![none],
        is: is.to_vec(),
        vals: vec![iota],
    };
    Ok(b.let_exp("win", Exp::Soac(hist))?[0])
}
