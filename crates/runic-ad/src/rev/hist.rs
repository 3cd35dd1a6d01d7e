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

use super::{build, common, map, sort, Rev, R};
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
    let (Some((op, t)), [d], [v], [p]) =
        (crate::scope::simple_binop(&lam), &dests[..], &vals[..], pat)
    else {
        return general(rev, b, pat, w, dests, lam, neutral, is, vals);
    };
    let Some(hbar) = rev.adjs.get(&p.name).cloned() else {
        return Ok(());
    };
    let hbar = hbar
        .as_var()
        .ok_or_else(|| AdError::internal("histogram adjoint is a scalar"))?;
    let dt = b.type_of(&SubExp::Var(*d))?;
    let Type::Array { shape, .. } = &dt else {
        return Err(AdError::internal("histogram into a non-array"));
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
        BinOp::Min | BinOp::Max => {
            extremum(rev, b, &w, *d, *v, h, hbar, &is, &dims, t, &neutral[0])
        }
        BinOp::Mul if t.is_float() && !rev.differentiated_again => {
            product(rev, b, &w, *d, *v, hbar, &is, &dims, t, &neutral[0])
        }
        _ => general(rev, b, pat, w, dests, lam, neutral, is, vals),
    }
}

/// `map (λj. if isⱼ in range then f(isⱼ, j) else 0) (iota n)` for scalar adjoints.
fn gather(
    rev: &mut Rev,
    b: &mut Builder,
    w: &SubExp,
    is: &[VName],
    dims: &[SubExp],
    t: PrimType,
    f: impl FnOnce(&mut Rev, &mut Builder, Vec<DimIndex>, SubExp) -> R<SubExp>,
) -> R<VName> {
    let out = common::bin_map(
        rev,
        b,
        w,
        vec![],
        is,
        dims,
        vec![Prim::zero(t)],
        |rev, b, bin, j, _| Ok(vec![f(rev, b, bin, j)?]),
    )?;
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
    ne: &SubExp,
) -> R<()> {
    let i64t = PrimType::I64;
    let dt = b.type_of(&SubExp::Var(d))?;
    // The destination wins its bin when it equals the result.
    let dest_wins = build::map(
        rev,
        b,
        &dims[0],
        vec![d, h],
        vec![Type::Prim(PrimType::Bool)],
        |rev, b, ps| {
            Ok(vec![build::binop(
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
        let dbar = build::map(
            rev,
            b,
            &dims[0],
            vec![dest_wins, hbar],
            vec![Type::Prim(t)],
            |rev, b, ps| {
                Ok(vec![build::select(
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
    let cand = common::bin_map(
        rev,
        b,
        w,
        vec![v],
        is,
        dims,
        vec![Prim::I64(i64::MAX)],
        |rev, b, bin, j, e| {
            let hv = rev.bind(b, "h", Exp::Basic(BasicOp::Index(h, bin)), Type::Prim(t));
            let eq = build::binop(rev, b, BinOp::Eq, SubExp::Var(e[0]), SubExp::Var(hv), t);
            Ok(vec![build::select(
                rev,
                b,
                i64t,
                eq,
                j,
                SubExp::i64(i64::MAX),
            )])
        },
    )?;
    let first_ty = Type::Prim(i64t).array_of(dims[0].clone());
    let init = rev.bind(
        b,
        "first",
        Exp::Basic(BasicOp::Replicate(dims.to_vec(), SubExp::i64(i64::MAX))),
        first_ty.clone(),
    );
    let lam = runic_ir::builder::binop_lambda(b.names, BinOp::Min, i64t);
    b.names.record_types(&lam);
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
        let bin_h = bin.clone();
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
        let mine = build::binop(rev, b, BinOp::Eq, SubExp::Var(f), j, i64t);
        let lost = build::binop(
            rev,
            b,
            BinOp::Eq,
            SubExp::Var(dw),
            SubExp::Const(Prim::Bool(false)),
            PrimType::Bool,
        );
        let take = build::binop(rev, b, BinOp::LogAnd, mine, lost, PrimType::Bool);
        // The neutral element comes before the values: a result equal to it is its own.
        let hv = rev.bind(b, "h", Exp::Basic(BasicOp::Index(h, bin_h)), Type::Prim(t));
        let not_ne = build::binop(rev, b, BinOp::Neq, SubExp::Var(hv), ne.clone(), t);
        let take = build::binop(rev, b, BinOp::LogAnd, take, not_ne, PrimType::Bool);
        Ok(build::select(
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
    hbar: VName,
    is: &[VName],
    dims: &[SubExp],
    t: PrimType,
    ne: &SubExp,
) -> R<()> {
    let i64t = PrimType::I64;
    let zero = SubExp::Const(Prim::zero(t));
    // The neutral element is one more factor of every bin (`d ⊙ (ne ⊙ v…)`).
    let ne_zero = build::binop(rev, b, BinOp::Eq, ne.clone(), zero.clone(), t);
    let ne_factor = build::select(
        rev,
        b,
        t,
        ne_zero.clone(),
        SubExp::Const(Prim::one(t)),
        ne.clone(),
    );
    let ne_count = build::select(rev, b, i64t, ne_zero, SubExp::i64(1), SubExp::i64(0));
    let (pt, ct) = (Type::Prim(t), Type::Prim(i64t));
    if dims.len() != 1 {
        return Err(AdError::unsupported(
            "vjp of a multi-dimensional product histogram",
        ));
    }
    // Per bin: (product of the non-zero values, number of zeros).
    let pairs = common::nonzero_pairs(rev, b, w, v, t)?;
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
    // Two histograms with simple operators (the executor's native path) rather than one
    // of pairs.
    let mut pc = Vec::new();
    for (dest, arr, op, ne, ty) in [
        (p0, pairs[0], BinOp::Mul, Prim::one(t), t),
        (c0, pairs[1], BinOp::Add, Prim::I64(0), i64t),
    ] {
        let lam = runic_ir::builder::binop_lambda(b.names, op, ty);
        b.names.record_types(&lam);
        pc.push(rev.bind(
            b,
            "nz",
            Exp::Soac(Soac::Hist {
                w: w.clone(),
                dests: vec![dest],
                lam,
                neutral: vec![SubExp::Const(ne)],
                is: is.to_vec(),
                vals: vec![arr],
            }),
            Type::Prim(ty).array_of(bins.clone()),
        ));
    }
    let (prods, zeros) = (pc[0], pc[1]);
    if rev.active.contains(&d) {
        // d̄ = h̄ · (product of the values) per bin.
        let dbar = build::map(
            rev,
            b,
            &bins,
            vec![hbar, prods, zeros],
            vec![pt.clone()],
            |rev, b, ps| {
                let none =
                    build::binop(rev, b, BinOp::Eq, SubExp::Var(ps[2]), SubExp::i64(0), i64t);
                let p = build::select(rev, b, t, none, SubExp::Var(ps[1]), zero.clone());
                Ok(vec![build::binop(
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
    let vbar = common::bin_map(
        rev,
        b,
        w,
        vec![v],
        is,
        dims,
        vec![Prim::zero(t)],
        |rev, b, bin, _j, e| {
            let x = SubExp::Var(e[0]);
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
            // The destination and the neutral element are two more factors.
            let dz = build::binop(rev, b, BinOp::Eq, dv.clone(), zero.clone(), t);
            let df = build::select(rev, b, t, dz.clone(), SubExp::Const(Prim::one(t)), dv);
            let p = build::binop(rev, b, BinOp::Mul, p, df, t);
            let p = build::binop(rev, b, BinOp::Mul, p, ne_factor.clone(), t);
            let dc = build::select(rev, b, i64t, dz, SubExp::i64(1), SubExp::i64(0));
            let c = build::binop(rev, b, BinOp::Add, c, dc, i64t);
            let c = build::binop(rev, b, BinOp::Add, c, ne_count.clone(), i64t);
            let scaled = build::binop(rev, b, BinOp::Mul, p, g, t);
            let is_zero = build::binop(rev, b, BinOp::Eq, x.clone(), zero.clone(), t);
            let none = build::binop(rev, b, BinOp::Eq, c.clone(), SubExp::i64(0), i64t);
            let one = build::binop(rev, b, BinOp::Eq, c, SubExp::i64(1), i64t);
            let safe = build::select(rev, b, t, is_zero.clone(), SubExp::Const(Prim::one(t)), x);
            let div = build::binop(rev, b, BinOp::Div, scaled.clone(), safe, t);
            let at_zero = build::select(rev, b, t, is_zero, scaled, zero.clone());
            let one_case = build::select(rev, b, t, one, at_zero, zero.clone());
            Ok(vec![build::select(rev, b, t, none, div, one_case)])
        },
    )?;
    rev.owned.insert(vbar[0]);
    rev.add_adj(b, &SubExp::Var(v), SubExp::Var(vbar[0]))
}

/// The general rule (any operator, also on tuples and arrays; one index dimension). Each
/// bin is `d ⊙ x` with `x = ne ⊙ v₁ ⊙ … ⊙ vₖ` (the values sent to it, in index order):
/// 1. `x = reduce_by_index (replicate bins ne) ⊙ ne is vs`; `d̄` and `x̄` by the map rule on
///    `map ⊙ d x`;
/// 2. the values sorted by bin (a stable radix sort, out-of-range ones last), segmented
///    scans from the left (from `ne`) and from the right give each value's left and right
///    context `lⱼ`, `rⱼ` within its bin;
/// 3. `v̄ⱼ = vjp (λv. lⱼ ⊙ v ⊙ rⱼ) x̄[isⱼ]` (the map rule), scattered back to the original
///    positions. Work O(n log bins), span O(log n · log bins).
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
    let [idx] = is[..] else {
        return Err(AdError::unsupported(
            "vjp of a multi-dimensional reduce_by_index with this operator",
        ));
    };
    let k = neutral.len();
    let i64t = PrimType::I64;
    let dt = b.type_of(&SubExp::Var(dests[0]))?;
    let Type::Array { shape, .. } = &dt else {
        return Err(AdError::internal("histogram into a non-array"));
    };
    let bins = shape[0].clone();
    let mut hbar = Vec::new();
    for p in pat {
        hbar.push(rev.adj(b, p.name)?);
    }
    // 1. The neutral-initialised histogram x, then h = map ⊙ d x.
    let mut inits = Vec::new();
    let mut dtys = Vec::new();
    for (d, ne) in dests.iter().zip(&neutral) {
        let t = b.type_of(&SubExp::Var(*d))?;
        inits.push(rev.bind(
            b,
            "ne",
            Exp::Basic(BasicOp::Replicate(vec![bins.clone()], ne.clone())),
            t.clone(),
        ));
        dtys.push(t);
    }
    let op = rev.renamed(b, &lam);
    let xs = rev.bind_many(
        b,
        "x",
        Exp::Soac(Soac::Hist {
            w: w.clone(),
            dests: inits,
            lam: op,
            neutral: neutral.clone(),
            is: is.clone(),
            vals: vals.clone(),
        }),
        dtys.clone(),
    );
    let comb = rev.renamed(b, &lam);
    let mut arrs = dests.clone();
    arrs.extend(xs.iter().copied());
    let seeds = hbar.into_iter().map(Some).collect();
    let reached = map::reverse_seeded(rev, b, bins.clone(), comb, arrs, seeds, &xs)?;
    let mut xbar = Vec::new();
    for (x, a) in xs.iter().zip(reached) {
        xbar.push(match a {
            Some(a) => a,
            None => {
                let t = b.type_of(&SubExp::Var(*x))?;
                rev.zeros(b, &t)?
            }
        });
    }
    if !vals.iter().any(|v| rev.active.contains(v)) {
        return Ok(());
    }
    let xbar: Vec<VName> = xbar
        .into_iter()
        .map(|x| {
            x.as_var()
                .ok_or_else(|| AdError::internal("histogram adjoint"))
        })
        .collect::<R<_>>()?;
    // 2. Sort by bin.
    let keys = build::map(
        rev,
        b,
        &w,
        vec![idx],
        vec![Type::Prim(i64t)],
        |rev, b, ps| {
            let ok = common::in_range(rev, b, &[SubExp::Var(ps[0])], std::slice::from_ref(&bins));
            Ok(vec![build::select(
                rev,
                b,
                i64t,
                ok,
                SubExp::Var(ps[0]),
                bins.clone(),
            )])
        },
    )?;
    let (skeys, perm) = sort::sort_by_key(rev, b, &w, keys[0], bins.clone())?;
    let mut svals = Vec::new();
    for v in &vals {
        let row = b.type_of(&SubExp::Var(*v))?.row();
        let g = build::map(rev, b, &w, vec![perm], vec![row.clone()], |rev, b, ps| {
            let x = rev.bind(
                b,
                "v",
                Exp::Basic(BasicOp::Index(*v, vec![DimIndex::Fix(SubExp::Var(ps[0]))])),
                row,
            );
            Ok(vec![SubExp::Var(x)])
        })?;
        svals.push(g[0]);
    }
    let rows: Vec<Type> = lam.ret.clone();
    let bool_t = Type::Prim(PrimType::Bool);
    let iota = build::iota(rev, b, w.clone());
    let last = b.sub_i64(w.clone(), SubExp::i64(1));
    let se = build::map(
        rev,
        b,
        &w,
        vec![iota, skeys],
        vec![bool_t.clone(), bool_t.clone()],
        |rev, b, ps| {
            let (j, key) = (SubExp::Var(ps[0]), SubExp::Var(ps[1]));
            let mut out = Vec::new();
            for (edge, delta) in [(SubExp::i64(0), -1), (last.clone(), 1)] {
                let at_edge = build::binop(rev, b, BinOp::Eq, j.clone(), edge, i64t);
                let nb = build::binop(rev, b, BinOp::Add, j.clone(), SubExp::i64(delta), i64t);
                let nb = build::select(rev, b, i64t, at_edge.clone(), j.clone(), nb);
                let other = rev.bind(
                    b,
                    "k",
                    Exp::Basic(BasicOp::Index(skeys, vec![DimIndex::Fix(nb)])),
                    Type::Prim(i64t),
                );
                let differs =
                    build::binop(rev, b, BinOp::Neq, key.clone(), SubExp::Var(other), i64t);
                out.push(build::binop(
                    rev,
                    b,
                    BinOp::LogOr,
                    at_edge,
                    differs,
                    PrimType::Bool,
                ));
            }
            Ok(out)
        },
    )?;
    let (starts, ends) = (se[0], se[1]);
    // Inclusive segmented scan from the left, each segment starting from ne.
    let mut arrs = vec![starts];
    arrs.extend(svals.iter().copied());
    let pre = build::map(rev, b, &w, arrs, rows.clone(), |rev, b, ps| {
        let vs: Vec<SubExp> = ps[1..].iter().map(|v| SubExp::Var(*v)).collect();
        let nev: Vec<SubExp> = neutral.clone();
        build::if_with(
            rev,
            b,
            SubExp::Var(ps[0]),
            rows.clone(),
            |rev, b| Ok(build::apply(rev, b, &lam, &[nev, vs.clone()].concat())),
            |_, _| Ok(vs.clone()),
        )
    })?;
    let incl = segmented_scan(rev, b, &w, starts, &pre, &lam, &neutral, false)?;
    // Inclusive segmented scan from the right (no ne), on the reversed arrays.
    let rends = build::reverse(rev, b, &w, ends)?;
    let mut rvals = Vec::new();
    for v in &svals {
        rvals.push(build::reverse(rev, b, &w, *v)?);
    }
    let rsuf = segmented_scan(rev, b, &w, rends, &rvals, &lam, &neutral, true)?;
    let mut suf = Vec::new();
    for v in &rsuf {
        suf.push(build::reverse(rev, b, &w, *v)?);
    }
    // Left context lⱼ (ne at a segment start) and right context rⱼ (unused at an end).
    let iota = build::iota(rev, b, w.clone());
    let mut ctx_rets = rows.clone();
    ctx_rets.extend(rows.iter().cloned());
    let ctx = build::map(
        rev,
        b,
        &w,
        vec![iota, starts, ends],
        ctx_rets,
        |rev, b, ps| {
            let (j, st, en) = (SubExp::Var(ps[0]), SubExp::Var(ps[1]), SubExp::Var(ps[2]));
            let prev = build::binop(rev, b, BinOp::Sub, j.clone(), SubExp::i64(1), i64t);
            let prev = build::select(rev, b, i64t, st.clone(), j.clone(), prev);
            let next = build::binop(rev, b, BinOp::Add, j.clone(), SubExp::i64(1), i64t);
            let next = build::select(rev, b, i64t, en, j, next);
            let mut out = Vec::new();
            for ((s, t), ne) in incl.iter().zip(&rows).zip(&neutral) {
                let v = rev.bind(
                    b,
                    "l",
                    Exp::Basic(BasicOp::Index(*s, vec![DimIndex::Fix(prev.clone())])),
                    t.clone(),
                );
                out.push(common::if_value(
                    rev,
                    b,
                    t,
                    st.clone(),
                    ne.clone(),
                    SubExp::Var(v),
                ));
            }
            for (s, t) in suf.iter().zip(&rows) {
                let v = rev.bind(
                    b,
                    "r",
                    Exp::Basic(BasicOp::Index(*s, vec![DimIndex::Fix(next.clone())])),
                    t.clone(),
                );
                out.push(SubExp::Var(v));
            }
            Ok(out)
        },
    )?;
    let (ls, rs) = ctx.split_at(k);
    // x̄ of each sorted value's bin (zero out of range).
    let iota = build::iota(rev, b, w.clone());
    let xb = build::map(rev, b, &w, vec![iota, skeys], rows.clone(), |rev, b, ps| {
        let key = SubExp::Var(ps[1]);
        let ok = common::in_range(
            rev,
            b,
            std::slice::from_ref(&key),
            std::slice::from_ref(&bins),
        );
        let mut out = Vec::new();
        for (x, t) in xbar.iter().zip(&rows) {
            let safe = build::select(rev, b, i64t, ok.clone(), key.clone(), SubExp::i64(0));
            let g = build::if_with(
                rev,
                b,
                ok.clone(),
                vec![t.clone()],
                |rev, b| {
                    let v = rev.bind(
                        b,
                        "xb",
                        Exp::Basic(BasicOp::Index(*x, vec![DimIndex::Fix(safe)])),
                        t.clone(),
                    );
                    Ok(vec![SubExp::Var(v)])
                },
                |rev, b| Ok(vec![rev.zeros(b, t)?]),
            )?;
            out.extend(g);
        }
        Ok(out)
    })?;
    // 3. v̄ through the map rule on m = map (λl v r e. if e then l ⊙ v else l ⊙ v ⊙ r).
    let mut sb = Builder::new(b.names);
    sb.src = b.src.clone();
    let mut params = Vec::new();
    for t in rows.iter().chain(&rows).chain(&rows) {
        params.push(rev.fresh_param(&mut sb, "p", t));
    }
    let end_p = rev.fresh_param(&mut sb, "end", &bool_t);
    let pv: Vec<SubExp> = params.iter().map(|p| SubExp::Var(p.name)).collect();
    let (lv, rest) = pv.split_at(k);
    let (vv, rv) = rest.split_at(k);
    let lx = build::apply(rev, &mut sb, &lam, &[lv, vv].concat());
    let lx2 = lx.clone();
    let res = build::if_with(
        rev,
        &mut sb,
        SubExp::Var(end_p.name),
        rows.clone(),
        |_, _| Ok(lx2),
        |rev, b| Ok(build::apply(rev, b, &lam, &[&lx[..], rv].concat())),
    )?;
    params.push(end_p);
    let body = sb.finish(res);
    let comb = Lambda {
        id: runic_ir::LamId::fresh(),
        params,
        body,
        ret: rows.clone(),
    };
    let mut arrs: Vec<VName> = ls.to_vec();
    arrs.extend(svals.iter().copied());
    arrs.extend(rs.iter().copied());
    arrs.push(ends);
    let seeds = xb.iter().map(|x| Some(SubExp::Var(*x))).collect();
    let reached = map::reverse_seeded(rev, b, w.clone(), comb, arrs, seeds, &svals)?;
    // Scatter the sorted values' adjoints back to their original positions.
    for (v, a) in vals.iter().zip(reached) {
        let Some(a) = a else {
            continue;
        };
        let a = a
            .as_var()
            .ok_or_else(|| AdError::internal("histogram value adjoint"))?;
        let vt = b.type_of(&SubExp::Var(*v))?;
        let Some(elem) = vt.elem() else { continue };
        let Type::Array { shape, .. } = &vt else {
            continue;
        };
        let dest = rev.bind(
            b,
            "adj",
            Exp::Basic(BasicOp::Scratch(elem, shape.clone())),
            vt.clone(),
        );
        let back = rev.bind(
            b,
            "adj",
            Exp::Soac(Soac::Scatter {
                w: w.clone(),
                dests: vec![dest],
                is: vec![perm],
                vals: vec![a],
            }),
            vt,
        );
        rev.owned.insert(back);
        rev.add_adj(b, &SubExp::Var(*v), SubExp::Var(back))?;
    }
    Ok(())
}

/// An inclusive segmented scan of `vals` (restarting where `flags` is set) with `lam`
/// (`flipped`: `\a b -> b ⊙ a`, for scans of reversed arrays). The operator is lifted to
/// (valid, flag, value) triples with an identity of its own, so `⊙` needs no neutral
/// element.
#[allow(clippy::too_many_arguments)]
fn segmented_scan(
    rev: &mut Rev,
    b: &mut Builder,
    w: &SubExp,
    flags: VName,
    vals: &[VName],
    lam: &Lambda,
    neutral: &[SubExp],
    flipped: bool,
) -> R<Vec<VName>> {
    let bool_t = Type::Prim(PrimType::Bool);
    let rows: Vec<Type> = lam.ret.clone();
    let k = rows.len();
    let valid = rev.bind(
        b,
        "valid",
        Exp::Basic(BasicOp::Replicate(
            vec![w.clone()],
            SubExp::Const(Prim::Bool(true)),
        )),
        bool_t.array_of(w.clone()),
    );
    let mut sb = Builder::new(b.names);
    sb.src = b.src.clone();
    let mut ps = Vec::new();
    for _ in 0..2 {
        ps.push(rev.fresh_param(&mut sb, "valid", &bool_t));
        ps.push(rev.fresh_param(&mut sb, "flag", &bool_t));
        for t in &rows {
            ps.push(rev.fresh_param(&mut sb, "x", t));
        }
    }
    let v = |i: usize| SubExp::Var(ps[i].name);
    let (v1, f1, v2, f2) = (v(0), v(1), v(2 + k), v(3 + k));
    let x1: Vec<SubExp> = (2..2 + k).map(v).collect();
    let x2: Vec<SubExp> = (4 + k..4 + 2 * k).map(v).collect();
    let valid_r = build::binop(
        rev,
        &mut sb,
        BinOp::LogOr,
        v1.clone(),
        v2.clone(),
        PrimType::Bool,
    );
    let flag_r = build::binop(rev, &mut sb, BinOp::LogOr, f1, f2.clone(), PrimType::Bool);
    let no_left = build::binop(
        rev,
        &mut sb,
        BinOp::Eq,
        v1,
        SubExp::Const(Prim::Bool(false)),
        PrimType::Bool,
    );
    let take_right = build::binop(rev, &mut sb, BinOp::LogOr, no_left, f2, PrimType::Bool);
    let (x1b, x2b) = (x1.clone(), x2.clone());
    let x = build::if_with(
        rev,
        &mut sb,
        v2,
        rows.clone(),
        |rev, b| {
            build::if_with(
                rev,
                b,
                take_right,
                rows.clone(),
                |_, _| Ok(x2b.clone()),
                |rev, b| {
                    let args = if flipped {
                        [x2b.clone(), x1b.clone()].concat()
                    } else {
                        [x1b.clone(), x2b.clone()].concat()
                    };
                    Ok(build::apply(rev, b, lam, &args))
                },
            )
        },
        |_, _| Ok(x1),
    )?;
    let mut res = vec![valid_r, flag_r];
    res.extend(x);
    let mut ret = vec![bool_t.clone(), bool_t.clone()];
    ret.extend(rows.iter().cloned());
    let op = Lambda {
        id: runic_ir::LamId::fresh(),
        params: ps,
        body: sb.finish(res),
        ret: ret.clone(),
    };
    let mut ne = vec![
        SubExp::Const(Prim::Bool(false)),
        SubExp::Const(Prim::Bool(false)),
    ];
    ne.extend(neutral.iter().cloned());
    let mut arrs = vec![valid, flags];
    arrs.extend(vals.iter().copied());
    let tys: Vec<Type> = ret.iter().map(|t| t.array_of(w.clone())).collect();
    let out = rev.bind_many(
        b,
        "seg",
        Exp::Soac(Soac::Scan {
            w: w.clone(),
            arrs,
            pre: None,
            lam: op,
            neutral: ne,
        }),
        tys,
    );
    Ok(out[2..].to_vec())
}
