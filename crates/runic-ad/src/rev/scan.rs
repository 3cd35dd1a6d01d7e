//! `ys = scan ⊙ e xs` (seed 001 §5).
//!
//! - `+`: `x̄s += reverse (scan (+) 0 (reverse ȳs))`. Work O(n), span O(log n).
//! - General operator on a tuple of `d` scalars: the adjoints `r̄ᵢ` of the results obey the
//!   backward linear recurrence `r̄ᵢ = ȳᵢ + cᵢᵀ r̄ᵢ₊₁` with `cᵢ = ∂(yᵢ ⊙ xᵢ₊₁)/∂yᵢ` (a d×d
//!   Jacobian, computed per element with `d` vector-Jacobian products of `⊙`). It is
//!   solved by a scan over (vector, matrix) pairs with the composition of linear functions
//!   on the reversed arrays; then `x̄ᵢ += vjp (λx. yᵢ₋₁ ⊙ x) r̄ᵢ` is the map rule (which also
//!   gives free variables of `⊙` their adjoints). Work O(n·d³), span O(log n).

use super::{build, common, differentiable, map, Rev, R};
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
    if let (Some((BinOp::Add, t)), [x], [p]) = (crate::scope::simple_binop(&lam), &arrs[..], pat) {
        let Some(ybar) = rev.adjs.get(&p.name).cloned() else {
            return Ok(());
        };
        if !rev.active.contains(x) {
            return Ok(());
        }
        let yv = ybar
            .as_var()
            .ok_or_else(|| AdError::internal("scan adjoint is a scalar"))?;
        let r = build::reverse(rev, b, &w, yv)?;
        let plus = runic_ir::builder::binop_lambda(b.names, BinOp::Add, t);
        b.names.record_types(&plus);
        let ty = Type::Prim(t).array_of(w.clone());
        let s = rev.bind(
            b,
            "scan",
            Exp::Soac(Soac::Scan {
                w: w.clone(),
                arrs: vec![r],
                pre: None,
                lam: plus,
                neutral: vec![SubExp::Const(Prim::zero(t))],
            }),
            ty,
        );
        let xbar = build::reverse(rev, b, &w, s)?;
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
    // The differentiable components, all of one scalar type.
    let comps: Vec<usize> = (0..k).filter(|&j| differentiable(&lam.ret[j])).collect();
    let mut elem = None;
    for &j in &comps {
        match (&lam.ret[j], elem) {
            (Type::Prim(t), None) => elem = Some(*t),
            (Type::Prim(t), Some(e)) if *t == e => {}
            _ => {
                return Err(AdError::unsupported(
                    "vjp of a scan whose operator is not on scalars of one type",
                ))
            }
        }
    }
    let Some(t) = elem else { return Ok(()) };
    let d = comps.len();
    let pt = Type::Prim(t);
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
    let iota = build::iota(rev, b, w.clone());
    let last = b.sub_i64(w.clone(), SubExp::i64(1));
    let ret = vec![pt.clone(); d + needed.len()];
    let elems = build::map(rev, b, &w, vec![iota], ret, |rev, b, ps| {
        let i = b.sub_i64(last.clone(), SubExp::Var(ps[0]));
        let is_last = build::binop(rev, b, BinOp::Eq, i.clone(), last.clone(), PrimType::I64);
        let next = b.add_i64(i.clone(), SubExp::i64(1));
        let next = build::select(rev, b, PrimType::I64, is_last.clone(), i.clone(), next);
        let mut out = Vec::new();
        for yb in &ybar {
            let v = rev.bind(
                b,
                "a",
                Exp::Basic(BasicOp::Index(*yb, vec![DimIndex::Fix(i.clone())])),
                pt.clone(),
            );
            out.push(SubExp::Var(v));
        }
        // Arguments of yᵢ ⊙ xᵢ₊₁.
        let mut args = Vec::new();
        for y in &ys {
            let ty = b.type_of(&SubExp::Var(*y))?.row();
            let v = rev.bind(
                b,
                "y",
                Exp::Basic(BasicOp::Index(*y, vec![DimIndex::Fix(i.clone())])),
                ty,
            );
            args.push(SubExp::Var(v));
        }
        for x in &arrs {
            let ty = b.type_of(&SubExp::Var(*x))?.row();
            let v = rev.bind(
                b,
                "x",
                Exp::Basic(BasicOp::Index(*x, vec![DimIndex::Fix(next.clone())])),
                ty,
            );
            args.push(SubExp::Var(v));
        }
        let active: Vec<bool> = (0..2 * k).map(|j| j < k && comps.contains(&j)).collect();
        // Column r of cᵢᵀ is the vjp of the operator's r-th result w.r.t. its left side.
        let mut cols = Vec::new();
        for &r in &comps {
            let cot: Vec<Option<SubExp>> = (0..k)
                .map(|j| (j == r).then(|| SubExp::Const(Prim::one(t))))
                .collect();
            cols.push(lambda_vjp(rev, b, &lam, &args, &active, cot)?);
        }
        let zero = SubExp::Const(Prim::zero(t));
        for &(s, r) in &needed {
            let v = build::select(rev, b, t, is_last.clone(), zero.clone(), cols[r][s].clone());
            out.push(v);
        }
        Ok(out)
    })?;
    // Per block, a scan with the composition of affine maps:
    // (a1,B1) ⊕ (a2,B2) = (a2 + B2·a1, B2·B1); then r̄ᵢ = z_{n-1-i}, reversed back.
    let mut rbar: Vec<Option<VName>> = vec![None; d];
    let mut entry = d;
    for bl in &blocks {
        let db = bl.len();
        let op = compose_op(rev, b, t, db)?;
        let mut ne = vec![SubExp::Const(Prim::zero(t)); db];
        let mut arrs_b: Vec<VName> = bl.iter().map(|&s| elems[s]).collect();
        for s in 0..db {
            for r in 0..db {
                ne.push(SubExp::Const(if s == r {
                    Prim::one(t)
                } else {
                    Prim::zero(t)
                }));
                arrs_b.push(elems[entry]);
                entry += 1;
            }
        }
        let tys = vec![pt.array_of(w.clone()); db + db * db];
        let z = rev.bind_many(
            b,
            "z",
            Exp::Soac(Soac::Scan {
                w: w.clone(),
                arrs: arrs_b,
                pre: None,
                lam: op,
                neutral: ne,
            }),
            tys,
        );
        for (&s, zj) in bl.iter().zip(&z[..db]) {
            rbar[s] = Some(build::reverse(rev, b, &w, *zj)?);
        }
    }
    let rbar: Vec<VName> = rbar
        .into_iter()
        .map(|r| r.ok_or_else(|| AdError::internal("scan block")))
        .collect::<R<_>>()?;
    // x̄ᵢ through the map rule on m = map (λyl x. yl ⊙ x) ylag xs, m̄ = r̄.
    let ylag = common::exclusive_shift(rev, b, &w, &ys, &neutral)?;
    let mut sb = Builder::new(b.names);
    sb.src = b.src.clone();
    let mut params = Vec::new();
    for a in ylag.iter().chain(&arrs) {
        let ty = sb.type_of(&SubExp::Var(*a))?.row();
        params.push(rev.fresh_param(&mut sb, "p", &ty));
    }
    let vs: Vec<SubExp> = params.iter().map(|p| SubExp::Var(p.name)).collect();
    let res = build::apply(rev, &mut sb, &lam, &vs);
    let comb = Lambda {
        id: runic_ir::LamId::fresh(),
        params,
        body: sb.finish(res),
        ret: lam.ret.clone(),
    };
    let mut seeds = vec![None; lam.ret.len()];
    for (&j, rb) in comps.iter().zip(&rbar) {
        seeds[j] = Some(SubExp::Var(*rb));
    }
    let mut map_arrs = ylag;
    map_arrs.extend(arrs.iter().copied());
    map::reverse_seeded(rev, b, w, comb, map_arrs, seeds, &[])?;
    Ok(())
}

/// The adjoints of the arguments of `lam` marked `active`, for the cotangents `cot` of its
/// results, at `args` (the other arguments and free variables are constants here).
pub fn lambda_vjp(
    rev: &mut Rev,
    b: &mut Builder,
    lam: &Lambda,
    args: &[SubExp],
    active: &[bool],
    cot: Vec<Option<SubExp>>,
) -> R<Vec<SubExp>> {
    let mut inner = Rev::new();
    let l = inner.renamed(b, lam);
    let src = b.src.clone();
    for ((p, a), act) in l.params.iter().zip(args).zip(active) {
        b.add(build::copy_stm(p.clone(), a.clone(), &src));
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

/// `(a1, B1) ⊕ (a2, B2) = (a2 + B2·a1, B2·B1)` on `d`-vectors and row-major d×d matrices.
fn compose_op(rev: &mut Rev, b: &mut Builder, t: PrimType, d: usize) -> R<Lambda> {
    let pt = Type::Prim(t);
    let n = d + d * d;
    let ps: Vec<Param> = (0..2 * n).map(|_| rev.fresh_param(b, "c", &pt)).collect();
    let mut sb = Builder::new(b.names);
    sb.src = b.src.clone();
    let v = |side: usize, i: usize| SubExp::Var(ps[side * n + i].name);
    let a = |side: usize, s: usize| v(side, s);
    let m = |side: usize, s: usize, r: usize| v(side, d + s * d + r);
    let mut out = Vec::new();
    for s in 0..d {
        let mut acc = a(1, s);
        for q in 0..d {
            let p = build::binop(rev, &mut sb, BinOp::Mul, m(1, s, q), a(0, q), t);
            acc = build::binop(rev, &mut sb, BinOp::Add, acc, p, t);
        }
        out.push(acc);
    }
    for s in 0..d {
        for r in 0..d {
            let mut acc = SubExp::Const(Prim::zero(t));
            for q in 0..d {
                let p = build::binop(rev, &mut sb, BinOp::Mul, m(1, s, q), m(0, q, r), t);
                acc = build::binop(rev, &mut sb, BinOp::Add, acc, p, t);
            }
            out.push(acc);
        }
    }
    Ok(Lambda {
        id: runic_ir::LamId::fresh(),
        params: ps,
        body: sb.finish(out),
        ret: vec![pt; n],
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
