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

use super::{check_body, enabled, lane_groups, select, splat_env, sub_type, unaligned};
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
    let mut sc = Scope {
        t,
        free,
        tys: HashMap::new(),
        rows: HashSet::new(),
        iotas: HashSet::new(),
        made: HashSet::new(),
        ints: HashSet::new(),
        indices: HashSet::new(),
        consts: Vec::new(),
    };
    // The rows in scope: the parameters', free vectors of `T` (the same in every lane),
    // then those the body makes. Parameters that are `i64`s may only index rows.
    for p in &lam.params {
        if sc.is_row(&p.ty) {
            sc.rows.insert(p.name);
        } else if sc.is_t(&p.ty) {
            sc.tys.insert(p.name, t);
        } else if p.ty == Type::Prim(PrimType::I64) {
            sc.indices.insert(p.name);
        } else {
            return None;
        }
    }
    sc.rows.extend(
        runic_ir::traverse::free_vars(lam)
            .into_iter()
            .filter(|v| free_vector(*v) == Some(t)),
    );
    if !lam.ret.iter().all(|r| sc.is_t(r) || sc.is_row(r)) {
        return None;
    }
    sc.stms(&lam.body, true)?;
    // Scalar results of `T`, and rows the body made in a slot.
    let results_ok = lam.body.result.iter().zip(&lam.ret).all(|(r, ty)| match r {
        SubExp::Var(v) if sc.is_row(ty) => sc.made.contains(v),
        _ => sc.is_t(ty) && sc.ty(r) == Some(t),
    });
    (results_ok && sc.consts_fit()).then_some(Plan {
        elem: t,
        lanes: if t == PrimType::F32 { 4 } else { 2 },
        index: 0,
    })
}

/// Whether `ty` is a row of `t`.
fn row_of(t: PrimType, ty: &Type) -> bool {
    matches!(ty, Type::Array { elem, shape } if *elem == t && shape.len() == 1)
}

/// What [`row_plan`] knows of the names in scope: scalars of `T` and booleans (`tys`, as
/// `check_body` takes them), rows of `T` (those in a slot: `made`), rows of `iota`s,
/// small integers in lanes (`ints`: made only from `iota`s' elements, constants, free
/// sizes and `i64` parameters, by `min`, `max` and `if`), the `i64` parameters (each
/// lane's own, which index rows as they are and are checked to fit `i32` lanes where
/// they are compared), and the integer constants the lanes use.
struct Scope<'f> {
    t: PrimType,
    free: &'f dyn Fn(VName) -> Option<PrimType>,
    tys: HashMap<VName, PrimType>,
    rows: HashSet<VName>,
    iotas: HashSet<VName>,
    made: HashSet<VName>,
    ints: HashSet<VName>,
    indices: HashSet<VName>,
    consts: Vec<i64>,
}

impl Scope<'_> {
    fn is_t(&self, ty: &Type) -> bool {
        matches!(ty, Type::Prim(p) if *p == self.t)
    }

    fn is_row(&self, ty: &Type) -> bool {
        row_of(self.t, ty)
    }

    fn ty(&self, s: &SubExp) -> Option<PrimType> {
        sub_type(s, &self.tys, self.free)
    }

    /// A width the same in every lane: a constant or a free size.
    fn uniform(&self, w: &SubExp) -> bool {
        match w {
            SubExp::Const(_) => true,
            SubExp::Var(v) => (self.free)(*v) == Some(PrimType::I64),
        }
    }

    /// Whether `s` is a small integer in lanes: one of `ints`, an `i64` constant, or a
    /// free `i64` (checked to fit in `i32` lanes when the group runs).
    fn int(&mut self, s: &SubExp) -> bool {
        match s {
            SubExp::Const(Prim::I64(c)) => {
                self.consts.push(*c);
                true
            }
            SubExp::Const(_) => false,
            SubExp::Var(v) => {
                self.ints.contains(v)
                    || self.indices.contains(v)
                    || (self.free)(*v) == Some(PrimType::I64)
            }
        }
    }

    /// Whether `s` can index the lanes' rows: a small integer or an index parameter, or a
    /// constant of any integer type (clamped to `i32` it is as far outside a row).
    fn index(&mut self, s: &SubExp) -> bool {
        matches!(s, SubExp::Const(p) if p.as_int().is_some()) || self.int(s)
    }

    /// `i32` lanes hold the integers of `f32` rows: the constants must stay apart when
    /// those beyond `i32` are clamped to its ends (one at most at each end).
    fn consts_fit(&self) -> bool {
        let at_most_one = |end: &dyn Fn(i64) -> bool| {
            let cs: HashSet<i64> = self.consts.iter().copied().filter(|c| end(*c)).collect();
            cs.len() <= 1
        };
        at_most_one(&|c| c >= i32::MAX as i64) && at_most_one(&|c| c <= i32::MIN as i64)
    }

    /// Checks `body`'s statements; `top`: the lambda's own body or a branch of it (where
    /// SOACs and rows may be), else a scalar lambda inside a SOAC.
    fn stms(&mut self, body: &Body, top: bool) -> Option<()> {
        for s in &body.stms {
            self.stm(s, top)?;
        }
        Some(())
    }

    fn stm(&mut self, s: &Stm, top: bool) -> Option<()> {
        let t = self.t;
        fn one(s: &Stm) -> Option<&Param> {
            match &s.pat[..] {
                [p] => Some(p),
                _ => None,
            }
        }
        match &s.exp {
            Exp::Soac(Soac::Reduce {
                w,
                arrs,
                pre,
                lam: op,
                neutral,
                ..
            }) if top => {
                let p = one(s)?;
                let [ne] = &neutral[..] else { return None };
                let params = self.soac_params(arrs)?;
                if !self.uniform(w) {
                    return None;
                }
                let int = p.ty == Type::Prim(PrimType::I64);
                let elem = if int { PrimType::I64 } else { t };
                let ne_ok = if int {
                    self.int(ne)
                } else {
                    self.ty(ne) == Some(t)
                };
                if !ne_ok || !(int || self.is_t(&p.ty)) {
                    return None;
                }
                match pre {
                    Some(pre) => self.lambda(pre, &params, &[elem])?,
                    None if params == [elem] => {}
                    None => return None,
                }
                self.lambda(op, &[elem, elem], &[elem])?;
                self.bind(p.name, elem);
            }
            Exp::Soac(Soac::Map { w, lam: f, arrs }) if top => {
                let params = self.soac_params(arrs)?;
                let fits = self.uniform(w)
                    && !s.pat.is_empty()
                    && s.pat.iter().all(|p| self.is_row(&p.ty));
                if !fits {
                    return None;
                }
                self.lambda(f, &params, &vec![t; s.pat.len()])?;
                self.made_rows(s);
            }
            Exp::Basic(BasicOp::Range { .. }) if top => {
                let w = runic_ir::traverse::iota_width(&s.exp)?;
                if !self.uniform(&w) {
                    return None;
                }
                self.iotas.insert(one(s)?.name);
            }
            Exp::Basic(BasicOp::Replicate(shape, x)) if top => {
                let ([w], p) = (&shape[..], one(s)?) else {
                    return None;
                };
                if !self.uniform(w) || !self.is_row(&p.ty) || self.ty(x) != Some(t) {
                    return None;
                }
                self.rows.insert(p.name);
            }
            // A copy reads the same row: rows in slots are never written after they are made.
            Exp::Basic(BasicOp::Copy(a)) if top => {
                if !self.rows.contains(a) || !self.is_row(&one(s)?.ty) {
                    return None;
                }
                self.rows.insert(one(s)?.name);
            }
            // An element of a row at each lane's own index.
            Exp::Basic(BasicOp::Index(a, idx)) if top => {
                let [DimIndex::Fix(k)] = &idx[..] else {
                    return None;
                };
                let p = one(s)?;
                if !self.rows.contains(a) || !self.index(k) || !self.is_t(&p.ty) {
                    return None;
                }
                self.tys.insert(p.name, t);
            }
            // A row with one element replaced at each lane's own index.
            Exp::Basic(BasicOp::Update(a, idx, x)) if top => {
                let [DimIndex::Fix(k)] = &idx[..] else {
                    return None;
                };
                let p = one(s)?;
                let ok = self.rows.contains(a) && self.is_row(&p.ty) && self.ty(x) == Some(t);
                if !ok || !self.index(k) {
                    return None;
                }
                self.made_rows(s);
            }
            Exp::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                if self.ty(cond) != Some(PrimType::Bool) {
                    return None;
                }
                for b in [then_body, else_body] {
                    self.stms(b, top)?;
                    if b.result.len() != s.pat.len() {
                        return None;
                    }
                    for (r, p) in b.result.iter().zip(&s.pat) {
                        let ok = match &p.ty {
                            Type::Prim(PrimType::I64) => self.int(r),
                            ty if self.is_row(ty) => {
                                top && matches!(r, SubExp::Var(v) if self.rows.contains(v))
                            }
                            Type::Prim(x) if *x == t || *x == PrimType::Bool => {
                                self.ty(r) == Some(*x)
                            }
                            _ => false,
                        };
                        if !ok {
                            return None;
                        }
                    }
                }
                for p in &s.pat {
                    match &p.ty {
                        Type::Prim(x) => self.bind(p.name, *x),
                        _ => self.made_rows(s),
                    }
                }
            }
            Exp::Basic(op) if self.int_op(s.pat.first().map(|p| &p.ty), op) => {
                let p = one(s)?;
                self.bind(p.name, p.ty.elem()?);
            }
            _ => {
                let one = Body {
                    stms: vec![s.clone()],
                    result: Vec::new(),
                };
                check_body(&one, t, &mut self.tys, self.free)?;
            }
        }
        Some(())
    }

    /// Whether `op` is an operation on small integers in lanes giving `ty`: `min`, `max`
    /// or a copy of them, or a comparison of them.
    fn int_op(&mut self, ty: Option<&Type>, op: &BasicOp) -> bool {
        let cmp = |o: &BinOp| {
            use BinOp::*;
            matches!(o, Eq | Neq | Lt | Le | Gt | Ge)
        };
        match (ty, op) {
            (Some(Type::Prim(PrimType::I64)), BasicOp::SubExp(a)) => self.int(a),
            (Some(Type::Prim(PrimType::I64)), BasicOp::BinOp(BinOp::Min | BinOp::Max, a, b)) => {
                self.int(a) && self.int(b)
            }
            (Some(Type::Prim(PrimType::Bool)), BasicOp::BinOp(o, a, b)) if cmp(o) => {
                let is_int = |s: &SubExp| match s {
                    SubExp::Const(p) => p.ty() == PrimType::I64,
                    SubExp::Var(v) => {
                        self.ints.contains(v)
                            || self.indices.contains(v)
                            || (self.free)(*v) == Some(PrimType::I64)
                    }
                };
                (is_int(a) || is_int(b)) && self.int(a) && self.int(b)
            }
            _ => false,
        }
    }

    /// The element types of a SOAC's inputs (rows of `T`, or `iota`s), if it has some.
    fn soac_params(&self, arrs: &[VName]) -> Option<Vec<PrimType>> {
        let elem = |a: &VName| match (self.rows.contains(a), self.iotas.contains(a)) {
            (true, _) => Some(self.t),
            (_, true) => Some(PrimType::I64),
            _ => None,
        };
        let params: Vec<PrimType> = arrs.iter().map(elem).collect::<Option<_>>()?;
        (!params.is_empty()).then_some(params)
    }

    fn bind(&mut self, v: VName, ty: PrimType) {
        if ty == PrimType::I64 {
            self.ints.insert(v);
        } else {
            self.tys.insert(v, ty);
        }
    }

    /// The rows of `s`'s pattern, made in slots.
    fn made_rows(&mut self, s: &Stm) {
        let t = self.t;
        for p in s.pat.iter().filter(|p| row_of(t, &p.ty)) {
            self.rows.insert(p.name);
            self.made.insert(p.name);
        }
    }

    /// Whether `l` takes `params` and returns `results` (each `T` or a small integer),
    /// its body scalar code in lanes.
    fn lambda(&mut self, l: &Lambda, params: &[PrimType], results: &[PrimType]) -> Option<()> {
        let prim = |ty: &Type| match ty {
            Type::Prim(p) => Some(*p),
            _ => None,
        };
        let ps: Vec<PrimType> = l
            .params
            .iter()
            .map(|p| prim(&p.ty))
            .collect::<Option<_>>()?;
        let rs: Vec<PrimType> = l.ret.iter().map(prim).collect::<Option<_>>()?;
        if ps != params || rs != results || l.body.result.len() != results.len() {
            return None;
        }
        for (p, ty) in l.params.iter().zip(params) {
            self.bind(p.name, *ty);
        }
        self.stms(&l.body, false)?;
        for (r, ty) in l.body.result.iter().zip(results) {
            let ok = if *ty == PrimType::I64 {
                self.int(r)
            } else {
                self.ty(r) == Some(*ty)
            };
            if !ok {
                return None;
            }
        }
        Some(())
    }
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
    let mut r = RowGen {
        g: VGen {
            b,
            plan,
            env,
            bail: None,
        },
        parts,
        rows,
        ints: HashMap::new(),
        indices,
    };
    for (p, &slot) in parts.staged {
        let (row, len) = (r.row(p)?, parts.lens[p]);
        r.lane_loop(len, &[], |r, j, _| {
            let v = element(&mut r.g, &row, j).value();
            store_element(r.g.b, slot, j, v);
            Ok(Vec::new())
        })?;
        r.rows.insert(*p, LaneRow::Slot(slot));
    }
    r.stms(&parts.lam.body)?;
    let mut res = Vec::new();
    for x in &parts.lam.body.result {
        res.push(match x {
            SubExp::Var(v) if parts.slots.contains_key(v) => {
                Out::Row(parts.slots[v], parts.lens[v])
            }
            _ => Out::Lanes(r.g.opd(x)?),
        });
    }
    Ok((res, r.g.bail))
}

/// The code of a group of rows: `VGen`'s lanes, and the rows, small integers and index
/// parameters of each lane.
struct RowGen<'p, 'a, 'b> {
    g: VGen<'a, 'b>,
    parts: &'p Parts<'p>,
    rows: HashMap<VName, LaneRow>,
    ints: HashMap<VName, Value>,
    indices: HashMap<VName, Vec<Value>>,
}

impl RowGen<'_, '_, '_> {
    fn stms(&mut self, body: &Body) -> R<()> {
        for s in &body.stms {
            self.stm(s)?;
        }
        Ok(())
    }

    fn stm(&mut self, s: &Stm) -> R<()> {
        let p = s
            .pat
            .first()
            .ok_or("internal error: a statement binds nothing")?;
        match &s.exp {
            Exp::Soac(Soac::Reduce {
                arrs,
                pre,
                lam: op,
                neutral,
                ..
            }) => {
                let w = self.parts.widths[&p.name];
                let ins = self.lane_rows_of(arrs)?;
                let int = p.ty == Type::Prim(PrimType::I64);
                let v = self.row_fold(&ins, pre.as_ref(), op, &neutral[0], int, w)?;
                self.bind(p.name, v);
            }
            Exp::Soac(Soac::Map { arrs, lam: f, .. }) => {
                let w = self.parts.widths[&p.name];
                let ins = self.lane_rows_of(arrs)?;
                let outs: Vec<Value> = s.pat.iter().map(|p| self.parts.slots[&p.name]).collect();
                self.row_map(&ins, f, &outs, w)?;
                for (p, slot) in s.pat.iter().zip(outs) {
                    self.rows.insert(p.name, LaneRow::Slot(slot));
                }
            }
            Exp::Basic(BasicOp::Range { .. }) => {
                self.rows.insert(p.name, LaneRow::Iota);
            }
            Exp::Basic(BasicOp::Replicate(_, x)) => {
                let v = self.g.opd(x)?.v;
                self.rows.insert(p.name, LaneRow::Filled(v));
            }
            Exp::Basic(BasicOp::Copy(a)) => {
                let row = self.row(a)?;
                self.rows.insert(p.name, row);
            }
            Exp::Basic(BasicOp::Index(a, idx)) => {
                let [DimIndex::Fix(k)] = &idx[..] else {
                    return Err("internal error: a row read".into());
                };
                let ks = self.lane_indices(k)?;
                let (row, len) = (self.row(a)?, self.parts.lens[a]);
                let v = element_at(&mut self.g, &row, &ks, len, self.parts.dummy)?;
                self.bind(p.name, Lane::float(v));
            }
            Exp::Basic(BasicOp::Update(a, idx, x)) => {
                let [DimIndex::Fix(k)] = &idx[..] else {
                    return Err("internal error: a row update".into());
                };
                self.update(p.name, a, k, x)?;
            }
            Exp::If {
                cond,
                then_body,
                else_body,
                ..
            } => self.branch(&s.pat, cond, then_body, else_body)?,
            Exp::Basic(op) if self.is_int_op(&p.ty, op) => {
                let v = self.int_op(op)?;
                self.bind(p.name, v);
            }
            _ => self.g.stm(s)?,
        }
        Ok(())
    }

    fn bind(&mut self, v: VName, x: Lane) {
        match x {
            Lane::F(x) => {
                self.g.env.insert(v, x);
            }
            Lane::I(x) => {
                self.ints.insert(v, x);
            }
        }
    }

    fn row(&self, a: &VName) -> R<LaneRow> {
        (self.rows.get(a).cloned()).ok_or_else(|| format!("internal error: no row {a}"))
    }

    fn lane_rows_of(&self, arrs: &[VName]) -> R<Vec<LaneRow>> {
        arrs.iter().map(|a| self.row(a)).collect()
    }

    /// Whether `s` is a small integer (see `Scope::int`).
    fn is_int(&self, s: &SubExp) -> bool {
        match s {
            SubExp::Const(p) => p.ty() == PrimType::I64,
            SubExp::Var(v) => {
                self.ints.contains_key(v)
                    || self.indices.contains_key(v)
                    || (!self.g.env.contains_key(v)
                        && matches!(self.parts.env.get(v), Some((_, PrimType::I64))))
            }
        }
    }

    /// Whether `op`, binding `ty`, is `Scope::int_op`'s.
    fn is_int_op(&self, ty: &Type, op: &BasicOp) -> bool {
        match op {
            BasicOp::SubExp(_) | BasicOp::BinOp(BinOp::Min | BinOp::Max, ..) => {
                *ty == Type::Prim(PrimType::I64)
            }
            BasicOp::BinOp(_, a, b) => {
                *ty == Type::Prim(PrimType::Bool) && (self.is_int(a) || self.is_int(b))
            }
            _ => false,
        }
    }

    fn int_op(&mut self, op: &BasicOp) -> R<Lane> {
        let (o, a, b) = match op {
            BasicOp::SubExp(a) => return Ok(Lane::I(self.int_opd(a)?)),
            BasicOp::BinOp(o, a, b) => (o, a, b),
            _ => return Err("internal error: an integer operation in lanes".into()),
        };
        let (x, y) = (self.int_opd(a)?, self.int_opd(b)?);
        let cc = match o {
            BinOp::Min | BinOp::Lt => IntCC::SignedLessThan,
            BinOp::Max | BinOp::Gt => IntCC::SignedGreaterThan,
            BinOp::Le => IntCC::SignedLessThanOrEqual,
            BinOp::Ge => IntCC::SignedGreaterThanOrEqual,
            BinOp::Eq => IntCC::Equal,
            BinOp::Neq => IntCC::NotEqual,
            _ => return Err("internal error: an integer operation in lanes".into()),
        };
        let m = self.g.b.ins().icmp(cc, x, y);
        Ok(match o {
            BinOp::Min | BinOp::Max => Lane::I(select(self.g.b, m, x, y)),
            _ => Lane::F(self.g.mask(m)),
        })
    }

    /// A small integer in lanes: constants beyond `i32` clamped to its ends in `i32`
    /// lanes; a free size beyond them sends the group to the scalar code.
    fn int_opd(&mut self, s: &SubExp) -> R<Value> {
        let mt = self.g.plan.mt();
        match s {
            SubExp::Const(c) => {
                let c = (c.as_int()).ok_or("internal error: an integer constant in lanes")?;
                let c = if mt.lane_bits() == 32 {
                    c.clamp(i32::MIN as i128, i32::MAX as i128) as i64
                } else {
                    c as i64
                };
                let c = self.g.b.ins().iconst(mt.lane_type(), c);
                Ok(self.g.b.ins().splat(mt, c))
            }
            SubExp::Var(v) => {
                if let Some(x) = self.ints.get(v) {
                    return Ok(*x);
                }
                if let Some(ks) = self.indices.get(v).cloned() {
                    if mt.lane_bits() == 32 {
                        let oks: Vec<Value> = (ks.iter()).map(|&k| fits_i32(self.g.b, k)).collect();
                        bail_lanes(&mut self.g, &oks);
                    }
                    return Ok(index_vector(&mut self.g, &ks));
                }
                let &(x, _) = (self.parts.env.get(v))
                    .ok_or_else(|| format!("internal error: {v} is not in scope"))?;
                if mt.lane_bits() == 32 {
                    let inside = fits_i32(self.g.b, x);
                    bail_unless(&mut self.g, inside);
                }
                Ok(int_splat(&mut self.g, x))
            }
        }
    }

    /// Each lane's `i64` index `k`: an index parameter's, or a small integer's lanes.
    fn lane_indices(&mut self, k: &SubExp) -> R<Vec<Value>> {
        if let SubExp::Var(v) = k {
            if let Some(ks) = self.indices.get(v) {
                return Ok(ks.clone());
            }
        }
        let v = self.int_opd(k)?;
        let narrow = self.g.plan.mt().lane_bits() == 32;
        let b = &mut self.g.b;
        Ok((0..self.g.plan.lanes as u8)
            .map(|l| {
                let x = b.ins().extractlane(v, l);
                if narrow {
                    b.ins().sextend(types::I64, x)
                } else {
                    x
                }
            })
            .collect())
    }

    fn lane_opd(&mut self, s: &SubExp) -> R<Lane> {
        if self.is_int(s) {
            Ok(Lane::I(self.int_opd(s)?))
        } else {
            Ok(Lane::F(self.g.opd(s)?))
        }
    }

    /// `a with [k] = x` in each lane, into the slot of `p` (the bounds checked: an index
    /// outside sends the group to the scalar code). Every element is selected between the
    /// row's and `x`, which costs a row's length in vector operations and needs no lane's
    /// address.
    fn update(&mut self, p: VName, a: &VName, k: &SubExp, x: &SubExp) -> R<()> {
        let ks = self.lane_indices(k)?;
        let len = self.parts.lens[a];
        let b = &mut self.g.b;
        let oks: Vec<Value> = (ks.iter())
            .map(|&k| b.ins().icmp(IntCC::UnsignedLessThan, k, len))
            .collect();
        bail_lanes(&mut self.g, &oks);
        let at = index_vector(&mut self.g, &ks);
        let x = self.g.opd(x)?.v;
        let (src, slot) = (self.row(a)?, self.parts.slots[&p]);
        self.lane_loop(len, &[], |r, j, _| {
            let old = element(&mut r.g, &src, j).value();
            let js = int_splat(&mut r.g, j);
            let here = r.g.b.ins().icmp(IntCC::Equal, at, js);
            let y = select(r.g.b, here, x, old);
            store_element(r.g.b, slot, j, y);
            Ok(Vec::new())
        })?;
        self.rows.insert(p, LaneRow::Slot(slot));
        Ok(())
    }

    /// An `if`: both branches computed (none of their operations has an effect, and what
    /// each leaves to the scalar code counts only in the lanes that take it), their
    /// results selected lane by lane, rows element by element into the slots of `pat`.
    fn branch(&mut self, pat: &[Param], cond: &SubExp, then: &Body, els: &Body) -> R<()> {
        let c = self.g.opd(cond)?.v;
        let not_c = self.g.b.ins().bnot(c);
        let mut bail = self.g.bail.take();
        let mut sides = Vec::new();
        for (body, taken) in [(then, c), (els, not_c)] {
            self.stms(body)?;
            let mut side = Vec::new();
            for (r, p) in body.result.iter().zip(pat) {
                side.push(match (r, &p.ty) {
                    (SubExp::Var(v), Type::Array { .. }) => Err(self.row(v)?),
                    _ => Ok(self.lane_opd(r)?),
                });
            }
            sides.push(side);
            // What a branch (its results included) leaves to the scalar code matters only
            // where it is taken.
            if let Some(m) = self.g.bail.take() {
                let m = self.g.b.ins().band(m, taken);
                bail = Some(match bail {
                    Some(old) => self.g.b.ins().bor(old, m),
                    None => m,
                });
            }
        }
        self.g.bail = bail;
        let els = sides.pop().unwrap_or_default();
        let then = sides.pop().unwrap_or_default();
        for ((p, x), y) in pat.iter().zip(then).zip(els) {
            match (x, y) {
                (Ok(Lane::I(x)), Ok(Lane::I(y))) => {
                    let v = select(self.g.b, c, x, y);
                    self.bind(p.name, Lane::I(v));
                }
                (Ok(Lane::F(x)), Ok(Lane::F(y))) => {
                    let v = select(self.g.b, c, x.v, y.v);
                    self.bind(p.name, Lane::F(V { v, mask: x.mask }));
                }
                (Err(x), Err(y)) => {
                    let (slot, len) = (self.parts.slots[&p.name], self.parts.lens[&p.name]);
                    self.lane_loop(len, &[], |r, j, _| {
                        let xj = element(&mut r.g, &x, j).value();
                        let yj = element(&mut r.g, &y, j).value();
                        let v = select(r.g.b, c, xj, yj);
                        store_element(r.g.b, slot, j, v);
                        Ok(Vec::new())
                    })?;
                    self.rows.insert(p.name, LaneRow::Slot(slot));
                }
                _ => return Err("internal error: an if's branches differ in kind".into()),
            }
        }
        Ok(())
    }

    /// `for j < w` carrying `carried` (vectors) and the lanes left to the scalar code:
    /// `step(r, j, carried)` emits one element's code and returns the next values. Returns
    /// the final values, the lanes left joined into `g.bail`.
    fn lane_loop(
        &mut self,
        w: Value,
        carried: &[Value],
        mut step: impl FnMut(&mut Self, Value, &[Value]) -> R<Vec<Value>>,
    ) -> R<Vec<Value>> {
        let mt = self.g.plan.mt();
        let b = &mut self.g.b;
        let zero = b.ins().iconst(mt.lane_type(), 0);
        let no_bail = b.ins().splat(mt, zero);
        let j0 = b.ins().iconst(types::I64, 0);
        let header = b.create_block();
        let body = b.create_block();
        let done = b.create_block();
        b.append_block_param(header, types::I64);
        for &x in carried {
            let ty = b.func.dfg.value_type(x);
            b.append_block_param(header, ty);
            b.append_block_param(done, ty);
        }
        b.append_block_param(header, mt);
        b.append_block_param(done, mt);
        let init = [&[j0][..], carried, &[no_bail]].concat();
        b.ins().jump(header, &ba(&init));
        b.switch_to_block(header);
        let params = b.block_params(header).to_vec();
        let (j, values, bail) = (
            params[0],
            &params[1..params.len() - 1],
            params[params.len() - 1],
        );
        let more = b.ins().icmp(IntCC::SignedLessThan, j, w);
        b.ins().brif(more, body, &[], done, &ba(&params[1..]));
        b.switch_to_block(body);
        let saved = (self.g.env.clone(), self.g.bail.take(), self.ints.clone());
        let next = step(self, j, values)?;
        let bail = match self.g.bail {
            Some(m) => self.g.b.ins().bor(bail, m),
            None => bail,
        };
        (self.g.env, self.g.bail, self.ints) = saved;
        let b = &mut self.g.b;
        let j1 = b.ins().iadd_imm_s(j, 1);
        b.ins()
            .jump(header, &ba(&[&[j1][..], &next, &[bail]].concat()));
        b.switch_to_block(done);
        let out = b.block_params(done).to_vec();
        let (values, bail) = (&out[..out.len() - 1], out[out.len() - 1]);
        self.g.bail = Some(match self.g.bail {
            Some(m) => self.g.b.ins().bor(m, bail),
            None => bail,
        });
        Ok(values.to_vec())
    }

    /// `reduce op ne (map pre rows…)` over the first `w` elements of each lane's rows, in
    /// order from `ne`; `int`: of small integers.
    fn row_fold(
        &mut self,
        ins: &[LaneRow],
        pre: Option<&Lambda>,
        op: &Lambda,
        ne: &SubExp,
        int: bool,
        w: Value,
    ) -> R<Lane> {
        let kind = move |v: Value| if int { Lane::I(v) } else { Lane::float(v) };
        let acc0 = if int {
            self.int_opd(ne)?
        } else {
            self.g.opd(ne)?.v
        };
        let out = self.lane_loop(w, &[acc0], |r, j, acc| {
            let xs: Vec<Lane> = ins.iter().map(|row| element(&mut r.g, row, j)).collect();
            let y = match pre {
                Some(pre) => r.apply(pre, &xs)?[0],
                None => xs[0],
            };
            Ok(vec![r.apply(op, &[kind(acc[0]), y])?[0].value()])
        })?;
        Ok(kind(out[0]))
    }

    /// `map f rows…` over the first `w` elements of each lane's rows, into the slots `outs`.
    fn row_map(&mut self, ins: &[LaneRow], f: &Lambda, outs: &[Value], w: Value) -> R<()> {
        self.lane_loop(w, &[], |r, j, _| {
            let xs: Vec<Lane> = ins.iter().map(|row| element(&mut r.g, row, j)).collect();
            let ys = r.apply(f, &xs)?;
            for (y, slot) in ys.iter().zip(outs) {
                store_element(r.g.b, *slot, j, y.value());
            }
            Ok(Vec::new())
        })?;
        Ok(())
    }

    /// `l` applied to lanes `xs`: its results' lanes.
    fn apply(&mut self, l: &Lambda, xs: &[Lane]) -> R<Vec<Lane>> {
        for (p, x) in l.params.iter().zip(xs) {
            self.bind(p.name, *x);
        }
        self.stms(&l.body)?;
        l.body.result.iter().map(|r| self.lane_opd(r)).collect()
    }
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

/// `k` (an `i64`) in every lane of a vector of the mask's type.
fn int_splat(g: &mut VGen, k: Value) -> Value {
    let mt = g.plan.mt();
    let k = if mt.lane_bits() == 32 {
        g.b.ins().ireduce(types::I32, k)
    } else {
        k
    };
    g.b.ins().splat(mt, k)
}

/// Lane `l` holding `ks[l]` (`i64`s, narrowed in `i32` lanes), a vector of the mask's type.
fn index_vector(g: &mut VGen, ks: &[Value]) -> Value {
    let mt = g.plan.mt();
    let narrow = |g: &mut VGen, k: Value| {
        if mt.lane_bits() == 32 {
            g.b.ins().ireduce(types::I32, k)
        } else {
            k
        }
    };
    let first = narrow(g, ks[0]);
    let mut v = g.b.ins().scalar_to_vector(mt, first);
    for (l, &k) in ks.iter().enumerate().skip(1) {
        let k = narrow(g, k);
        v = g.b.ins().insertlane(v, k, l as u8);
    }
    v
}

/// Every lane to the scalar code unless `inside` (a scalar condition) holds.
fn bail_unless(g: &mut VGen, inside: Value) {
    let mt = g.plan.mt();
    let lane = mt.lane_type();
    let (all, none) = (g.b.ins().iconst(lane, -1), g.b.ins().iconst(lane, 0));
    let flag = g.b.ins().select(inside, none, all);
    let outside = g.b.ins().splat(mt, flag);
    g.bail = Some(match g.bail {
        Some(m) => g.b.ins().bor(m, outside),
        None => outside,
    });
}

/// Whether `x` (an `i64`) lies strictly between `i32`'s ends, where no clamped constant is.
fn fits_i32(b: &mut FunctionBuilder, x: Value) -> Value {
    let above = b
        .ins()
        .icmp_imm_s(IntCC::SignedGreaterThan, x, i32::MIN as i64);
    let below = b
        .ins()
        .icmp_imm_s(IntCC::SignedLessThan, x, i32::MAX as i64);
    b.ins().band(above, below)
}

/// The lanes `l` where `oks[l]` (a scalar condition) fails to the scalar code.
fn bail_lanes(g: &mut VGen, oks: &[Value]) {
    let mt = g.plan.mt();
    let lane = mt.lane_type();
    let (all, none) = (g.b.ins().iconst(lane, -1), g.b.ins().iconst(lane, 0));
    let mut out = g.b.ins().splat(mt, none);
    for (l, &ok) in oks.iter().enumerate() {
        let flag = g.b.ins().select(ok, none, all);
        out = g.b.ins().insertlane(out, flag, l as u8);
    }
    g.bail = Some(match g.bail {
        Some(m) => g.b.ins().bor(m, out),
        None => out,
    });
}

/// Vector `v` as element `j` of the lanes' rows in `slot`.
fn store_element(b: &mut FunctionBuilder, slot: Value, j: Value, v: Value) {
    let at = b.ins().imul_imm_s(j, VECTOR_BYTES);
    let a = b.ins().iadd(slot, at);
    b.ins().store(unaligned(), v, a, 0);
}

/// Element `k` of each lane's row, as one vector.
fn element(g: &mut VGen, row: &LaneRow, k: Value) -> Lane {
    Lane::float(match row {
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
        LaneRow::Filled(v) => *v,
        LaneRow::Iota => return Lane::I(int_splat(g, k)),
    })
}

/// Element `ks[l]` of lane `l`'s row, as one vector; an index outside the row (of length
/// `len`) reads a harmless dummy and sends the group to the scalar code, which reports it.
fn element_at(g: &mut VGen, row: &LaneRow, ks: &[Value], len: Value, dummy: Value) -> R<Value> {
    let mut addrs = Vec::new();
    let mut oks = Vec::new();
    let size = g.plan.elem.size_bytes() as i64;
    for (l, &k) in ks.iter().enumerate() {
        let ok = g.b.ins().icmp(IntCC::UnsignedLessThan, k, len);
        oks.push(ok);
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
            LaneRow::Filled(_) => continue,
            LaneRow::Iota => return Err("internal error: an iota's element read".into()),
        };
        addrs.push(g.b.ins().select(ok, a, dummy));
    }
    bail_lanes(g, &oks);
    Ok(match row {
        LaneRow::Filled(v) => *v,
        _ => gather(g, &addrs),
    })
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
