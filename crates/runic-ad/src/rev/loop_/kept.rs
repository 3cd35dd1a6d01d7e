//! What a loop's tape keeps of its body besides the parameters, and how the return sweep
//! reads it back: the results of the body's expensive maps ([`stored_stms`]), the
//! residuals of its elementwise maps ([`Kept`]), and the maps whose results are the next
//! iteration's parameters, read from the tape's next row ([`next_row_stms`]).

use super::{changes_shape, Rev, Saved, Tape, R};
use crate::error::AdError;
use crate::rev::build::at;
use crate::rev::residual;
use runic_ir::*;
use std::collections::HashSet;

/// The statements of a loop body whose results the forward sweep stores per iteration
/// besides the loop's parameters, so that the return sweep reads them back instead of
/// recomputing them: maps with work inside each element (an inner reduction, scan or
/// loop, as in a matrix product), whose results have shapes fixed outside the loop and do
/// not come from the tape's next row anyway ([`next_row_stms`]). Memory: their results,
/// per iteration; work saved: recomputing them in the return sweep.
pub(crate) fn stored_stms(params: &[(Param, SubExp)], body: &Body) -> Vec<usize> {
    let next = next_row_stms(params, body);
    let inside = bound_inside(params, body);
    let nested = |l: &Lambda| {
        runic_ir::traverse::any_exp(&l.body, |e| matches!(e, Exp::Soac(_) | Exp::Loop { .. }))
    };
    (0..body.stms.len())
        .filter(|k| !next.iter().any(|(s, _)| s == k))
        .filter(|&k| {
            let s = &body.stms[k];
            matches!(&s.exp, Exp::Soac(Soac::Map { lam, .. }) if nested(lam))
                && s.pat.iter().all(|p| fixed_outside(&p.ty, &inside))
        })
        .collect()
}

/// A statement of a loop body whose values the tape stores per iteration besides the
/// parameters: its results ([`stored_stms`]) and then its residuals ([`residual`]), so
/// that the return sweep neither recomputes them nor the expensive scalars its adjoint
/// reads.
pub(crate) struct Kept {
    pub k: usize,
    pub results: bool,
    /// The types of its residual arrays (none: it has none, or they are sized inside).
    pub residuals: Vec<Type>,
}

impl Kept {
    /// The types of one iteration's values, in the tape's order.
    pub fn types(&self, body: &Body) -> Vec<Type> {
        let results = body.stms[self.k].pat.iter().map(|p| p.ty.clone());
        let results = results.filter(|_| self.results);
        results.chain(self.residuals.iter().cloned()).collect()
    }
}

/// The statements of a loop body the tape keeps values of, in order ([`Kept`]).
pub(crate) fn kept_stms(params: &[(Param, SubExp)], body: &Body) -> Vec<Kept> {
    let stored = stored_stms(params, body);
    let inside = bound_inside(params, body);
    let mut out = Vec::new();
    for (k, s) in body.stms.iter().enumerate() {
        let mut residuals = residual::types(s);
        if !residuals.iter().all(|t| fixed_outside(t, &inside)) {
            residuals.clear();
        }
        let results = stored.contains(&k);
        if results || !residuals.is_empty() {
            out.push(Kept {
                k,
                results,
                residuals,
            });
        }
    }
    out
}

/// The maps of a loop body all of whose results are results of the body: the next
/// iteration's parameters, which the return sweep finds in the tape's next row (or, in the
/// last iteration, among the loop's results) instead of recomputing them. Each comes with
/// the positions of its results among the parameters, which keep their shapes (a row per
/// iteration in the tape).
fn next_row_stms(params: &[(Param, SubExp)], body: &Body) -> Vec<(usize, Vec<usize>)> {
    let inside = bound_inside(params, body);
    let mut out = Vec::new();
    for (k, s) in body.stms.iter().enumerate() {
        if !matches!(s.exp, Exp::Soac(Soac::Map { .. })) {
            continue;
        }
        let positions: Option<Vec<usize>> = s
            .pat
            .iter()
            .map(|p| {
                let at = body.result.iter().position(|r| *r == SubExp::Var(p.name))?;
                let (param, _) = params.get(at)?;
                let rows = !changes_shape(params, &param.ty);
                (rows && fixed_outside(&p.ty, &inside)).then_some(at)
            })
            .collect();
        if let Some(positions) = positions.filter(|ps| !ps.is_empty()) {
            out.push((k, positions));
        }
    }
    out
}

/// The variables a loop binds: its parameters and everything its body binds.
fn bound_inside(params: &[(Param, SubExp)], body: &Body) -> HashSet<VName> {
    let mut inside = runic_ir::traverse::binders(body);
    inside.extend(params.iter().map(|(p, _)| p.name));
    inside
}

/// Whether a value of type `t` can be stored in a tape made before the loop: an array or
/// scalar whose sizes are all known outside it.
fn fixed_outside(t: &Type, inside: &HashSet<VName>) -> bool {
    !matches!(t, Type::Acc { .. }) && runic_ir::traverse::uses(t).is_disjoint(inside)
}

/// Fresh storage for the values `stored` of `body` keeps over `n` iterations.
pub(super) fn alloc_stored(
    b: &mut Builder,
    body: &Body,
    stored: &[Kept],
    n: &SubExp,
) -> R<Vec<VName>> {
    let mut stores = Vec::new();
    for kept in stored {
        for t in kept.types(body) {
            let Type::Array { elem, shape } = t.array_of(n.clone()) else {
                return Err(AdError::internal(
                    "a stored value that is not an array or scalar",
                ));
            };
            stores.push(b.let_exp("tape", Exp::Basic(BasicOp::Scratch(elem, shape)))?[0]);
        }
    }
    Ok(stores)
}

/// In the return sweep's iteration `idx` of `count`, binds the results of the re-executed
/// body's (`copy`'s) statements that need not run again: the [`stored_stms`] from their
/// tapes, the [`next_row_stms`] from the parameters' tapes at `idx + 1` (in the last
/// iteration: the loop's results `pat`). Marks them restored for the forward sweep and
/// returns their keys.
#[allow(clippy::too_many_arguments)]
pub(super) fn restore_from_tape(
    rev: &mut Rev,
    b: &mut Builder,
    params: &[(Param, SubExp)],
    body: &Body,
    copy: &Body,
    tapes: &[Tape],
    stored: &[VName],
    pat: &[Param],
    count: &SubExp,
    idx: &SubExp,
) -> R<Vec<VName>> {
    let mut keys = Vec::new();
    let mut stored_tapes = stored.iter();
    let mut next_tape = || {
        stored_tapes
            .next()
            .ok_or_else(|| AdError::internal("a stored value without its tape"))
    };
    for kept in kept_stms(params, body) {
        let st = &copy.stms[kept.k];
        if kept.results {
            for p in &st.pat {
                b.let_pat(vec![p.clone()], Exp::Basic(at(*next_tape()?, idx.clone())));
            }
            keys.extend(st.pat.first().map(|p| p.name));
        }
        let mut extra = Vec::new();
        for t in &kept.residuals {
            extra.push(b.bind1("res", Exp::Basic(at(*next_tape()?, idx.clone())), t.clone()));
        }
        if !extra.is_empty() {
            supply_residuals(rev, st, &extra);
        }
    }
    // Maps whose residuals are all among their results need no tape.
    for st in &copy.stms {
        if residual::types(st).is_empty() && !residual::placement(st).is_empty() {
            supply_residuals(rev, st, &[]);
        }
    }
    let next = next_row_stms(params, body);
    if !next.is_empty() {
        let after = b.add_i64(idx.clone(), SubExp::i64(1));
        let has_next = b.op2(BinOp::Lt, after.clone(), count.clone())?;
        for (k, positions) in next {
            for (p, at_k) in copy.stms[k].pat.iter().zip(positions) {
                let (Some(Tape::Rows(tape)), Some(last)) = (tapes.get(at_k), pat.get(at_k)) else {
                    return Err(AdError::internal("a loop result without its tape"));
                };
                let mut tb = Builder::new(b.names);
                let row = tb.let_basic("next", at(*tape, after.clone()))?;
                let then_body = tb.finish(vec![row]);
                let else_body = Body {
                    stms: Vec::new(),
                    result: vec![SubExp::Var(last.name)],
                };
                let exp = Exp::If {
                    cond: has_next.clone(),
                    then_body,
                    else_body,
                    ret: vec![p.ty.clone()],
                };
                b.let_pat(vec![p.clone()], exp);
            }
            keys.extend(copy.stms[k].pat.first().map(|p| p.name));
        }
    }
    rev.restored.extend(keys.iter().copied());
    Ok(keys)
}

/// Hands the map `st` of a re-executed loop body its residuals: its own results, and the
/// `extra` arrays restored from the tape.
fn supply_residuals(rev: &mut Rev, st: &Stm, extra: &[VName]) {
    let arrays = residual::placement(st)
        .into_iter()
        .map(|e| match e {
            residual::Export::Result(j) => Some(st.pat[j].name),
            residual::Export::Extra(m) => extra.get(m).copied(),
        })
        .collect::<Option<Vec<VName>>>();
    if let Some(arrays) = arrays {
        rev.saved.insert(st.pat[0].name, Saved::Residuals(arrays));
    }
}
