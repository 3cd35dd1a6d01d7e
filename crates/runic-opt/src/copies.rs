//! Copy elision: lowering copies every array that an operation consumes (`with`, scatter,
//! hist), because the source language has value semantics. A copy `c = copy(a)` is dropped
//! (uses of `c` become `a`) when `a` belongs to the same body — bound there, or a parameter
//! of the function or loop — and nothing after the copy reads `a`, so consuming `a` itself
//! is unobservable.

use crate::walk::{self, Subst};
use runic_ir::*;
use std::collections::HashSet;

pub fn elide_copies(mut prog: Prog) -> Prog {
    for f in &mut prog.funs {
        let owned: HashSet<VName> = f.params.iter().map(|p| p.name).collect();
        body(&mut f.body, owned);
    }
    prog
}

fn body(b: &mut Body, mut owned: HashSet<VName>) {
    for s in &mut b.stms {
        nested(&mut s.exp);
    }
    // Uses of every statement, and of the result.
    let uses: Vec<HashSet<VName>> = b
        .stms
        .iter()
        .map(|s| {
            let mut u = HashSet::new();
            walk::uses_exp(&s.exp, &mut u);
            for p in &s.pat {
                walk::uses_type(&p.ty, &mut u);
            }
            u
        })
        .collect();
    let mut result_uses = HashSet::new();
    for r in &b.result {
        if let SubExp::Var(v) = r {
            result_uses.insert(*v);
        }
    }
    let mut drop = vec![false; b.stms.len()];
    let mut subst = Subst::new();
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
                .any(|n| result_uses.contains(n) || uses[k + 1..].iter().any(|u| u.contains(n)));
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
    walk::body(b, &subst);
}

fn nested(e: &mut Exp) {
    match e {
        Exp::If {
            then_body,
            else_body,
            ..
        } => {
            body(then_body, HashSet::new());
            body(else_body, HashSet::new());
        }
        Exp::Loop {
            params, body: b, ..
        } => {
            let owned = params.iter().map(|(p, _)| p.name).collect();
            body(b, owned);
        }
        Exp::Soac(s) => match s {
            Soac::Map { lam, .. } | Soac::Hist { lam, .. } => body(&mut lam.body, HashSet::new()),
            Soac::Reduce { pre, lam, .. } | Soac::Scan { pre, lam, .. } => {
                if let Some(p) = pre {
                    body(&mut p.body, HashSet::new());
                }
                body(&mut lam.body, HashSet::new());
            }
            Soac::Scatter { .. } => {}
        },
        Exp::WithAcc { lam, .. } | Exp::Jvp { lam, .. } | Exp::Vjp { lam, .. } => {
            body(&mut lam.body, HashSet::new())
        }
        Exp::WithVjp { f, adj, .. } => {
            body(&mut f.body, HashSet::new());
            body(&mut adj.body, HashSet::new());
        }
        Exp::Basic(_) | Exp::Apply { .. } => {}
    }
}
