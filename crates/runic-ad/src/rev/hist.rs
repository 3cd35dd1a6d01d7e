//! `h = reduce_by_index d ⊙ e is vs` (seed 001 §4). Out-of-range indices contribute
//! nothing; the forward sweep histogrammed into a copy of `d`.
//!
//! - `+`: `d̄ += h̄` and `v̄ⱼ += h̄[isⱼ]` (a gather). Work O(n + bins), span O(1).
//! - `min`/`max`: per bin, the destination wins ties (it comes first), else the smallest
//!   position `j` with `vⱼ = h[isⱼ]` (a `min` histogram of positions); only the winner's
//!   adjoint grows by `h̄`. Work O(n + bins), span O(log n).
//! - `*` (floats): per bin, the product of the non-zero values and the number of zeros (a
//!   histogram of pairs); then the three cases of the `*` reduce, with the destination as
//!   one more factor. Work O(n + bins).
//! - Any other operator: the general rule (see [`general`]).

use super::{reduce, scatter, util, Rev, R};
use crate::error::AdError;
use runic_ir::*;

#[allow(clippy::too_many_arguments)]
pub fn reverse(
    rev: &mut Rev,
    b: &mut Builder,
    pat: &[Param],
    w: SubExp,
    dests: Vec<VName>,
    lam: Lambda,
    neutral: Vec<SubExp>,
    is: Vec<VName>,
    vals: Vec<VName>,
) -> R<()> {
    let (Some((op, t)), [d], [v], [p]) = (util::simple_binop(&lam), &dests[..], &vals[..], pat)
    else {
        return general(rev, b, pat, w, dests, lam, neutral, is, vals);
    };
    let Some(hbar) = rev.adjs.get(&p.name).cloned() else {
        return Ok(());
    };
    let hbar = hbar
        .as_var()
        .ok_or_else(|| AdError::new("internal: histogram adjoint is a scalar"))?;
    let dt = rev.type_of(&SubExp::Var(*d))?;
    let Type::Array { shape, .. } = &dt else {
        return Err(AdError::new("internal: histogram into a non-array"));
    };
    let dims: Vec<SubExp> = shape[..is.len()].to_vec();
    let h = p.name;
    match op {
        BinOp::Add => {
            rev.add_adj(b, &SubExp::Var(*d), SubExp::Var(hbar))?;
            if rev.active.contains(v) {
                let vbar = gather(rev, b, &w, &is, &dims, t, |rev, b, bin, _j| {
                    let g = rev.bind(
                        b,
                        "adj",
                        Exp::Basic(BasicOp::Index(hbar, bin)),
                        Type::Prim(t),
                    );
                    Ok(SubExp::Var(g))
                })?;
                rev.add_adj(b, &SubExp::Var(*v), SubExp::Var(vbar))?;
            }
            Ok(())
        }
        BinOp::Min | BinOp::Max => extremum(rev, b, &w, *d, *v, h, hbar, &is, &dims, t),
        BinOp::Mul if t.is_float() => product(rev, b, &w, *d, *v, h, hbar, &is, &dims, t),
        _ => general(rev, b, pat, w, dests, lam, neutral, is, vals),
    }
}

/// `map (λj. if isⱼ in range then f(isⱼ, j) else 0) (iota n)` for scalar adjoints.
#[allow(clippy::too_many_arguments)]
fn gather(
    rev: &mut Rev,
    b: &mut Builder,
    w: &SubExp,
    is: &[VName],
    dims: &[SubExp],
    t: PrimType,
    f: impl FnOnce(&mut Rev, &mut Builder, Vec<DimIndex>, SubExp) -> R<SubExp>,
) -> R<VName> {
    let iota = util::iota(rev, b, w.clone());
    let mut arrs = vec![iota];
    arrs.extend(is.iter().copied());
    let out = util::map(rev, b, w, arrs, vec![Type::Prim(t)], |rev, b, ps| {
        let j = SubExp::Var(ps[0]);
        let idx: Vec<SubExp> = ps[1..].iter().map(|v| SubExp::Var(*v)).collect();
        let ok = scatter::in_range(rev, b, &idx, dims);
        let bin: Vec<DimIndex> = idx.into_iter().map(DimIndex::Fix).collect();
        util::if_with(
            rev,
            b,
            ok,
            vec![Type::Prim(t)],
            |rev, b| Ok(vec![f(rev, b, bin, j)?]),
            |_, _| Ok(vec![SubExp::Const(Prim::zero(t))]),
        )
    })?;
    rev.owned.insert(out[0]);
    Ok(out[0])
}

#[allow(clippy::too_many_arguments)]
fn extremum(
    rev: &mut Rev,
    b: &mut Builder,
    w: &SubExp,
    d: VName,
    v: VName,
    h: VName,
    hbar: VName,
    is: &[VName],
    dims: &[SubExp],
    t: PrimType,
) -> R<()> {
    let i64t = PrimType::I64;
    let dt = rev.type_of(&SubExp::Var(d))?;
    // The destination wins its bin when it equals the result.
    let dest_wins = util::map(
        rev,
        b,
        &dims[0],
        vec![d, h],
        vec![Type::Prim(PrimType::Bool)],
        |rev, b, ps| {
            Ok(vec![util::binop(
                rev,
                b,
                BinOp::Eq,
                SubExp::Var(ps[0]),
                SubExp::Var(ps[1]),
                t,
            )])
        },
    );
    // Rank > 1 histograms compare rows; only the 1-D case is specialised.
    if dims.len() != 1 || dt.rank() != 1 {
        return Err(AdError::unsupported(
            "vjp of a multi-dimensional min/max histogram",
        ));
    }
    let dest_wins = dest_wins?[0];
    if rev.active.contains(&d) {
        let dbar = util::map(
            rev,
            b,
            &dims[0],
            vec![dest_wins, hbar],
            vec![Type::Prim(t)],
            |rev, b, ps| {
                Ok(vec![util::select(
                    rev,
                    b,
                    t,
                    SubExp::Var(ps[0]),
                    SubExp::Var(ps[1]),
                    SubExp::Const(Prim::zero(t)),
                )])
            },
        )?;
        rev.owned.insert(dbar[0]);
        rev.add_adj(b, &SubExp::Var(d), SubExp::Var(dbar[0]))?;
    }
    if !rev.active.contains(&v) {
        return Ok(());
    }
    // Per bin, the smallest position whose value equals the result.
    let iota = util::iota(rev, b, w.clone());
    let mut arrs = vec![iota, v];
    arrs.extend(is.iter().copied());
    let cand = util::map(rev, b, w, arrs, vec![Type::Prim(i64t)], |rev, b, ps| {
        let idx: Vec<SubExp> = ps[2..].iter().map(|x| SubExp::Var(*x)).collect();
        let ok = scatter::in_range(rev, b, &idx, dims);
        let (j, x) = (SubExp::Var(ps[0]), SubExp::Var(ps[1]));
        util::if_with(
            rev,
            b,
            ok,
            vec![Type::Prim(i64t)],
            |rev, b| {
                let bin: Vec<DimIndex> = idx.iter().cloned().map(DimIndex::Fix).collect();
                let hv = rev.bind(b, "h", Exp::Basic(BasicOp::Index(h, bin)), Type::Prim(t));
                let eq = util::binop(rev, b, BinOp::Eq, x, SubExp::Var(hv), t);
                Ok(vec![util::select(
                    rev,
                    b,
                    i64t,
                    eq,
                    j,
                    SubExp::i64(i64::MAX),
                )])
            },
            |_, _| Ok(vec![SubExp::i64(i64::MAX)]),
        )
    })?;
    let first_ty = Type::Prim(i64t).array_of(dims[0].clone());
    let init = rev.bind(
        b,
        "first",
        Exp::Basic(BasicOp::Replicate(dims.to_vec(), SubExp::i64(i64::MAX))),
        first_ty.clone(),
    );
    let lam = runic_ir::builder::binop_lambda(b.names, BinOp::Min, i64t);
    crate::scope::lambda_types(&lam, rev.types);
    let first = rev.bind(
        b,
        "first",
        Exp::Soac(Soac::Hist {
            w: w.clone(),
            dests: vec![init],
            lam,
            neutral: vec![SubExp::i64(i64::MAX)],
            is: is.to_vec(),
            vals: cand,
        }),
        first_ty,
    );
    let vbar = gather(rev, b, w, is, dims, t, |rev, b, bin, j| {
        let f = rev.bind(
            b,
            "first",
            Exp::Basic(BasicOp::Index(first, bin.clone())),
            Type::Prim(i64t),
        );
        let dw = rev.bind(
            b,
            "dw",
            Exp::Basic(BasicOp::Index(dest_wins, bin.clone())),
            Type::Prim(PrimType::Bool),
        );
        let g = rev.bind(
            b,
            "adj",
            Exp::Basic(BasicOp::Index(hbar, bin)),
            Type::Prim(t),
        );
        let mine = util::binop(rev, b, BinOp::Eq, SubExp::Var(f), j, i64t);
        let lost = util::binop(
            rev,
            b,
            BinOp::Eq,
            SubExp::Var(dw),
            SubExp::Const(Prim::Bool(false)),
            PrimType::Bool,
        );
        let take = util::binop(rev, b, BinOp::LogAnd, mine, lost, PrimType::Bool);
        Ok(util::select(
            rev,
            b,
            t,
            take,
            SubExp::Var(g),
            SubExp::Const(Prim::zero(t)),
        ))
    })?;
    rev.add_adj(b, &SubExp::Var(v), SubExp::Var(vbar))
}

#[allow(clippy::too_many_arguments)]
fn product(
    rev: &mut Rev,
    b: &mut Builder,
    w: &SubExp,
    d: VName,
    v: VName,
    h: VName,
    hbar: VName,
    is: &[VName],
    dims: &[SubExp],
    t: PrimType,
) -> R<()> {
    let _ = h;
    let i64t = PrimType::I64;
    let (pt, ct) = (Type::Prim(t), Type::Prim(i64t));
    if dims.len() != 1 {
        return Err(AdError::unsupported(
            "vjp of a multi-dimensional product histogram",
        ));
    }
    // Per bin: (product of the non-zero values, number of zeros).
    let pairs = util::map(
        rev,
        b,
        w,
        vec![v],
        vec![pt.clone(), ct.clone()],
        |rev, b, ps| {
            let x = SubExp::Var(ps[0]);
            let z = util::binop(
                rev,
                b,
                BinOp::Eq,
                x.clone(),
                SubExp::Const(Prim::zero(t)),
                t,
            );
            let val = util::select(rev, b, t, z.clone(), SubExp::Const(Prim::one(t)), x);
            let c = util::select(rev, b, i64t, z, SubExp::i64(1), SubExp::i64(0));
            Ok(vec![val, c])
        },
    )?;
    let bins = dims[0].clone();
    let p0 = rev.bind(
        b,
        "p",
        Exp::Basic(BasicOp::Replicate(
            vec![bins.clone()],
            SubExp::Const(Prim::one(t)),
        )),
        pt.array_of(bins.clone()),
    );
    let c0 = rev.bind(
        b,
        "c",
        Exp::Basic(BasicOp::Replicate(vec![bins.clone()], SubExp::i64(0))),
        ct.array_of(bins.clone()),
    );
    let lam = reduce::pair_op(rev, b, t)?;
    let pc = rev.bind_many(
        b,
        "nz",
        Exp::Soac(Soac::Hist {
            w: w.clone(),
            dests: vec![p0, c0],
            lam,
            neutral: vec![SubExp::Const(Prim::one(t)), SubExp::i64(0)],
            is: is.to_vec(),
            vals: pairs,
        }),
        vec![pt.array_of(bins.clone()), ct.array_of(bins.clone())],
    );
    let (prods, zeros) = (pc[0], pc[1]);
    let zero = SubExp::Const(Prim::zero(t));
    if rev.active.contains(&d) {
        // d̄ = h̄ · (product of the values) per bin.
        let dbar = util::map(
            rev,
            b,
            &bins,
            vec![hbar, prods, zeros],
            vec![pt.clone()],
            |rev, b, ps| {
                let none = util::binop(rev, b, BinOp::Eq, SubExp::Var(ps[2]), SubExp::i64(0), i64t);
                let p = util::select(rev, b, t, none, SubExp::Var(ps[1]), zero.clone());
                Ok(vec![util::binop(
                    rev,
                    b,
                    BinOp::Mul,
                    SubExp::Var(ps[0]),
                    p,
                    t,
                )])
            },
        )?;
        rev.owned.insert(dbar[0]);
        rev.add_adj(b, &SubExp::Var(d), SubExp::Var(dbar[0]))?;
    }
    if !rev.active.contains(&v) {
        return Ok(());
    }
    let iota = util::iota(rev, b, w.clone());
    let mut arrs = vec![iota, v];
    arrs.extend(is.iter().copied());
    let vbar = util::map(rev, b, w, arrs, vec![pt.clone()], |rev, b, ps| {
        let idx: Vec<SubExp> = ps[2..].iter().map(|x| SubExp::Var(*x)).collect();
        let ok = scatter::in_range(rev, b, &idx, dims);
        let x = SubExp::Var(ps[1]);
        util::if_with(
            rev,
            b,
            ok,
            vec![pt.clone()],
            |rev, b| {
                let bin: Vec<DimIndex> = idx.iter().cloned().map(DimIndex::Fix).collect();
                let get = |rev: &mut Rev, b: &mut Builder, a: VName, ty: PrimType| {
                    SubExp::Var(rev.bind(
                        b,
                        "g",
                        Exp::Basic(BasicOp::Index(a, bin.clone())),
                        Type::Prim(ty),
                    ))
                };
                let g = get(rev, b, hbar, t);
                let p = get(rev, b, prods, t);
                let c = get(rev, b, zeros, i64t);
                let dv = get(rev, b, d, t);
                // The destination is one more factor.
                let dz = util::binop(rev, b, BinOp::Eq, dv.clone(), zero.clone(), t);
                let df = util::select(rev, b, t, dz.clone(), SubExp::Const(Prim::one(t)), dv);
                let p = util::binop(rev, b, BinOp::Mul, p, df, t);
                let dc = util::select(rev, b, i64t, dz, SubExp::i64(1), SubExp::i64(0));
                let c = util::binop(rev, b, BinOp::Add, c, dc, i64t);
                let scaled = util::binop(rev, b, BinOp::Mul, p, g, t);
                let is_zero = util::binop(rev, b, BinOp::Eq, x.clone(), zero.clone(), t);
                let none = util::binop(rev, b, BinOp::Eq, c.clone(), SubExp::i64(0), i64t);
                let one = util::binop(rev, b, BinOp::Eq, c, SubExp::i64(1), i64t);
                let safe = util::select(
                    rev,
                    b,
                    t,
                    is_zero.clone(),
                    SubExp::Const(Prim::one(t)),
                    x.clone(),
                );
                let div = util::binop(rev, b, BinOp::Div, scaled.clone(), safe, t);
                let at_zero = util::select(rev, b, t, is_zero, scaled, zero.clone());
                let one_case = util::select(rev, b, t, one, at_zero, zero.clone());
                Ok(vec![util::select(rev, b, t, none, div, one_case)])
            },
            |_, _| Ok(vec![SubExp::Const(Prim::zero(t))]),
        )
    })?;
    rev.owned.insert(vbar[0]);
    rev.add_adj(b, &SubExp::Var(v), SubExp::Var(vbar[0]))
}

/// The general rule for any other operator — not implemented yet on the ir backend.
#[allow(clippy::too_many_arguments)]
fn general(
    rev: &mut Rev,
    b: &mut Builder,
    pat: &[Param],
    w: SubExp,
    dests: Vec<VName>,
    lam: Lambda,
    neutral: Vec<SubExp>,
    is: Vec<VName>,
    vals: Vec<VName>,
) -> R<()> {
    let _ = (rev, b, pat, w, dests, lam, neutral, is, vals);
    Err(AdError::unsupported(
        "vjp of reduce_by_index with this operator",
    ))
}
