//! Loops (`for` and `while`) with a tape.
//!
//! Forward sweep: the loop runs as written and also stores the loop-carried values at the
//! start of every iteration in a tape (one array per loop parameter, `n × size` memory),
//! but for an array the body changes only by element updates, of which it stores the
//! positions and the overwritten elements instead ([`restore`]; the return sweep carries
//! that array backwards and writes them back). A `while` loop first runs counting its
//! iterations, then a `for` loop of that many iterations builds the tape. A parameter
//! whose shape changes across iterations goes to a flat tape at per-iteration offsets (the
//! loop runs once more to size it). A strip-mined loop (`checkpoint`) also keeps its last
//! chunk's inner tape, so that the return sweep does not run that chunk again
//! ([`chunks`]).
//!
//! Return sweep: a loop over the iterations backwards; each restores its parameters from
//! the tape, re-executes the body (renamed) and runs the body's return sweep, carrying the
//! adjoints of the loop parameters and of the free variables the body contributes to as
//! loop parameters. Work: about three times the primal loop's; span: the loop's, times a
//! constant (the body's own parallelism is kept).
//!
//! What the re-execution need not recompute ([`kept`]): the results of the body's
//! expensive maps (work inside each element: a matrix product, say) are stored per
//! iteration by the forward sweep as well, so are the residuals of its elementwise maps
//! ([`super::residual`]), and a map that computes the next iteration's parameters is the
//! tape's next row.

mod chunks;
mod kept;
pub(super) mod restore;

use super::build::{self, at};
use super::{checkpoint, common, differentiable, residual, Rev, Saved, R};
use crate::error::AdError;
pub(crate) use chunks::LastChunk;
use chunks::{chunk_of, reuse_last_chunk, tape_keeping_last};
use kept::{alloc_stored, restore_from_tape};
pub(crate) use kept::{kept_stms, Kept};
use restore::{alloc_undos, tapes_of, undo_count, undo_order, Undo};
use runic_ir::traverse::{type_mut, Substitute};
use runic_ir::*;
use std::collections::HashMap;

pub fn forward(rev: &mut Rev, b: &mut Builder, s: &Stm) -> R<()> {
    let Exp::Loop { params, form, body } = &s.exp else {
        return Err(AdError::internal("loop rule on a non-loop"));
    };
    if let Some(last) = rev.last_chunk.remove(&s.pat[0].name) {
        return reuse_last_chunk(rev, b, s, last);
    }
    let mut kept = None;
    let mut stored = Vec::new();
    let (tapes, count) = match form {
        LoopForm::For { i, bound } => {
            let n = to_i64(b, bound.clone())?;
            let counter = Some((*i, b.type_of(bound)?));
            let tapes = match chunk_of(params, body) {
                Some(chunk) => {
                    let (tapes, bufs) =
                        tape_keeping_last(b, params, counter, bound, &n, body, &s.pat, chunk)?;
                    kept = Some(bufs);
                    tapes
                }
                None => {
                    let (tapes, values) =
                        tape_loop(b, params, counter, bound, &n, &n, body, s.pat.clone(), true)?;
                    stored = values;
                    tapes
                }
            };
            (tapes, n)
        }
        LoopForm::While { cond } => {
            // The loop as written, counting its iterations.
            let i64t = Type::Prim(PrimType::I64);
            let count = b.param("count", i64t.clone());
            let mut counting = body.clone();
            let mut cb = Builder::new(b.names);
            cb.src = s.src.clone();
            let one = SubExp::i64(1);
            let next = cb.let_basic(
                "count",
                BasicOp::BinOp(BinOp::Add, SubExp::Var(count.name), one),
            )?;
            counting.stms.extend(cb.take_stms());
            counting.result.push(next);
            let total = b.param("iterations", i64t);
            let n = SubExp::Var(total.name);
            let mut ps = params.clone();
            ps.push((count, SubExp::i64(0)));
            let form = LoopForm::While { cond: *cond };
            let pat = [s.pat.clone(), vec![total]].concat();
            b.let_pat(
                pat,
                Exp::Loop {
                    params: ps,
                    form,
                    body: counting,
                },
            );
            // A renamed copy as a for loop of that many iterations builds the tape.
            let copy = rename_loop(b, params, None, body);
            let unused = s
                .pat
                .iter()
                .map(|p| b.param("unused", p.ty.clone()))
                .collect();
            let inits: Vec<(Param, SubExp)> = copy
                .params
                .into_iter()
                .zip(params.iter().map(|(_, init)| init.clone()))
                .collect();
            let (tapes, values) = tape_loop(b, &inits, None, &n, &n, &n, &copy.body, unused, true)?;
            stored = values;
            (tapes, n)
        }
    };
    let tape = Saved::Tape {
        tapes,
        count,
        kept,
        stored,
    };
    rev.saved.insert(s.pat[0].name, tape);
    Ok(())
}

/// `x` (of an integer type) as an `i64`.
fn to_i64(b: &mut Builder, x: SubExp) -> R<SubExp> {
    Ok(match b.prim_of(&x)? {
        PrimType::I64 => x,
        _ => b.convert(PrimType::I64, x),
    })
}

/// What the tape keeps of one loop parameter.
pub(crate) enum Tape {
    /// One row per iteration: the parameter's shape does not change.
    Rows(VName),
    /// The parameter's value of each iteration flattened, at that iteration's offset in one
    /// flat array: a parameter whose shape changes across iterations.
    Flat { data: VName, offsets: VName },
    /// The indices and old values of the element updates that make the next iteration's
    /// value, first to last: the parameter is restored from that value ([`restore`]).
    Restore(Vec<Undo>),
}

/// What a loop that records its parameters stores of one of them per iteration.
enum Record {
    Nothing,
    /// The value, as a row of an `n × shape` array.
    Row,
    /// The number of elements (sizing a flat tape).
    Len,
    /// The value flattened at `offsets[i]` of a flat array of `total` elements.
    Flat {
        offsets: VName,
        total: SubExp,
    },
    /// The indices and old values of the element updates at these positions of the body
    /// ([`restore::chains`]).
    Restore(Vec<usize>),
}

/// Emit `loop params for i < bound do body` (with the counter `i` of the given type when
/// given, a fresh `i64` counter otherwise; `n` is the bound as an `i64`) that also records
/// each iteration's parameters in tapes, and the results of the body's [`kept_stms`];
/// binds the loop's results to `pat` and returns the tapes of both. Tapes of rows have
/// `capacity ≥ n` rows (a chunk's, when the kept last chunk's tapes have that many). A
/// parameter whose shape changes across iterations (its type names other loop parameters)
/// goes to a flat tape: the loop runs first recording only the sizes of such values, which
/// give the offsets, then a renamed copy fills the tapes. Memory: the values of every
/// iteration; work: twice the loop's when shapes change, once otherwise.
#[allow(clippy::too_many_arguments)]
fn tape_loop(
    b: &mut Builder,
    params: &[(Param, SubExp)],
    counter: Option<(VName, Type)>,
    bound: &SubExp,
    n: &SubExp,
    capacity: &SubExp,
    body: &Body,
    pat: Vec<Param>,
    restorable: bool,
) -> R<(Vec<Tape>, Vec<VName>)> {
    let varying: Vec<bool> = params
        .iter()
        .map(|(p, _)| changes_shape(params, &p.ty))
        .collect();
    if !varying.contains(&true) {
        let records: Vec<Record> = restore::chains(params, body)
            .into_iter()
            .map(|c| match c {
                Some(updates) if restorable => Record::Restore(updates),
                _ => Record::Row,
            })
            .collect();
        let stored = kept_stms(params, body);
        let mut stores = alloc_stores(b, params, capacity, &records)?;
        let rows = stores.len();
        stores.extend(alloc_stored(b, body, &stored, capacity)?);
        let kept = stores.len() - rows;
        stores.extend(alloc_undos(b, params, body, capacity, &records)?);
        let all = record_loop(
            b, params, counter, bound, body, pat, &records, &stored, stores,
        )?;
        let mut all = all.into_iter();
        let rows: Vec<VName> = all.by_ref().take(rows).collect();
        let values: Vec<VName> = all.by_ref().take(kept).collect();
        let undos: Vec<VName> = all.collect();
        return Ok((tapes_of(body, &records, rows, undos)?, values));
    }
    // The loop as written, recording the sizes of the values whose shapes change.
    let lens: Vec<Record> = varying
        .iter()
        .map(|v| if *v { Record::Len } else { Record::Nothing })
        .collect();
    let unused = pat
        .iter()
        .map(|p| b.param("unused", p.ty.clone()))
        .collect();
    let stores = alloc_stores(b, params, n, &lens)?;
    let counts = record_loop(
        b,
        params,
        counter.clone(),
        bound,
        body,
        pat,
        &lens,
        &[],
        stores,
    )?;
    let mut counts = counts.into_iter();
    let mut records = Vec::new();
    for v in &varying {
        records.push(match (v, if *v { counts.next() } else { None }) {
            (true, Some(lens)) => {
                let (offsets, total) = offsets_of(b, n, lens)?;
                Record::Flat { offsets, total }
            }
            _ => Record::Row,
        });
    }
    // A renamed copy fills the tapes.
    let counter = counter.map(|(name, ty)| Param { name, ty });
    let has_counter = counter.is_some();
    let copy = rename_loop(b, params, counter, body);
    let (new_i, new_params) = copy.params.split_at(usize::from(has_counter));
    let inits: Vec<(Param, SubExp)> = new_params
        .iter()
        .cloned()
        .zip(params.iter().map(|(_, init)| init.clone()))
        .collect();
    let new_i = new_i.first().map(|p| (p.name, p.ty.clone()));
    let stored = kept_stms(&inits, &copy.body);
    let mut stores = alloc_stores(b, &inits, n, &records)?;
    stores.extend(alloc_stored(b, &copy.body, &stored, n)?);
    let mut stores = record_loop(
        b, &inits, new_i, bound, &copy.body, unused, &records, &stored, stores,
    )?;
    let values = stores.split_off(params.len());
    let tapes = stores
        .into_iter()
        .zip(records)
        .map(|(data, r)| match r {
            Record::Flat { offsets, .. } => Tape::Flat { data, offsets },
            _ => Tape::Rows(data),
        })
        .collect();
    Ok((tapes, values))
}

/// Where each iteration's value starts in a flat tape (the exclusive sum of the element
/// counts `lens`), and the tape's total size.
fn offsets_of(b: &mut Builder, n: &SubExp, lens: VName) -> R<(VName, SubExp)> {
    let i64t = PrimType::I64;
    let plus = b.binop_lam(BinOp::Add, i64t);
    let ends = b.scan("ends", n.clone(), plus, vec![SubExp::i64(0)], vec![lens])?[0];
    let offsets = b.map_fn("offsets", n.clone(), vec![ends, lens], |b, el| -> R<_> {
        Ok(vec![b.sub_(el[0].clone(), el[1].clone())?])
    })?[0];
    let plus = b.binop_lam(BinOp::Add, i64t);
    let zero = vec![SubExp::i64(0)];
    let total = b.reduce_comm("total", n.clone(), plus, zero, vec![lens])?[0].clone();
    Ok((offsets, total))
}

/// Whether a loop parameter of type `t` may change shape across iterations (its type
/// names loop parameters).
fn changes_shape(params: &[(Param, SubExp)], t: &Type) -> bool {
    t.rank() > 0 && checkpoint::loop_outside(params, t) != *t
}

/// The number of elements of the array `a` of rank `rank`.
fn elem_count(b: &mut Builder, a: VName, rank: usize) -> R<SubExp> {
    let mut len = b.array_size(a, 0);
    for d in 1..rank {
        let w = b.array_size(a, d);
        len = b.mul_(len, w)?;
    }
    Ok(len)
}

/// Fresh storage for what `records` says to store of each parameter over `n` iterations.
fn alloc_stores(
    b: &mut Builder,
    params: &[(Param, SubExp)],
    n: &SubExp,
    records: &[Record],
) -> R<Vec<VName>> {
    let mut stores = Vec::new();
    for ((p, _), r) in params.iter().zip(records) {
        let (elem, shape) = match checkpoint::loop_outside(params, &p.ty) {
            Type::Prim(e) => (e, vec![]),
            Type::Array { elem, shape } => (elem, shape),
            Type::Acc { .. } => return Err(AdError::unsupported("loops over accumulators")),
        };
        let op = match r {
            Record::Nothing | Record::Restore(_) => continue,
            Record::Row => BasicOp::Scratch(elem, [vec![n.clone()], shape].concat()),
            Record::Len => BasicOp::Scratch(PrimType::I64, vec![n.clone()]),
            Record::Flat { total, .. } => BasicOp::Scratch(elem, vec![total.clone()]),
        };
        stores.push(b.let_exp("tape", Exp::Basic(op))?[0]);
    }
    Ok(stores)
}

/// The loop of [`tape_loop`], storing per iteration what `records` says of each
/// parameter, then what `stored` keeps of the body's statements (results, and residuals
/// the statement then computes beside them; right after each, before anything can consume
/// them), into `stores` (one per parameter recorded, then one per kept value); returns the
/// final stores.
#[allow(clippy::too_many_arguments)]
fn record_loop(
    b: &mut Builder,
    params: &[(Param, SubExp)],
    counter: Option<(VName, Type)>,
    bound: &SubExp,
    body: &Body,
    pat: Vec<Param>,
    records: &[Record],
    stored: &[Kept],
    stores: Vec<VName>,
) -> R<Vec<VName>> {
    let i64t = Type::Prim(PrimType::I64);
    let mut sb = Builder::new(b.names);
    sb.src = b.src.clone();
    let i = match counter {
        Some((i, t)) => {
            sb.names.set_type(i, t);
            i
        }
        None => sb.names.fresh_typed("i", i64t.clone()),
    };
    let idx = to_i64(&mut sb, SubExp::Var(i))?;
    let at_i = vec![DimIndex::Fix(idx.clone())];
    let mut loop_params = params.to_vec();
    let mut tape_results = Vec::new();
    let mut stores_iter = stores.iter();
    for ((p, _), r) in params.iter().zip(records) {
        if let Record::Nothing | Record::Restore(_) = r {
            continue;
        }
        let Some(init) = stores_iter.next() else {
            return Err(AdError::internal("a loop tape without storage"));
        };
        let tp = sb.param("tape", sb.type_of(&SubExp::Var(*init))?);
        let upd = match r {
            Record::Len => {
                let len = elem_count(&mut sb, p.name, p.ty.rank())?;
                BasicOp::Update(tp.name, at_i.clone(), len)
            }
            Record::Flat { offsets, .. } => {
                let len = elem_count(&mut sb, p.name, p.ty.rank())?;
                let off = sb.let_basic("off", at(*offsets, idx.clone()))?;
                let end = sb.add_(off.clone(), len.clone())?;
                let flat = match p.ty.rank() {
                    1 => p.name,
                    _ => {
                        let shape = vec![len];
                        let op = BasicOp::Reshape { arr: p.name, shape };
                        sb.let_exp("flat", Exp::Basic(op))?[0]
                    }
                };
                let span = DimIndex::Slice {
                    start: Some(off),
                    end: Some(end),
                    stride: None,
                };
                BasicOp::Update(tp.name, vec![span], SubExp::Var(flat))
            }
            _ => BasicOp::Update(tp.name, at_i.clone(), SubExp::Var(p.name)),
        };
        tape_results.push(sb.let_basic("tape", upd)?);
        loop_params.push((tp, SubExp::Var(*init)));
    }
    // The restored parameters' updates: their tapes come after the kept values'.
    let undone: HashMap<usize, usize> = undo_order(records)
        .into_iter()
        .map(|(p, k)| (k, p))
        .collect();
    let mut undo_params = Vec::new();
    let mut undo_results = Vec::new();
    let mut undo_stores = stores
        .iter()
        .skip(stores.len() - undo_count(body, &undone)?);
    for (k, s) in body.stms.iter().enumerate() {
        if let (Some(&p), Exp::Basic(BasicOp::Update(q, idx, _))) = (undone.get(&k), &s.exp) {
            let elem =
                params[p].0.ty.elem().ok_or_else(|| {
                    AdError::internal("a restored parameter that is not an array")
                })?;
            let is = restore::indices(idx);
            let old = restore::old_element(&mut sb, *q, &is, elem)?;
            sb.add(s.clone());
            for v in is.into_iter().chain([old]) {
                let Some(init) = undo_stores.next() else {
                    return Err(AdError::internal("an update without storage"));
                };
                let tp = sb.param("tape", sb.type_of(&SubExp::Var(*init))?);
                let upd = BasicOp::Update(tp.name, at_i.clone(), v);
                undo_results.push(sb.let_basic("tape", upd)?);
                undo_params.push((tp, SubExp::Var(*init)));
            }
            continue;
        }
        let Some(kept) = stored.iter().find(|kept| kept.k == k) else {
            sb.add(s.clone());
            continue;
        };
        let results = s.pat.iter().map(|p| p.name).filter(|_| kept.results);
        let mut values: Vec<VName> = results.collect();
        let s = if kept.residuals.is_empty() {
            s.clone()
        } else {
            // Only the residuals that are not results need storage of their own.
            let (produced, arrays) = residual::produce(&mut sb, s);
            values.extend(arrays.into_iter().filter(|a| !s.binds(*a)));
            produced
        };
        sb.add(s);
        for &v in &values {
            let Some(init) = stores_iter.next() else {
                return Err(AdError::internal("a stored value without storage"));
            };
            let tp = sb.param("tape", sb.type_of(&SubExp::Var(*init))?);
            let upd = BasicOp::Update(tp.name, at_i.clone(), SubExp::Var(v));
            tape_results.push(sb.let_basic("tape", upd)?);
            loop_params.push((tp, SubExp::Var(*init)));
        }
    }
    loop_params.extend(undo_params);
    tape_results.extend(undo_results);
    let body = sb.finish([body.result.clone(), tape_results].concat());
    let tapes: Vec<Param> = stores
        .iter()
        .map(|t| {
            let ty = b.type_of(&SubExp::Var(*t))?;
            Ok(b.param("tape", ty))
        })
        .collect::<R<_>>()?;
    let names = tapes.iter().map(|p| p.name).collect();
    let form = LoopForm::For {
        i,
        bound: bound.clone(),
    };
    let exp = Exp::Loop {
        params: loop_params,
        form,
        body,
    };
    b.let_pat([pat, tapes].concat(), exp);
    Ok(names)
}

/// A renamed copy of a loop's parameters, counter and body.
fn rename_loop(
    b: &mut Builder,
    params: &[(Param, SubExp)],
    counter: Option<Param>,
    body: &Body,
) -> Lambda {
    let ps = counter
        .into_iter()
        .chain(params.iter().map(|(p, _)| p.clone()))
        .collect();
    b.renamed(&Lambda::new(ps, body.clone(), vec![]))
}

/// `np = ` the value of iteration `idx` in a flat tape (its shape, from `np`'s type, names
/// parameters restored before).
fn restore_flat(b: &mut Builder, np: &Param, data: VName, offsets: VName, idx: SubExp) -> R<()> {
    let Type::Array { elem, shape } = &np.ty else {
        return Err(AdError::internal("a flat tape of a scalar"));
    };
    let mut len = shape[0].clone();
    for d in &shape[1..] {
        len = b.mul_(len, d.clone())?;
    }
    let off = b.let_basic("off", at(offsets, idx))?;
    let end = b.add_(off.clone(), len.clone())?;
    let span = DimIndex::Slice {
        start: Some(off),
        end: Some(end),
        stride: None,
    };
    // A bounded slice's size is known at run time: its type is given.
    let flat_t = Type::Array {
        elem: *elem,
        shape: vec![len],
    };
    let flat = b.bind1("flat", Exp::Basic(BasicOp::Index(data, vec![span])), flat_t);
    let value = match shape.len() {
        1 => BasicOp::SubExp(SubExp::Var(flat)),
        _ => BasicOp::Reshape {
            arr: flat,
            shape: shape.clone(),
        },
    };
    b.let_pat(vec![np.clone()], Exp::Basic(value));
    Ok(())
}

pub fn reverse(
    rev: &mut Rev,
    b: &mut Builder,
    pat: &[Param],
    params: Vec<(Param, SubExp)>,
    form: LoopForm,
    body: Body,
) -> R<()> {
    let Some(Saved::Tape {
        tapes,
        count,
        kept,
        stored,
    }) = rev.saved.remove(&pat[0].name)
    else {
        return Err(AdError::internal("a loop without a tape"));
    };
    // Adjoints of the loop's results seed those of the parameters.
    let diff: Vec<bool> = params.iter().map(|(p, _)| differentiable(&p.ty)).collect();
    let mut seeds = Vec::new();
    for (k, p) in pat.iter().enumerate().take(params.len()) {
        if diff[k] {
            seeds.push(rev.adj(b, p.name)?);
        }
    }
    let frees = rev.free_adjoints(&body);
    let mut free_inits = Vec::new();
    for f in &frees {
        free_inits.push(rev.adj(b, *f)?);
    }
    let counter = match &form {
        LoopForm::For { i, bound } => Some(Param {
            name: *i,
            ty: b.type_of(bound)?,
        }),
        LoopForm::While { .. } => None,
    };
    let has_counter = counter.is_some();
    let copy = rename_loop(b, &params, counter, &body);
    let (new_i, new_params) = if has_counter {
        (Some(copy.params[0].clone()), copy.params[1..].to_vec())
    } else {
        (None, copy.params.clone())
    };
    // The adjoint of a parameter that changes shape has the shape of that iteration's
    // value: the backward loop carries its sizes.
    let i64t = Type::Prim(PrimType::I64);
    let mut seed_sizes = Vec::new();
    for ((p, _), seed) in params
        .iter()
        .filter(|(p, _)| differentiable(&p.ty))
        .zip(&seeds)
    {
        seed_sizes.push(match (changes_shape(&params, &p.ty), seed) {
            (true, SubExp::Var(v)) => Some(
                (0..p.ty.rank())
                    .map(|d| b.array_size(*v, d))
                    .collect::<Vec<_>>(),
            ),
            _ => None,
        });
    }

    let mut sb = Builder::new(b.names);
    sb.src = b.src.clone();
    let k = sb.param("k", i64t.clone());
    let mut size_params = Vec::new();
    let mut loop_params = Vec::new();
    let mut pbars = Vec::new();
    let mut pbar_sizes = Vec::new();
    for (((p, _), seed), sizes) in params
        .iter()
        .filter(|(p, _)| differentiable(&p.ty))
        .zip(&seeds)
        .zip(seed_sizes)
    {
        let ty = match (sizes, &p.ty) {
            (Some(sizes), Type::Array { elem, .. }) => {
                let mut shape = Vec::new();
                for init in sizes {
                    let d = sb.param("size", i64t.clone());
                    shape.push(SubExp::Var(d.name));
                    size_params.push((d, init));
                }
                pbar_sizes.push(shape.len());
                Type::Array { elem: *elem, shape }
            }
            _ => {
                pbar_sizes.push(0);
                p.ty.clone()
            }
        };
        let pb = sb.param("adj", ty);
        pbars.push(pb.clone());
        loop_params.push((pb, seed.clone()));
    }
    let mut fbars = Vec::new();
    for (f, init) in frees.iter().zip(&free_inits) {
        let fb = sb.param("adj", sb.type_of(&SubExp::Var(*f))?);
        fbars.push(fb.clone());
        loop_params.push((fb, init.clone()));
    }
    // A restored parameter is carried backwards, from the loop's result.
    let mut restored_params = Vec::new();
    for (k, tape) in tapes.iter().enumerate() {
        if let (Tape::Restore(_), Some(last)) = (tape, pat.get(k)) {
            let cur = sb.param("restored", params[k].0.ty.clone());
            restored_params.push((cur, SubExp::Var(last.name)));
        }
    }
    // Inside the backward loop: restore iteration `count - 1 - k`.
    let saved_owned = std::mem::take(&mut rev.owned);
    let last = sb.sub_i64(count.clone(), SubExp::i64(1));
    let idx = sb.sub_i64(last, SubExp::Var(k.name));
    if let Some(ip) = &new_i {
        let it = ip.ty.elem().unwrap_or(PrimType::I64);
        let v = match it {
            PrimType::I64 => idx.clone(),
            _ => sb.convert(it, idx.clone()),
        };
        build::copy_to(&mut sb, ip.clone(), v);
    }
    // Parameters of fixed shape first: they hold the sizes of the others.
    let mut carried = restored_params.iter();
    let mut restored_values = Vec::new();
    for (np, tape) in new_params.iter().zip(&tapes) {
        match tape {
            Tape::Rows(tape) => {
                let row = at(*tape, idx.clone());
                sb.let_pat(vec![np.clone()], Exp::Basic(row));
            }
            Tape::Restore(undos) => {
                let Some((cur, _)) = carried.next() else {
                    return Err(AdError::internal("a restored parameter not carried"));
                };
                restore::undo(&mut sb, np, cur.name, undos, &idx)?;
                restored_values.push(SubExp::Var(np.name));
            }
            Tape::Flat { .. } => continue,
        }
        rev.mark_active(np);
    }
    for (np, tape) in new_params.iter().zip(&tapes) {
        if let Tape::Flat { data, offsets } = tape {
            restore_flat(&mut sb, np, *data, *offsets, idx.clone())?;
            rev.mark_active(np);
        }
    }
    let restored = restore_from_tape(
        rev, &mut sb, &params, &body, &copy.body, &tapes, &stored, pat, &count, &idx,
    )?;
    for (f, fb) in frees.iter().zip(&fbars) {
        rev.adjs.insert(*f, SubExp::Var(fb.name));
        rev.owned.insert(fb.name);
    }
    for pb in &pbars {
        rev.owned.insert(pb.name);
    }
    // A strip-mined loop: its last chunk's inner tape was kept by the forward sweep.
    let mut inner_loop = None;
    if let (Some(bufs), Some(inner)) = (kept, copy.body.stms.last()) {
        let is_last = sb.op2(BinOp::Eq, SubExp::Var(k.name), SubExp::i64(0))?;
        let results = pat.iter().map(|p| SubExp::Var(p.name)).collect();
        let last = LastChunk {
            is_last,
            bufs,
            results,
        };
        inner_loop = Some(inner.pat[0].name);
        rev.last_chunk.insert(inner.pat[0].name, last);
    }
    let mut pbar_seeds = pbars.iter().map(|p| SubExp::Var(p.name));
    let body_seeds = diff.iter().map(|d| d.then(|| pbar_seeds.next()).flatten());
    rev.sweep(&mut sb, copy.body, body_seeds.collect())?;
    if let Some(v) = inner_loop {
        rev.last_chunk.remove(&v);
    }
    for v in restored {
        rev.restored.remove(&v);
    }
    let mut sizes = Vec::new();
    let mut result = Vec::new();
    let diff_params = new_params.iter().zip(&diff).filter(|(_, d)| **d);
    for ((np, _), rank) in diff_params.zip(&pbar_sizes) {
        let a = rev.adj(&mut sb, np.name)?;
        if let (SubExp::Var(v), true) = (&a, *rank > 0) {
            sizes.extend((0..*rank).map(|d| sb.array_size(*v, d)));
        }
        result.push(a);
    }
    for f in &frees {
        result.push(rev.adj(&mut sb, *f)?);
    }
    rev.owned = saved_owned;
    let mut loop_body = sb.finish([sizes, result, restored_values].concat());
    common::prune(&mut loop_body);
    let form = LoopForm::For {
        i: k.name,
        bound: count,
    };
    // The results' types name the results that hold their sizes.
    let mut out_pat = Vec::new();
    let mut subst = HashMap::new();
    for (d, _) in &size_params {
        let o = b.param("size", i64t.clone());
        subst.insert(d.name, SubExp::Var(o.name));
        out_pat.push(o);
    }
    for (p, _) in loop_params.iter().chain(&restored_params) {
        let mut t = p.ty.clone();
        type_mut(&mut Substitute(&subst), &mut t);
        out_pat.push(b.param("adj", t));
    }
    let exp = Exp::Loop {
        params: [size_params, loop_params, restored_params].concat(),
        form,
        body: loop_body,
    };
    b.let_pat(out_pat.clone(), exp);
    let outs: Vec<VName> = out_pat[subst.len()..].iter().map(|p| p.name).collect();
    let (pouts, fouts) = outs.split_at(pbars.len());
    for (f, o) in frees.iter().zip(fouts) {
        rev.adjs.insert(*f, SubExp::Var(*o));
        if b.type_of(&SubExp::Var(*o))?.rank() > 0 {
            rev.owned.insert(*o);
        }
    }
    let inits = params.iter().filter(|(p, _)| differentiable(&p.ty));
    for ((_, init), o) in inits.zip(pouts) {
        rev.add_adj(b, init, SubExp::Var(*o))?;
    }
    Ok(())
}
