//! Maps over short rows with one row per SIMD lane: `map (\r -> … reduce op ne (map pre r)
//! …) xs`, a row's maximum, sum, log-sum-exp, norm or softmax, for rows too short for
//! lanes along them (ten classes: lanes along such a row spend more on their tail and on
//! combining than on the row). Each lane folds its own row from the neutral element in the
//! row's order, and the scalar code of such a map folds its sums of at most
//! [`ROW_LANES_MAX`] elements in order too (`Gen::in_order_short_sums`), so a row's results
//! do not depend on whether its group ran in lanes (up to the last bit of `exp`, `log` and
//! `tanh`, as everywhere in `simd/`); the elements of the lanes' rows are gathered from the
//! rows at each step.
//!
//! The lambda takes rows and scalars of one float type `T`, and `i64`s that only index its
//! rows; its statements are those the lane code does (`VGen`), reductions over rows whose
//! operator and `pre` are such code, maps of such code over rows, whose results (a row
//! per lane) are kept interleaved in a stack slot, one vector per element, which is why
//! rows are at most [`ROW_LANES_MAX`] long, and reads of a row at each lane's own index
//! (a cross-entropy's `z[label]`; an index outside its row sends the group to the scalar
//! code, which reports it). Free vectors of `T` are rows too, the same in every lane (a
//! bias). It returns scalars of `T` and its maps' rows, scattered into the output's rows.
//! Part of [`super`], whose `VGen` it uses.

use super::{check_body, enabled, lane_groups, splat_env, sub_type, unaligned};
use super::{Plan, VGen, R, V};
use crate::gen::ba;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, StackSlotData, StackSlotKind, Value};
use cranelift_frontend::FunctionBuilder;
use runic_ir::*;
use std::collections::{HashMap, HashSet};

/// The longest rows that run with one row per lane; longer ones have lanes along them.
pub(crate) const ROW_LANES_MAX: i64 = 32;

/// The bytes of one vector of lanes (`F32X4`, `F64X2`).
const VECTOR_BYTES: i64 = 16;

/// The plan of `lam` if its elements can run with one row per lane (see the module
/// comment); `free` gives the type of a variable the lambda does not bind.
pub(crate) fn row_plan(
    lam: &Lambda,
    free: &dyn Fn(VName) -> Option<PrimType>,
    free_vector: &dyn Fn(VName) -> Option<PrimType>,
) -> Option<Plan> {
    if !enabled() {
        return None;
    }
    let t = lam.params.iter().find_map(|p| match &p.ty {
        Type::Array { elem, shape } if shape.len() == 1 => Some(*elem),
        _ => None,
    })?;
    if !matches!(t, PrimType::F32 | PrimType::F64) {
        return None;
    }
    let is_t = |ty: &Type| matches!(ty, Type::Prim(p) if *p == t);
    let is_row =
        |ty: &Type| matches!(ty, Type::Array { elem, shape } if *elem == t && shape.len() == 1);
    // The rows in scope: the parameters', free vectors of `T` (the same in every lane),
    // then the maps'.
    let mut rows: HashSet<VName> = (lam.params.iter())
        .filter(|p| is_row(&p.ty))
        .map(|p| p.name)
        .collect();
    rows.extend(
        runic_ir::traverse::free_vars(lam)
            .into_iter()
            .filter(|v| free_vector(*v) == Some(t)),
    );
    // Parameters that are `i64`s may only index rows.
    let is_index = |ty: &Type| *ty == Type::Prim(PrimType::I64);
    let indices: HashSet<VName> = (lam.params.iter())
        .filter(|p| is_index(&p.ty))
        .map(|p| p.name)
        .collect();
    let params_ok = (lam.params.iter()).all(|p| is_t(&p.ty) || is_row(&p.ty) || is_index(&p.ty));
    if !params_ok || !lam.ret.iter().all(|r| is_t(r) || is_row(r)) {
        return None;
    }
    let mut made = HashSet::new();
    let mut tys: HashMap<VName, PrimType> = (lam.params.iter())
        .filter(|p| is_t(&p.ty))
        .map(|p| (p.name, t))
        .collect();
    // The width is the same in every lane: a constant or a free size.
    let uniform = |w: &SubExp| match w {
        SubExp::Const(_) => true,
        SubExp::Var(v) => free(*v) == Some(PrimType::I64),
    };
    for s in &lam.body.stms {
        match &s.exp {
            Exp::Soac(Soac::Reduce {
                w,
                arrs,
                pre,
                lam: op,
                neutral,
                ..
            }) => {
                let [p] = &s.pat[..] else { return None };
                let [ne] = &neutral[..] else { return None };
                if !uniform(w)
                    || arrs.is_empty()
                    || !arrs.iter().all(|a| rows.contains(a))
                    || !is_t(&p.ty)
                    || sub_type(ne, &tys, free) != Some(t)
                {
                    return None;
                }
                match pre {
                    Some(pre) if pre.params.len() == arrs.len() => {
                        scalar_lambda(pre, 1, t, &mut tys, free)?
                    }
                    None if arrs.len() == 1 => {}
                    _ => return None,
                }
                if op.params.len() != 2 {
                    return None;
                }
                scalar_lambda(op, 1, t, &mut tys, free)?;
                tys.insert(p.name, t);
            }
            Exp::Soac(Soac::Map { w, lam: f, arrs }) => {
                let fits = uniform(w)
                    && !arrs.is_empty()
                    && !s.pat.is_empty()
                    && arrs.iter().all(|a| rows.contains(a))
                    && f.params.len() == arrs.len()
                    && s.pat.iter().all(|p| is_row(&p.ty));
                if !fits {
                    return None;
                }
                scalar_lambda(f, s.pat.len(), t, &mut tys, free)?;
                rows.extend(s.pat.iter().map(|p| p.name));
                made.extend(s.pat.iter().map(|p| p.name));
            }
            // An element of a row at each lane's own index.
            Exp::Basic(BasicOp::Index(a, idx)) => {
                let [DimIndex::Fix(SubExp::Var(k))] = &idx[..] else {
                    return None;
                };
                let [p] = &s.pat[..] else { return None };
                if !rows.contains(a) || !indices.contains(k) || !is_t(&p.ty) {
                    return None;
                }
                tys.insert(p.name, t);
            }
            _ => {
                let one = Body {
                    stms: vec![s.clone()],
                    result: Vec::new(),
                };
                check_body(&one, t, &mut tys, free)?;
            }
        }
    }
    // Scalar results of `T`, and rows the lambda's maps made.
    let results_ok = lam.body.result.iter().zip(&lam.ret).all(|(r, ty)| match r {
        SubExp::Var(v) if is_row(ty) => made.contains(v),
        _ => is_t(ty) && sub_type(r, &tys, free) == Some(t),
    });
    results_ok.then_some(Plan {
        elem: t,
        lanes: if t == PrimType::F32 { 4 } else { 2 },
        index: 0,
    })
}

/// Whether `l` takes scalars of `t` and returns `results` of them, its body lane code
/// seeing the enclosing lambda's bindings `tys` (its parameters are added to them).
fn scalar_lambda(
    l: &Lambda,
    results: usize,
    t: PrimType,
    tys: &mut HashMap<VName, PrimType>,
    free: &dyn Fn(VName) -> Option<PrimType>,
) -> Option<()> {
    let is_t = |ty: &Type| matches!(ty, Type::Prim(p) if *p == t);
    let typed = l.params.iter().all(|p| is_t(&p.ty)) && l.ret.iter().all(is_t);
    if !typed || l.ret.len() != results || l.body.result.len() != results {
        return None;
    }
    tys.extend(l.params.iter().map(|p| (p.name, t)));
    check_body(&l.body, t, tys, free)?;
    (l.body.result.iter())
        .all(|r| sub_type(r, tys, free) == Some(t))
        .then_some(())
}

/// Rows of an array in memory: its base, the distances in bytes between rows and between
/// a row's elements, and the rows' length.
#[derive(Clone, Copy)]
pub(crate) struct Rows {
    pub base: Value,
    pub row_step: Value,
    pub elem_step: Value,
    pub len: Value,
}

/// A free vector: its base, the distance in bytes between its elements, and its length.
#[derive(Clone, Copy)]
pub(crate) struct Vector {
    pub base: Value,
    pub step: Value,
    pub len: Value,
}

/// Where a parameter's values come from (or a result goes): rows of an array, or a column
/// of scalars or of indices (its base).
#[derive(Clone, Copy)]
pub(crate) enum RowInput {
    Rows(Rows),
    Column(Value),
    /// A column of `i64` indices.
    Indices(Value),
}

/// A row of each lane: gathered from rows in memory (each lane's row's address, and the
/// step between its elements), made by a map of the lambda (the address of its stack
/// slot, where element `k` of every lane is the vector at `k`·16 bytes), or a free vector.
enum LaneRow {
    Gathered(Vec<Value>, Value),
    Slot(Value),
    /// A free vector (its base and step): the same row in every lane.
    Uniform(Value, Value),
}

/// A result of the lambda for a group of lanes: scalars, or a row of each lane in a slot
/// (and its length).
enum Out {
    Lanes(V),
    Row(Value, Value),
}

/// Emits the loop over the elements `from..to` of a map whose lambda has a [`row_plan`],
/// a group of rows at a time, writing each result into its column or rows of `outs`;
/// returns the element the scalar code continues from: `to` minus the tail, or the first
/// group that a `min`/`max` between `0` and `-0` or an index outside its row leaves to it,
/// or `from` when a row or a reduction's or map's width is longer than [`ROW_LANES_MAX`],
/// a row is shorter than a reduction or map over it, or a result row is not as long as
/// the output's. `env` holds the kernel's free scalars (sizes among them), `vectors` its
/// free vectors.
#[allow(clippy::too_many_arguments)]
pub(crate) fn row_loop(
    b: &mut FunctionBuilder,
    plan: Plan,
    lam: &Lambda,
    env: &HashMap<VName, (Value, PrimType)>,
    vectors: &HashMap<VName, Vector>,
    inputs: &[RowInput],
    outs: &[RowInput],
    from: Value,
    to: Value,
) -> R<Value> {
    let by_name: HashMap<VName, RowInput> = (lam.params.iter().map(|p| p.name))
        .zip(inputs.iter().copied())
        .collect();
    // The length of every row in scope, at least the width of every SOAC over it; the
    // parameters' rows at most ROW_LANES_MAX (they are gathered a lane at a time). A free
    // vector may be longer: it is read element by element, not kept.
    let mut ok = b.ins().iconst(types::I8, 1);
    let mut lens: HashMap<VName, Value> = HashMap::new();
    for (p, input) in &by_name {
        if let RowInput::Rows(r) = input {
            let short = b
                .ins()
                .icmp_imm_s(IntCC::SignedLessThanOrEqual, r.len, ROW_LANES_MAX);
            ok = b.ins().band(ok, short);
            lens.insert(*p, r.len);
        }
    }
    lens.extend(vectors.iter().map(|(v, x)| (*v, x.len)));
    let mut widths = HashMap::new();
    let mut slots = HashMap::new();
    for s in &lam.body.stms {
        let (w, arrs) = match &s.exp {
            Exp::Soac(Soac::Reduce { w, arrs, .. } | Soac::Map { w, arrs, .. }) => (w, arrs),
            _ => continue,
        };
        let w = match w {
            SubExp::Const(c) => {
                let w = c.as_int().and_then(|w| i64::try_from(w).ok()).unwrap_or(-1);
                b.ins().iconst(types::I64, w)
            }
            SubExp::Var(v) => env
                .get(v)
                .map(|x| x.0)
                .ok_or_else(|| format!("internal error: the width {v} is not in scope"))?,
        };
        // Widths of at most ROW_LANES_MAX: a map's rows fit its slot, and the scalar code
        // folds those in order too.
        let natural = b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, w, 0);
        let short = b
            .ins()
            .icmp_imm_s(IntCC::SignedLessThanOrEqual, w, ROW_LANES_MAX);
        ok = b.ins().band(ok, natural);
        ok = b.ins().band(ok, short);
        for a in arrs {
            let len = lens.get(a).ok_or("internal error: a row's length")?;
            let fits = b.ins().icmp(IntCC::SignedLessThanOrEqual, w, *len);
            ok = b.ins().band(ok, fits);
        }
        for p in &s.pat {
            widths.insert(p.name, w);
            if matches!(s.exp, Exp::Soac(Soac::Map { .. })) {
                lens.insert(p.name, w);
                let size = (ROW_LANES_MAX * VECTOR_BYTES) as u32;
                let data = StackSlotData::new(StackSlotKind::ExplicitSlot, size, 4);
                let slot = b.create_sized_stack_slot(data);
                slots.insert(p.name, b.ins().stack_addr(types::I64, slot, 0));
            }
        }
    }
    // Scalars into columns; a result row as long as the output's rows.
    for (r, out) in lam.body.result.iter().zip(outs) {
        match (r, out) {
            (SubExp::Var(v), RowInput::Rows(o)) if slots.contains_key(v) => {
                let same = b.ins().icmp(IntCC::Equal, lens[v], o.len);
                ok = b.ins().band(ok, same);
            }
            (SubExp::Var(v), _) if slots.contains_key(v) => {
                return Err("internal error: a row result into a column".into())
            }
            (_, RowInput::Rows(_)) => return Err("internal error: a scalar into rows".into()),
            _ => {}
        }
    }
    let frees = splat_env(b, plan, env, lam);
    let lanes_block = b.create_block();
    let after = b.create_block();
    b.append_block_param(after, types::I64);
    b.ins().brif(ok, lanes_block, &[], after, &ba(&[from]));
    b.switch_to_block(lanes_block);
    let data = StackSlotData::new(StackSlotKind::ExplicitSlot, VECTOR_BYTES as u32, 4);
    let dummy = b.create_sized_stack_slot(data);
    let parts = Parts {
        lam,
        frees: &frees,
        inputs: &by_name,
        vectors,
        widths: &widths,
        slots: &slots,
        lens: &lens,
        dummy: b.ins().stack_addr(types::I64, dummy, 0),
    };
    let stop = lane_groups(
        b,
        plan,
        (from, to),
        1,
        |b, off| rows_body(b, plan, &parts, off),
        |b, off, res: Vec<Out>| store_results(b, plan, &res, outs, off),
    )?;
    b.ins().jump(after, &ba(&[stop]));
    b.switch_to_block(after);
    Ok(b.block_params(after)[0])
}

/// What the code of a group of rows needs: the lambda, its broadcast free scalars, its
/// parameters' inputs and free vectors, the width of each SOAC's result, the slot of each
/// map's, the length of every row, and where a read outside a row reads instead.
struct Parts<'a> {
    lam: &'a Lambda,
    frees: &'a HashMap<VName, (Value, bool)>,
    inputs: &'a HashMap<VName, RowInput>,
    vectors: &'a HashMap<VName, Vector>,
    widths: &'a HashMap<VName, Value>,
    slots: &'a HashMap<VName, Value>,
    lens: &'a HashMap<VName, Value>,
    dummy: Value,
}

/// The lambda on the group of rows at byte offset `off` (of the first row's result): its
/// results, and the lanes to leave to the scalar code, if any can be.
fn rows_body(
    b: &mut FunctionBuilder,
    plan: Plan,
    parts: &Parts,
    off: Value,
) -> R<(Vec<Out>, Option<Value>)> {
    let first = first_row(b, plan, off);
    let mut env: HashMap<VName, V> = (parts.frees.iter())
        .map(|(k, &(v, mask))| (*k, V { v, mask }))
        .collect();
    let mut rows: HashMap<VName, LaneRow> = (parts.vectors.iter())
        .map(|(v, x)| (*v, LaneRow::Uniform(x.base, x.step)))
        .collect();
    let mut indices: HashMap<VName, Vec<Value>> = HashMap::new();
    for p in &parts.lam.params {
        match parts.inputs.get(&p.name) {
            Some(RowInput::Indices(base)) => {
                let ks = (0..plan.lanes)
                    .map(|l| {
                        let at = b.ins().iadd_imm_s(first, l);
                        let a = crate::gen::elem_addr(b, *base, at, PrimType::I64);
                        b.ins().load(types::I64, unaligned(), a, 0)
                    })
                    .collect();
                indices.insert(p.name, ks);
            }
            Some(RowInput::Column(base)) => {
                let a = b.ins().iadd(*base, off);
                let v = b.ins().load(plan.vt(), unaligned(), a, 0);
                env.insert(p.name, V { v, mask: false });
            }
            Some(RowInput::Rows(r)) => {
                let lanes = lane_rows(b, plan, r, first);
                rows.insert(p.name, LaneRow::Gathered(lanes, r.elem_step));
            }
            None => return Err(format!("internal error: no input for {}", p.name)),
        }
    }
    let mut g = VGen {
        b,
        plan,
        env,
        bail: None,
    };
    for s in &parts.lam.body.stms {
        match &s.exp {
            Exp::Soac(Soac::Reduce {
                arrs,
                pre,
                lam: op,
                neutral,
                ..
            }) => {
                let w = parts.widths[&s.pat[0].name];
                let ins = arrs.iter().map(|a| &rows[a]).collect::<Vec<_>>();
                let v = row_fold(&mut g, &ins, pre.as_ref(), op, &neutral[0], w)?;
                g.env.insert(s.pat[0].name, v);
            }
            Exp::Soac(Soac::Map { arrs, lam: f, .. }) => {
                let w = parts.widths[&s.pat[0].name];
                let ins = arrs.iter().map(|a| &rows[a]).collect::<Vec<_>>();
                let outs: Vec<Value> = s.pat.iter().map(|p| parts.slots[&p.name]).collect();
                row_map(&mut g, &ins, f, &outs, w)?;
                for (p, slot) in s.pat.iter().zip(outs) {
                    rows.insert(p.name, LaneRow::Slot(slot));
                }
            }
            Exp::Basic(BasicOp::Index(a, idx)) => {
                let [DimIndex::Fix(SubExp::Var(k))] = &idx[..] else {
                    return Err("internal error: a row read".into());
                };
                let len = parts.lens[a];
                let v = element_at(&mut g, &rows[a], &indices[k], len, parts.dummy);
                g.env.insert(s.pat[0].name, V { v, mask: false });
            }
            _ => g.stm(s)?,
        }
    }
    let mut res = Vec::new();
    for r in &parts.lam.body.result {
        res.push(match r {
            SubExp::Var(v) if parts.slots.contains_key(v) => {
                Out::Row(parts.slots[v], parts.widths[v])
            }
            _ => Out::Lanes(g.opd(r)?),
        });
    }
    Ok((res, g.bail))
}

/// The row at byte offset `off` of a column of the plan's elements.
fn first_row(b: &mut FunctionBuilder, plan: Plan, off: Value) -> Value {
    let shift = plan.elem.size_bytes().trailing_zeros() as i64;
    b.ins().ushr_imm_u(off, shift)
}

/// The address of each lane's row of `r`, the first lane's being row `first` (pinned:
/// Cranelift would otherwise compute them again at every element of the loops that read
/// the rows).
fn lane_rows(b: &mut FunctionBuilder, plan: Plan, r: &Rows, first: Value) -> Vec<Value> {
    let at = b.ins().imul(first, r.row_step);
    let mut row = b.ins().iadd(r.base, at);
    let mut lanes = vec![crate::scalar::pinned(b, row)];
    for _ in 1..plan.lanes {
        row = b.ins().iadd(row, r.row_step);
        lanes.push(crate::scalar::pinned(b, row));
    }
    lanes
}

/// Element `k` of each lane's row, as one vector.
fn element(g: &mut VGen, row: &LaneRow, k: Value) -> Value {
    match row {
        LaneRow::Slot(slot) => {
            let at = g.b.ins().imul_imm_s(k, VECTOR_BYTES);
            let a = g.b.ins().iadd(*slot, at);
            g.b.ins().load(g.plan.vt(), unaligned(), a, 0)
        }
        LaneRow::Gathered(lanes, step) => {
            let at = g.b.ins().imul(k, *step);
            let addrs: Vec<Value> = lanes.iter().map(|row| g.b.ins().iadd(*row, at)).collect();
            gather(g, &addrs)
        }
        LaneRow::Uniform(base, step) => {
            let at = g.b.ins().imul(k, *step);
            let a = g.b.ins().iadd(*base, at);
            let x = g.b.ins().load(g.plan.elem_type(), unaligned(), a, 0);
            g.b.ins().splat(g.plan.vt(), x)
        }
    }
}

/// Element `ks[l]` of lane `l`'s row, as one vector; an index outside the row (of length
/// `len`) reads a harmless dummy and sends the group to the scalar code, which reports it.
fn element_at(g: &mut VGen, row: &LaneRow, ks: &[Value], len: Value, dummy: Value) -> Value {
    let mut addrs = Vec::new();
    let mut inside = g.b.ins().iconst(types::I8, 1);
    let size = g.plan.elem.size_bytes() as i64;
    for (l, &k) in ks.iter().enumerate() {
        let ok = g.b.ins().icmp(IntCC::UnsignedLessThan, k, len);
        inside = g.b.ins().band(inside, ok);
        let a = match row {
            LaneRow::Gathered(lanes, step) => {
                let at = g.b.ins().imul(k, *step);
                g.b.ins().iadd(lanes[l], at)
            }
            LaneRow::Slot(slot) => {
                let at = g.b.ins().imul_imm_s(k, VECTOR_BYTES);
                let a = g.b.ins().iadd(*slot, at);
                g.b.ins().iadd_imm_s(a, l as i64 * size)
            }
            LaneRow::Uniform(base, step) => {
                let at = g.b.ins().imul(k, *step);
                g.b.ins().iadd(*base, at)
            }
        };
        addrs.push(g.b.ins().select(ok, a, dummy));
    }
    let v = gather(g, &addrs);
    // Every lane to the scalar code when one is outside.
    let mt = g.plan.mt();
    let (all, none) = (-1i64, 0i64);
    let lane = mt.lane_type();
    let (all, none) = (g.b.ins().iconst(lane, all), g.b.ins().iconst(lane, none));
    let flag = g.b.ins().select(inside, none, all);
    let outside = g.b.ins().splat(mt, flag);
    g.bail = Some(match g.bail {
        Some(m) => g.b.ins().bor(m, outside),
        None => outside,
    });
    v
}

/// One element of the plan's type loaded from each of `addrs` (one per lane), as a vector.
fn gather(g: &mut VGen, addrs: &[Value]) -> Value {
    let load = |g: &mut VGen, a: Value| g.b.ins().load(g.plan.elem_type(), unaligned(), a, 0);
    let first = load(g, addrs[0]);
    let mut v = g.b.ins().scalar_to_vector(g.plan.vt(), first);
    for (l, &a) in addrs.iter().enumerate().skip(1) {
        let x = load(g, a);
        v = g.b.ins().insertlane(v, x, l as u8);
    }
    v
}

/// `for k < w` carrying `carried` (vectors of the plan's type) and the lanes a `min`/`max`
/// leaves to the scalar code: `step(g, k, carried)` emits one element's code and returns
/// the next values. Returns the final values, the lanes left joined into `g.bail`.
fn lane_loop(
    g: &mut VGen,
    w: Value,
    carried: &[Value],
    mut step: impl FnMut(&mut VGen, Value, &[Value]) -> R<Vec<Value>>,
) -> R<Vec<Value>> {
    let (vt, mt) = (g.plan.vt(), g.plan.mt());
    let zero = g.b.ins().iconst(mt.lane_type(), 0);
    let no_bail = g.b.ins().splat(mt, zero);
    let k0 = g.b.ins().iconst(types::I64, 0);
    let header = g.b.create_block();
    let body = g.b.create_block();
    let done = g.b.create_block();
    g.b.append_block_param(header, types::I64);
    for _ in carried {
        g.b.append_block_param(header, vt);
        g.b.append_block_param(done, vt);
    }
    g.b.append_block_param(header, mt);
    g.b.append_block_param(done, mt);
    let init = [&[k0][..], carried, &[no_bail]].concat();
    g.b.ins().jump(header, &ba(&init));
    g.b.switch_to_block(header);
    let params = g.b.block_params(header).to_vec();
    let (k, values, bail) = (
        params[0],
        &params[1..params.len() - 1],
        params[params.len() - 1],
    );
    let more = g.b.ins().icmp(IntCC::SignedLessThan, k, w);
    g.b.ins().brif(more, body, &[], done, &ba(&params[1..]));
    g.b.switch_to_block(body);
    let saved = (g.env.clone(), g.bail.take());
    let next = step(g, k, values)?;
    let bail = match g.bail {
        Some(m) => g.b.ins().bor(bail, m),
        None => bail,
    };
    (g.env, g.bail) = saved;
    let k1 = g.b.ins().iadd_imm_s(k, 1);
    g.b.ins()
        .jump(header, &ba(&[&[k1][..], &next, &[bail]].concat()));
    g.b.switch_to_block(done);
    let out = g.b.block_params(done).to_vec();
    let (values, bail) = (&out[..out.len() - 1], out[out.len() - 1]);
    g.bail = Some(match g.bail {
        Some(m) => g.b.ins().bor(m, bail),
        None => bail,
    });
    Ok(values.to_vec())
}

/// `reduce op ne (map pre rows…)` over the first `w` elements of each lane's rows, in
/// order from `ne`.
fn row_fold(
    g: &mut VGen,
    ins: &[&LaneRow],
    pre: Option<&Lambda>,
    op: &Lambda,
    ne: &SubExp,
    w: Value,
) -> R<V> {
    let acc0 = g.opd(ne)?.v;
    let out = lane_loop(g, w, &[acc0], |g, k, acc| {
        let xs: Vec<Value> = ins.iter().map(|r| element(g, r, k)).collect();
        let y = match pre {
            Some(pre) => apply(g, pre, &xs)?[0],
            None => xs[0],
        };
        apply(g, op, &[acc[0], y])
    })?;
    Ok(V {
        v: out[0],
        mask: false,
    })
}

/// `map f rows…` over the first `w` elements of each lane's rows, into the slots `outs`.
fn row_map(g: &mut VGen, ins: &[&LaneRow], f: &Lambda, outs: &[Value], w: Value) -> R<()> {
    lane_loop(g, w, &[], |g, k, _| {
        let xs: Vec<Value> = ins.iter().map(|r| element(g, r, k)).collect();
        let ys = apply(g, f, &xs)?;
        let at = g.b.ins().imul_imm_s(k, VECTOR_BYTES);
        for (y, slot) in ys.iter().zip(outs) {
            let a = g.b.ins().iadd(*slot, at);
            g.b.ins().store(unaligned(), *y, a, 0);
        }
        Ok(Vec::new())
    })?;
    Ok(())
}

/// `l` applied to lanes `xs`: its results' lanes.
fn apply(g: &mut VGen, l: &Lambda, xs: &[Value]) -> R<Vec<Value>> {
    for (p, x) in l.params.iter().zip(xs) {
        g.env.insert(p.name, V { v: *x, mask: false });
    }
    Ok(g.body(&l.body)?.iter().map(|r| r.v).collect())
}

/// A group's results into the outputs at byte offset `off` (of the first row's scalar):
/// scalars into their columns, rows scattered element by element into each lane's row.
fn store_results(b: &mut FunctionBuilder, plan: Plan, res: &[Out], outs: &[RowInput], off: Value) {
    for (r, out) in res.iter().zip(outs) {
        match (r, out) {
            (Out::Lanes(v), RowInput::Column(base)) => {
                let a = b.ins().iadd(*base, off);
                b.ins().store(unaligned(), v.v, a, 0);
            }
            (Out::Row(slot, w), RowInput::Rows(o)) => {
                let first = first_row(b, plan, off);
                let lanes = lane_rows(b, plan, o, first);
                let zero = b.ins().iconst(types::I64, 0);
                let (k, header, done) = crate::rows::open_loop(b, zero, *w);
                let at = b.ins().imul_imm_s(k, VECTOR_BYTES);
                let a = b.ins().iadd(*slot, at);
                let v = b.ins().load(plan.vt(), unaligned(), a, 0);
                let at = b.ins().imul(k, o.elem_step);
                for (l, row) in lanes.iter().enumerate() {
                    let x = b.ins().extractlane(v, l as u8);
                    let a = b.ins().iadd(*row, at);
                    b.ins().store(unaligned(), x, a, 0);
                }
                crate::rows::close_loop(b, k, header, done);
            }
            // Paired as `row_loop` checked.
            _ => {}
        }
    }
}
