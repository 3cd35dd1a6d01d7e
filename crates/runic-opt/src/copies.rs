//! Copy elision: lowering copies every array that an operation consumes (`with`, scatter,
//! hist), because the source language has value semantics. A copy `c = copy(a)` is dropped
//! (uses of `c` become `a`) when `a` belongs to the same body — bound there, or a parameter
//! of the function or loop — and nothing after the copy reads `a`, so consuming `a` itself
//! is unobservable.

use runic_ir::traverse::{uses, walk_body_mut, walk_stm_mut, Substitute, VisitorMut};
use runic_ir::*;
use std::collections::{HashMap, HashSet};

pub fn elide_copies(mut prog: Prog) -> Prog {
    for f in &mut prog.funs {
        let mut e = Elide {
            owned: f.params.iter().map(|p| p.name).collect(),
        };
        e.body(&mut f.body);
    }
    prog
}

/// Elides copies in every body at every depth, innermost first.
struct Elide {
    /// The parameters the next body visited owns besides its own binders: its function's
    /// or its loop's (taken by [`VisitorMut::body`], so bodies nested in it own none).
    owned: HashSet<VName>,
}

impl VisitorMut for Elide {
    fn stm(&mut self, s: &mut Stm) {
        // A loop consumes its initial values, so its body owns its parameters.
        if let Exp::Loop { params, .. } = &s.exp {
            self.owned = params.iter().map(|(p, _)| p.name).collect();
        }
        walk_stm_mut(self, s)
    }

    fn body(&mut self, b: &mut Body) {
        let owned = std::mem::take(&mut self.owned);
        walk_body_mut(self, b);
        elide(b, owned);
    }
}

/// Elides the copies of `b` itself, where `owned` holds the parameters `b` may consume.
fn elide(b: &mut Body, mut owned: HashSet<VName>) {
    // Uses of every statement, and of the result.
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
            let read_later = names
                .iter()
                .any(|n| result_uses.contains(n) || uses_of[k + 1..].iter().any(|u| u.contains(n)));
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
