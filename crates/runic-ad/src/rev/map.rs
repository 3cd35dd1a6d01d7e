//! `ys = map f xs`: a map of the differentiated lambda over the inputs and the results'
//! adjoints. Each application re-executes `f` (renamed) and runs its return sweep, giving
//! the adjoints of its parameters (`x̄s`, added to the inputs' adjoints) and its
//! contributions to free variables: per-element for free scalars, summed by a `reduce`
//! afterwards; through accumulators (`with_acc`, `+=` at an index) for free arrays, so a
//! lambda that reads a free array at a few indices costs that much, never a copy of the
//! array per element. Work: a small constant times the map's; span: the map's (plus a
//! log-depth reduce per free scalar).

use super::{common, copy_consumed, differentiable, residual, Rev, Saved, R};
use crate::error::AdError;
use runic_ir::*;
use std::collections::HashMap;

/// The forward sweep of an active map: computed from the residuals an enclosing scope
/// supplies (rows of an outer map's, a loop tape's); in the primal's own run, computing its
/// residuals beside its results for its return sweep ([`residual`]). A re-executed map
/// (inside a return sweep) keeps only the residuals that are its own results, which cost
/// nothing to keep (the `exp`s of a log-sum-exp's row, read again by their adjoint); extra
/// arrays there would be written for one return sweep that may as well compute them.
pub fn forward(rev: &mut Rev, b: &mut Builder, s: &Stm) -> R<()> {
    let s = copy_consumed(b, s.clone())?;
    let Some(key) = s.pat.first().map(|p| p.name) else {
        b.add(s);
        return Ok(());
    };
    if let Some(Saved::Residuals(res)) = rev.saved.get(&key) {
        // Residuals among the map's own results: it runs as written.
        let own = res.iter().any(|r| s.binds(*r));
        let s = if own {
            s
        } else {
            residual::consume(b, &s, &res.clone())?
        };
        b.add(s);
        return Ok(());
    }
    let Exp::Soac(Soac::Map { lam, .. }) = &s.exp else {
        return Err(AdError::internal("map rule on a non-map"));
    };
    // Outside the primal's own run, only residuals the map returns anyway (no extra arrays).
    let keep = rev.in_primal || residual::types(&s).is_empty();
    if residual::paths(lam).is_empty() || !keep {
        b.add(s);
        return Ok(());
    }
    let (s, res) = residual::produce(b, &s);
    b.add(s);
    rev.saved.insert(key, Saved::Residuals(res));
    Ok(())
}

pub fn reverse(
    rev: &mut Rev,
    b: &mut Builder,
    pat: &[Param],
    w: SubExp,
    lam: Lambda,
    arrs: Vec<VName>,
) -> R<()> {
    // Adjoints of the results (only those that have one).
    let mut ybars: Vec<Option<VName>> = Vec::new();
    for p in pat {
        let a = if differentiable(&p.ty) && rev.adjs.contains_key(&p.name) {
            let a = rev.adj(b, p.name)?;
            Some(
                a.as_var()
                    .ok_or_else(|| AdError::internal("map result adjoint is a scalar"))?,
            )
        } else {
            None
        };
        ybars.push(a);
    }
    if ybars.iter().all(Option::is_none) && !rev.mentions_acc_cots(&lam, &arrs) {
        return Ok(());
    }
    let key = pat.first().map(|p| p.name);
    let residuals = match key.and_then(|k| rev.saved.remove(&k)) {
        Some(Saved::Residuals(res)) => res,
        Some(other) => {
            rev.saved.extend(key.map(|k| (k, other)));
            Vec::new()
        }
        None => Vec::new(),
    };
    let frees = rev.free_adjoints(&lam);
    let mut free_scalars = Vec::new();
    let mut free_arrays = Vec::new();
    for f in frees {
        if b.type_of(&SubExp::Var(f))?.rank() == 0 {
            free_scalars.push(f);
        } else {
            free_arrays.push(f);
        }
    }
    // One accumulator per free array, initialised with its adjoint so far.
    let mut acc_inputs = Vec::new();
    let mut acc_params = Vec::new();
    for a in &free_arrays {
        let adj = rev.owned_adj(b, *a)?;
        let Type::Array { elem, shape } = b.type_of(&SubExp::Var(*a))? else {
            return Err(AdError::internal("free array without array type"));
        };
        let plus = b.binop_lam(BinOp::Add, elem);
        acc_inputs.push(AccInput {
            shape: shape.clone(),
            arrays: vec![adj],
            op: Some((plus, vec![SubExp::Const(Prim::zero(elem))])),
        });
        let elems = vec![elem];
        acc_params.push(b.param("acc", Type::Acc { shape, elems }));
    }

    // The differentiated lambda.
    let copy = b.renamed(&lam);
    let mut params = copy.params.clone();
    let mut seeds = Vec::new();
    let mut ybar_arrs = Vec::new();
    for (p, yb) in pat.iter().zip(&ybars) {
        match yb {
            Some(v) => {
                let row = b.param("adj", p.ty.row());
                seeds.push(Some(SubExp::Var(row.name)));
                params.push(row);
                ybar_arrs.push(*v);
            }
            None => seeds.push(None),
        }
    }
    let active_params: Vec<bool> = arrs.iter().map(|a| rev.active.contains(a)).collect();
    let saved_scalars: HashMap<VName, Option<SubExp>> = free_scalars
        .iter()
        .map(|f| (*f, rev.adjs.remove(f)))
        .collect();
    let saved_owned = std::mem::take(&mut rev.owned);
    for (a, acc) in free_arrays.iter().zip(&acc_params) {
        rev.accs.insert(*a, acc.name);
    }
    for (p, act) in copy.params.iter().zip(&active_params) {
        if *act {
            rev.mark_active(p);
        }
    }
    let mut sb = Builder::new(b.names);
    sb.src = b.src.clone();
    let restored = supply_residuals(rev, &mut sb, &copy, &residuals, &mut params)?;
    rev.sweep(&mut sb, copy.body, seeds)?;
    for v in restored {
        rev.restored.remove(&v);
    }
    // The lambda returns the adjoints of its active parameters and of the free scalars.
    let mut result = Vec::new();
    let mut ret = Vec::new();
    for (p, act) in copy.params.iter().zip(&active_params) {
        if *act && differentiable(&p.ty) {
            result.push(rev.adj(&mut sb, p.name)?);
            ret.push(p.ty.clone());
        }
    }
    for f in &free_scalars {
        result.push(rev.adj(&mut sb, *f)?);
        ret.push(sb.type_of(&SubExp::Var(*f))?);
    }
    // Back to the enclosing scope.
    for a in &free_arrays {
        rev.accs.remove(a);
    }
    for (f, a) in saved_scalars {
        match a {
            Some(a) => rev.adjs.insert(f, a),
            None => rev.adjs.remove(&f),
        };
    }
    rev.owned = saved_owned;
    let mut body = sb.finish(result);
    common::prune(&mut body);
    // Inputs the adjoint no longer reads (a primal value whose derivative a residual
    // serves) are not passed: the return sweep need not restore them.
    let inputs = [arrs.clone(), ybar_arrs, residuals].concat();
    let read = runic_ir::traverse::uses(&body);
    let mut kept: Vec<(Param, VName)> = params
        .into_iter()
        .zip(inputs)
        .filter(|(p, _)| read.contains(&p.name))
        .collect();
    if kept.is_empty() {
        kept.extend(copy.params.first().cloned().zip(arrs.first().copied()));
    }
    let (params, inputs): (Vec<Param>, Vec<VName>) = kept.into_iter().unzip();
    let map = Exp::Soac(Soac::Map {
        w: w.clone(),
        lam: Lambda::new(params, body, ret),
        arrs: inputs,
    });
    let outs = if acc_inputs.is_empty() {
        b.let_exp("adj", map)?
    } else {
        // with_acc: the lambda takes the accumulators, runs the map, returns both.
        let mut ab = Builder::new(b.names);
        ab.src = b.src.clone();
        let inner = ab.let_exp("adj", map)?;
        let accs = acc_params.iter().map(|p| SubExp::Var(p.name));
        let body = ab.finish(accs.chain(inner.iter().map(|v| SubExp::Var(*v))).collect());
        let ret = acc_params.iter().map(|p| p.ty.clone());
        let mut ret: Vec<Type> = ret.collect();
        for v in &inner {
            ret.push(b.type_of(&SubExp::Var(*v))?);
        }
        let lam = Lambda::new(acc_params, body, ret);
        let all = b.let_exp(
            "adj",
            Exp::WithAcc {
                inputs: acc_inputs,
                lam,
            },
        )?;
        let (arr_adjs, rest) = all.split_at(free_arrays.len());
        for (a, v) in free_arrays.iter().zip(arr_adjs) {
            rev.adjs.insert(*a, SubExp::Var(*v));
            rev.owned.insert(*v);
        }
        rest.to_vec()
    };
    let mut outs = outs.into_iter();
    for ((a, p), act) in arrs.iter().zip(&copy.params).zip(&active_params) {
        if *act && differentiable(&p.ty) {
            let Some(o) = outs.next() else { break };
            rev.owned.insert(o);
            rev.add_adj(b, &SubExp::Var(*a), SubExp::Var(o))?;
        }
    }
    for f in &free_scalars {
        let Some(o) = outs.next() else { break };
        let t = b.type_of(&SubExp::Var(*f))?;
        let plus = common::add_lambda(b, &t)?;
        let z = rev.zeros(b, &t)?;
        let s = b.reduce_comm("sum", w.clone(), plus, vec![z], vec![o])?;
        rev.add_adj(b, &SubExp::Var(*f), s[0].clone())?;
    }
    Ok(())
}

/// Gives the adjoint lambda (`copy`, whose parameters so far are `params`) the residuals
/// `res` of its map: one parameter per residual array; a scalar residual's statement is
/// bound to its parameter before the sweep and marked restored (its derivative still
/// reads the value), a nested map's residuals are handed to it as rows. Returns the
/// statements marked restored.
fn supply_residuals(
    rev: &mut Rev,
    sb: &mut Builder,
    copy: &Lambda,
    res: &[VName],
    params: &mut Vec<Param>,
) -> R<Vec<VName>> {
    let mut restored = Vec::new();
    if res.is_empty() {
        return Ok(restored);
    }
    let mut rows = Vec::new();
    for r in res {
        let row = sb.param("res", sb.type_of(&SubExp::Var(*r))?.row());
        rows.push(row.name);
        params.push(row);
    }
    let mut rows = rows.into_iter();
    for (k, rests) in residual::by_statement(copy) {
        let st = &copy.body.stms[k];
        if rests.iter().all(Vec::is_empty) {
            let Some(row) = rows.next() else { break };
            sb.let_pat(
                st.pat.clone(),
                Exp::Basic(BasicOp::SubExp(SubExp::Var(row))),
            );
            restored.push(st.pat[0].name);
        } else {
            let mine: Vec<VName> = rows.by_ref().take(rests.len()).collect();
            rev.saved.insert(st.pat[0].name, Saved::Residuals(mine));
        }
    }
    rev.restored.extend(restored.iter().copied());
    Ok(restored)
}

/// The map rule on `map lam arrs`, a map that exists only for differentiation (the general
/// reduce, scan and histogram rules build one): its results get the adjoints `seeds`
/// (`None`: zero). The arrays in `wanted` are treated as active for the call and the
/// adjoints that reach them are returned (and not kept).
pub fn reverse_seeded(
    rev: &mut Rev,
    b: &mut Builder,
    w: SubExp,
    lam: Lambda,
    arrs: Vec<VName>,
    seeds: Vec<Option<SubExp>>,
    wanted: &[VName],
) -> R<Vec<Option<SubExp>>> {
    let mut pat = Vec::new();
    for (t, s) in lam.ret.iter().zip(&seeds) {
        let p = b.param("m", t.array_of(w.clone()));
        if let Some(s) = s {
            rev.adjs.insert(p.name, s.clone());
        }
        pat.push(p);
    }
    let added: Vec<VName> = wanted
        .iter()
        .copied()
        .filter(|v| rev.active.insert(*v))
        .collect();
    reverse(rev, b, &pat, w, lam, arrs)?;
    for p in &pat {
        rev.adjs.remove(&p.name);
    }
    for v in added {
        rev.active.remove(&v);
    }
    Ok(wanted.iter().map(|v| rev.adjs.remove(v)).collect())
}
