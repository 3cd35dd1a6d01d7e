//! Dead-code elimination: statements whose results are unused and that cannot fail or
//! have effects are removed (failing operations stay, so run-time errors are kept).

use crate::walk;
use runic_ir::*;
use std::collections::HashSet;

pub fn dce(mut prog: Prog) -> Prog {
    for f in &mut prog.funs {
        let mut live = HashSet::new();
        for t in &f.ret {
            walk::uses_type(t, &mut live);
        }
        body(&mut f.body, &mut live);
    }
    prog
}

/// Operations that can be dropped when unused.
pub fn removable(e: &Exp) -> bool {
    match e {
        Exp::Basic(op) => match op {
            BasicOp::SubExp(_)
            | BasicOp::UnOp(..)
            | BasicOp::Convert(..)
            | BasicOp::TernOp(..)
            | BasicOp::ArraySize(..)
            | BasicOp::Copy(_)
            | BasicOp::Rearrange(..)
            | BasicOp::ArrayLit(..)
            | BasicOp::Scratch(..) => true,
            BasicOp::BinOp(o, _, _) => !matches!(
                o,
                BinOp::Div | BinOp::Mod | BinOp::Quot | BinOp::Rem | BinOp::Pow
            ),
            _ => false,
        },
        _ => false,
    }
}

fn body(b: &mut Body, live: &mut HashSet<VName>) {
    for r in &b.result {
        if let SubExp::Var(v) = r {
            live.insert(*v);
        }
    }
    let mut kept = Vec::new();
    for mut s in std::mem::take(&mut b.stms).into_iter().rev() {
        let used = s.pat.iter().any(|p| live.contains(&p.name));
        if !used && removable(&s.exp) {
            continue;
        }
        nested(&mut s.exp);
        walk::uses_exp(&s.exp, live);
        for p in &s.pat {
            walk::uses_type(&p.ty, live);
        }
        kept.push(s);
    }
    kept.reverse();
    b.stms = kept;
}

fn lam(l: &mut Lambda) {
    let mut live = HashSet::new();
    for t in &l.ret {
        walk::uses_type(t, &mut live);
    }
    body(&mut l.body, &mut live);
}

fn nested(e: &mut Exp) {
    match e {
        Exp::If {
            then_body,
            else_body,
            ..
        } => {
            body(then_body, &mut HashSet::new());
            body(else_body, &mut HashSet::new());
        }
        Exp::Loop { body: b, .. } => body(b, &mut HashSet::new()),
        Exp::Soac(s) => match s {
            Soac::Map { lam: l, .. } | Soac::Hist { lam: l, .. } => lam(l),
            Soac::Reduce { pre, lam: l, .. } | Soac::Scan { pre, lam: l, .. } => {
                if let Some(p) = pre {
                    lam(p);
                }
                lam(l);
            }
            Soac::Scatter { .. } => {}
        },
        Exp::WithAcc { lam: l, .. } | Exp::Jvp { lam: l, .. } | Exp::Vjp { lam: l, .. } => lam(l),
        Exp::WithVjp { f, adj, .. } => {
            lam(f);
            lam(adj);
        }
        Exp::Basic(_) | Exp::Apply { .. } => {}
    }
}
