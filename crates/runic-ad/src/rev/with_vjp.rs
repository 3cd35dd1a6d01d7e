//! `y = with_vjp f f' x`: the forward sweep runs `f` (inlined); the return sweep calls the
//! user's adjoint function, `x̄ += f' y ȳ`, instead of differentiating `f`.

use super::{build, Rev, Saved, R};
use crate::error::AdError;
use runic_ir::*;

pub fn forward(rev: &mut Rev, b: &mut Builder, s: &Stm, active: bool) -> R<()> {
    let Exp::WithVjp { f, adj, args } = &s.exp else {
        return Err(AdError::internal("with_vjp rule on another statement"));
    };
    let results = b.inline(f, args);
    for (p, r) in s.pat.iter().zip(results) {
        build::copy_to(b, p.clone(), r);
    }
    if active {
        let adj = b.renamed(adj);
        rev.saved.insert(s.pat[0].name, Saved::WithVjp { adj });
    }
    Ok(())
}

pub fn reverse(rev: &mut Rev, b: &mut Builder, pat: &[Param], args: Vec<SubExp>) -> R<()> {
    let Some(Saved::WithVjp { adj }) = rev.saved.remove(&pat[0].name) else {
        return Err(AdError::internal("with_vjp without its adjoint function"));
    };
    let mut inputs: Vec<SubExp> = pat.iter().map(|p| SubExp::Var(p.name)).collect();
    for p in pat {
        inputs.push(rev.adj(b, p.name)?);
    }
    // `adj` is already a renamed copy: inlined as it is.
    for (p, a) in adj.params.into_iter().zip(inputs) {
        build::copy_to(b, p, a);
    }
    for s in adj.body.stms {
        b.add(s);
    }
    for (a, c) in args.iter().zip(adj.body.result) {
        rev.add_adj(b, a, c)?;
    }
    Ok(())
}
