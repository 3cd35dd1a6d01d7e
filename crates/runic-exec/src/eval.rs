//! The evaluator of bodies, statements and basic operations. SOACs live in `soac`.

use crate::error::{err, ExecError, R};
use crate::index::{self, DimVal, MAX_ELEMS};
use crate::slots::Slots;
use crate::value::*;
use crate::vector::Plans;
use runic_data::{Array, Buffer};
use runic_ir::*;
use runic_prim::{binop, convert, get_bit, set_bit, unop};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Below this much free stack, a nested body runs on a new stack segment ...
const STACK_RED_ZONE: usize = 256 << 10;
/// ... of this size (committed as it is used).
const STACK_SEGMENT: usize = 16 << 20;

/// Everything that stays fixed while a program runs; shared by all workers.
pub struct Ctx<'p> {
    pub prog: &'p Prog,
    pub slots: &'p Slots,
    pub funs: &'p HashMap<String, usize>,
    pub plans: &'p Plans,
    /// Map nests that are matrix products.
    pub gemm: &'p crate::gemm::Contractions,
    /// The arrays the program updates in place (the others may be read through views).
    pub updated: &'p std::collections::HashSet<VName>,
    /// Native kernels, compiled on first use.
    pub jit: &'p crate::native::Jit,
    pub interrupt: Option<&'p AtomicBool>,
    /// Bodies whose independent statements run as parallel tasks.
    pub tasks: &'p crate::tasks::Plans,
    /// Set when the task running with this context is no longer needed (a statement
    /// before it failed): it stops like an interrupted evaluation.
    pub cancel: Option<&'p AtomicBool>,
}

/// The variables of one function activation (lambdas share their function's frame).
#[derive(Clone)]
pub struct Frame {
    pub vals: Vec<Val>,
}

impl Frame {
    pub fn new(size: usize) -> Frame {
        Frame {
            vals: vec![Val::Unset; size],
        }
    }
}

impl Ctx<'_> {
    pub fn check_interrupt(&self) -> R<()> {
        match (self.interrupt, self.cancel) {
            (Some(f), _) | (_, Some(f)) if f.load(Ordering::Relaxed) => err("interrupted"),
            _ => Ok(()),
        }
    }

    #[inline]
    pub fn get<'f>(&self, f: &'f Frame, v: VName) -> R<&'f Val> {
        match f.vals.get(self.slots.of(v)) {
            Some(Val::Unset) | None => err(format!("internal error: unbound variable {v}")),
            Some(x) => Ok(x),
        }
    }

    #[inline]
    pub fn set(&self, f: &mut Frame, v: VName, x: Val) {
        let s = self.slots.of(v);
        if let Some(slot) = f.vals.get_mut(s) {
            *slot = x;
        }
    }

    /// Take a consumed variable's value out of the frame, so that it is uniquely owned.
    pub fn take(&self, f: &mut Frame, v: VName) -> R<Val> {
        match f.vals.get_mut(self.slots.of(v)) {
            Some(slot) if !matches!(slot, Val::Unset) => Ok(std::mem::take(slot)),
            _ => err(format!("internal error: unbound variable {v}")),
        }
    }

    #[inline]
    pub fn sub(&self, f: &Frame, s: &SubExp) -> R<Val> {
        match s {
            SubExp::Const(p) => Ok(Val::Prim(*p)),
            SubExp::Var(v) => self.get(f, *v).cloned(),
        }
    }

    #[inline]
    pub fn prim(&self, f: &Frame, s: &SubExp) -> R<Prim> {
        match s {
            SubExp::Const(p) => Ok(*p),
            SubExp::Var(v) => self.get(f, *v)?.prim(),
        }
    }

    pub fn i64(&self, f: &Frame, s: &SubExp) -> R<i64> {
        self.prim(f, s)?
            .to_i64()
            .ok_or_else(|| ExecError::new("internal error: expected an integer"))
    }

    /// A size operand as a dimension (negative sizes are reported like `iota`'s).
    pub fn dim(&self, f: &Frame, s: &SubExp) -> R<usize> {
        let n = self.i64(f, s)?;
        if n < 0 {
            return err(format!("Range 0..1..<{n} is invalid."));
        }
        Ok(n as usize)
    }

    pub fn body(&self, f: &mut Frame, b: &Body, par: bool) -> R<Vec<Val>> {
        // Bodies nest (SOACs, loops, branches, calls) and evaluate recursively on whatever
        // thread runs them — the caller's, or a rayon worker's small stack: grow the stack
        // on demand instead of relying on a large one.
        stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || self.body_here(f, b, par))
    }

    fn body_here(&self, f: &mut Frame, b: &Body, par: bool) -> R<Vec<Val>> {
        // (`par` first: lambdas applied per element never look for a plan.)
        match par.then(|| self.tasks.get(b)).flatten() {
            Some(plan) => self.stms_as_tasks(f, b, plan)?,
            None => {
                for stm in &b.stms {
                    self.stm(f, stm, par)?;
                }
            }
        }
        b.result
            .iter()
            .enumerate()
            .map(|(k, s)| self.result(f, b, k, s))
            .collect()
    }

    /// One result of a body. An array bound by the body itself is dead once the body is
    /// done, so it is moved out of its slot: a loop that updates its parameter in place then
    /// owns the array uniquely and `Update` never copies it.
    fn result(&self, f: &mut Frame, b: &Body, k: usize, s: &SubExp) -> R<Val> {
        if let SubExp::Var(v) = s {
            if matches!(self.get(f, *v)?, Val::Arr(_))
                && !b.result[k + 1..].contains(s)
                && b.stms
                    .iter()
                    .rev()
                    .any(|st| st.pat.iter().any(|p| p.name == *v))
            {
                return self.take(f, *v);
            }
        }
        self.sub(f, s)
    }

    pub(crate) fn stm(&self, f: &mut Frame, stm: &Stm, par: bool) -> R<()> {
        // Single scalar results of basic operations skip the vector of results.
        if let (Exp::Basic(op), [p]) = (&stm.exp, stm.pat.as_slice()) {
            let v = match op {
                BasicOp::Range { .. } if self.jit.builds_lazily(p.name) => self.lazy_iota(f, op),
                _ => self.basic(f, op),
            }
            .map_err(|e| e.locate(&stm.src))?;
            self.set(f, p.name, v);
            return Ok(());
        }
        let vals = match &stm.exp {
            Exp::Basic(op) => vec![self.basic(f, op).map_err(|e| e.locate(&stm.src))?],
            Exp::Apply { fun, args, .. } => {
                let args = args.iter().map(|a| self.sub(f, a)).collect::<R<Vec<_>>>()?;
                self.check_interrupt()?;
                self.call(fun, args, par)
                    .map_err(|e| e.through_call(&stm.src))?
            }
            Exp::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                if self.sub(f, cond)?.bool()? {
                    self.body(f, then_body, par)?
                } else {
                    self.body(f, else_body, par)?
                }
            }
            Exp::Loop { params, form, body } => {
                let moves = self.tasks.moves(stm);
                self.run_loop(f, params, form, body, moves, par)?
            }
            Exp::Soac(s) if par && crate::profile::on() => {
                crate::profile::forget_detail();
                let t = std::time::Instant::now();
                let out = self.soac(f, s, par).map_err(|e| e.locate(&stm.src))?;
                let lam = crate::explain::lambdas(s).first().map(|l| l.id);
                crate::profile::record(stm.src.loc, crate::explain::kind(s), lam, t.elapsed());
                out
            }
            Exp::Soac(s) => self.soac(f, s, par).map_err(|e| e.locate(&stm.src))?,
            Exp::WithAcc { inputs, lam } => self.with_acc(f, inputs, lam, par)?,
            Exp::Jvp { .. } | Exp::Vjp { .. } | Exp::WithVjp { .. } => {
                return Err(ExecError::new(
                    "not yet supported by the ir backend: automatic differentiation",
                )
                .locate(&stm.src))
            }
        };
        if vals.len() != stm.pat.len() {
            return err("internal error: a statement's pattern and results differ in number");
        }
        for (p, v) in stm.pat.iter().zip(vals) {
            self.set(f, p.name, v);
        }
        Ok(())
    }

    /// Call a top-level function.
    pub fn call(&self, name: &str, args: Vec<Val>, par: bool) -> R<Vec<Val>> {
        let Some(&k) = self.funs.get(name) else {
            return err(format!("internal error: no function named {name}"));
        };
        let fun = &self.prog.funs[k];
        let mut frame = Frame::new(self.slots.frame_size[k]);
        if args.len() != fun.params.len() {
            return err(format!(
                "internal error: {name} called with the wrong number of arguments"
            ));
        }
        for (p, a) in fun.params.iter().zip(args) {
            self.set(&mut frame, p.name, a);
        }
        self.body(&mut frame, &fun.body, par)
    }

    /// Apply a lambda to arguments in the current frame (sequentially).
    pub fn apply(&self, f: &mut Frame, lam: &Lambda, args: Vec<Val>) -> R<Vec<Val>> {
        self.apply_par(f, lam, args, false)
    }

    /// [`Ctx::apply`], letting the SOACs in the body run in parallel when `par` is set
    /// (for a caller that runs its applications one at a time).
    pub fn apply_par(&self, f: &mut Frame, lam: &Lambda, args: Vec<Val>, par: bool) -> R<Vec<Val>> {
        for (p, a) in lam.params.iter().zip(args) {
            self.set(f, p.name, a);
        }
        self.body(f, &lam.body, par)
    }

    fn run_loop(
        &self,
        f: &mut Frame,
        params: &[(Param, SubExp)],
        form: &LoopForm,
        body: &Body,
        moves: Option<&[bool]>,
        par: bool,
    ) -> R<Vec<Val>> {
        // Initial values nothing reads after the loop are moved in, so that the loop owns
        // them and updates them in place from the first iteration.
        let mut vals = Vec::with_capacity(params.len());
        for (k, (_, init)) in params.iter().enumerate() {
            vals.push(match (init, moves.and_then(|m| m.get(k))) {
                (SubExp::Var(v), Some(true)) => self.take(f, *v)?,
                _ => self.sub(f, init)?,
            });
        }
        match form {
            LoopForm::For { i, bound } => {
                let b = self.prim(f, bound)?;
                let n = b.as_int().unwrap_or(0);
                let mut k: i128 = 0;
                while k < n {
                    if k & 1023 == 0 {
                        self.check_interrupt()?;
                    }
                    self.set(f, *i, Val::Prim(Prim::int(b.ty(), k)));
                    for ((p, _), v) in params.iter().zip(vals.drain(..)) {
                        self.set(f, p.name, v);
                    }
                    vals = self.body(f, body, par)?;
                    k += 1;
                }
            }
            LoopForm::While { cond } => {
                let ci = params.iter().position(|(p, _)| p.name == *cond);
                let mut iter = 0u64;
                loop {
                    let go = match ci {
                        Some(ci) => vals[ci].bool()?,
                        None => {
                            return err("internal error: while condition is not a loop parameter")
                        }
                    };
                    if !go {
                        break;
                    }
                    if iter & 1023 == 0 {
                        self.check_interrupt()?;
                    }
                    iter += 1;
                    for ((p, _), v) in params.iter().zip(vals.drain(..)) {
                        self.set(f, p.name, v);
                    }
                    vals = self.body(f, body, par)?;
                }
            }
        }
        Ok(vals)
    }

    fn dims(&self, f: &Frame, idx: &[DimIndex]) -> R<Vec<DimVal>> {
        let opt = |s: &Option<SubExp>| -> R<Option<i64>> {
            s.as_ref().map(|s| self.i64(f, s)).transpose()
        };
        idx.iter()
            .map(|d| match d {
                DimIndex::Fix(s) => Ok(DimVal::Idx(self.i64(f, s)?)),
                DimIndex::Slice { start, end, stride } => Ok(DimVal::Slice {
                    start: opt(start)?,
                    end: opt(end)?,
                    stride: opt(stride)?,
                }),
            })
            .collect()
    }

    /// `iota n` left unbuilt ([`Val::Iota`]), with the errors of the range it is.
    fn lazy_iota(&self, f: &Frame, op: &BasicOp) -> R<Val> {
        let (a, b, c, kind) = self.range_ends(f, op)?;
        let (_, _, n) = runic_prim::index::range_elements(a, b, c, kind).map_err(ExecError::new)?;
        Ok(Val::Iota([n]))
    }

    /// The start, second element and end of a range, at its element type, and its kind.
    fn range_ends(&self, f: &Frame, op: &BasicOp) -> R<(Prim, Option<Prim>, Prim, RangeKind)> {
        let BasicOp::Range {
            start,
            second,
            end,
            kind,
            elem,
        } = op
        else {
            return err("internal error: a range expected");
        };
        let a = convert(self.prim(f, start)?, *elem);
        let b = second
            .as_ref()
            .map(|s| self.prim(f, s).map(|p| convert(p, *elem)))
            .transpose()?;
        let c = convert(self.prim(f, end)?, *elem);
        Ok((a, b, c, *kind))
    }

    pub fn basic(&self, f: &mut Frame, op: &BasicOp) -> R<Val> {
        Ok(match op {
            BasicOp::SubExp(s) => self.sub(f, s)?,
            BasicOp::BinOp(op, a, b) => {
                let (a, b) = (self.prim(f, a)?, self.prim(f, b)?);
                Val::Prim(scalar_binop(*op, a, b)?)
            }
            BasicOp::UnOp(op, a) => Val::Prim(unop(*op, self.prim(f, a)?)),
            BasicOp::TernOp(op, a, b, c) => {
                let (a, b, c) = (self.prim(f, a)?, self.prim(f, b)?, self.prim(f, c)?);
                Val::Prim(ternop(*op, a, b, c)?)
            }
            BasicOp::Convert(t, a) => Val::Prim(convert(self.prim(f, a)?, *t)),
            BasicOp::Index(v, idx) => {
                let dims = self.dims(f, idx)?;
                match self.get(f, *v)? {
                    Val::Arr(a) => index::index_shared(a, &dims, || !self.updated.contains(v))
                        .map_err(ExecError::new)?,
                    x if dims.is_empty() => x.clone(),
                    _ => return err("internal error: indexing a non-array"),
                }
            }
            BasicOp::Update(v, idx, x) => {
                let dims = self.dims(f, idx)?;
                let x = self.sub(f, x)?;
                let mut a = match self.take(f, *v)? {
                    Val::Arr(a) => a,
                    _ => return err("internal error: updating a non-array"),
                };
                let sel = index::select(&a.shape, &dims).map_err(ExecError::new)?;
                index::write(Arc::make_mut(&mut a), &sel, &x).map_err(ExecError::new)?;
                Val::Arr(a)
            }
            BasicOp::Range { .. } => {
                let (a, b, c, kind) = self.range_ends(f, op)?;
                index::range(a, b, c, kind).map_err(ExecError::new)?
            }
            BasicOp::Replicate(shape, x) => {
                let mut dims = Vec::with_capacity(shape.len());
                for s in shape {
                    dims.push(self.dim(f, s)?);
                }
                let x = self.sub(f, x)?;
                replicate(&dims, &x)?
            }
            BasicOp::Reshape { arr: v, shape } => {
                let a = self.get(f, *v)?.arr()?.clone();
                let dims = shape
                    .iter()
                    .map(|s| self.i64(f, s))
                    .collect::<R<Vec<i64>>>()?;
                let total: i128 = dims.iter().map(|&d| d as i128).product();
                if total != a.data.len() as i128 || dims.iter().any(|&d| d < 0) {
                    let outer = a.shape.first().copied().unwrap_or(0);
                    return err(format!(
                        "Cannot unflatten array of shape [{outer}] to array of shape {}.",
                        dims.iter().map(|d| format!("[{d}]")).collect::<String>()
                    ));
                }
                let shape: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
                match Arc::try_unwrap(a) {
                    Ok(a) => arr(shape, a.data),
                    Err(a) => arr(shape, a.data.clone()),
                }
            }
            BasicOp::Rearrange(perm, v) => rearrange(self.get(f, *v)?.arr()?, perm)?,
            BasicOp::Concat(dim, vs) => {
                let arrs = vs
                    .iter()
                    .map(|v| self.get(f, *v).and_then(|x| x.arr().cloned()))
                    .collect::<R<Vec<_>>>()?;
                concat(*dim, &arrs)?
            }
            BasicOp::Copy(v) => match self.get(f, *v)? {
                Val::Arr(a) => Val::Arr(Arc::new((**a).clone())),
                x => x.clone(),
            },
            BasicOp::ArrayLit(elems, ty) => {
                let rows = elems
                    .iter()
                    .map(|s| self.sub(f, s))
                    .collect::<R<Vec<_>>>()?;
                array_lit(rows, ty)?
            }
            BasicOp::Scratch(t, shape) => {
                let mut dims = Vec::with_capacity(shape.len());
                for s in shape {
                    dims.push(self.dim(f, s)?);
                }
                replicate(&dims, &Val::Prim(Prim::zero(*t)))?
            }
            BasicOp::ArraySize(v, d) => {
                let x = self.get(f, *v)?;
                Val::Prim(Prim::I64(x.shape().get(*d).copied().unwrap_or(0) as i64))
            }
            BasicOp::Assert { cond, message } => {
                if !self.sub(f, cond)?.bool()? {
                    return err(message.clone());
                }
                Val::Prim(Prim::Bool(true))
            }
            BasicOp::ShapeCheck {
                arr: v,
                shape,
                type_text,
            } => {
                let x = self.get(f, *v)?;
                let want = shape
                    .iter()
                    .map(|s| self.i64(f, s))
                    .collect::<R<Vec<i64>>>()?;
                let have = x.shape();
                let ok =
                    have.len() >= want.len() && want.iter().zip(have).all(|(&w, &h)| w == h as i64);
                if !ok {
                    return err(format!(
                        "Value of (desugared) shape {} cannot match shape of type \"{}\".",
                        shape_string(have),
                        fill_sizes(type_text, &want)
                    ));
                }
                x.clone()
            }
            BasicOp::UpdateAcc { acc, is, vals } => {
                let cell = match self.get(f, *acc)? {
                    Val::Acc(c) => c.clone(),
                    _ => return err("internal error: update_acc on a non-accumulator"),
                };
                let is = is.iter().map(|s| self.i64(f, s)).collect::<R<Vec<_>>>()?;
                let vals = vals.iter().map(|s| self.sub(f, s)).collect::<R<Vec<_>>>()?;
                self.update_acc(&cell, &is, vals)?;
                Val::Acc(cell)
            }
        })
    }

    fn update_acc(&self, cell: &AccCell, is: &[i64], vals: Vec<Val>) -> R<()> {
        if is.len() > cell.shape.len()
            || is
                .iter()
                .zip(&cell.shape)
                .any(|(&i, &w)| i < 0 || i as usize >= w)
        {
            return Ok(());
        }
        // The common case of reverse-mode AD: `+=` of scalars at a full index, in place.
        if let (Some((lam, _)), true) = (&cell.op, vals.iter().all(|v| matches!(v, Val::Prim(_)))) {
            if let Some(op) = crate::soac::simple_op_of(lam) {
                let mut arrays = cell
                    .arrays
                    .lock()
                    .map_err(|_| ExecError::new("internal error: accumulator lock"))?;
                if arrays.iter().all(|a| a.shape.len() == is.len()) {
                    let mut flat = 0usize;
                    for (&i, &d) in is.iter().zip(&cell.shape) {
                        flat = flat * d + i as usize;
                    }
                    for (a, v) in arrays.iter_mut().zip(&vals) {
                        let old = a.data.get(flat);
                        let y = v.prim()?;
                        let new = match crate::vector::fast_binop(op, old, y) {
                            Some(r) => r,
                            None => scalar_binop(op, old, y)?,
                        };
                        a.data.set_converted(flat, new);
                    }
                    return Ok(());
                }
            }
        }
        let dims: Vec<DimVal> = is.iter().map(|&i| DimVal::Idx(i)).collect();
        let mut arrays = cell
            .arrays
            .lock()
            .map_err(|_| ExecError::new("internal error: accumulator lock"))?;
        let new = match &cell.op {
            Some((lam, _)) => {
                let old = arrays
                    .iter()
                    .map(|a| index::index(a, &dims).map_err(ExecError::new))
                    .collect::<R<Vec<_>>>()?;
                let size = self.slots.slot.len().min(self.slots.max_in(lam) + 1);
                let mut frame = match &cell.env {
                    Some(env) => Frame { vals: env.clone() },
                    None => Frame::new(size),
                };
                if frame.vals.len() < size {
                    frame.vals.resize(size, Val::Unset);
                }
                let mut args = old;
                args.extend(vals);
                self.apply(&mut frame, lam, args)?
            }
            None => vals,
        };
        for (a, v) in arrays.iter_mut().zip(&new) {
            let sel = index::select(&a.shape, &dims).map_err(ExecError::new)?;
            index::write(a, &sel, v).map_err(ExecError::new)?;
        }
        Ok(())
    }

    fn with_acc(&self, f: &mut Frame, inputs: &[AccInput], lam: &Lambda, par: bool) -> R<Vec<Val>> {
        let mut accs = Vec::with_capacity(inputs.len());
        for inp in inputs {
            let shape = inp
                .shape
                .iter()
                .map(|s| self.dim(f, s))
                .collect::<R<Vec<_>>>()?;
            let mut arrays = Vec::new();
            for v in &inp.arrays {
                let a = self.take(f, *v)?.arr()?.clone();
                arrays.push(Arc::try_unwrap(a).unwrap_or_else(|a| (*a).clone()));
            }
            let op = match &inp.op {
                Some((l, ne)) => Some((
                    l.clone(),
                    ne.iter().map(|s| self.sub(f, s)).collect::<R<Vec<_>>>()?,
                )),
                None => None,
            };
            let env = match &op {
                Some((l, _)) if crate::soac::simple_op_of(l).is_none() => Some(f.vals.clone()),
                _ => None,
            };
            accs.push(Arc::new(AccCell {
                arrays: Mutex::new(arrays),
                shape,
                op,
                env,
            }));
        }
        let args: Vec<Val> = accs.iter().map(|c| Val::Acc(c.clone())).collect();
        for (p, a) in lam.params.iter().zip(args) {
            self.set(f, p.name, a);
        }
        let res = self.body(f, &lam.body, par)?;
        // Release the frame's references to the accumulators before unwrapping them.
        for p in &lam.params {
            self.set(f, p.name, Val::Unset);
        }
        let mut out = Vec::new();
        let n_acc = inputs.len();
        let rest: Vec<Val> = res.into_iter().skip(n_acc).collect();
        for c in accs {
            let arrays = c
                .arrays
                .lock()
                .map_err(|_| ExecError::new("internal error: accumulator lock"))?
                .clone();
            for a in arrays {
                out.push(Val::Arr(Arc::new(a)));
            }
        }
        out.extend(rest);
        Ok(out)
    }
}

pub fn scalar_binop(op: BinOp, a: Prim, b: Prim) -> R<Prim> {
    if op == BinOp::GetBit {
        return Ok(get_bit(a, b));
    }
    binop(op, a, b).map_err(|e| ExecError::new(e.message()))
}

pub fn ternop(op: TernOp, a: Prim, b: Prim, c: Prim) -> R<Prim> {
    let bin = |o, x, y| scalar_binop(o, x, y);
    Ok(match op {
        TernOp::SetBit => set_bit(a, b, c),
        // mad_hi a b c = mul_hi a b + c
        TernOp::MadHi => bin(BinOp::Add, bin(BinOp::MulHi, a, b)?, c)?,
        // lerp v0 v1 t = v0 + (v1 - v0) * t
        TernOp::Lerp => bin(BinOp::Add, a, bin(BinOp::Mul, bin(BinOp::Sub, b, a)?, c)?)?,
        TernOp::Mad => bin(BinOp::Add, bin(BinOp::Mul, a, b)?, c)?,
        TernOp::Fma => match (a, b, c) {
            (Prim::F32(x), Prim::F32(y), Prim::F32(z)) => Prim::F32(x.mul_add(y, z)),
            (Prim::F64(x), Prim::F64(y), Prim::F64(z)) => Prim::F64(x.mul_add(y, z)),
            (Prim::F16(x), Prim::F16(y), Prim::F16(z)) => Prim::F16(half::f16::from_f64(
                x.to_f64().mul_add(y.to_f64(), z.to_f64()),
            )),
            _ => bin(BinOp::Add, bin(BinOp::Mul, a, b)?, c)?,
        },
    })
}

/// An array of shape `dims` filled with `x`.
pub fn replicate(dims: &[usize], x: &Val) -> R<Val> {
    let inner = x.shape();
    let total = dims
        .iter()
        .chain(inner)
        .map(|&d| d as i128)
        .product::<i128>();
    if total > MAX_ELEMS {
        return err("out of memory: array too large");
    }
    let n: usize = dims.iter().product();
    let mut shape = dims.to_vec();
    shape.extend_from_slice(inner);
    Ok(match x {
        Val::Prim(p) => arr(shape, crate::out::filled(p.ty(), n, *p)?),
        Val::Arr(a) => {
            let mut buf =
                Buffer::try_with_capacity(a.data.elem_type(), total as usize).or_else(err)?;
            for _ in 0..n {
                buf.extend_converted(&a.data, 0, a.data.len());
            }
            arr(shape, buf)
        }
        _ => return err("internal error: replicate of an accumulator"),
    })
}

fn rearrange(a: &Array, perm: &[usize]) -> R<Val> {
    let r = a.shape.len();
    if perm.len() != r || (0..r).any(|k| !perm.contains(&k)) {
        return err("internal error: bad permutation");
    }
    let (shape, data) = crate::permute::permute(a, perm);
    Ok(arr(shape, data))
}

fn concat(dim: usize, arrs: &[Arc<Array>]) -> R<Val> {
    let Some(first) = arrs.first() else {
        return err("internal error: concat of nothing");
    };
    let mut shape = first.shape.clone();
    if dim >= shape.len() {
        return err("internal error: concat dimension");
    }
    for b in &arrs[1..] {
        let same = b.shape.len() == shape.len()
            && (0..shape.len()).all(|k| k == dim || b.shape[k] == first.shape[k]);
        if !same {
            let mut want = b.shape.clone();
            for k in 0..want.len().min(shape.len()) {
                if k != dim {
                    want[k] = first.shape[k];
                }
            }
            return err(format!(
                "Value of (desugared) shape {} cannot match shape of type \"{}{}\".",
                shape_string(&b.shape),
                shape_string(&want),
                first.data.elem_type()
            ));
        }
        shape[dim] += b.shape[dim];
    }
    let outer: usize = shape[..dim].iter().product();
    let mut data =
        Buffer::try_with_capacity(first.data.elem_type(), shape.iter().product()).or_else(err)?;
    for o in 0..outer {
        for a in arrs {
            let chunk: usize = a.shape[dim..].iter().product();
            data.extend_converted(&a.data, o * chunk, chunk);
        }
    }
    Ok(arr(shape, data))
}

fn array_lit(rows: Vec<Val>, ty: &Type) -> R<Val> {
    let n = rows.len();
    let Some(first) = rows.first() else {
        let elem = ty.elem().unwrap_or(PrimType::I32);
        let mut shape = vec![0];
        if let Type::Array { shape: s, .. } = ty {
            shape.extend(s.iter().map(|d| match d {
                SubExp::Const(p) => p.to_i64().unwrap_or(0).max(0) as usize,
                _ => 0,
            }));
        }
        return Ok(arr(shape, Buffer::with_capacity(elem, 0)));
    };
    let first_shape = first.shape().to_vec();
    for r in &rows[1..] {
        if r.shape() != first_shape.as_slice() {
            return err(format!(
                "Irregular array literal: elements have shapes {} and {}.",
                shape_string(&first_shape),
                shape_string(r.shape())
            ));
        }
    }
    let elem = match first {
        Val::Prim(p) => p.ty(),
        Val::Arr(a) => a.data.elem_type(),
        _ => return err("internal error: an accumulator in an array literal"),
    };
    let inner: usize = first_shape.iter().product();
    let mut data = Buffer::with_capacity(elem, n * inner);
    for r in &rows {
        push_row(&mut data, r)?;
    }
    let mut shape = vec![n];
    shape.extend(first_shape);
    Ok(arr(shape, data))
}

/// A `ShapeCheck` type text with each `{k}` replaced by the run-time size `sizes[k]`.
fn fill_sizes(text: &str, sizes: &[i64]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let close = after.find('}');
        let size = close
            .and_then(|c| after[..c].parse::<usize>().ok())
            .and_then(|k| sizes.get(k));
        match (close, size) {
            (Some(c), Some(n)) => {
                out.push_str(&n.to_string());
                rest = &after[c + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}
