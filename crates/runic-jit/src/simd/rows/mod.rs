//! Maps over short rows with one row per SIMD lane: `map (\r -> … reduce op ne (map pre r)
//! …) xs`, a row's maximum, sum, log-sum-exp, norm or softmax, or a softmax
//! cross-entropy's gradient, for rows too short for lanes along them (ten classes: lanes
//! along such a row spend more on their tail and on combining than on the row). Each lane
//! folds its own row from the neutral element in the row's order, and the scalar code of
//! such a map folds its sums of at most [`ROW_LANES_MAX`] elements in order too
//! (`Gen::in_order_short_sums`), so a row's results do not depend on whether its group ran
//! in lanes (up to the last bit of `exp`, `log` and `tanh`, as everywhere in `simd/`); the
//! elements of the lanes' rows are gathered from the rows at each step (a parameter's row
//! that more than one SOAC reads, once into a slot first).
//!
//! The lambda takes rows and scalars of one float type `T`, and `i64`s that index its
//! rows (or are compared: small integers below); its statements are those the lane code does (`VGen`), reductions over rows whose
//! operator and `pre` are such code, maps of such code over rows, reads of a row at each
//! lane's own index (a cross-entropy's `z[label]`), rows with an element replaced at each
//! lane's own index (`with`, of a `replicate`, a copy or any other row: the one-hot
//! adjoint), `if`s whose results are rows (both branches computed, the rows selected
//! element by element), and small integers: `iota`s, `i64` reductions over them (the
//! arg-max of a `maximum`'s adjoint), `min`, `max`, comparisons and `if`s of them. Rows
//! the body makes (a map's, a `with`'s, an `if`'s) are kept interleaved in a stack slot,
//! one vector per element, which is why rows are at most [`ROW_LANES_MAX`] long, and may
//! be returned. Free vectors of `T` are rows too, the same in every lane (a bias). It
//! returns scalars of `T` and rows it made, scattered into the output's rows.
//!
//! An index outside its row sends the group to the scalar code, which reports it; one in
//! a branch of an `if` that its lane does not take is ignored (`k = -1` for "none"). Small integers are in vectors of the lane mask's type:
//! `i64` lanes beside `f64` rows, `i32` lanes beside `f32` ones, where a constant beyond
//! `i32` is clamped to its end (a plan needs those constants apart: at most one at each
//! end) and a free size beyond it sends the group to the scalar code; an `iota`'s elements
//! are below [`ROW_LANES_MAX`]. Part of [`super`], whose `VGen` it uses.

//!
//! Three parts: the plan (`plan.rs`: which lambdas run this way), the loop over groups of
//! rows with what it finds before it (here), and the code of a group (`lanes.rs`).

mod lanes;
mod plan;

pub(crate) use plan::row_plan;

use super::{lane_groups, splat_env, unaligned};
use super::{Plan, R, V};
use crate::gen::ba;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, StackSlotData, StackSlotKind, Value};
use cranelift_frontend::FunctionBuilder;
use lanes::rows_body;
use runic_ir::*;
use std::collections::HashMap;

/// The longest rows that run with one row per lane; longer ones have lanes along them.
pub(crate) const ROW_LANES_MAX: i64 = 32;

/// The bytes of one vector of lanes (`F32X4`, `F64X2`).
const VECTOR_BYTES: i64 = 16;

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
/// step between its elements), in a stack slot (where element `k` of every lane is the
/// vector at `k`·16 bytes), a free vector, one vector in every element (a `replicate`), or
/// an `iota` (its elements small integers).
#[derive(Clone)]
enum LaneRow {
    Gathered(Vec<Value>, Value),
    Slot(Value),
    /// A free vector (its base and step): the same row in every lane.
    Uniform(Value, Value),
    Filled(Value),
    Iota,
}

/// A result of the lambda for a group of lanes: scalars, or a row of each lane in a slot
/// (and its length).
enum Out {
    Lanes(V),
    Row(Value, Value),
}

/// A value in lanes: the plan's floats or a lane mask (`VGen`'s), or a small integer per
/// lane in a vector of the mask's type (so `i32` lanes beside `f32` rows: see `Scope`).
#[derive(Clone, Copy)]
enum Lane {
    F(V),
    I(Value),
}

impl Lane {
    fn value(self) -> Value {
        match self {
            Lane::F(v) => v.v,
            Lane::I(v) => v,
        }
    }

    fn float(v: Value) -> Lane {
        Lane::F(V { v, mask: false })
    }
}

/// The lengths of the rows a body makes or reads, the widths of its SOACs and the stack
/// slots of the rows it makes, found before the loop over groups; `ok` gathers the
/// conditions for running in lanes.
struct Prep<'e> {
    env: &'e HashMap<VName, (Value, PrimType)>,
    ok: Value,
    lens: HashMap<VName, Value>,
    widths: HashMap<VName, Value>,
    slots: HashMap<VName, Value>,
    /// The parameters' rows that SOACs read more than once, gathered into these slots
    /// first (a vector load per element afterwards, instead of a load per lane).
    staged: HashMap<VName, Value>,
}

impl Prep<'_> {
    fn size(&self, b: &mut FunctionBuilder, w: &SubExp) -> R<Value> {
        Ok(match w {
            SubExp::Const(c) => {
                let w = c.as_int().and_then(|w| i64::try_from(w).ok()).unwrap_or(-1);
                b.ins().iconst(types::I64, w)
            }
            SubExp::Var(v) => (self.env.get(v))
                .map(|x| x.0)
                .ok_or_else(|| format!("internal error: the size {v} is not in scope"))?,
        })
    }

    fn require(&mut self, b: &mut FunctionBuilder, cond: Value) {
        self.ok = b.ins().band(self.ok, cond);
    }

    /// `0 <= w <= ROW_LANES_MAX`: a row that fits a slot (and that the scalar code sums
    /// in order).
    fn short(&mut self, b: &mut FunctionBuilder, w: Value) {
        let natural = b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, w, 0);
        let short = b
            .ins()
            .icmp_imm_s(IntCC::SignedLessThanOrEqual, w, ROW_LANES_MAX);
        self.require(b, natural);
        self.require(b, short);
    }

    fn len(&self, v: &VName) -> R<Value> {
        (self.lens.get(v).copied()).ok_or_else(|| format!("internal error: the length of {v}"))
    }

    /// A row of length `len` made in a slot.
    fn made(&mut self, b: &mut FunctionBuilder, v: VName, len: Value) {
        self.short(b, len);
        self.lens.insert(v, len);
        let size = (ROW_LANES_MAX * VECTOR_BYTES) as u32;
        let data = StackSlotData::new(StackSlotKind::ExplicitSlot, size, 4);
        let slot = b.create_sized_stack_slot(data);
        self.slots
            .insert(v, b.ins().stack_addr(types::I64, slot, 0));
    }

    fn body(&mut self, b: &mut FunctionBuilder, body: &Body) -> R<()> {
        for s in &body.stms {
            match &s.exp {
                Exp::Soac(Soac::Reduce { w, arrs, .. } | Soac::Map { w, arrs, .. }) => {
                    let w = self.size(b, w)?;
                    self.short(b, w);
                    for a in arrs {
                        let fits = b.ins().icmp(IntCC::SignedLessThanOrEqual, w, self.len(a)?);
                        self.require(b, fits);
                    }
                    for p in &s.pat {
                        self.widths.insert(p.name, w);
                        if matches!(s.exp, Exp::Soac(Soac::Map { .. })) {
                            self.made(b, p.name, w);
                        }
                    }
                }
                Exp::Basic(BasicOp::Range { .. }) => {
                    let w = runic_ir::traverse::iota_width(&s.exp)
                        .ok_or("internal error: an iota's width")?;
                    let w = self.size(b, &w)?;
                    self.lens.insert(s.pat[0].name, w);
                }
                Exp::Basic(BasicOp::Replicate(shape, _)) => {
                    let w = self.size(b, &shape[0])?;
                    self.short(b, w);
                    self.lens.insert(s.pat[0].name, w);
                }
                Exp::Basic(BasicOp::Update(a, ..)) => {
                    let len = self.len(a)?;
                    self.made(b, s.pat[0].name, len);
                }
                Exp::Basic(BasicOp::Copy(a)) => {
                    let len = self.len(a)?;
                    self.lens.insert(s.pat[0].name, len);
                }
                Exp::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    self.body(b, then_body)?;
                    self.body(b, else_body)?;
                    let results = then_body.result.iter().zip(&else_body.result);
                    for (p, (x, y)) in s.pat.iter().zip(results) {
                        if let (SubExp::Var(x), SubExp::Var(y), Type::Array { .. }) = (x, y, &p.ty)
                        {
                            let (lx, ly) = (self.len(x)?, self.len(y)?);
                            let same = b.ins().icmp(IntCC::Equal, lx, ly);
                            self.require(b, same);
                            self.made(b, p.name, lx);
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// Emits the loop over the elements `from..to` of a map whose lambda has a [`row_plan`],
/// a group of rows at a time, writing each result into its column or rows of `outs`;
/// returns the element the scalar code continues from: `to` minus the tail, or the first
/// group that a `min`/`max` between `0` and `-0`, an index outside its row or a free size
/// beyond `i32` (in `i32` lanes) leaves to it, or `from` when a row or a reduction's or
/// map's width is longer than [`ROW_LANES_MAX`], a row is shorter than a reduction or map
/// over it, an `if`'s rows differ in length, or a result row is not as long as the
/// output's. `env` holds the kernel's free scalars (sizes among them), `vectors` its free
/// vectors.
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
    let ok = b.ins().iconst(types::I8, 1);
    let mut prep = Prep {
        env,
        ok,
        lens: HashMap::new(),
        widths: HashMap::new(),
        slots: HashMap::new(),
        staged: HashMap::new(),
    };
    // The parameters' rows at most ROW_LANES_MAX (they are gathered a lane at a time). A
    // free vector may be longer: it is read element by element, not kept.
    for (p, input) in &by_name {
        if let RowInput::Rows(r) = input {
            prep.short(b, r.len);
            prep.lens.insert(*p, r.len);
        }
    }
    prep.lens.extend(vectors.iter().map(|(v, x)| (*v, x.len)));
    prep.body(b, &lam.body)?;
    let mut reads = HashMap::new();
    soac_reads(&lam.body, &mut reads);
    for (p, input) in &by_name {
        if matches!(input, RowInput::Rows(_)) && reads.get(p).is_some_and(|&n| n > 1) {
            prep.staged.insert(*p, new_slot(b));
        }
    }
    // Scalars into columns; a result row as long as the output's rows.
    for (r, out) in lam.body.result.iter().zip(outs) {
        match (r, out) {
            (SubExp::Var(v), RowInput::Rows(o)) if prep.slots.contains_key(v) => {
                let same = b.ins().icmp(IntCC::Equal, prep.lens[v], o.len);
                prep.require(b, same);
            }
            (SubExp::Var(v), _) if prep.slots.contains_key(v) => {
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
    b.ins().brif(prep.ok, lanes_block, &[], after, &ba(&[from]));
    b.switch_to_block(lanes_block);
    let data = StackSlotData::new(StackSlotKind::ExplicitSlot, VECTOR_BYTES as u32, 4);
    let dummy = b.create_sized_stack_slot(data);
    let parts = Parts {
        lam,
        env,
        frees: &frees,
        inputs: &by_name,
        vectors,
        widths: &prep.widths,
        slots: &prep.slots,
        staged: &prep.staged,
        lens: &prep.lens,
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

/// What the code of a group of rows needs: the lambda, the kernel's free scalars and
/// their broadcasts, its parameters' inputs and free vectors, the width of each SOAC's
/// result, the slot of each row it makes, the length of every row, and where a read
/// outside a row reads instead.
struct Parts<'a> {
    lam: &'a Lambda,
    env: &'a HashMap<VName, (Value, PrimType)>,
    frees: &'a HashMap<VName, (Value, bool)>,
    inputs: &'a HashMap<VName, RowInput>,
    vectors: &'a HashMap<VName, Vector>,
    widths: &'a HashMap<VName, Value>,
    slots: &'a HashMap<VName, Value>,
    staged: &'a HashMap<VName, Value>,
    lens: &'a HashMap<VName, Value>,
    dummy: Value,
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

/// A slot for a row of each lane, [`ROW_LANES_MAX`] vectors.
fn new_slot(b: &mut FunctionBuilder) -> Value {
    let size = (ROW_LANES_MAX * VECTOR_BYTES) as u32;
    let data = StackSlotData::new(StackSlotKind::ExplicitSlot, size, 4);
    let slot = b.create_sized_stack_slot(data);
    b.ins().stack_addr(types::I64, slot, 0)
}

/// How many SOACs of `body` (in its branches too) read each array.
fn soac_reads(body: &Body, reads: &mut HashMap<VName, usize>) {
    for s in &body.stms {
        match &s.exp {
            Exp::Soac(Soac::Reduce { arrs, .. } | Soac::Map { arrs, .. }) => {
                for a in arrs {
                    *reads.entry(*a).or_default() += 1;
                }
            }
            Exp::If {
                then_body,
                else_body,
                ..
            } => {
                soac_reads(then_body, reads);
                soac_reads(else_body, reads);
            }
            _ => {}
        }
    }
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
