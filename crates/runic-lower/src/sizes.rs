//! Sizes of a lambda's results that are computed inside it.
//!
//! A statement's result types may only name variables in scope at the statement, but a
//! lambda's result sizes are often computed in its body (`xs ++ [x]` has size `n + 1`).
//! When such a size depends only on variables outside the lambda, through operations that
//! cannot fail, its computation is copied out in front of the statement and the result
//! types name the copy.

use crate::lower::{Lower, R};
use runic_ir::*;
use std::collections::HashMap;

/// Copy out the computations of `lam`'s result sizes where possible and rename them in
/// `lam.ret`; returns the renaming (empty if nothing was local).
pub fn hoist_result_sizes(l: &mut Lower<'_>, lam: &mut Lambda) -> R<HashMap<VName, VName>> {
    let defs: HashMap<VName, usize> = lam
        .body
        .stms
        .iter()
        .enumerate()
        .flat_map(|(i, s)| s.pat.iter().map(move |p| (p.name, i)))
        .collect();
    let params: Vec<VName> = lam.params.iter().map(|p| p.name).collect();
    let mut wanted: Vec<usize> = Vec::new();
    let mut ok_vars: Vec<VName> = Vec::new();
    for t in &lam.ret {
        if let Type::Array { shape, .. } = t {
            for d in shape {
                if let SubExp::Var(v) = d {
                    if defs.contains_key(v) {
                        let mut need = Vec::new();
                        if closure(*v, &lam.body.stms, &defs, &params, &mut need) {
                            wanted.extend(need);
                            ok_vars.push(*v);
                        }
                    }
                }
            }
        }
    }
    let mut subst: HashMap<VName, VName> = HashMap::new();
    if ok_vars.is_empty() {
        return Ok(subst);
    }
    wanted.sort_unstable();
    wanted.dedup();
    for i in wanted {
        let stm = &lam.body.stms[i];
        let (op, p) = match (&stm.exp, stm.pat.as_slice()) {
            (Exp::Basic(op), [p]) => (rename_op(op, &subst), p.name),
            _ => continue,
        };
        let hint = l.names.hint(p).to_string();
        let fresh = l.b().let_exp(&hint, Exp::Basic(op))?;
        subst.insert(p, fresh[0]);
    }
    for t in lam.ret.iter_mut() {
        if let Type::Array { shape, .. } = t {
            for d in shape.iter_mut() {
                if let SubExp::Var(v) = d {
                    if let Some(n) = subst.get(v) {
                        *d = SubExp::Var(*n);
                    }
                }
            }
        }
    }
    Ok(subst)
}

/// Whether `v` is computed from outer variables only by scalar operations that cannot fail;
/// collects the indices of the statements involved.
fn closure(
    v: VName,
    stms: &[Stm],
    defs: &HashMap<VName, usize>,
    params: &[VName],
    need: &mut Vec<usize>,
) -> bool {
    if params.contains(&v) {
        return false;
    }
    let Some(&i) = defs.get(&v) else {
        return true; // bound outside the lambda
    };
    if need.contains(&i) {
        return true;
    }
    let op = match &stms[i].exp {
        Exp::Basic(
            op @ (BasicOp::BinOp(..)
            | BasicOp::UnOp(..)
            | BasicOp::Convert(..)
            | BasicOp::SubExp(_)),
        ) if stms[i].pat.len() == 1 && !crate::fallible::basic_can_fail(op) => op,
        _ => return false,
    };
    need.push(i);
    operands(op)
        .into_iter()
        .all(|u| closure(u, stms, defs, params, need))
}

fn operands(op: &BasicOp) -> Vec<VName> {
    let subs: Vec<&SubExp> = match op {
        BasicOp::BinOp(_, a, b) => vec![a, b],
        BasicOp::UnOp(_, a) | BasicOp::Convert(_, a) | BasicOp::SubExp(a) => vec![a],
        _ => vec![],
    };
    subs.into_iter().filter_map(SubExp::as_var).collect()
}

fn rename_op(op: &BasicOp, subst: &HashMap<VName, VName>) -> BasicOp {
    let r = |s: &SubExp| match s {
        SubExp::Var(v) => SubExp::Var(*subst.get(v).unwrap_or(v)),
        c => c.clone(),
    };
    match op {
        BasicOp::BinOp(o, a, b) => BasicOp::BinOp(*o, r(a), r(b)),
        BasicOp::UnOp(o, a) => BasicOp::UnOp(*o, r(a)),
        BasicOp::Convert(t, a) => BasicOp::Convert(*t, r(a)),
        BasicOp::SubExp(a) => BasicOp::SubExp(r(a)),
        other => other.clone(),
    }
}
