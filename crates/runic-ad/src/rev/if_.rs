//! Return sweep of `if c then t else e`: the same branch is taken again; each branch
//! re-executes its primal (renamed) and runs its own return sweep, and both return the
//! updated adjoints of the free variables either one contributes to. Work and span are
//! those of the branch taken.

use super::{common, Rev, R};
use runic_ir::traverse::{Renamer, VisitorMut};
use runic_ir::*;
use std::collections::HashMap;

pub fn reverse(
    rev: &mut Rev,
    b: &mut Builder,
    pat: &[Param],
    cond: SubExp,
    then_body: Body,
    else_body: Body,
) -> R<()> {
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
    for mut body in [then_body, else_body] {
        Renamer::new(b.names).body(&mut body);
        b.names.record_types(&body);
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
            res.push(match &after[v] {
                Some(a) => a.clone(),
                None => {
                    let t = sb.type_of(&SubExp::Var(*v))?;
                    rev.zeros(&mut sb, &t)?
                }
            });
        }
        let mut body = sb.finish(res);
        common::prune(&mut body);
        bodies.push(body);
    }
    let else_body = bodies.pop().unwrap_or_default();
    let then_body = bodies.pop().unwrap_or_default();
    // The results have the types of the adjoints they update.
    let mut ret = Vec::new();
    for v in &changed {
        ret.push(b.type_of(&SubExp::Var(*v))?);
    }
    let exp = Exp::If {
        cond,
        then_body,
        else_body,
        ret,
    };
    for (v, o) in changed.iter().zip(b.let_exp("adj", exp)?) {
        rev.adjs.insert(*v, SubExp::Var(o));
        if b.type_of(&SubExp::Var(o))?.rank() > 0 {
            rev.owned.insert(o);
        }
    }
    Ok(())
}
