//! Common-subexpression elimination for pure scalar and shape operations within a body
//! (and the bodies nested in it): a repeated computation reuses the earlier result.

use crate::dce::removable;
use crate::walk::{self, Subst};
use runic_ir::*;
use std::collections::HashMap;

pub fn cse(mut prog: Prog) -> Prog {
    for f in &mut prog.funs {
        body(&mut f.body, &HashMap::new(), &mut Subst::new());
    }
    prog
}

type Table = HashMap<String, Vec<VName>>;

fn body(b: &mut Body, outer: &Table, m: &mut Subst) {
    let mut table = outer.clone();
    let mut out = Vec::new();
    for mut s in std::mem::take(&mut b.stms) {
        walk::stm(&mut s, m);
        nested(&mut s.exp, &table, m);
        // Copies and scratch arrays are fresh storage that a later operation may consume:
        // two of them are never the same value.
        let fresh = matches!(s.exp, Exp::Basic(BasicOp::Copy(_) | BasicOp::Scratch(..)));
        // Only basic operations: two SOACs or branches producing arrays are two arrays, and
        // either may be consumed.
        if matches!(s.exp, Exp::Basic(_)) && removable(&s.exp) && !fresh {
            let key = format!(
                "{:?}|{:?}",
                s.exp,
                s.pat.iter().map(|p| &p.ty).collect::<Vec<_>>()
            );
            if let Some(prev) = table.get(&key) {
                for (p, v) in s.pat.iter().zip(prev) {
                    m.insert(p.name, SubExp::Var(*v));
                }
                continue;
            }
            table.insert(key, s.pat.iter().map(|p| p.name).collect());
        }
        out.push(s);
    }
    b.stms = out;
    for r in &mut b.result {
        if let SubExp::Var(v) = r {
            if let Some(x) = m.get(v) {
                *r = x.clone();
            }
        }
    }
}

fn lam(l: &mut Lambda, t: &Table, m: &Subst) {
    body(&mut l.body, t, &mut m.clone());
}

fn nested(e: &mut Exp, t: &Table, m: &Subst) {
    match e {
        Exp::If {
            then_body,
            else_body,
            ..
        } => {
            body(then_body, t, &mut m.clone());
            body(else_body, t, &mut m.clone());
        }
        Exp::Loop { body: b, .. } => body(b, t, &mut m.clone()),
        Exp::Soac(s) => match s {
            Soac::Map { lam: l, .. } | Soac::Hist { lam: l, .. } => lam(l, t, m),
            Soac::Reduce { pre, lam: l, .. } | Soac::Scan { pre, lam: l, .. } => {
                if let Some(p) = pre {
                    lam(p, t, m);
                }
                lam(l, t, m);
            }
            Soac::Scatter { .. } => {}
        },
        Exp::WithAcc { lam: l, .. } | Exp::Jvp { lam: l, .. } | Exp::Vjp { lam: l, .. } => {
            lam(l, t, m)
        }
        Exp::WithVjp { f, adj, .. } => {
            lam(f, t, m);
            lam(adj, t, m);
        }
        Exp::Basic(_) | Exp::Apply { .. } => {}
    }
}
