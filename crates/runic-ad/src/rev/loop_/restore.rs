//! Loop parameters restored instead of taped (seed 003's in-place updates in loops).
//!
//! Rule: an array parameter that the loop body changes only by element updates — a chain
//! `a₁ = a with [i₁] = v₁, …, aₘ = aₘ₋₁ with [iₘ] = vₘ` (copies between them allowed)
//! whose last array is the body's result for it — is recovered from its next iteration's
//! value by writing back the elements the updates overwrote, last update first:
//! `aₘ₋₁ = aₘ with [iₘ] = oₘ, …, a = a₁ with [i₁] = o₁` where `oₖ = aₖ₋₁[iₖ]`.
//! The forward sweep stores per iteration the indices and old values of the updates
//! instead of the whole array; the return sweep carries the array backwards, restoring it
//! in place each iteration.
//!
//! Work and memory: `O(m)` per iteration for `m` updates, where a tape row costs the
//! array's size `n` (a loop that updates one element of an `n`-array per iteration,
//! `n` times, went from `n²` to `n`). Span: unchanged (the updates are sequential in the
//! loop anyway).

use super::{Record, Tape, R};
use crate::error::AdError;
use crate::rev::build::at;
use runic_ir::*;
use std::collections::HashMap;

/// For each loop parameter, the positions in `body` of the updates of its chain, first to
/// last (empty: the body passes the parameter through unchanged), or `None` when it is not
/// restorable (a scalar, or an array the body rebuilds some other way).
pub(in crate::rev) fn chains(params: &[(Param, SubExp)], body: &Body) -> Vec<Option<Vec<usize>>> {
    params
        .iter()
        .zip(&body.result)
        .map(|((p, _), r)| chain(p, r, body))
        .collect()
}

/// The update chain from `p` to the body's result `r` ([`chains`]).
fn chain(p: &Param, r: &SubExp, body: &Body) -> Option<Vec<usize>> {
    let rank = p.ty.rank();
    if rank == 0 {
        return None;
    }
    let mut at = r.as_var()?;
    let mut updates = Vec::new();
    while at != p.name {
        let k = body
            .stms
            .iter()
            .position(|s| s.pat.len() == 1 && s.pat[0].name == at)?;
        at = match &body.stms[k].exp {
            // A copy (the lowering's, before an update) has the same value.
            Exp::Basic(BasicOp::Copy(q)) => *q,
            Exp::Basic(BasicOp::Update(q, idx, _)) => {
                let element =
                    idx.len() == rank && idx.iter().all(|d| matches!(d, DimIndex::Fix(_)));
                if !element {
                    return None;
                }
                updates.push(k);
                *q
            }
            _ => return None,
        };
    }
    updates.reverse();
    Some(updates)
}

/// The indices of an element update (`Fix` only, as [`chains`] checks).
pub(super) fn indices(idx: &[DimIndex]) -> Vec<SubExp> {
    idx.iter()
        .filter_map(|d| match d {
            DimIndex::Fix(x) => Some(x.clone()),
            DimIndex::Slice { .. } => None,
        })
        .collect()
}

/// `q[is]` if every index is inside `q`, else zero: the element an update of `q` at `is`
/// overwrites, read without failing where the update itself will report the index.
pub(super) fn old_element(b: &mut Builder, q: VName, is: &[SubExp], elem: PrimType) -> R<SubExp> {
    let mut inside = SubExp::Const(Prim::Bool(true));
    for (d, i) in is.iter().enumerate() {
        let i = match b.prim_of(i)? {
            PrimType::I64 => i.clone(),
            _ => b.convert(PrimType::I64, i.clone()),
        };
        let n = b.array_size(q, d);
        let from = b.op2(BinOp::Ge, i.clone(), SubExp::i64(0))?;
        let below = b.op2(BinOp::Lt, i, n)?;
        let both = b.op2(BinOp::LogAnd, from, below)?;
        inside = b.op2(BinOp::LogAnd, inside, both)?;
    }
    let idx: Vec<DimIndex> = is.iter().cloned().map(DimIndex::Fix).collect();
    let read = Exp::Basic(BasicOp::Index(q, idx));
    let zero = SubExp::Const(Prim::zero(elem));
    let old = b.let_if(
        "old",
        inside,
        |b| Ok::<_, super::AdError>(vec![b.let1("old", read)?]),
        |_| Ok(vec![zero]),
    )?;
    Ok(old[0].clone())
}

/// The tapes of one update of a restored parameter: one per index, then the old values.
pub(crate) struct Undo {
    pub indices: Vec<VName>,
    pub old: VName,
}

/// `p = cur` with the updates `undos` (first to last) undone, reading iteration `idx` of
/// their tapes: the parameter's value at the start of that iteration.
pub(super) fn undo(b: &mut Builder, p: &Param, cur: VName, undos: &[Undo], idx: &SubExp) -> R<()> {
    let mut value = cur;
    for (k, u) in undos.iter().enumerate().rev() {
        let mut is = Vec::new();
        for t in &u.indices {
            is.push(DimIndex::Fix(b.let_basic("i", at(*t, idx.clone()))?));
        }
        let old = b.let_basic("old", at(u.old, idx.clone()))?;
        let op = BasicOp::Update(value, is, old);
        if k == 0 {
            b.let_pat(vec![p.clone()], Exp::Basic(op));
            return Ok(());
        }
        value = b.let_exp("restored", Exp::Basic(op))?[0];
    }
    b.let_pat(
        vec![p.clone()],
        Exp::Basic(BasicOp::SubExp(SubExp::Var(cur))),
    );
    Ok(())
}

/// The updates of every restored parameter, in the order of the body (how
/// [`super::record_loop`] meets them): `(parameter, statement)`.
pub(super) fn undo_order(records: &[Record]) -> Vec<(usize, usize)> {
    let mut order: Vec<(usize, usize)> = records
        .iter()
        .enumerate()
        .flat_map(|(p, r)| match r {
            Record::Restore(ks) => ks.iter().map(|&k| (p, k)).collect(),
            _ => Vec::new(),
        })
        .collect();
    order.sort_by_key(|&(_, k)| k);
    order
}

/// The indices of the update at position `k` of `body` (one of a chain [`chains`] found).
fn update_indices(body: &Body, k: usize) -> R<Vec<SubExp>> {
    match &body.stms[k].exp {
        Exp::Basic(BasicOp::Update(_, idx, _)) => Ok(indices(idx)),
        _ => Err(AdError::internal(
            "a restored parameter's update is not one",
        )),
    }
}

/// Storage for the indices and old values of the restored parameters' updates over `n`
/// iterations, in [`undo_order`]: per update, one `[n]` array per index, then one of the
/// old values.
pub(super) fn alloc_undos(
    b: &mut Builder,
    params: &[(Param, SubExp)],
    body: &Body,
    n: &SubExp,
    records: &[Record],
) -> R<Vec<VName>> {
    let mut stores = Vec::new();
    for (p, k) in undo_order(records) {
        for i in update_indices(body, k)? {
            let t = b.prim_of(&i)?;
            let op = BasicOp::Scratch(t, vec![n.clone()]);
            stores.push(b.let_exp("tape", Exp::Basic(op))?[0]);
        }
        let elem = params[p]
            .0
            .ty
            .elem()
            .ok_or_else(|| AdError::internal("a restored parameter that is not an array"))?;
        let op = BasicOp::Scratch(elem, vec![n.clone()]);
        stores.push(b.let_exp("tape", Exp::Basic(op))?[0]);
    }
    Ok(stores)
}

/// How many tapes [`alloc_undos`] makes for the updates `undone` (statement → parameter).
pub(super) fn undo_count(body: &Body, undone: &HashMap<usize, usize>) -> R<usize> {
    let mut count = 0;
    for &k in undone.keys() {
        count += update_indices(body, k)?.len() + 1;
    }
    Ok(count)
}

/// Each parameter's tape: the next of `rows` for one recorded whole, its updates' tapes
/// (taken from `undos` in [`undo_order`]) for one restored.
pub(super) fn tapes_of(
    body: &Body,
    records: &[Record],
    rows: Vec<VName>,
    undos: Vec<VName>,
) -> R<Vec<Tape>> {
    let mut undos = undos.into_iter();
    let mut by_stm = HashMap::new();
    for (_, k) in undo_order(records) {
        let rank = update_indices(body, k)?.len();
        let indices: Vec<VName> = undos.by_ref().take(rank).collect();
        let old = undos
            .next()
            .ok_or_else(|| AdError::internal("an update without its tape"))?;
        by_stm.insert(k, Undo { indices, old });
    }
    let mut rows = rows.into_iter();
    records
        .iter()
        .map(|r| match r {
            Record::Restore(ks) => ks
                .iter()
                .map(|k| {
                    by_stm
                        .remove(k)
                        .ok_or_else(|| AdError::internal("an update without its tape"))
                })
                .collect::<R<Vec<Undo>>>()
                .map(Tape::Restore),
            _ => rows
                .next()
                .map(Tape::Rows)
                .ok_or_else(|| AdError::internal("a loop parameter without its tape")),
        })
        .collect()
}
