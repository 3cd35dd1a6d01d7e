//! Return sweep of `if c then t else e`: the same branch is taken again; each branch
//! re-executes its primal (renamed) and runs its own return sweep, and both return the
//! updated adjoints of the free variables either one contributes to. Work and span are
//! those of the branch taken.

use super::{Rev, R};
use runic_ir::*;
use std::collections::HashMap;

pub fn reverse(
    rev: &mut Rev,
    b: &mut Builder,
    pat: &[Param],
    cond: SubExp,
    then_body: Body,
    else_body: Body,
    ret: Vec<Type>,
) -> R<()> {
    let _ = ret;
    let seeds: Vec<Option<SubExp>> = pat.iter().map(|p| rev.adjs.get(&p.name).cloned()).collect();
    let mut frees = rev.free_adjoints(&then_body);
    frees.extend(rev.free_adjoints(&else_body));
    frees.sort();
    frees.dedup();
    let before: HashMap<VName, Option<SubExp>> = frees
        .iter()
        .map(|v| (*v, rev.adjs.get(v).cloned()))
        .collect();
    let owned_before = rev.owned.clone();

    let mut branches = Vec::new();
    for body in [then_body, else_body] {
        let body = rename_body(rev, b, body);
        let mut sb = Builder::new(b.names);
        sb.src = b.src.clone();
        rev.sweep(&mut sb, body, seeds.clone())?;
        let after: HashMap<VName, Option<SubExp>> = frees
            .iter()
            .map(|v| (*v, rev.adjs.get(v).cloned()))
            .collect();
        // Back to the adjoints before the branch for the other one.
        for (v, a) in &before {
            match a {
                Some(a) => rev.adjs.insert(*v, a.clone()),
                None => rev.adjs.remove(v),
            };
        }
        rev.owned = owned_before.clone();
        branches.push((sb.take_stms(), after));
    }
    // Only the free variables some branch changed are threaded out.
    let changed: Vec<VName> = frees
        .into_iter()
        .filter(|v| branches.iter().any(|(_, after)| after[v] != before[v]))
        .collect();
    // Accumulator updates are effects: a branch that makes some must still run.
    let updates_accs = branches.iter().any(|(stms, _)| {
        runic_ir::traverse::any_exp(stms.as_slice(), runic_ir::traverse::is_update_acc)
    });
    if changed.is_empty() && !updates_accs {
        return Ok(());
    }
    let mut bodies = Vec::new();
    for (stms, after) in branches {
        let mut sb = Builder::new(b.names);
        sb.src = b.src.clone();
        for s in stms {
            sb.add(s);
        }
        let mut res = Vec::new();
        for v in &changed {
            let a = match &after[v] {
                Some(a) => a.clone(),
                None => {
                    let t = sb.type_of(&SubExp::Var(*v))?;
                    rev.zeros(&mut sb, &t)?
                }
            };
            res.push(a);
        }
        let mut body = sb.finish(res);
        super::common::prune(&mut body);
        bodies.push(body);
    }
    let else_b = bodies.pop().unwrap_or_default();
    let then_b = bodies.pop().unwrap_or_default();
    let mut tys = Vec::new();
    for v in &changed {
        tys.push(b.type_of(&SubExp::Var(*v))?);
    }
    let outs = rev.bind_many(
        b,
        "adj",
        Exp::If {
            cond,
            then_body: then_b,
            else_body: else_b,
            ret: tys.clone(),
        },
        tys.clone(),
    );
    for ((v, o), t) in changed.iter().zip(outs).zip(tys) {
        rev.adjs.insert(*v, SubExp::Var(o));
        if t.rank() > 0 {
            rev.owned.insert(o);
        }
    }
    Ok(())
}

/// A renamed copy of a body (its binders fresh).
pub fn rename_body(rev: &mut Rev, b: &mut Builder, body: Body) -> Body {
    let l = Lambda {
        id: runic_ir::LamId::fresh(),
        params: vec![],
        body,
        ret: vec![],
    };
    rev.renamed(b, &l).body
}
