//! The sums the accumulator optimisation writes: for each accumulator that becomes a sum,
//! `dest + Σ_b V_b` over the map's iterations, built from how each update's `V_b` is
//! computed ([`Source`]). Stored per-iteration values are summed by rows or element by
//! element, chosen at run time ([`rows_or_columns`]); other updates become a map over the
//! accumulator's indices of a map-reduce over the iterations that inlines the element code
//! ([`nest`]); a linear tail's arguments are summed and the tail applied once ([`tail_sum`]).

use super::Source;
use crate::linear;
use runic_ir::traverse::{free_vars, iota_width, uses, walk_body_mut, Renamer};
use runic_ir::*;
use std::collections::HashMap;

pub(super) type R<T> = Result<T, TypeError>;

/// What the reduction nest of one accumulator is built from.
pub(super) struct Sum<'a> {
    /// The number of iterations of the split map, and an iota over them.
    pub(super) n: SubExp,
    pub(super) iters: VName,
    pub(super) shape: Vec<SubExp>,
    pub(super) updates: Vec<&'a Source>,
    /// Per-iteration values: the array holding them, indexed by the iteration.
    pub(super) stacked: &'a HashMap<VName, VName>,
    pub(super) dest: VName,
    pub(super) dest_is_zero: bool,
    pub(super) elem: PrimType,
}

/// The per-iteration arrays of an accumulator whose every update is a whole stored value
/// (`V_b` is row `b` of an array of the accumulator's shape), if it is so.
pub(super) fn stacked_rows(sum: &Sum) -> Option<Vec<VName>> {
    sum.updates
        .iter()
        .map(|u| match u {
            Source::Stacked(v) => sum.stacked.get(v).copied(),
            Source::Inner { .. } => None,
        })
        .collect()
}

/// The sum of stored per-iteration values, by rows ([`row_sum`]) when there are at least
/// as many iterations as elements per row (the GMM's 10 000 points of 25 × 16 adjoints),
/// else element by element over the iterations ([`nest`]: the LSTM's four gates of
/// 1024 × 192 each, too few rows to share among workers, too long to fold quickly).
pub(super) fn rows_or_columns(b: &mut Builder, sum: &Sum, rows: Vec<VName>) -> R<SubExp> {
    let mut elems = SubExp::i64(1);
    for d in &sum.shape {
        elems = b.mul_(elems, d.clone())?;
    }
    let many = b.op2(BinOp::Ge, sum.n.clone(), elems)?;
    let r = b.let_if(
        "acc",
        many,
        |b| -> R<_> { Ok(vec![row_sum(b, sum, rows)?]) },
        |b| -> R<_> { Ok(vec![SubExp::Var(nest(b, sum, Vec::new())?)]) },
    )?;
    Ok(r[0].clone())
}

/// `dest + Σ_b (V¹_b + V²_b + …)` as one reduction over the rows of the stored values,
/// elementwise: each worker reads its rows in order, where the sum of each element over
/// the iterations (`nest`) would read the stored arrays down their columns.
fn row_sum(b: &mut Builder, sum: &Sum, rows: Vec<VName>) -> R<SubExp> {
    let t = Type::Array {
        elem: sum.elem,
        shape: sum.shape.clone(),
    };
    let pre = b.lam(
        rows.iter().map(|_| ("row", t.clone())).collect(),
        |b, rs| -> R<_> {
            let mut total = rs[0].clone();
            for r in &rs[1..] {
                total = b.add_values(&t, total, r.clone())?;
            }
            Ok(vec![total])
        },
    )?;
    let plus = b.add_lambda(&t)?;
    let zeros = b.zeros(&t)?;
    let red = Exp::Soac(Soac::Reduce {
        w: sum.n.clone(),
        arrs: rows,
        pre: Some(pre),
        lam: plus,
        neutral: vec![zeros],
        commutative: true,
    });
    let s = b.let1("acc_rows", red)?;
    if sum.dest_is_zero {
        return Ok(s);
    }
    b.add_values(&t, SubExp::Var(sum.dest), s)
}

/// The map over the accumulator's dimension `idx.len()`, inside the maps over the
/// dimensions before it (whose indices are `idx`); the last dimension's body is the sum.
pub(super) fn nest(b: &mut Builder, sum: &Sum, idx: Vec<SubExp>) -> R<VName> {
    let d = idx.len();
    let w = sum.shape[d].clone();
    let it = b.iota(w.clone());
    let i64t = Type::Prim(PrimType::I64);
    let lam = b.lam(vec![("j", i64t)], |b, j| -> R<_> {
        let idx = [idx.clone(), vec![j[0].clone()]].concat();
        if d + 1 == sum.shape.len() {
            Ok(vec![element_sum(b, sum, &idx)?])
        } else {
            Ok(vec![SubExp::Var(nest(b, sum, idx)?)])
        }
    })?;
    Ok(b.map("acc_sum", w, lam, vec![it])?[0])
}

/// `dest[idx] + Σ_b Σ_updates V_b[idx]`: a map-reduce over the iterations.
fn element_sum(b: &mut Builder, sum: &Sum, idx: &[SubExp]) -> R<SubExp> {
    let i64t = Type::Prim(PrimType::I64);
    let pre = b.lam(vec![("iter", i64t)], |b, it| -> R<_> {
        let mut total: Option<SubExp> = None;
        for u in &sum.updates {
            let e = element(b, sum, u, &it[0], idx)?;
            total = Some(match total {
                None => e,
                Some(t) => b.add_(t, e)?,
            });
        }
        Ok(vec![total.expect("an accumulator has updates")])
    })?;
    let plus = b.binop_lam(BinOp::Add, sum.elem);
    let zero = SubExp::Const(runic_prim::Prim::zero(sum.elem));
    let red = Exp::Soac(Soac::Reduce {
        w: sum.n.clone(),
        arrs: vec![sum.iters],
        pre: Some(pre),
        lam: plus,
        neutral: vec![zero],
        commutative: true,
    });
    let s = b.let1("acc_elem", red)?;
    if sum.dest_is_zero {
        return Ok(s);
    }
    let d = b.let_basic("dest", index(sum.dest, vec![], idx))?;
    b.add_(d, s)
}

/// The index into `M` of element `idx` of `V = rearrange(perm, M)`.
fn unpermuted(perm: &Option<Vec<usize>>, idx: &[SubExp]) -> Vec<SubExp> {
    let Some(perm) = perm else {
        return idx.to_vec();
    };
    let mut out = idx.to_vec();
    for (d, &p) in perm.iter().enumerate() {
        out[p] = idx[d].clone();
    }
    out
}

fn index(a: VName, outer: Vec<SubExp>, idx: &[SubExp]) -> BasicOp {
    let is = outer.into_iter().chain(idx.iter().cloned());
    BasicOp::Index(a, is.map(DimIndex::Fix).collect())
}

/// `V_b[idx]` for one update at iteration `it`.
fn element(b: &mut Builder, sum: &Sum, src: &Source, it: &SubExp, idx: &[SubExp]) -> R<SubExp> {
    let (inner, out, whole, rows, level, idx) = match src {
        Source::Stacked(v) => {
            let arr = sum.stacked[v];
            return b.let_basic("elem", index(arr, vec![it.clone()], idx));
        }
        Source::Inner {
            inner,
            out,
            perm,
            whole,
            rows,
            level,
        } => (inner, *out, *whole, rows, level, unpermuted(perm, idx)),
    };
    let idx = idx.as_slice();
    let (j, k) = if whole {
        (&idx[0], idx)
    } else {
        (&idx[0], &idx[1..])
    };
    // A renamed copy of the inner map (and its replicates).
    let mut copy = Body {
        stms: inner.clone(),
        result: Vec::new(),
    };
    walk_body_mut(&mut Renamer::new(b.names), &mut copy);
    b.names.record_types(&copy);
    // Its free variables, read per iteration (and per row `j`).
    let mut subst = HashMap::new();
    let mut views = Views::default();
    let mut pending = Pending::new();
    let mut fv: Vec<VName> = free_vars(&copy).into_iter().collect();
    fv.sort();
    for v in fv {
        let (base, is) = if let Some(a) = rows.get(&v) {
            match sum.stacked.get(a) {
                Some(s) => (*s, vec![it.clone(), j.clone()]),
                None => (*a, vec![j.clone()]),
            }
        } else if let Some(l) = level.get(&v) {
            (sum.stacked[l], vec![it.clone(), j.clone()])
        } else if let Some(s) = sum.stacked.get(&v) {
            (*s, vec![it.clone()])
        } else {
            continue;
        };
        let t = b
            .names
            .type_of(v)
            .cloned()
            .ok_or_else(|| TypeError(format!("{v:?}")))?;
        let x = b.param("iter_val", t);
        if !matches!(x.ty, Type::Prim(_)) {
            views.0.insert(x.name, (base, is.clone()));
        }
        subst.insert(v, SubExp::Var(x.name));
        pending.insert(x.name, index_stm(x, base, is));
    }
    use runic_ir::traverse::{Substitute, VisitorMut};
    Substitute(&subst).body(&mut copy);
    let row = copy.stms.pop().expect("the inner map");
    for st in copy.stms {
        pending.insert(st.pat[0].name, st);
    }
    index_nest(b, &row, out, k, &mut views, &mut pending)
}

/// Array variables known to be `base[is…]` (rows of per-iteration values or of a nest's
/// inputs), so that indexing them further reads `base` directly.
#[derive(Default)]
struct Views(HashMap<VName, (VName, Vec<SubExp>)>);

/// Array-valued statements of an inlined body, emitted only when something other than
/// indexing needs them (a replicate read at one index is its value).
type Pending = HashMap<VName, Stm>;

/// Element `idx` of the array `stm` binds: for a map, its lambda inlined at `idx[0]`
/// and the rest of the index taken from the lambda's result.
fn index_nest(
    b: &mut Builder,
    stm: &Stm,
    out: usize,
    idx: &[SubExp],
    views: &mut Views,
    pending: &mut Pending,
) -> R<SubExp> {
    let v = stm.pat[out].name;
    let (Some((j, rest)), Exp::Soac(Soac::Map { lam, arrs, .. })) = (idx.split_first(), &stm.exp)
    else {
        emit(b, stm.clone(), pending)?;
        return read(b, v, idx, views);
    };
    for (p, a) in lam.params.iter().zip(arrs) {
        bind_row(b, p, *a, j, views, pending)?;
    }
    // Only what row `out` needs (the lambda may compute other results too).
    let mut live = uses(&lam.body.result[out]);
    let mut keep = vec![false; lam.body.stms.len()];
    for (k, st) in lam.body.stms.iter().enumerate().rev() {
        let dead = !st.pat.iter().any(|p| live.contains(&p.name))
            && (crate::dce::removable(&st.exp) || matches!(st.exp, Exp::Basic(BasicOp::Index(..))));
        if !dead {
            keep[k] = true;
            live.extend(uses(st));
        }
    }
    for (st, _) in lam.body.stms.iter().zip(&keep).filter(|(_, k)| **k) {
        match st.pat.as_slice() {
            [p] if !matches!(p.ty, Type::Prim(_)) => {
                pending.insert(p.name, st.clone());
            }
            _ => emit(b, st.clone(), pending)?,
        }
    }
    let r = match &lam.body.result[out] {
        SubExp::Var(r) => *r,
        c => return Ok(c.clone()),
    };
    match pending.remove(&r) {
        Some(def) => index_nest(b, &def, 0, rest, views, pending),
        None => read(b, r, rest, views),
    }
}

/// `v[idx]` (`v` itself for an empty index), through a known view.
fn read(b: &mut Builder, v: VName, idx: &[SubExp], views: &Views) -> R<SubExp> {
    if idx.is_empty() {
        return Ok(SubExp::Var(v));
    }
    match views.0.get(&v) {
        Some((base, is)) => b.let_basic("elem", index(*base, is.clone(), idx)),
        None => b.let_basic("elem", index(v, vec![], idx)),
    }
}

/// Binds the lambda parameter `p` to row `j` of the input `a`.
fn bind_row(
    b: &mut Builder,
    p: &Param,
    a: VName,
    j: &SubExp,
    views: &mut Views,
    pending: &mut Pending,
) -> R<()> {
    if let Some(Stm {
        exp: Exp::Basic(BasicOp::Replicate(shape, x)),
        ..
    }) = pending.get(&a)
    {
        let exp = match shape.as_slice() {
            [_] => BasicOp::SubExp(x.clone()),
            [_, inner @ ..] => BasicOp::Replicate(inner.to_vec(), x.clone()),
            [] => BasicOp::SubExp(SubExp::Var(a)),
        };
        let st = Stm {
            pat: vec![p.clone()],
            exp: Exp::Basic(exp),
            src: SrcInfo::default(),
        };
        return emit(b, st, pending);
    }
    // Row `j` of an iota is `j`.
    if pending
        .get(&a)
        .is_some_and(|st| iota_width(&st.exp).is_some())
    {
        let st = Stm {
            pat: vec![p.clone()],
            exp: Exp::Basic(BasicOp::SubExp(j.clone())),
            src: SrcInfo::default(),
        };
        return emit(b, st, pending);
    }
    let (base, is) = match views.0.get(&a) {
        Some((base, is)) => (*base, [is.clone(), vec![j.clone()]].concat()),
        None => {
            if let Some(def) = pending.remove(&a) {
                emit(b, def, pending)?;
            }
            (a, vec![j.clone()])
        }
    };
    if !matches!(p.ty, Type::Prim(_)) {
        views.0.insert(p.name, (base, is.clone()));
    }
    // Emitted only if something reads it other than through the view.
    pending.insert(p.name, index_stm(p.clone(), base, is));
    Ok(())
}

/// `let p = base[is…]`.
fn index_stm(p: Param, base: VName, is: Vec<SubExp>) -> Stm {
    Stm {
        pat: vec![p],
        exp: Exp::Basic(index(base, is, &[])),
        src: SrcInfo::default(),
    }
}

/// Adds `st`, after the pending statements it reads.
fn emit(b: &mut Builder, st: Stm, pending: &mut Pending) -> R<()> {
    let mut needs: Vec<VName> = uses(&st)
        .into_iter()
        .filter(|v| pending.contains_key(v))
        .collect();
    needs.sort();
    for v in needs {
        if let Some(def) = pending.remove(&v) {
            emit(b, def, pending)?;
        }
    }
    b.add(st);
    Ok(())
}

/// `dest + L(Σ_b u_b…)` for a stored value `V_b = L(u_b…)`: each `u` summed over the
/// iterations as a stored value of its own shape, `L` applied once to the sums.
pub(super) fn tail_sum(b: &mut Builder, sum: &Sum, tail: &linear::Tail) -> R<SubExp> {
    let mut sums = Vec::new();
    for u in &tail.frontier {
        let src = Source::Stacked(*u);
        let shape = match b.type_of(&SubExp::Var(*u))? {
            Type::Array { shape, .. } => shape,
            t => return Err(TypeError(format!("a linear tail's argument of type {t:?}"))),
        };
        let part = Sum {
            n: sum.n.clone(),
            iters: sum.iters,
            shape,
            updates: vec![&src],
            stacked: sum.stacked,
            dest: sum.dest,
            dest_is_zero: true,
            elem: sum.elem,
        };
        sums.push(rows_or_columns(b, &part, vec![sum.stacked[u]])?);
    }
    let value = b.inline(&tail.lam, &sums).remove(0);
    if sum.dest_is_zero {
        return Ok(value);
    }
    let t = Type::Array {
        elem: sum.elem,
        shape: sum.shape.clone(),
    };
    b.add_values(&t, SubExp::Var(sum.dest), value)
}
