//! `ys = scan ⊙ e xs` (seed 001 §5).
//!
//! - `+`: `x̄s += reverse (scan (+) 0 (reverse ȳs))`. Work O(n), span O(log n).
//! - General operator on a tuple of `d` scalars (of any, possibly different, types): the adjoints `r̄ᵢ` of the results obey the
//!   backward linear recurrence `r̄ᵢ = ȳᵢ + cᵢᵀ r̄ᵢ₊₁` with `cᵢ = ∂(yᵢ ⊙ xᵢ₊₁)/∂yᵢ` (a d×d
//!   Jacobian, computed per element with `d` vector-Jacobian products of `⊙`). It is
//!   solved by a scan over (vector, matrix) pairs with the composition of linear functions
//!   on the reversed arrays; then `x̄ᵢ += vjp (λx. yᵢ₋₁ ⊙ x) r̄ᵢ` is the map rule (which also
//!   gives free variables of `⊙` their adjoints). Work O(n·d³), span O(log n).

use super::build::{self, at};
use super::{common, differentiable, map, Rev, R};
use crate::error::AdError;
use runic_ir::*;

pub fn reverse(
    rev: &mut Rev,
    b: &mut Builder,
    pat: &[Param],
    w: SubExp,
    arrs: Vec<VName>,
    lam: Lambda,
    neutral: Vec<SubExp>,
) -> R<()> {
    if let (Some((BinOp::Add, t)), [x], [p]) = (lam.binop_either_order(), &arrs[..], pat) {
        let Some(ybar) = rev.adjs.get(&p.name).cloned() else {
            return Ok(());
        };
        if !rev.active.contains(x) {
            return Ok(());
        }
        let yv = ybar
            .as_var()
            .ok_or_else(|| AdError::internal("scan adjoint is a scalar"))?;
        // x̄s += reverse (scan (+) 0 (reverse ȳs))
        let r = b.reverse(w.clone(), yv)?;
        let plus = b.binop_lam(BinOp::Add, t);
        let zero = SubExp::Const(Prim::zero(t));
        let s = b.scan("scan", w.clone(), plus, vec![zero], vec![r])?;
        let xbar = b.reverse(w, s[0])?;
        rev.owned.insert(xbar);
        return rev.add_adj(b, &SubExp::Var(*x), SubExp::Var(xbar));
    }
    general(rev, b, pat, w, arrs, lam, neutral)
}

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
    // The differentiable components and their scalar types (which may differ: row s of
    // the recurrence is in the type of component s).
    let comps: Vec<usize> = (0..k).filter(|&j| differentiable(&lam.ret[j])).collect();
    let mut tys = Vec::new();
    for &j in &comps {
        match &lam.ret[j] {
            Type::Prim(t) => tys.push(*t),
            _ => {
                return Err(AdError::unsupported(
                    "vjp of a scan whose operator is not on scalars",
                ))
            }
        }
    }
    if comps.is_empty() {
        return Ok(());
    }
    let zero = |s: usize| SubExp::Const(Prim::zero(tys[s]));
    let one = |s: usize| SubExp::Const(Prim::one(tys[s]));
    let d = comps.len();
    let ys: Vec<VName> = pat.iter().map(|p| p.name).collect();
    let mut ybar = Vec::new();
    for &j in &comps {
        ybar.push(
            rev.adj(b, ys[j])?
                .as_var()
                .ok_or_else(|| AdError::internal("scan adjoint"))?,
        );
    }
    // Block-diagonal sparsity: components whose results never read each other's left
    // operands get separate, smaller recurrences (only the blocks' entries are computed).
    let blocks = jacobian_blocks(&lam, &comps);
    let needed: Vec<(usize, usize)> = blocks
        .iter()
        .flat_map(|bl| {
            bl.iter()
                .flat_map(move |&s| bl.iter().map(move |&r| (s, r)))
        })
        .collect();
    // Per reversed position t (element i = n-1-t): a = ȳᵢ, B = cᵢᵀ (zero at the last).
    let iota = b.iota(w.clone());
    let last = b.sub_i64(w.clone(), SubExp::i64(1));
    let elems = b.map_fn("m", w.clone(), vec![iota], |b, ps| -> R<_> {
        let i = b.sub_i64(last.clone(), ps[0].clone());
        let is_last = b.op2(BinOp::Eq, i.clone(), last)?;
        let next = b.add_i64(i.clone(), SubExp::i64(1));
        let next = b.select(is_last.clone(), i.clone(), next)?;
        let mut out = Vec::new();
        for yb in &ybar {
            out.push(b.let_basic("a", at(*yb, i.clone()))?);
        }
        // Arguments of yᵢ ⊙ xᵢ₊₁.
        let mut args = Vec::new();
        for y in &ys {
            args.push(b.let_basic("y", at(*y, i.clone()))?);
        }
        for x in &arrs {
            args.push(b.let_basic("x", at(*x, next.clone()))?);
        }
        let active: Vec<bool> = (0..2 * k).map(|j| j < k && comps.contains(&j)).collect();
        // Column r of cᵢᵀ is the vjp of the operator's r-th result w.r.t. its left side.
        let mut cols = Vec::new();
        for (pr, &r) in comps.iter().enumerate() {
            let cot = (0..k).map(|j| (j == r).then(|| one(pr))).collect();
            cols.push(lambda_vjp(b, &lam, &args, &active, cot)?);
        }
        for &(s, r) in &needed {
            out.push(b.select(is_last.clone(), zero(s), cols[r][s].clone())?);
        }
        Ok(out)
    })?;
    // Per block, a scan with the composition of affine maps:
    // (a1,B1) ⊕ (a2,B2) = (a2 + B2·a1, B2·B1); then r̄ᵢ = z_{n-1-i}, reversed back.
    let mut rbar: Vec<Option<VName>> = vec![None; d];
    let mut entry = d;
    for bl in &blocks {
        let db = bl.len();
        let op = compose_op(b, &bl.iter().map(|&s| tys[s]).collect::<Vec<_>>())?;
        let mut ne: Vec<SubExp> = bl.iter().map(|&s| zero(s)).collect();
        let mut arrs_b: Vec<VName> = bl.iter().map(|&s| elems[s]).collect();
        for &s in bl {
            for &r in bl {
                ne.push(if s == r { one(s) } else { zero(s) });
                arrs_b.push(elems[entry]);
                entry += 1;
            }
        }
        let z = b.scan("z", w.clone(), op, ne, arrs_b)?;
        for (&s, zj) in bl.iter().zip(&z[..db]) {
            rbar[s] = Some(b.reverse(w.clone(), *zj)?);
        }
    }
    // x̄ᵢ through the map rule on m = map (λyl x. yl ⊙ x) ylag xs (of the operator's
    // type), m̄ = r̄.
    let ylag = common::exclusive_shift(b, &w, &ys, &neutral)?;
    let map_arrs = [ylag, arrs].concat();
    let mut params = Vec::new();
    for a in &map_arrs {
        params.push(("p", b.type_of(&SubExp::Var(*a))?.row()));
    }
    let comb = b.lambda(params, lam.ret.clone(), |b, vs| {
        let vs: Vec<SubExp> = vs.iter().map(|v| SubExp::Var(*v)).collect();
        b.inline(&lam, &vs)
    });
    let mut seeds = vec![None; lam.ret.len()];
    for (&j, rb) in comps.iter().zip(rbar) {
        let rb = rb.ok_or_else(|| AdError::internal("scan block"))?;
        seeds[j] = Some(SubExp::Var(rb));
    }
    map::reverse_seeded(rev, b, w, comb, map_arrs, seeds, &[])?;
    Ok(())
}

/// The adjoints of the arguments of `lam` marked `active`, for the cotangents `cot` of its
/// results, at `args` (the other arguments and free variables are constants here).
pub fn lambda_vjp(
    b: &mut Builder,
    lam: &Lambda,
    args: &[SubExp],
    active: &[bool],
    cot: Vec<Option<SubExp>>,
) -> R<Vec<SubExp>> {
    let mut inner = Rev::new();
    let l = b.renamed(lam);
    for ((p, a), act) in l.params.iter().zip(args).zip(active) {
        build::copy_to(b, p.clone(), a.clone());
        if *act {
            inner.mark_active(p);
        }
    }
    inner.sweep(b, l.body, cot)?;
    let mut out = Vec::new();
    for (p, act) in l.params.iter().zip(active) {
        if *act {
            out.push(inner.adj(b, p.name)?);
        }
    }
    Ok(out)
}

/// `(a1, B1) ⊕ (a2, B2) = (a2 + B2·a1, B2·B1)` on `d`-vectors and row-major d×d matrices,
/// where entry `s` of a vector and row `s` of a matrix have type `ts[s]` (a value of
/// component `q` feeding row `s` is converted to `ts[s]`: the chain rule across a type
/// change, as the conversion's own derivative does).
fn compose_op(b: &mut Builder, ts: &[PrimType]) -> R<Lambda> {
    let d = ts.len();
    let n = d + d * d;
    let mut params = Vec::new();
    for _side in 0..2 {
        params.extend(ts.iter().map(|t| ("c", Type::Prim(*t))));
        for t in ts {
            params.extend(ts.iter().map(|_| ("c", Type::Prim(*t))));
        }
    }
    b.lam(params, |b, v| -> R<_> {
        let a = |side: usize, s: usize| v[side * n + s].clone();
        let m = |side: usize, s: usize, r: usize| v[side * n + d + s * d + r].clone();
        let mut out = Vec::new();
        for (s, &t) in ts.iter().enumerate() {
            let mut acc = a(1, s);
            for q in 0..d {
                let x = as_type(b, t, a(0, q))?;
                let p = b.mul_(m(1, s, q), x)?;
                acc = b.add_(acc, p)?;
            }
            out.push(acc);
        }
        for (s, &t) in ts.iter().enumerate() {
            for r in 0..d {
                let mut acc = SubExp::Const(Prim::zero(t));
                for q in 0..d {
                    let x = as_type(b, t, m(0, q, r))?;
                    let p = b.mul_(m(1, s, q), x)?;
                    acc = b.add_(acc, p)?;
                }
                out.push(acc);
            }
        }
        Ok(out)
    })
}

/// `x` converted to `t` (itself when it has that type already).
fn as_type(b: &mut Builder, t: PrimType, x: SubExp) -> R<SubExp> {
    Ok(if b.prim_of(&x)? == t {
        x
    } else {
        b.convert(t, x)
    })
}

/// The blocks of the Jacobian of `lam` with respect to its left operands, over the
/// differentiable components `comps` (positions into `comps`): result `r` depends on left
/// operand `s` when the operator's code for `r` reads it; connected components are blocks.
fn jacobian_blocks(lam: &Lambda, comps: &[usize]) -> Vec<Vec<usize>> {
    use std::collections::{HashMap, HashSet};
    let k = lam.ret.len();
    // For every variable, the left operands (parameter indices < k) it depends on.
    let mut deps: HashMap<VName, HashSet<usize>> = HashMap::new();
    for (i, p) in lam.params.iter().enumerate().take(k) {
        deps.insert(p.name, HashSet::from([i]));
    }
    for st in &lam.body.stms {
        let mut used = HashSet::new();
        crate::scope::mentions(&st.exp, &mut used);
        let mut d = HashSet::new();
        for v in &used {
            if let Some(x) = deps.get(v) {
                d.extend(x.iter().copied());
            }
        }
        for p in &st.pat {
            deps.insert(p.name, d.clone());
        }
    }
    // Union-find over positions in `comps`.
    let n = comps.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(parent: &mut [usize], x: usize) -> usize {
        let mut r = x;
        while parent[r] != r {
            r = parent[r];
        }
        parent[x] = r;
        r
    }
    for (pr, &r) in comps.iter().enumerate() {
        let from: HashSet<usize> = match &lam.body.result[r] {
            SubExp::Var(v) => deps.get(v).cloned().unwrap_or_default(),
            SubExp::Const(_) => HashSet::new(),
        };
        for s in from {
            if let Some(ps) = comps.iter().position(|&c| c == s) {
                let (a, b) = (find(&mut parent, pr), find(&mut parent, ps));
                parent[a] = b;
            }
        }
    }
    let mut blocks: Vec<Vec<usize>> = Vec::new();
    let mut index: HashMap<usize, usize> = HashMap::new();
    for x in 0..n {
        let root = find(&mut parent, x);
        let bi = *index.entry(root).or_insert_with(|| {
            blocks.push(Vec::new());
            blocks.len() - 1
        });
        blocks[bi].push(x);
    }
    blocks
}
