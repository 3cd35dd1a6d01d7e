//! `r = scatter d is vs` (the largest position wins duplicate indices; out-of-range indices
//! write nothing).
//!
//! The winner of every written position is found with a histogram (`max` of positions);
//! then `v̄ⱼ += r̄[isⱼ]` for the winners (zero for the others and for out-of-range indices)
//! and `d̄ += r̄` with the written positions zeroed (a scatter of zeros). The forward sweep
//! scattered into a copy of `d`, so the original stays available. Work O(n + |is|),
//! span O(log) (the histogram).

use super::{build, common, Rev, R};
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
    let rank = is.len();
    let Some(&d0) = dests.first() else {
        return Ok(());
    };
    let dt = b.type_of(&SubExp::Var(d0))?;
    let Type::Array { shape, .. } = &dt else {
        return Err(AdError::internal("scatter into a non-array"));
    };
    let dims: Vec<SubExp> = shape[..rank].to_vec();
    let win = winners(rev, b, &w, &dims, &is)?;
    for ((p, d), v) in pat.iter().zip(&dests).zip(&vals) {
        if !rev.adjs.contains_key(&p.name) {
            continue;
        }
        let rbar = rev.adj(b, p.name)?;
        let rbar = rbar
            .as_var()
            .ok_or_else(|| AdError::internal("scatter adjoint is a scalar"))?;
        let vt = b.type_of(&SubExp::Var(*v))?;
        let row = vt.row();
        if let (true, Type::Prim(t)) = (rev.active.contains(v), &row) {
            // Scalar values: straight-line code (a column program in the executor).
            let t = *t;
            let vbar = common::bin_map(
                rev,
                b,
                &w,
                vec![],
                &is,
                &dims,
                vec![Prim::zero(t)],
                |rev, b, bin, j, _| {
                    let wj = rev.bind(
                        b,
                        "win",
                        Exp::Basic(BasicOp::Index(win, bin.clone())),
                        Type::Prim(PrimType::I64),
                    );
                    let mine = build::binop(rev, b, BinOp::Eq, SubExp::Var(wj), j, PrimType::I64);
                    let got = rev.bind(
                        b,
                        "adj",
                        Exp::Basic(BasicOp::Index(rbar, bin)),
                        Type::Prim(t),
                    );
                    Ok(vec![build::select(
                        rev,
                        b,
                        t,
                        mine,
                        SubExp::Var(got),
                        SubExp::Const(Prim::zero(t)),
                    )])
                },
            )?;
            rev.owned.insert(vbar[0]);
            rev.add_adj(b, &SubExp::Var(*v), SubExp::Var(vbar[0]))?;
        } else if rev.active.contains(v) {
            let iota = build::iota(rev, b, w.clone());
            let mut arrs = vec![iota];
            arrs.extend(is.iter().copied());
            let vbar = build::map(rev, b, &w, arrs, vec![row.clone()], |rev, b, ps| {
                let j = SubExp::Var(ps[0]);
                let idx: Vec<SubExp> = ps[1..].iter().map(|v| SubExp::Var(*v)).collect();
                let ok = common::in_range(rev, b, &idx, &dims);
                let row2 = row.clone();
                let r = build::if_with(
                    rev,
                    b,
                    ok,
                    vec![row.clone()],
                    |rev, b| {
                        let fix: Vec<DimIndex> = idx.iter().cloned().map(DimIndex::Fix).collect();
                        let wj = rev.bind(
                            b,
                            "win",
                            Exp::Basic(BasicOp::Index(win, fix.clone())),
                            Type::Prim(PrimType::I64),
                        );
                        let mine =
                            build::binop(rev, b, BinOp::Eq, SubExp::Var(wj), j, PrimType::I64);
                        build::if_with(
                            rev,
                            b,
                            mine,
                            vec![row2.clone()],
                            |rev, b| {
                                let got = rev.bind(
                                    b,
                                    "adj",
                                    Exp::Basic(BasicOp::Index(rbar, fix)),
                                    row2.clone(),
                                );
                                Ok(vec![SubExp::Var(got)])
                            },
                            |rev, b| Ok(vec![rev.zeros(b, &row2)?]),
                        )
                    },
                    |rev, b| Ok(vec![rev.zeros(b, &row)?]),
                )?;
                Ok(r)
            })?;
            rev.owned.insert(vbar[0]);
            rev.add_adj(b, &SubExp::Var(*v), SubExp::Var(vbar[0]))?;
        }
        if rev.active.contains(d) {
            // d̄ = r̄ with the written positions zeroed.
            let base = rev.bind(b, "adj", Exp::Basic(BasicOp::Copy(rbar)), dt.clone());
            let z = rev.zeros(b, &row)?;
            let zs = rev.bind(
                b,
                "zeros",
                Exp::Basic(BasicOp::Replicate(vec![w.clone()], z)),
                vt.clone(),
            );
            let cleared = rev.bind(
                b,
                "adj",
                Exp::Soac(Soac::Scatter {
                    w: w.clone(),
                    dests: vec![base],
                    is: is.clone(),
                    vals: vec![zs],
                }),
                dt.clone(),
            );
            rev.owned.insert(cleared);
            rev.add_adj(b, &SubExp::Var(*d), SubExp::Var(cleared))?;
        }
    }
    Ok(())
}

/// For every position of the destination (of leading shape `dims`), the largest `j` with
/// `is[j]` there, or −1.
pub fn winners(
    rev: &mut Rev,
    b: &mut Builder,
    w: &SubExp,
    dims: &[SubExp],
    is: &[VName],
) -> R<VName> {
    let i64t = PrimType::I64;
    let ty = Type::Array {
        elem: i64t,
        shape: dims.to_vec(),
    };
    let init = rev.bind(
        b,
        "win",
        Exp::Basic(BasicOp::Replicate(dims.to_vec(), SubExp::i64(-1))),
        ty.clone(),
    );
    let iota = build::iota(rev, b, w.clone());
    let lam = runic_ir::builder::binop_lambda(b.names, BinOp::Max, i64t);
    b.names.record_types(&lam);
    Ok(rev.bind(
        b,
        "win",
        Exp::Soac(Soac::Hist {
            w: w.clone(),
            dests: vec![init],
            lam,
            neutral: vec![SubExp::i64(-1)],
            is: is.to_vec(),
            vals: vec![iota],
        }),
        ty,
    ))
}
