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

/// Operations that can be dropped when unused: basic operations that cannot fail, and
/// branches and SOACs made only of such operations.
pub fn removable(e: &Exp) -> bool {
    let all = |b: &Body| b.stms.iter().all(|s| removable(&s.exp));
    let scalar = |l: &Lambda| l.ret.iter().all(|t| matches!(t, Type::Prim(_)));
    match e {
        Exp::If {
            then_body,
            else_body,
            ..
        } => all(then_body) && all(else_body),
        // Histograms and scatters check the shapes of their values at run time, and so does
        // a map or fold whose lambda returns arrays (rows of different shapes): kept.
        Exp::Soac(s) => match s {
            Soac::Map { lam, .. } => scalar(lam) && all(&lam.body),
            Soac::Reduce { pre, lam, .. } | Soac::Scan { pre, lam, .. } => {
                scalar(lam)
                    && all(&lam.body)
                    && pre.as_ref().is_none_or(|p| scalar(p) && all(&p.body))
            }
            Soac::Hist { .. } | Soac::Scatter { .. } => false,
        },
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
        drop_dead_map_results(&mut s, live);
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

/// A map's unused results are not computed (its lambda stops returning them, and what
/// computed only them dies in turn).
fn drop_dead_map_results(s: &mut Stm, live: &HashSet<VName>) {
    let Exp::Soac(Soac::Map { lam, .. }) = &mut s.exp else {
        return;
    };
    let mut in_types = HashSet::new();
    for p in &s.pat {
        walk::uses_type(&p.ty, &mut in_types);
    }
    let keep: Vec<bool> = s
        .pat
        .iter()
        .map(|p| live.contains(&p.name) || in_types.contains(&p.name))
        .collect();
    if keep.iter().all(|k| *k) || keep.len() != lam.body.result.len() {
        return;
    }
    fn filter<T>(v: &mut Vec<T>, keep: &[bool]) {
        let mut it = keep.iter();
        v.retain(|_| *it.next().unwrap_or(&true));
    }
    filter(&mut s.pat, &keep);
    filter(&mut lam.body.result, &keep);
    filter(&mut lam.ret, &keep);
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
