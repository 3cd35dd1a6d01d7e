//! Hoisting of invariant statements out of map lambdas: a statement in a map's lambda that
//! reads nothing the lambda binds computes the same value in every iteration, so it moves
//! before the map and runs once. (`map (\r -> map (dot r) (transpose b)) a` transposes `b`
//! once instead of once per row, which also makes the nest a plain matrix product.)
//!
//! Only statements that cannot fail move (`dce::removable`): a failing one must still
//! fail only if the map runs an iteration, and in its order among the iteration's errors.
//! Copies and scratch arrays stay: they exist to be updated in place by each iteration.

use crate::dce::removable;
use runic_ir::traverse::{for_each_body_mut, uses};
use runic_ir::*;
use std::collections::HashSet;

pub fn hoist(mut prog: Prog) -> Prog {
    prog.record_types();
    let names = std::mem::take(&mut prog.names);
    for f in &mut prog.funs {
        // Inner bodies first, so a statement can move out through several levels.
        for_each_body_mut(&mut f.body, |body| hoist_body(body, &names));
    }
    prog.names = names;
    prog
}

/// Moves the invariant statements of the maps among `body`'s statements before them, and
/// the dot products of values from outside an `if` before it (`runic_ir::dots`: the
/// primal's masked products, as reverse mode's normalisation does for its sweeps).
fn hoist_body(body: &mut Body, names: &NameSource) {
    let mut i = 0;
    while i < body.stms.len() {
        let moved = match &mut body.stms[i].exp {
            Exp::Soac(Soac::Map { lam, .. }) => invariant_stms(lam),
            Exp::If { .. } => runic_ir::dots::take_dots_out_of_branches(&mut body.stms[i], names),
            _ => Vec::new(),
        };
        let n = moved.len();
        body.stms.splice(i..i, moved);
        i += n + 1;
    }
}

/// Moves the statements that begin a `with_acc`'s body and do not see its accumulators
/// before the `with_acc` (its body runs once, so they run once either way, in the same
/// order), so that `reuse` finds reverse mode's second copy of a forward computation at
/// the level of the first (a graph network's gathered rows and products, computed again
/// in the return sweep of a layer whose rows' adjoints scatter). Returns, per `with_acc`
/// (by its first result), the statements moved, for [`back_into_with_accs`].
pub(crate) fn out_of_with_accs(body: &mut Body) -> Vec<(VName, Vec<VName>)> {
    let mut groups = Vec::new();
    let mut i = 0;
    while i < body.stms.len() {
        let key = body.stms[i].pat.first().map(|p| p.name);
        let moved: Vec<Stm> = match (&mut body.stms[i].exp, key) {
            (Exp::WithAcc { lam, .. }, Some(key)) => {
                let accs: HashSet<VName> = lam.params.iter().map(|p| p.name).collect();
                let n = lam
                    .body
                    .stms
                    .iter()
                    .take_while(|s| uses(*s).is_disjoint(&accs) && !s.pat.is_empty())
                    .count();
                let moved: Vec<Stm> = lam.body.stms.drain(..n).collect();
                if !moved.is_empty() {
                    groups.push((key, moved.iter().map(|s| s.pat[0].name).collect()));
                }
                moved
            }
            _ => Vec::new(),
        };
        let n = moved.len();
        body.stms.splice(i..i, moved);
        i += n + 1;
    }
    groups
}

/// Puts back into their `with_acc`s the statements [`out_of_with_accs`] moved that `reuse`
/// did not turn into copies and that nothing else outside reads: fused with the
/// accumulating map there, they need not be stored (a `[n][k][d][d]` array of a GMM-like
/// gradient's per-point products otherwise).
pub(crate) fn back_into_with_accs(body: &mut Body, groups: Vec<(VName, Vec<VName>)>) {
    for (key, names) in groups {
        let mut back: Vec<Stm> = Vec::new();
        for name in names.iter().rev() {
            let Some(w) = body.stms.iter().position(|s| s.binds(key)) else {
                break;
            };
            let Some(k) = body.stms[..w].iter().position(|s| s.binds(*name)) else {
                continue;
            };
            let is_copy = matches!(body.stms[k].exp, Exp::Basic(BasicOp::SubExp(_)));
            let bound: Vec<VName> = body.stms[k].pat.iter().map(|p| p.name).collect();
            let read_outside = body
                .stms
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != k && j != w)
                .any(|(_, s)| bound.iter().any(|b| uses(s).contains(b)))
                || bound.iter().any(|b| body.result.contains(&SubExp::Var(*b)));
            if is_copy || read_outside {
                continue;
            }
            back.push(body.stms.remove(k));
        }
        let Some(w) = body.stms.iter().position(|s| s.binds(key)) else {
            continue;
        };
        if let Exp::WithAcc { lam, .. } = &mut body.stms[w].exp {
            back.reverse();
            lam.body.stms.splice(0..0, back);
        }
    }
}

/// Takes the invariant statements out of `lam`'s body, in order.
fn invariant_stms(lam: &mut Lambda) -> Vec<Stm> {
    let mut bound: HashSet<VName> = lam.params.iter().map(|p| p.name).collect();
    let mut out = Vec::new();
    let mut kept = Vec::new();
    for st in std::mem::take(&mut lam.body.stms) {
        let invariant = removable(&st.exp)
            // Fresh arrays made to be updated in place stay per iteration.
            && !matches!(
                st.exp,
                Exp::Basic(BasicOp::SubExp(_) | BasicOp::Scratch(..) | BasicOp::Copy(_))
            )
            && uses(&st).iter().all(|v| !bound.contains(v));
        if invariant {
            out.push(st);
        } else {
            bound.extend(st.pat.iter().map(|p| p.name));
            kept.push(st);
        }
    }
    lam.body.stms = kept;
    out
}
