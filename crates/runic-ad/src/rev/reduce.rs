//! `y = reduce ⊙ e xs` (seed 001 §3).
//!
//! The forward sweep is rewritten for `min`/`max` and `*` ([`forward`]): it saves the
//! extremum's position, or the non-zero product and zero count, for the return sweep.
//!
//! - `+`: `x̄s += replicate n ȳ`. Work O(n), span O(1).
//! - `*`: the primal's zeros are counted and the non-zeros multiplied (one more reduce);
//!   `x̄ᵢ += ȳ·p/xᵢ` with no zero, `ȳ·p` at the single zero, nothing with two or more
//!   (`p` the product of the non-zeros and of `e`). Work O(n), span O(log n). Floats only;
//!   integer products use the general rule.
//! - `min`/`max`: the forward sweep finds the extremum's position by a second reduce, the
//!   smallest index holding the primal's result (none when the neutral element is the
//!   result; a NaN never equals it); only that element's adjoint grows by `ȳ`, unless the
//!   extremum is NaN. Two plain reduces rather than one over (value, index) pairs: the
//!   value's runs in vector lanes, and the positions' is an integer `min`, where the pair's
//!   operator put about ten dependent operations on the critical path of every step
//!   (k-means' gradient: its arg-min as long as all its distances). Work O(n), span
//!   O(log n).
//! - General operator: `ls = exclusive scan ⊙ e xs`, `rs` the same from the right, then
//!   `x̄ᵢ += vjp (λx. lᵢ ⊙ x ⊙ rᵢ) ȳ` as a map (the map rule, so free variables of `⊙` get
//!   their adjoints too). Work O(n), span O(log n).

use super::{common, map, Rev, Saved, R};
use crate::alg::prim_of;
use crate::error::AdError;
use runic_ir::*;

/// The forward sweep of an active `reduce`: `min`/`max` bind the extremum's position after
/// the value (a second reduce, over the positions holding it), `*` binds the product of the non-zeros and the
/// number of zeros beside the product; both save them for [`reverse`]. Other reduces are
/// the primal statement.
pub fn forward(rev: &mut Rev, b: &mut Builder, s: &Stm) -> R<()> {
    let Exp::Soac(Soac::Reduce {
        w,
        arrs,
        pre: None,
        lam,
        neutral,
        ..
    }) = &s.exp
    else {
        b.add(s.clone());
        return Ok(());
    };
    let (Some((op, t)), [x], [_], [p]) = (
        lam.binop_either_order(),
        &arrs[..],
        &neutral[..],
        &s.pat[..],
    ) else {
        b.add(s.clone());
        return Ok(());
    };
    match op {
        BinOp::Min | BinOp::Max if rev.active.contains(x) => {
            b.add(s.clone());
            let idx = arg_extremum(b, w, *x, SubExp::Var(p.name))?;
            rev.saved.insert(p.name, Saved::Values(vec![idx]));
        }
        BinOp::Mul if t.is_float() && rev.active.contains(x) => {
            b.add(s.clone());
            let (prod, zeros) = nonzero_product(b, w, *x)?;
            rev.saved.insert(p.name, Saved::Values(vec![prod, zeros]));
        }
        _ => b.add(s.clone()),
    }
    Ok(())
}

pub fn reverse(
    rev: &mut Rev,
    b: &mut Builder,
    pat: &[Param],
    w: SubExp,
    arrs: Vec<VName>,
    lam: Lambda,
    neutral: Vec<SubExp>,
) -> R<()> {
    if let (Some((op, t)), [x], [ne], [p]) =
        (lam.binop_either_order(), &arrs[..], &neutral[..], pat)
    {
        let Some(ybar) = rev.adjs.get(&p.name).cloned() else {
            return Ok(());
        };
        if !rev.active.contains(x) {
            return Ok(());
        }
        let y = SubExp::Var(p.name);
        let saved = match rev.saved.remove(&p.name) {
            Some(Saved::Values(v)) => Some(v),
            _ => None,
        };
        match op {
            BinOp::Add => return plus(rev, b, &w, *x, ybar),
            BinOp::Mul if t.is_float() && !rev.differentiated_again => {
                return times(rev, b, &w, *x, ne.clone(), ybar, saved)
            }
            BinOp::Min | BinOp::Max => return extremum(rev, b, &w, *x, y, ne.clone(), ybar, saved),
            _ => {}
        }
    }
    general(rev, b, pat, w, arrs, lam, neutral)
}

/// `x̄ += replicate n ȳ`.
fn plus(rev: &mut Rev, b: &mut Builder, w: &SubExp, x: VName, ybar: SubExp) -> R<()> {
    let r = b.let_exp("adj", Exp::Basic(BasicOp::Replicate(vec![w.clone()], ybar)))?[0];
    rev.owned.insert(r);
    rev.add_adj(b, &SubExp::Var(x), SubExp::Var(r))
}

/// `x̄ᵢ += ȳ·p/xᵢ` with no zero, `ȳ·p` at the single zero, 0 with more.
#[allow(clippy::too_many_arguments)]
fn times(
    rev: &mut Rev,
    b: &mut Builder,
    w: &SubExp,
    x: VName,
    ne: SubExp,
    ybar: SubExp,
    saved: Option<Vec<SubExp>>,
) -> R<()> {
    let t = b.prim_of(&ybar)?;
    let (zero, one) = (SubExp::Const(Prim::zero(t)), SubExp::Const(Prim::one(t)));
    // (product of the non-zeros, number of zeros), from the forward sweep if it saved them
    let (prod, zeros) = match saved.as_deref() {
        Some([prod, zeros]) => (prod.clone(), zeros.clone()),
        _ => nonzero_product(b, w, x)?,
    };
    // The neutral element counts as one more factor.
    let ne_zero = b.op2(BinOp::Eq, ne.clone(), zero.clone())?;
    let ne_factor = b.select(ne_zero.clone(), one.clone(), ne)?;
    let prod = b.mul_(prod, ne_factor)?;
    let ne_count = b.select(ne_zero, SubExp::i64(1), SubExp::i64(0))?;
    let zeros = b.add_(zeros, ne_count)?;
    let scaled = b.mul_(prod, ybar)?;
    let xbar = b.map_fn("m", w.clone(), vec![x], |b, xi| -> R<_> {
        let xi = xi[0].clone();
        let is_zero = b.op2(BinOp::Eq, xi.clone(), zero.clone())?;
        let none = b.op2(BinOp::Eq, zeros.clone(), SubExp::i64(0))?;
        let single = b.op2(BinOp::Eq, zeros, SubExp::i64(1))?;
        // No zero: ȳ·p/xᵢ (xᵢ is not zero here).
        let safe = b.select(is_zero.clone(), one, xi)?;
        let div = b.op2(BinOp::Div, scaled.clone(), safe)?;
        // One zero: ȳ·p at it.
        let at_zero = b.select(is_zero, scaled, zero.clone())?;
        let one_case = b.select(single, at_zero, zero)?;
        Ok(vec![b.select(none, div, one_case)?])
    })?;
    rev.owned.insert(xbar[0]);
    rev.add_adj(b, &SubExp::Var(x), SubExp::Var(xbar[0]))
}

/// The product of the non-zero elements of `x` and the number of zeros: two reduces of
/// simple operators (the executor's native folds), each with the per-element choice of
/// [`common::nonzero_pairs`] fused in as its producer, so that no array of pairs is made.
fn nonzero_product(b: &mut Builder, w: &SubExp, x: VName) -> R<(SubExp, SubExp)> {
    let row = b.type_of(&SubExp::Var(x))?.row();
    let t = prim_of(b.names, &SubExp::Var(x))?;
    let mut out = Vec::new();
    for (counts, op, ne, rt) in [
        (false, BinOp::Mul, Prim::one(t), t),
        (true, BinOp::Add, Prim::I64(0), PrimType::I64),
    ] {
        let pre = b.lam(vec![("x", row.clone())], |b, xi| -> R<_> {
            let z = b.op2(BinOp::Eq, xi[0].clone(), SubExp::Const(Prim::zero(t)))?;
            let (on_zero, other) = if counts {
                (SubExp::i64(1), SubExp::i64(0))
            } else {
                (SubExp::Const(Prim::one(t)), xi[0].clone())
            };
            Ok(vec![b.select(z, on_zero, other)?])
        })?;
        let lam = b.binop_lam(op, rt);
        let nz = Soac::Reduce {
            w: w.clone(),
            arrs: vec![x],
            pre: Some(pre),
            lam,
            neutral: vec![SubExp::Const(ne)],
            commutative: true,
        };
        out.push(SubExp::Var(b.let_exp("nz", Exp::Soac(nz))?[0]));
    }
    Ok((out[0].clone(), out[1].clone()))
}

/// `x̄ₖ += ȳ` for the first `k` with `xₖ = y`, unless the neutral element won.
#[allow(clippy::too_many_arguments)]
fn extremum(
    rev: &mut Rev,
    b: &mut Builder,
    w: &SubExp,
    x: VName,
    y: SubExp,
    ne: SubExp,
    ybar: SubExp,
    saved: Option<Vec<SubExp>>,
) -> R<()> {
    // The position from the forward sweep, or found again by a pass over `x`.
    let idx = match saved.as_deref() {
        Some([idx]) => idx.clone(),
        _ => arg_extremum(b, w, x, y.clone())?,
    };
    // The neutral element comes first, so it wins ties: then nothing flows to the elements.
    // (`idx < w` always holds; stated, it proves the update below in bounds, so that DCE
    // may drop it when nothing reads the adjoint.)
    let found = b.op2(BinOp::Ge, idx.clone(), SubExp::i64(0))?;
    let below = b.op2(BinOp::Lt, idx.clone(), w.clone())?;
    let found = b.op2(BinOp::LogAnd, found, below)?;
    let not_ne = b.op2(BinOp::Neq, y.clone(), ne)?;
    let found = b.op2(BinOp::LogAnd, found, not_ne)?;
    // A NaN extremum (every element NaN) passes nothing on, whichever position holds it.
    let number = b.op2(BinOp::Eq, y.clone(), y)?;
    let found = b.op2(BinOp::LogAnd, found, number)?;
    if rev.accs.contains_key(&x) {
        // An accumulator ignores a write out of range: −1 when nothing is found.
        let i = b.select(found, idx, SubExp::i64(-1))?;
        return rev.add_adj_at(b, x, &[DimIndex::Fix(i)], ybar);
    }
    if !rev.active.contains(&x) {
        return Ok(());
    }
    // ȳ goes to one element: an update of the adjoint in place under a branch, not a pass
    // over the array. A first adjoint is zero there, so ȳ is written as it is (which also
    // lets the sparse-adjoints pass read it off without building the array).
    let first = !rev.adjs.contains_key(&x);
    let a = rev.owned_adj(b, x)?;
    let upd = b.let_if(
        "r",
        found,
        |b| -> R<_> {
            let at = vec![DimIndex::Fix(idx)];
            let new = if first {
                ybar
            } else {
                let old = b.let_basic("old", BasicOp::Index(a, at.clone()))?;
                b.add_(old, ybar)?
            };
            Ok(vec![b.let_basic("adj", BasicOp::Update(a, at, new))?])
        },
        |_| Ok(vec![SubExp::Var(a)]),
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
fn arg_extremum(b: &mut Builder, w: &SubExp, x: VName, y: SubExp) -> R<SubExp> {
    let none = SubExp::i64(i64::MAX);
    let iota = b.iota(w.clone());
    let cand = b.map_fn("m", w.clone(), vec![x, iota], |b, xi| -> R<_> {
        let eq = b.op2(BinOp::Eq, xi[0].clone(), y)?;
        Ok(vec![b.select(eq, xi[1].clone(), none.clone())?])
    })?;
    let min = b.binop_lam(BinOp::Min, PrimType::I64);
    let m = b.reduce_comm("arg", w.clone(), min, vec![none.clone()], cand)?;
    let not_found = b.op2(BinOp::Eq, m[0].clone(), none)?;
    Ok(b.select(not_found, SubExp::i64(-1), m[0].clone())?)
}

/// The general rule: exclusive scans from both sides, then the map rule on
/// `λl x r. (l ⊙ x) ⊙ r`.
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
    let ls = common::exclusive_scan(b, &w, &arrs, &lam, &neutral, false)?;
    let rs = common::exclusive_scan(b, &w, &arrs, &lam, &neutral, true)?;
    // m = map (\l x r -> (l ⊙ x) ⊙ r) ls xs rs (of the operator's type), with every
    // result's adjoint ȳ.
    let map_arrs = [ls, arrs, rs].concat();
    let mut params = Vec::new();
    for a in &map_arrs {
        params.push(("p", b.type_of(&SubExp::Var(*a))?.row()));
    }
    let comb = b.lambda(params, lam.ret.clone(), |b, v| {
        let v: Vec<SubExp> = v.iter().map(|p| SubExp::Var(*p)).collect();
        let lx = b.inline(&lam, &v[..2 * k]);
        b.inline(&lam, &[&lx[..], &v[2 * k..]].concat())
    });
    // ls and rs are not active, so nothing flows into the scans.
    let mut seeds = Vec::new();
    for yb in ybar {
        let r = b.let_basic("adj", BasicOp::Replicate(vec![w.clone()], yb))?;
        seeds.push(Some(r));
    }
    map::reverse_seeded(rev, b, w, comb, map_arrs, seeds, &[])?;
    Ok(())
}
