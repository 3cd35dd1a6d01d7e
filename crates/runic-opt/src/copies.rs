//! Copy elision: lowering copies every array that an operation consumes (`with`, scatter,
//! hist), because the source language has value semantics. A copy `c = copy(a)` is dropped
//! (uses of `c` become `a`) when consuming `a` itself is unobservable: `a` belongs to the
//! body the copy is in — bound there, a parameter of its function or loop, or, inside an
//! `if` branch, something the enclosing body owns — and nothing after the copy reads `a`,
//! neither later in that body nor after the enclosing branches.
//!
//! Branches run at most once, so they may consume what their enclosing body owns; loop
//! bodies and lambdas run many times, so they own only their own parameters. The type
//! checker's uniqueness rules (no use after consumption) are what make the source of a
//! `with` dead in a valid program; what stays is where AD reads the primal again, where the
//! update runs once per iteration or element, and where the user asked for a `copy`.

use runic_ir::traverse::{add_uses, uses, walk_exp_mut, Substitute, VisitorMut};
use runic_ir::*;
use std::collections::{HashMap, HashSet};

pub fn elide_copies(mut prog: Prog) -> Prog {
    for f in &mut prog.funs {
        let owned = f.params.iter().map(|p| p.name).collect();
        elide_in(&mut f.body, owned, &HashSet::new());
    }
    prog
}

/// Elides the copies of `b` and of every body nested in it. `owned` holds the names `b`
/// may consume besides its own binders; `live_out` the names read after `b` is done.
fn elide_in(b: &mut Body, owned: HashSet<VName>, live_out: &HashSet<VName>) {
    let uses_of: Vec<HashSet<VName>> = b.stms.iter().map(uses).collect();
    let mut live_after = live_out.clone();
    add_uses(&b.result, &mut live_after);
    // Live sets after each statement, from the last one back.
    let mut live: Vec<HashSet<VName>> = vec![HashSet::new(); b.stms.len()];
    for k in (0..b.stms.len()).rev() {
        live[k] = live_after.clone();
        live_after.extend(uses_of[k].iter().copied());
    }
    let mut owned_here = owned.clone();
    for (s, live_k) in b.stms.iter_mut().zip(&live) {
        match &mut s.exp {
            Exp::If {
                then_body,
                else_body,
                ..
            } => {
                elide_in(then_body, owned_here.clone(), live_k);
                elide_in(else_body, owned_here.clone(), live_k);
            }
            // A loop consumes its initial values, so its body owns its parameters.
            Exp::Loop { params, body, .. } => {
                let params = params.iter().map(|(p, _)| p.name).collect();
                elide_in(body, params, &HashSet::new());
            }
            other => walk_exp_mut(&mut NestedBodies, other),
        }
        owned_here.extend(s.pat.iter().map(|p| p.name));
    }
    elide_own(b, owned, live_out);
}

/// Bodies that run once per element (lambdas and the like) own nothing from outside.
struct NestedBodies;

impl VisitorMut for NestedBodies {
    fn body(&mut self, b: &mut Body) {
        elide_in(b, HashSet::new(), &HashSet::new());
    }
}

/// Elides the copies of `b` itself.
fn elide_own(b: &mut Body, mut owned: HashSet<VName>, live_out: &HashSet<VName>) {
    // Uses of every statement, and of the result (after the nested bodies' elisions).
    let uses_of: Vec<HashSet<VName>> = b.stms.iter().map(uses).collect();
    let result_uses = uses(&b.result);
    let mut drop = vec![false; b.stms.len()];
    let mut subst = HashMap::new();
    for (k, s) in b.stms.iter().enumerate() {
        if let (Exp::Basic(BasicOp::Copy(a)), [p]) = (&s.exp, s.pat.as_slice()) {
            let a = match subst.get(a) {
                Some(SubExp::Var(x)) => *x,
                _ => *a,
            };
            // `a` may also be read later under the name of an earlier elided copy of it.
            let mut names = vec![a];
            names.extend(
                subst
                    .iter()
                    .filter(|(_, to)| **to == SubExp::Var(a))
                    .map(|(from, _)| *from),
            );
            let read_later = names.iter().any(|n| {
                result_uses.contains(n)
                    || live_out.contains(n)
                    || uses_of[k + 1..].iter().any(|u| u.contains(n))
            });
            if owned.contains(&a) && !read_later {
                drop[k] = true;
                subst.insert(p.name, SubExp::Var(a));
            }
        }
        owned.extend(s.pat.iter().map(|p| p.name));
    }
    if subst.is_empty() {
        return;
    }
    let stms = std::mem::take(&mut b.stms);
    b.stms = stms
        .into_iter()
        .zip(drop)
        .filter(|(_, d)| !d)
        .map(|(s, _)| s)
        .collect();
    Substitute(&subst).body(b);
}
