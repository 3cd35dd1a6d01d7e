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
    for f in &mut prog.funs {
        // Inner bodies first, so a statement can move out through several levels.
        for_each_body_mut(&mut f.body, hoist_body);
    }
    prog
}

/// Moves the invariant statements of the maps among `body`'s statements before them.
fn hoist_body(body: &mut Body) {
    let mut i = 0;
    while i < body.stms.len() {
        let moved = match &mut body.stms[i].exp {
            Exp::Soac(Soac::Map { lam, .. }) => invariant_stms(lam),
            _ => Vec::new(),
        };
        let n = moved.len();
        body.stms.splice(i..i, moved);
        i += n + 1;
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
