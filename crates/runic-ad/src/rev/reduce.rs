//! `y = reduce ⊙ e xs` (seed 001 §3).
//!
//! - `+`: `x̄s += replicate n ȳ`. Work O(n), span O(1).
//! - `*`: the primal's zeros are counted and the non-zeros multiplied (one more reduce);
//!   `x̄ᵢ += ȳ·p/xᵢ` with no zero, `ȳ·p` at the single zero, nothing with two or more
//!   (`p` the product of the non-zeros and of `e`). Work O(n), span O(log n). Floats only;
//!   integer products use the general rule.
//! - `min`/`max`: a reduce tracking the index of the extremum (the smallest index wins
//!   ties, and the neutral element, at index −1, wins over the elements); only that
//!   element's adjoint grows by `ȳ`. Work O(n), span O(log n).
//! - General operator: `ls = exclusive scan ⊙ e xs`, `rs` the same from the right, then
//!   `x̄ᵢ += vjp (λx. lᵢ ⊙ x ⊙ rᵢ) ȳ` as a map (the map rule, so free variables of `⊙` get
//!   their adjoints too). Work O(n), span O(log n).

use super::{build, common, map, Rev, R};
use crate::error::AdError;
use runic_ir::*;

#[allow(clippy::too_many_arguments)]
pub fn reverse(
    rev: &mut Rev,
    b: &mut Builder,
    pat: &[Param],
    w: SubExp,
    arrs: Vec<VName>,
    lam: Lambda,
    neutral: Vec<SubExp>,
) -> R<()> {
    if let (Some((op, t)), [x], [ne], [p]) = (
        crate::scope::simple_binop(&lam),
        &arrs[..],
        &neutral[..],
        pat,
    ) {
        let Some(ybar) = rev.adjs.get(&p.name).cloned() else {
            return Ok(());
        };
        if !rev.active.contains(x) {
            return Ok(());
        }
        match op {
            BinOp::Add => return plus(rev, b, &w, *x, ybar, t),
            BinOp::Mul if t.is_float() && !rev.differentiated_again => {
                return times(rev, b, &w, *x, ne.clone(), ybar, t)
            }
            BinOp::Min | BinOp::Max => {
                let y = SubExp::Var(p.name);
                return extremum(rev, b, &w, *x, y, ne.clone(), ybar, t, op);
            }
            _ => {}
        }
    }
    general(rev, b, pat, w, arrs, lam, neutral)
}

fn plus(rev: &mut Rev, b: &mut Builder, w: &SubExp, x: VName, ybar: SubExp, t: PrimType) -> R<()> {
    let ty = Type::Prim(t).array_of(w.clone());
    let r = rev.bind(
        b,
        "adj",
        Exp::Basic(BasicOp::Replicate(vec![w.clone()], ybar)),
        ty,
    );
    rev.owned.insert(r);
    rev.add_adj(b, &SubExp::Var(x), SubExp::Var(r))
}

fn times(
    rev: &mut Rev,
    b: &mut Builder,
    w: &SubExp,
    x: VName,
    ne: SubExp,
    ybar: SubExp,
    t: PrimType,
) -> R<()> {
    let i64t = PrimType::I64;
    // (product of the non-zeros, number of zeros)
    let (prod, zeros) = nonzero_product(rev, b, w, x, t)?;
    // The neutral element counts as one more factor.
    let ne_zero = build::binop(
        rev,
        b,
        BinOp::Eq,
        ne.clone(),
        SubExp::Const(Prim::zero(t)),
        t,
    );
    let ne_factor = build::select(rev, b, t, ne_zero.clone(), SubExp::Const(Prim::one(t)), ne);
    let prod = build::binop(rev, b, BinOp::Mul, prod, ne_factor, t);
    let ne_count = build::select(rev, b, i64t, ne_zero, SubExp::i64(1), SubExp::i64(0));
    let zeros = build::binop(rev, b, BinOp::Add, zeros, ne_count, i64t);
    let scaled = build::binop(rev, b, BinOp::Mul, prod, ybar, t);
    let xbar = build::map(rev, b, w, vec![x], vec![Type::Prim(t)], |rev, b, ps| {
        let xi = SubExp::Var(ps[0]);
        let is_zero = build::binop(
            rev,
            b,
            BinOp::Eq,
            xi.clone(),
            SubExp::Const(Prim::zero(t)),
            t,
        );
        let none = build::binop(rev, b, BinOp::Eq, zeros.clone(), SubExp::i64(0), i64t);
        let one = build::binop(rev, b, BinOp::Eq, zeros.clone(), SubExp::i64(1), i64t);
        let zero = SubExp::Const(Prim::zero(t));
        // No zero: ȳ·p/xᵢ (xᵢ is not zero here).
        let safe = build::select(rev, b, t, is_zero.clone(), SubExp::Const(Prim::one(t)), xi);
        let div = build::binop(rev, b, BinOp::Div, scaled.clone(), safe, t);
        // One zero: ȳ·p at it.
        let at_zero = build::select(rev, b, t, is_zero, scaled.clone(), zero.clone());
        let one_case = build::select(rev, b, t, one, at_zero, zero);
        Ok(vec![build::select(rev, b, t, none, div, one_case)])
    })?;
    rev.owned.insert(xbar[0]);
    rev.add_adj(b, &SubExp::Var(x), SubExp::Var(xbar[0]))
}

/// The product of the non-zero elements of `x` and the number of zeros: two reduces of
/// simple operators (the executor's native folds), each with the per-element choice of
/// [`nonzero_pairs`] fused in as its producer, so that no array of pairs is made.
pub fn nonzero_product(
    rev: &mut Rev,
    b: &mut Builder,
    w: &SubExp,
    x: VName,
    t: PrimType,
) -> R<(SubExp, SubExp)> {
    let i64t = PrimType::I64;
    let mut out = Vec::new();
    for (counts, op, ne, rt) in [
        (false, BinOp::Mul, Prim::one(t), t),
        (true, BinOp::Add, Prim::I64(0), i64t),
    ] {
        let pre = b.lambda(vec![("x", Type::Prim(t))], vec![Type::Prim(rt)], |b, ps| {
            let xi = SubExp::Var(ps[0]);
            let zero = SubExp::Const(Prim::zero(t));
            let z = build::binop(rev, b, BinOp::Eq, xi.clone(), zero, t);
            let (on_zero, other) = if !counts {
                (SubExp::Const(Prim::one(t)), xi)
            } else {
                (SubExp::i64(1), SubExp::i64(0))
            };
            vec![build::select(rev, b, rt, z, on_zero, other)]
        });
        b.names.record_types(&pre);
        let lam = runic_ir::builder::binop_lambda(b.names, op, rt);
        b.names.record_types(&lam);
        let r = rev.bind(
            b,
            "nz",
            Exp::Soac(Soac::Reduce {
                w: w.clone(),
                arrs: vec![x],
                pre: Some(pre),
                lam,
                neutral: vec![SubExp::Const(ne)],
                commutative: true,
            }),
            Type::Prim(rt),
        );
        out.push(SubExp::Var(r));
    }
    Ok((out[0].clone(), out[1].clone()))
}

#[allow(clippy::too_many_arguments)]
fn extremum(
    rev: &mut Rev,
    b: &mut Builder,
    w: &SubExp,
    x: VName,
    y: SubExp,
    ne: SubExp,
    ybar: SubExp,
    t: PrimType,
    op: BinOp,
) -> R<()> {
    let idx = arg_extremum(rev, b, w, x, y.clone(), t, op)?;
    // The neutral element comes first, so it wins ties: then nothing flows to the elements.
    let found = build::binop(
        rev,
        b,
        BinOp::Ge,
        idx.clone(),
        SubExp::i64(0),
        PrimType::I64,
    );
    let not_ne = build::binop(rev, b, BinOp::Neq, y, ne, t);
    let found = build::binop(rev, b, BinOp::LogAnd, found, not_ne, PrimType::Bool);
    if rev.accs.contains_key(&x) {
        // An accumulator ignores a write out of range: −1 when nothing is found.
        let i = build::select(rev, b, PrimType::I64, found, idx, SubExp::i64(-1));
        return rev.add_adj_at(b, x, &[DimIndex::Fix(i)], ybar);
    }
    if !rev.active.contains(&x) {
        return Ok(());
    }
    // ȳ goes to one element: an update of the adjoint in place under a branch, not a pass
    // over the array.
    let a = rev.owned_adj(b, x)?;
    let ty = b.type_of(&SubExp::Var(a))?;
    let upd = build::if_with(
        rev,
        b,
        found,
        vec![ty.clone()],
        |rev, b| {
            let at = vec![DimIndex::Fix(idx.clone())];
            let old = rev.bind(
                b,
                "old",
                Exp::Basic(BasicOp::Index(a, at.clone())),
                Type::Prim(t),
            );
            let sum = build::binop(rev, b, BinOp::Add, SubExp::Var(old), ybar.clone(), t);
            let upd = Exp::Basic(BasicOp::Update(a, at, sum));
            Ok(vec![SubExp::Var(rev.bind(b, "adj", upd, ty.clone()))])
        },
        |_, _| Ok(vec![SubExp::Var(a)]),
    )?;
    let upd = upd[0]
        .as_var()
        .ok_or_else(|| AdError::internal("an array adjoint is a constant"))?;
    rev.owned.remove(&a);
    rev.owned.insert(upd);
    rev.adjs.insert(x, SubExp::Var(upd));
    Ok(())
}

/// The smallest index of `y` (the reduce's result) in `x`, or −1 when no element equals
/// it (the neutral element won). One reduce with `min` over matching indices.
pub fn arg_extremum(
    rev: &mut Rev,
    b: &mut Builder,
    w: &SubExp,
    x: VName,
    y: SubExp,
    t: PrimType,
    _op: BinOp,
) -> R<SubExp> {
    let i64t = PrimType::I64;
    let iota = build::iota(rev, b, w.clone());
    let cand = build::map(
        rev,
        b,
        w,
        vec![x, iota],
        vec![Type::Prim(i64t)],
        |rev, b, ps| {
            let eq = build::binop(rev, b, BinOp::Eq, SubExp::Var(ps[0]), y.clone(), t);
            Ok(vec![build::select(
                rev,
                b,
                i64t,
                eq,
                SubExp::Var(ps[1]),
                SubExp::i64(i64::MAX),
            )])
        },
    )?;
    let lam = runic_ir::builder::binop_lambda(b.names, BinOp::Min, i64t);
    b.names.record_types(&lam);
    let m = rev.bind(
        b,
        "arg",
        Exp::Soac(Soac::Reduce {
            w: w.clone(),
            arrs: cand,
            pre: None,
            lam,
            neutral: vec![SubExp::i64(i64::MAX)],
            commutative: true,
        }),
        Type::Prim(i64t),
    );
    let none = build::binop(
        rev,
        b,
        BinOp::Eq,
        SubExp::Var(m),
        SubExp::i64(i64::MAX),
        i64t,
    );
    Ok(build::select(
        rev,
        b,
        i64t,
        none,
        SubExp::i64(-1),
        SubExp::Var(m),
    ))
}

/// The general rule: exclusive scans from both sides, then the map rule on
/// `λl x r. (l ⊙ x) ⊙ r`.
#[allow(clippy::too_many_arguments)]
fn general(
    rev: &mut Rev,
    b: &mut Builder,
    pat: &[Param],
    w: SubExp,
    arrs: Vec<VName>,
    lam: Lambda,
    neutral: Vec<SubExp>,
) -> R<()> {
    let k = neutral.len();
    if pat.len() != k || arrs.len() != k {
        return Err(AdError::internal("reduce arity"));
    }
    let mut ybar = Vec::new();
    for p in pat {
        ybar.push(rev.adj(b, p.name)?);
    }
    let ls = common::exclusive_scan(rev, b, &w, &arrs, &lam, &neutral, false)?;
    let rs = common::exclusive_scan(rev, b, &w, &arrs, &lam, &neutral, true)?;
    // m = map (\l x r -> (l ⊙ x) ⊙ r) ls xs rs, with every result's adjoint ȳ.
    let mut sb = Builder::new(b.names);
    sb.src = b.src.clone();
    let mut params = Vec::new();
    for group in [&ls, &arrs, &rs] {
        for a in group.iter() {
            let t = sb.type_of(&SubExp::Var(*a))?.row();
            params.push(rev.fresh_param(&mut sb, "p", &t));
        }
    }
    let v: Vec<SubExp> = params.iter().map(|p| SubExp::Var(p.name)).collect();
    let lx = build::apply(rev, &mut sb, &lam, &[&v[..k], &v[k..2 * k]].concat());
    let lxr = build::apply(rev, &mut sb, &lam, &[&lx[..], &v[2 * k..]].concat());
    let body = sb.finish(lxr);
    let comb = Lambda {
        id: runic_ir::LamId::fresh(),
        params,
        body,
        ret: lam.ret.clone(),
    };
    let mut map_arrs = ls.clone();
    map_arrs.extend(arrs.iter().copied());
    map_arrs.extend(rs.iter().copied());
    // The map's results get the replicated ȳ as adjoints; ls and rs are not active, so
    // nothing flows into the scans.
    let mut seeds = Vec::new();
    for (t, yb) in lam.ret.iter().zip(ybar) {
        let r = rev.bind(
            b,
            "adj",
            Exp::Basic(BasicOp::Replicate(vec![w.clone()], yb)),
            t.array_of(w.clone()),
        );
        seeds.push(Some(SubExp::Var(r)));
    }
    map::reverse_seeded(rev, b, w, comb, map_arrs, seeds, &[])?;
    Ok(())
}
