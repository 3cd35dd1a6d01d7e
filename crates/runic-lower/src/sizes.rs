//! Sizes of a lambda's results that are computed inside it.
//!
//! A statement's result types may only name variables in scope at the statement, but a
//! lambda's result sizes are often computed in its body (`xs ++ [x]` has size `n + 1`).
//! When such a size depends only on variables outside the lambda, through operations that
//! cannot fail, its computation is copied out in front of the statement and the result
//! types name the copy.

use crate::lower::{Lower, R};
use runic_ir::traverse::{type_mut, uses, walk_exp_mut, Substitute};
use runic_ir::*;
use std::collections::HashMap;

/// Copy out the computations of `lam`'s result sizes where possible and rename them in
/// `lam.ret`; returns whether any size was copied out.
pub fn hoist_result_sizes(l: &mut Lower<'_>, lam: &mut Lambda) -> R<bool> {
    // The top-level statement binding each variable of the body.
    let defs: HashMap<VName, usize> = lam
        .body
        .stms
        .iter()
        .enumerate()
        .flat_map(|(i, s)| s.pat.iter().map(move |p| (p.name, i)))
        .collect();
    let params: Vec<VName> = lam.params.iter().map(|p| p.name).collect();
    let mut wanted: Vec<usize> = Vec::new();
    for v in lam.ret.iter().flat_map(uses) {
        let mut need = Vec::new();
        if defs.contains_key(&v) && closure(v, &lam.body.stms, &defs, &params, &mut need) {
            wanted.extend(need);
        }
    }
    if wanted.is_empty() {
        return Ok(false);
    }
    wanted.sort_unstable();
    wanted.dedup();
    let mut subst: HashMap<VName, SubExp> = HashMap::new();
    for i in wanted {
        let stm = &lam.body.stms[i];
        let mut exp = stm.exp.clone();
        walk_exp_mut(&mut Substitute(&subst), &mut exp);
        let v = stm.pat[0].name;
        let hint = l.names.hint(v).to_string();
        let copy = l.b().let_exp(&hint, exp)?[0];
        subst.insert(v, SubExp::Var(copy));
    }
    for t in lam.ret.iter_mut() {
        type_mut(&mut Substitute(&subst), t);
    }
    Ok(true)
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
    match &stms[i].exp {
        Exp::Basic(
            op @ (BasicOp::BinOp(..)
            | BasicOp::UnOp(..)
            | BasicOp::Convert(..)
            | BasicOp::SubExp(_)),
        ) if stms[i].pat.len() == 1 && !crate::fallible::basic_can_fail(op) => {}
        _ => return false,
    }
    need.push(i);
    uses(&stms[i].exp)
        .into_iter()
        .all(|u| closure(u, stms, defs, params, need))
}
