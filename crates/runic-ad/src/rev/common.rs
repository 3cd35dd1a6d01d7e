//! Helpers shared by several rule files: the range check of a bin index and maps over
//! bins (histogram and scatter rules), the zero-counting pairs of the `*` rules, exclusive
//! scans and shifts (reduce and scan rules), selections of values of any type, the `+`
//! operator on adjoints, and pruning the bodies of the return sweep.

use super::build::{binop, if_with, iota, map, select};
use super::{build, Rev, R};
use crate::error::AdError;
use runic_ir::*;

/// Whether every index component is within `0 ≤ i < dim`.
pub fn in_range(rev: &mut Rev, b: &mut Builder, idx: &[SubExp], dims: &[SubExp]) -> SubExp {
    let i64t = PrimType::I64;
    let mut ok = SubExp::Const(Prim::Bool(true));
    for (i, d) in idx.iter().zip(dims) {
        let lo = build::binop(rev, b, BinOp::Ge, i.clone(), SubExp::i64(0), i64t);
        let hi = build::binop(rev, b, BinOp::Lt, i.clone(), d.clone(), i64t);
        let both = build::binop(rev, b, BinOp::LogAnd, lo, hi, PrimType::Bool);
        ok = build::binop(rev, b, BinOp::LogAnd, ok, both, PrimType::Bool);
    }
    ok
}

/// Per element of `x`: the element, or 1 for a zero; and 1 for a zero, else 0 (what the
/// zero-counting `*` rules multiply and count).
pub fn nonzero_pairs(
    rev: &mut Rev,
    b: &mut Builder,
    w: &SubExp,
    x: VName,
    t: PrimType,
) -> R<Vec<VName>> {
    let i64t = PrimType::I64;
    build::map(
        rev,
        b,
        w,
        vec![x],
        vec![Type::Prim(t), Type::Prim(i64t)],
        |rev, b, ps| {
            let xi = SubExp::Var(ps[0]);
            let zero = SubExp::Const(Prim::zero(t));
            let z = build::binop(rev, b, BinOp::Eq, xi.clone(), zero, t);
            let v = build::select(rev, b, t, z.clone(), SubExp::Const(Prim::one(t)), xi);
            let c = build::select(rev, b, i64t, z, SubExp::i64(1), SubExp::i64(0));
            Ok(vec![v, c])
        },
    )
}

/// The exclusive scan of `arrs` with `lam` (`from_right`: of the reversed array with the
/// flipped operator, reversed back, so element i combines the elements after i).
pub fn exclusive_scan(
    rev: &mut Rev,
    b: &mut Builder,
    w: &SubExp,
    arrs: &[VName],
    lam: &Lambda,
    neutral: &[SubExp],
    from_right: bool,
) -> R<Vec<VName>> {
    let k = neutral.len();
    let input: Vec<VName> = if from_right {
        let mut v = Vec::new();
        for a in arrs {
            v.push(build::reverse(rev, b, w, *a)?);
        }
        v
    } else {
        arrs.to_vec()
    };
    let op = if from_right {
        // \a b -> b ⊙ a
        let mut l = rev.renamed(b, lam);
        let (first, second) = l.params.split_at(k);
        l.params = [second, first].concat();
        l
    } else {
        rev.renamed(b, lam)
    };
    let tys: Vec<Type> = lam.ret.iter().map(|t| t.array_of(w.clone())).collect();
    let inclusive = rev.bind_many(
        b,
        "scan",
        Exp::Soac(Soac::Scan {
            w: w.clone(),
            arrs: input,
            pre: None,
            lam: op,
            neutral: neutral.to_vec(),
        }),
        tys,
    );
    if from_right {
        // Element i combines the elements after i: element n-2-i of the reversed scan.
        shift(rev, b, w, &inclusive, neutral, true)
    } else {
        shift(rev, b, w, &inclusive, neutral, false)
    }
}

/// `[e, s₀, s₁, …, sₙ₋₂]`: the inclusive scan `s` shifted right by one (the exclusive scan).
pub fn exclusive_shift(
    rev: &mut Rev,
    b: &mut Builder,
    w: &SubExp,
    inclusive: &[VName],
    neutral: &[SubExp],
) -> R<Vec<VName>> {
    shift(rev, b, w, inclusive, neutral, false)
}

fn shift(
    rev: &mut Rev,
    b: &mut Builder,
    w: &SubExp,
    inclusive: &[VName],
    neutral: &[SubExp],
    reversed: bool,
) -> R<Vec<VName>> {
    let iota = build::iota(rev, b, w.clone());
    let last = b.sub_i64(w.clone(), SubExp::i64(1));
    let mut rets = Vec::new();
    for s in inclusive {
        rets.push(b.type_of(&SubExp::Var(*s))?.row());
    }
    build::map(rev, b, w, vec![iota], rets.clone(), |rev, b, ps| {
        let i = SubExp::Var(ps[0]);
        let src = if reversed {
            let j = b.sub_i64(last.clone(), i.clone());
            j
        } else {
            i.clone()
        };
        let j = b.sub_i64(src, SubExp::i64(1));
        let at_edge = build::binop(rev, b, BinOp::Lt, j.clone(), SubExp::i64(0), PrimType::I64);
        let safe = build::select(rev, b, PrimType::I64, at_edge.clone(), SubExp::i64(0), j);
        let mut out = Vec::new();
        for ((s, t), ne) in inclusive.iter().zip(&rets).zip(neutral) {
            let v = rev.bind(
                b,
                "s",
                Exp::Basic(BasicOp::Index(*s, vec![DimIndex::Fix(safe.clone())])),
                t.clone(),
            );
            out.push(if_value(
                rev,
                b,
                t,
                at_edge.clone(),
                ne.clone(),
                SubExp::Var(v),
            ));
        }
        Ok(out)
    })
}

/// `if c then a else b` for values of any type.
pub fn if_value(
    rev: &mut Rev,
    b: &mut Builder,
    t: &Type,
    c: SubExp,
    x: SubExp,
    y: SubExp,
) -> SubExp {
    let r = b.if_(c, vec![t.clone()], |_| vec![x], |_| vec![y])[0];
    b.names.set_type(r, t.clone());
    SubExp::Var(r)
}

/// `\x y -> x + y` on values of type `t` (elementwise for arrays).
pub fn add_lambda(rev: &mut Rev, b: &mut Builder, t: &Type) -> R<Lambda> {
    let x = rev.fresh_param(b, "x", t);
    let y = rev.fresh_param(b, "y", t);
    let mut sb = Builder::new(b.names);
    sb.src = b.src.clone();
    let r = build::add_values(rev, &mut sb, t, SubExp::Var(x.name), SubExp::Var(y.name))?;
    Ok(Lambda {
        id: runic_ir::LamId::fresh(),
        params: vec![x, y],
        body: sb.finish(vec![r]),
        ret: vec![t.clone()],
    })
}

/// `map (λj e… i… → if (i…) is a valid bin then f(bin, j, e…) else outside) (iota w) extra…
/// is…` for scalar results, as straight-line code (the bin index is clamped and the result
/// selected, so the executor runs it as a column program); the whole map is guarded by
/// "the destination is not empty", where no index is valid.
#[allow(clippy::too_many_arguments)]
pub fn bin_map(
    rev: &mut Rev,
    b: &mut Builder,
    w: &SubExp,
    extra: Vec<VName>,
    is: &[VName],
    dims: &[SubExp],
    outside: Vec<Prim>,
    f: impl FnOnce(&mut Rev, &mut Builder, Vec<DimIndex>, SubExp, &[VName]) -> R<Vec<SubExp>>,
) -> R<Vec<VName>> {
    let i64t = PrimType::I64;
    let mut size = SubExp::i64(1);
    for d in dims {
        size = binop(rev, b, BinOp::Mul, size, d.clone(), i64t);
    }
    let nonempty = binop(rev, b, BinOp::Gt, size, SubExp::i64(0), i64t);
    let rets: Vec<Type> = outside.iter().map(|p| Type::Prim(p.ty())).collect();
    let arr_tys: Vec<Type> = rets.iter().map(|t| t.array_of(w.clone())).collect();
    let n_extra = extra.len();
    let outs = if_with(
        rev,
        b,
        nonempty,
        arr_tys,
        |rev, b| {
            let iota = iota(rev, b, w.clone());
            let mut arrs = vec![iota];
            arrs.extend(extra);
            arrs.extend(is.iter().copied());
            let outside = outside.clone();
            let r = map(rev, b, w, arrs, rets.clone(), |rev, b, ps| {
                let j = SubExp::Var(ps[0]);
                let idx: Vec<SubExp> = ps[1 + n_extra..].iter().map(|v| SubExp::Var(*v)).collect();
                let ok = super::common::in_range(rev, b, &idx, dims);
                let bin: Vec<DimIndex> = idx
                    .into_iter()
                    .map(|i| DimIndex::Fix(select(rev, b, i64t, ok.clone(), i, SubExp::i64(0))))
                    .collect();
                let vals = f(rev, b, bin, j, &ps[1..1 + n_extra])?;
                Ok(vals
                    .into_iter()
                    .zip(&outside)
                    .map(|(v, o)| select(rev, b, o.ty(), ok.clone(), v, SubExp::Const(*o)))
                    .collect())
            })?;
            Ok(r.into_iter().map(SubExp::Var).collect())
        },
        |rev, b| {
            let mut r = Vec::new();
            for o in &outside {
                let t = Type::Prim(o.ty()).array_of(w.clone());
                let z = rev.bind(
                    b,
                    "none",
                    Exp::Basic(BasicOp::Replicate(vec![w.clone()], SubExp::Const(*o))),
                    t,
                );
                r.push(SubExp::Var(z));
            }
            Ok(r)
        },
    )?;
    outs.into_iter()
        .map(|s| s.as_var().ok_or_else(|| AdError::internal("bin_map")))
        .collect()
}

/// Remove the statements of a body whose results are unused, even those that could fail:
/// only for bodies of the return sweep, whose primal statements re-execute ones that
/// already succeeded in the forward sweep on the same values. Accumulator updates (and
/// statements containing them) are effects and stay.
pub fn prune(body: &mut Body) {
    let mut live = std::collections::HashSet::new();
    crate::scope::mentions(&body.result, &mut live);
    let mut kept = Vec::with_capacity(body.stms.len());
    for s in std::mem::take(&mut body.stms).into_iter().rev() {
        let used = s.pat.iter().any(|p| live.contains(&p.name));
        let effect =
            !used && runic_ir::traverse::any_exp(&s.exp, runic_ir::traverse::is_update_acc);
        if used || effect {
            crate::scope::mentions(&s.exp, &mut live);
            for p in &s.pat {
                crate::scope::mentions(&p.ty, &mut live);
            }
            kept.push(s);
        }
    }
    kept.reverse();
    body.stms = kept;
}
