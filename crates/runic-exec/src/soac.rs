//! SOACs. At the top level (`par`) the iteration space is split into chunks run in parallel
//! with rayon; inside a kernel everything runs sequentially. Within a chunk, elements are
//! produced a block at a time by a compiled plan where the lambda allows it.

use crate::error::{err, ExecError, R};
use crate::eval::{scalar_binop, Ctx, Frame};
use crate::native::Route;
use crate::out::OutPtr;
use crate::value::*;
use crate::vector::BLOCK;
use rayon::prelude::*;
use runic_data::{Array, Buffer};
use runic_ir::*;
use std::sync::Arc;

/// Smallest chunk worth handing to another worker.
const MIN_CHUNK: usize = 8192;

/// The least work (in scalars) that a top-level SOAC splits across the workers: two
/// chunks' worth. Less runs on the calling thread.
pub(crate) const SPLIT_MIN: usize = 2 * MIN_CHUNK;

/// Elements of a block: columns of scalars, or one row of values per element.
enum Block {
    Cols(Vec<Buffer>),
    Rows(Vec<Vec<Val>>),
}

impl Block {
    fn len(&self) -> usize {
        match self {
            Block::Cols(c) => c.first().map(|b| b.len()).unwrap_or(0),
            Block::Rows(r) => r.len(),
        }
    }
    fn elem(&self, i: usize) -> Vec<Val> {
        match self {
            Block::Cols(c) => c.iter().map(|b| Val::Prim(b.get(i))).collect(),
            Block::Rows(r) => r[i].clone(),
        }
    }
}

/// `0..w` in `n` chunks of (nearly) equal size.
fn even_split(w: usize, n: usize) -> Vec<(usize, usize)> {
    (0..n).map(|k| (w * k / n, w * (k + 1) / n)).collect()
}

/// Chunk boundaries of `0..w`.
fn chunks(w: usize, par: bool) -> Vec<(usize, usize)> {
    let threads = rayon::current_num_threads().max(1);
    let n = if par && w >= SPLIT_MIN && threads > 1 {
        (w / MIN_CHUNK).min(threads * 4).max(1)
    } else {
        1
    };
    even_split(w, n)
}

/// Chunk boundaries of `0..w` for native kernels whose elements may be rows or do work of
/// their own: the minimum chunk counts scalars, not elements (a map over 1 024 rows of 192
/// is as much work as one over 196 608 scalars, and so is a map over `iota 1024` whose
/// elements are rows of 192 sums; neither must run on one core). `per_element` is
/// [`Ctx::element_work`].
fn chunks_of_rows(
    w: usize,
    par: bool,
    arrs: &[Arc<Array>],
    per_element: usize,
) -> Vec<(usize, usize)> {
    let row = arrs
        .iter()
        .map(|a| a.shape.iter().skip(1).product::<usize>())
        .max()
        .unwrap_or(1)
        .max(per_element)
        .max(1);
    let threads = rayon::current_num_threads().max(1);
    let work = w.saturating_mul(row);
    let n = if par && work >= SPLIT_MIN && threads > 1 {
        (work / MIN_CHUNK).min(threads * 4).min(w).max(1)
    } else {
        1
    };
    even_split(w, n)
}

/// The columns of a column reduction (a map whose elements are reductions down columns,
/// run with its loops swapped) in at most as many chunks as `cs` and at least
/// [`MIN_COLUMNS`] wide. A chunk walks down every row reading its own columns only: 32
/// columns of `f32` are two cache lines per 1 KB row, which the prefetcher does not
/// follow (the MLP's bias adjoint, 1024 rows of 256: 8 chunks took 165 µs on two cores,
/// one chunk 71 µs).
fn column_chunks(cs: Vec<(usize, usize)>, w: usize) -> Vec<(usize, usize)> {
    let n = cs.len().min(w / MIN_COLUMNS).max(1);
    if n == cs.len() {
        return cs;
    }
    even_split(w, n)
}

/// The fewest columns a chunk of a column reduction takes (see [`column_chunks`]).
const MIN_COLUMNS: usize = 512;

/// A rough count of the scalars one application of `lam` touches: the size of its largest
/// result and the widths of the SOACs and loops its body runs (nested ones multiplied),
/// with `size` giving each size's value (1 where unknown). Only a guide for splitting a
/// SOAC over few elements.
fn element_work(lam: &Lambda, size: &dyn Fn(&SubExp) -> usize) -> usize {
    let results = lam
        .ret
        .iter()
        .map(|t| match t {
            Type::Array { shape, .. } => {
                shape.iter().fold(1usize, |n, d| n.saturating_mul(size(d)))
            }
            _ => 1,
        })
        .max()
        .unwrap_or(1);
    results.max(body_work(&lam.body, size)).max(1)
}

/// The scalars the SOACs and loops of a body touch (scalar statements count nothing: a
/// lambda of scalars is one element's worth, as the chunk sizes assume).
fn body_work(b: &Body, size: &dyn Fn(&SubExp) -> usize) -> usize {
    let inner = |l: &Lambda| body_work(&l.body, size).max(1);
    b.stms.iter().fold(0usize, |total, s| {
        let w = match &s.exp {
            Exp::Soac(soac) => {
                let (w, lams): (&SubExp, Vec<&Lambda>) = match soac {
                    Soac::Map { w, lam, .. } | Soac::Hist { w, lam, .. } => (w, vec![lam]),
                    Soac::Reduce { w, pre, lam, .. } | Soac::Scan { w, pre, lam, .. } => {
                        (w, pre.iter().chain([lam]).collect())
                    }
                    Soac::Scatter { w, .. } => (w, vec![]),
                };
                let each = lams.into_iter().map(inner).max().unwrap_or(1);
                size(w).saturating_mul(each)
            }
            Exp::Loop {
                form: LoopForm::For { bound, .. },
                body,
                ..
            } => size(bound).saturating_mul(body_work(body, size).max(1)),
            Exp::Loop { body, .. } => body_work(body, size).max(1),
            Exp::If {
                then_body,
                else_body,
                ..
            } => body_work(then_body, size).max(body_work(else_body, size)),
            Exp::WithAcc { lam, .. } => body_work(&lam.body, size),
            _ => 0,
        };
        total.saturating_add(w)
    })
}

/// Run `job` on every chunk (in parallel when there are several), each with a copy of the
/// frame to evaluate lambdas on, and return the results in order, or the error of the
/// first failing chunk.
pub(crate) fn run_chunks<T: Send>(
    f: &Frame,
    cs: &[(usize, usize)],
    job: impl Fn(&mut Frame, usize, usize) -> R<T> + Sync,
) -> R<Vec<T>> {
    run_chunks_lazily(f, cs, |fr, lo, hi| job(fr.get(), lo, hi))
}

/// A chunk's copy of the frame, made when first asked for: a native kernel needs one only
/// where it fails and the evaluator takes over, and copying a frame costs a reference
/// count per live value (a function's frame holds every variable of its lambdas too).
pub(crate) struct FrameOnDemand<'f> {
    base: &'f Frame,
    own: Option<Frame>,
}

impl FrameOnDemand<'_> {
    pub(crate) fn get(&mut self) -> &mut Frame {
        self.own.get_or_insert_with(|| self.base.clone())
    }
}

/// [`run_chunks`] for jobs that may not need their copy of the frame.
pub(crate) fn run_chunks_lazily<T: Send>(
    f: &Frame,
    cs: &[(usize, usize)],
    job: impl Fn(&mut FrameOnDemand, usize, usize) -> R<T> + Sync,
) -> R<Vec<T>> {
    let run = |lo, hi| {
        let mut fr = FrameOnDemand { base: f, own: None };
        job(&mut fr, lo, hi)
    };
    if cs.len() == 1 {
        return Ok(vec![run(cs[0].0, cs[0].1)?]);
    }
    let results: Vec<R<T>> = cs.par_iter().map(|&(lo, hi)| run(lo, hi)).collect();
    results.into_iter().collect()
}

/// A single-operator lambda `\x y -> x op y` on scalars ([`Lambda::binop`]).
pub fn simple_op_of(lam: &Lambda) -> Option<BinOp> {
    lam.binop().map(|(op, _)| op)
}

/// Locates the failure of a [`simple_op_of`] operator applied by a loop of the executor's
/// own (a division by zero) at the lambda's statement, as evaluating the lambda would:
/// the operator, then the SOAC in the backtrace, as the interpreter reports it.
pub(crate) fn at_operator(lam: &Lambda) -> impl Fn(ExecError) -> ExecError + '_ {
    move |e| match lam.body.stms.first() {
        Some(s) => e.locate(&s.src),
        None => e,
    }
}

/// The operator of a `reduce`/`scan` without a producer map whose lambda is a single
/// operator: the executor folds or scans those with its own loops.
pub fn plain_op(pre: Option<&Lambda>, lam: &Lambda) -> Option<BinOp> {
    match pre {
        None => simple_op_of(lam),
        Some(_) => None,
    }
}

/// Whether the typed loops below take `op` (with the types `interleave::with_typed_ops`
/// lists).
fn typed_op(op: BinOp) -> bool {
    matches!(op, BinOp::Add | BinOp::Mul | BinOp::Min | BinOp::Max)
}

/// `acc op x` folded over elements `off..off + n` of a column, natively where that is
/// exact (in order: the interpreter's association).
fn fold_col(op: BinOp, acc: Prim, col: &Buffer, off: usize, n: usize) -> R<Prim> {
    let range = off..off + n;
    // One native loop per operator and type (in order, as the interpreter associates).
    macro_rules! fold {
        ($V:ident, $t:ty, $add:expr, $mul:expr, $min:expr, $max:expr) => {
            if let (Prim::$V(a), Buffer::$V(v), true) = (acc, col, typed_op(op)) {
                let v = &v[range.clone()];
                return Ok(Prim::$V(match op {
                    BinOp::Add => fold_typed(v, a, $add),
                    BinOp::Mul => fold_typed(v, a, $mul),
                    BinOp::Min => fold_typed(v, a, $min),
                    _ => fold_typed(v, a, $max),
                }));
            }
        };
    }
    crate::interleave::with_typed_ops!(fold);
    let mut a = acc;
    for i in range {
        let x = col.get(i);
        a = match crate::vector::fast_binop(op, a, x) {
            Some(v) => v,
            None => scalar_binop(op, a, x)?,
        };
    }
    Ok(a)
}

/// `f` folded along `src` from `a`.
fn fold_typed<T: Copy>(src: &[T], a: T, f: impl Fn(T, T) -> T) -> T {
    src.iter().fold(a, |s, &x| f(s, x))
}

/// Inclusive scan of a column from `acc`, appended to `out`; returns the last value.
fn scan_col(op: BinOp, acc: Prim, col: &Buffer, n: usize, out: &mut Buffer) -> R<Prim> {
    macro_rules! scan {
        ($V:ident, $t:ty, $add:expr, $mul:expr, $min:expr, $max:expr) => {
            if let (Prim::$V(a), Buffer::$V(v), Buffer::$V(o), true) =
                (acc, col, &mut *out, typed_op(op))
            {
                let v = &v[..n];
                return Ok(Prim::$V(match op {
                    BinOp::Add => scan_onto(o, v, a, $add),
                    BinOp::Mul => scan_onto(o, v, a, $mul),
                    BinOp::Min => scan_onto(o, v, a, $min),
                    _ => scan_onto(o, v, a, $max),
                }));
            }
        };
    }
    crate::interleave::with_typed_ops!(scan);
    let mut a = acc;
    for i in 0..n {
        let x = col.get(i);
        a = match crate::vector::fast_binop(op, a, x) {
            Some(v) => v,
            None => scalar_binop(op, a, x)?,
        };
        out.push_converted(a);
    }
    Ok(a)
}

/// The inclusive scan of `src` by `f` from `a`, appended to `out`; the last value (`a`
/// when `src` is empty).
fn scan_onto<T: Copy>(out: &mut impl Extend<T>, src: &[T], mut a: T, f: impl Fn(T, T) -> T) -> T {
    out.extend(src.iter().map(|&x| {
        a = f(a, x);
        a
    }));
    a
}

/// `d[e] = a = f(a, src[e])` along `src`, from `a`.
fn scan_typed<T: Copy>(src: &[T], mut a: T, d: &mut [T], f: impl Fn(T, T) -> T) {
    for (o, &x) in d.iter_mut().zip(src) {
        a = f(a, x);
        *o = a;
    }
}

/// Inclusive scan of elements `lo..lo + n` of `src` from `acc`, written to the same
/// positions of `dst`: `+`, `*`, `min` and `max` of the common types in typed loops (one
/// instance per operator: through a function pointer, a call per element would cost more
/// than the memory traffic), anything else element by element.
fn scan_into(op: BinOp, acc: Prim, src: &Buffer, lo: usize, n: usize, dst: &OutPtr) -> R<()> {
    macro_rules! scan {
        ($V:ident, $t:ty, $add:expr, $mul:expr, $min:expr, $max:expr) => {
            if let (Prim::$V(a), Buffer::$V(v)) = (acc, src) {
                if dst.elem() == runic_data::PrimType::$V && typed_op(op) {
                    // SAFETY: the element type was checked; this chunk owns `lo..lo + n`.
                    let d: &mut [$t] = unsafe { dst.slice_mut(lo, n)? };
                    let v = &v[lo..lo + n];
                    match op {
                        BinOp::Add => scan_typed(v, a, d, $add),
                        BinOp::Mul => scan_typed(v, a, d, $mul),
                        BinOp::Min => scan_typed(v, a, d, $min),
                        _ => scan_typed(v, a, d, $max),
                    }
                    return Ok(());
                }
            }
        };
    }
    crate::interleave::with_typed_ops!(scan);
    let mut a = acc;
    for i in lo..lo + n {
        a = scalar_binop(op, a, src.get(i))?;
        dst.set(i, a)?;
    }
    Ok(())
}

impl Ctx<'_> {
    /// The input arrays of a SOAC over `w` elements whose kernel takes the element's index
    /// for the parameters in `index`: those of the others (the iotas of the index
    /// parameters are neither built nor read, but checked as [`Ctx::arrays`] checks).
    fn element_arrays(
        &self,
        f: &Frame,
        vs: &[VName],
        index: &[bool],
        w: usize,
    ) -> R<Vec<Arc<Array>>> {
        let mut elems = Vec::with_capacity(vs.len());
        for (v, &ix) in vs.iter().zip(index) {
            match (ix, self.get(f, *v)?.shape().first()) {
                (true, Some(&n)) if n < w => {
                    return err(format!(
                        "internal error: SOAC input of outer size {n} (expected {w})"
                    ))
                }
                (true, _) => {}
                (false, _) => elems.push(*v),
            }
        }
        self.arrays(f, &elems, w)
    }

    /// The input arrays of a SOAC over `w` elements (an iota left unbuilt, built now).
    pub(crate) fn arrays(&self, f: &Frame, vs: &[VName], w: usize) -> R<Vec<Arc<Array>>> {
        let mut out = Vec::with_capacity(vs.len());
        for v in vs {
            let a = match self.get(f, *v)? {
                x @ Val::Iota(_) => {
                    self.jit.built_late();
                    x.built()?.arr()?.clone()
                }
                x => x.arr()?.clone(),
            };
            if a.shape.first().copied().unwrap_or(0) < w {
                return err(format!(
                    "internal error: SOAC input of outer size {} (expected {w})",
                    a.shape.first().copied().unwrap_or(0)
                ));
            }
            out.push(a);
        }
        Ok(out)
    }

    /// Elements `lo..hi` of `map lam arrs` (or of `arrs` themselves without a lambda).
    fn block(
        &self,
        f: &mut Frame,
        lam: Option<&Lambda>,
        arrs: &[Arc<Array>],
        lo: usize,
        hi: usize,
        inner_par: bool,
    ) -> R<Block> {
        let n = hi - lo;
        let flat = arrs.iter().all(|a| a.shape.len() == 1);
        match lam {
            None if flat => Ok(Block::Cols(
                arrs.iter().map(|a| a.data.slice(lo, n)).collect(),
            )),
            None => Ok(Block::Rows(
                (lo..hi)
                    .map(|i| arrs.iter().map(|a| row(a, i)).collect())
                    .collect(),
            )),
            Some(lam) => {
                if let (Some(plan), true) = (self.plans.get(lam), flat) {
                    let frees = plan
                        .frees
                        .iter()
                        .map(|v| self.get(f, *v).cloned())
                        .collect::<R<Vec<_>>>();
                    if let Ok(frees) = frees {
                        let inputs: Vec<&Buffer> = arrs.iter().map(|a| &a.data).collect();
                        let mut cols = Vec::with_capacity(lam.ret.len());
                        let ran = plan.run(&frees, &inputs, lo, n, |_, col, start| {
                            cols.push(col.slice(start, n));
                            Ok(())
                        });
                        if ran.is_ok() {
                            return Ok(Block::Cols(cols));
                        }
                    }
                }
                let mut rows = Vec::with_capacity(n);
                for i in lo..hi {
                    let args = arrs.iter().map(|a| row(a, i)).collect();
                    rows.push(self.apply_par(f, lam, args, inner_par)?);
                }
                Ok(Block::Rows(rows))
            }
        }
    }

    /// [`element_work`] of `lam` with the sizes the frame holds.
    pub(crate) fn element_work(&self, f: &Frame, lam: &Lambda) -> usize {
        element_work(lam, &|s: &SubExp| self.size_guess(f, s))
    }

    /// A size's value if the frame holds it, else 1.
    fn size_guess(&self, f: &Frame, s: &SubExp) -> usize {
        self.i64(f, s)
            .ok()
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(1)
            .max(1)
    }

    pub fn soac(&self, f: &mut Frame, s: &Soac, par: bool) -> R<Vec<Val>> {
        self.check_interrupt()?;
        match s {
            Soac::Map { w, lam, arrs } => {
                if let Some(c) = self.gemm.get(lam) {
                    if let Some(out) = self.gemm(f, c, par)? {
                        return Ok(out);
                    }
                }
                let w = self.dim(f, w)?;
                if par {
                    if let Route::Map(k) = self.route(f, s) {
                        let ins = self.element_arrays(f, arrs, &k.index_params, w)?;
                        let mut cs = chunks_of_rows(w, par, &ins, self.element_work(f, lam));
                        if k.column_reduction {
                            cs = column_chunks(cs, w);
                        }
                        if let Some(out) = self.map_native(f, w, lam, &k, &ins, &cs)? {
                            return Ok(out);
                        }
                    }
                }
                let arrs = self.arrays(f, arrs, w)?;
                self.map(f, w, lam, &arrs, par)
            }
            Soac::Reduce {
                w,
                arrs,
                pre,
                lam,
                neutral,
                ..
            } => {
                let w = self.dim(f, w)?;
                let vs = arrs;
                let ne = neutral
                    .iter()
                    .map(|s| self.sub(f, s))
                    .collect::<R<Vec<_>>>()?;
                let per_element = match (par, pre) {
                    (true, Some(pre)) => self.element_work(f, pre),
                    _ => 1,
                };
                // A plain `reduce op` over one vector already folds natively in place
                // (`fold_col`); native kernels are for the others.
                let native = match par.then(|| self.route(f, s)) {
                    Some(Route::Fold(k)) => {
                        let ins = self.element_arrays(f, vs, &k.index_params, w)?;
                        let cs = chunks_of_rows(w, par, &ins, per_element);
                        let inputs = (ins.as_slice(), vs.as_slice());
                        self.fold_native(f, w, pre.as_ref(), lam, &k, inputs, &ne, &cs)?
                    }
                    _ => None,
                };
                let parts = match native {
                    Some(parts) => parts,
                    None => {
                        let arrs = self.arrays(f, vs, w)?;
                        let cs = chunks_of_rows(w, par, &arrs, per_element);
                        match self.plain_chunks(pre.as_ref(), lam, &arrs, &ne, &cs) {
                            Some(parts) => parts,
                            None => run_chunks(f, &cs, |fr, lo, hi| {
                                self.fold(fr, pre.as_ref(), lam, &arrs, ne.clone(), lo, hi, None)
                            })?,
                        }
                    }
                };
                let mut acc: Option<Vec<Val>> = None;
                for p in parts {
                    acc = Some(match acc {
                        None => p,
                        Some(a) => self.combine(f, lam, a, p)?,
                    });
                }
                Ok(acc.unwrap_or(ne))
            }
            Soac::Scan {
                w,
                arrs,
                pre,
                lam,
                neutral,
            } => {
                let w = self.dim(f, w)?;
                let ne = neutral
                    .iter()
                    .map(|s| self.sub(f, s))
                    .collect::<R<Vec<_>>>()?;
                if par {
                    if let Route::Scan(fk, sk) = self.route(f, s) {
                        let ks = (fk.as_ref(), sk.as_ref());
                        let per_element = pre.as_ref().map_or(1, |l| self.element_work(f, l));
                        let ins = self.element_arrays(f, arrs, &sk.index_params, w)?;
                        let cs = chunks_of_rows(w, par, &ins, per_element);
                        if let Some(out) = self.scan_native(f, w, lam, ks, &ins, &ne, &cs)? {
                            return Ok(out);
                        }
                    }
                }
                let arrs = self.arrays(f, arrs, w)?;
                self.scan(f, w, pre.as_ref(), lam, &arrs, ne, par)
            }
            Soac::Hist {
                w,
                dests,
                lam,
                neutral,
                is,
                vals,
            } => {
                let w = self.dim(f, w)?;
                let is = self.arrays(f, is, w)?;
                let vals = self.arrays(f, vals, w)?;
                let ne = neutral
                    .iter()
                    .map(|s| self.sub(f, s))
                    .collect::<R<Vec<_>>>()?;
                // The route reads the destinations' types: before they are taken.
                let route = par.then(|| self.route(f, s));
                let mut ds = Vec::new();
                for d in dests {
                    ds.push(self.take(f, *d)?.arr()?.clone());
                }
                let native = match &route {
                    Some(Route::Hist(k)) => Some(k.as_ref()),
                    _ => None,
                };
                crate::hist::hist(self, f, w, ds, lam, &ne, &is, &vals, par, native)
            }
            Soac::Scatter { w, dests, is, vals } => {
                let w = self.dim(f, w)?;
                let is = self.arrays(f, is, w)?;
                let vals = self.arrays(f, vals, w)?;
                // The route reads the destinations' types: before they are taken.
                let route = self.route(f, s);
                let mut ds = Vec::new();
                for d in dests {
                    ds.push(self.take(f, *d)?.arr()?.clone());
                }
                let native = match &route {
                    Route::Scatter(ks) => Some(ks.as_slice()),
                    _ => None,
                };
                crate::hist::scatter(self, w, ds, &is, &vals, par, native)
            }
        }
    }

    /// Every chunk of a plain `reduce op`/`scan op` over one vector folded from `ne`, the
    /// chunks of a worker interleaved (`interleave.rs`); `None` when that does not apply.
    fn plain_chunks(
        &self,
        pre: Option<&Lambda>,
        lam: &Lambda,
        arrs: &[Arc<Array>],
        ne: &[Val],
        cs: &[(usize, usize)],
    ) -> Option<Vec<Vec<Val>>> {
        let (Some(op), [a], [Val::Prim(p)]) = (plain_op(pre, lam), arrs, ne) else {
            return None;
        };
        if cs.len() < 2 || a.shape.len() != 1 {
            return None;
        }
        self.check_interrupt().ok()?;
        let parts = crate::interleave::chunks(op, &a.data, cs, &vec![*p; cs.len()], None)?;
        Some(parts.into_iter().map(|x| vec![Val::Prim(x)]).collect())
    }

    pub fn combine(&self, f: &mut Frame, lam: &Lambda, a: Vec<Val>, b: Vec<Val>) -> R<Vec<Val>> {
        if let (Some(op), [Val::Prim(x)], [Val::Prim(y)]) = (simple_op_of(lam), &a[..], &b[..]) {
            let r = scalar_binop(op, *x, *y).map_err(at_operator(lam))?;
            return Ok(vec![Val::Prim(r)]);
        }
        let mut args = a;
        args.extend(b);
        self.apply(f, lam, args)
    }

    fn map(
        &self,
        f: &Frame,
        w: usize,
        lam: &Lambda,
        arrs: &[Arc<Array>],
        par: bool,
    ) -> R<Vec<Val>> {
        if let (Some(plan), true) = (
            self.plans.get(lam),
            arrs.iter().all(|a| a.shape.len() == 1)
                && lam.ret.iter().all(|t| matches!(t, Type::Prim(_))),
        ) {
            let frees = plan
                .frees
                .iter()
                .map(|v| self.get(f, *v).cloned())
                .collect::<R<Vec<_>>>();
            if let Ok(frees) = frees {
                return self.map_planned(f, w, lam, plan, &frees, arrs, par);
            }
        }
        let cs = chunks(w, par);
        // A map too narrow to split (such as one over the seeds of `jmp`) runs its
        // applications one at a time, so their own SOACs may use the threads.
        let inner_par = par && cs.len() == 1;
        let parts = run_chunks(f, &cs, |fr, lo, hi| {
            let mut outs: Vec<(Option<Buffer>, Option<Vec<usize>>)> =
                vec![(None, None); lam.ret.len()];
            let mut b = lo;
            while b < hi {
                let e = (b + BLOCK).min(hi);
                self.check_interrupt()?;
                match self.block(fr, Some(lam), arrs, b, e, inner_par)? {
                    Block::Cols(cols) => {
                        for (o, c) in outs.iter_mut().zip(cols) {
                            match &mut o.0 {
                                None => {
                                    o.0 = Some(c);
                                    o.1 = Some(vec![]);
                                }
                                Some(buf) => buf.extend_converted(&c, 0, c.len()),
                            }
                        }
                    }
                    Block::Rows(rows) => {
                        for r in rows {
                            for (o, v) in outs.iter_mut().zip(&r) {
                                let shape = v.shape().to_vec();
                                match &o.1 {
                                    Some(s) if *s != shape => {
                                        return err(format!(
                                            "Value of (desugared) shape {} cannot match shape of type \"{}\".",
                                            shape_string(&shape),
                                            shape_string(s)
                                        ))
                                    }
                                    Some(_) => {}
                                    None => o.1 = Some(shape),
                                }
                                let buf = o.0.get_or_insert_with(|| match v {
                                    Val::Arr(a) => Buffer::with_capacity(a.data.elem_type(), 0),
                                    Val::Prim(p) => Buffer::with_capacity(p.ty(), hi - lo),
                                    _ => Buffer::new(runic_data::PrimType::I8),
                                });
                                push_row(buf, v)?;
                            }
                        }
                    }
                }
                b = e;
            }
            Ok(outs)
        })?;
        // Concatenate the chunks' outputs.
        let mut results = Vec::with_capacity(lam.ret.len());
        for k in 0..lam.ret.len() {
            let mut buf: Option<Buffer> = None;
            let mut row_shape: Option<Vec<usize>> = None;
            for p in &parts {
                if let (Some(b), Some(s)) = (&p[k].0, &p[k].1) {
                    if let Some(rs) = &row_shape {
                        if rs != s {
                            return err(format!(
                                "Value of (desugared) shape {} cannot match shape of type \"{}\".",
                                shape_string(s),
                                shape_string(rs)
                            ));
                        }
                    }
                    row_shape = Some(s.clone());
                    match &mut buf {
                        None => buf = Some(b.clone()),
                        Some(d) => d.extend_converted(b, 0, b.len()),
                    }
                }
            }
            let t = &lam.ret[k];
            let row_shape = match row_shape {
                Some(s) => s,
                None => self.static_shape(f, t),
            };
            let buf =
                buf.unwrap_or_else(|| Buffer::with_capacity(t.elem().unwrap_or(PrimType::I32), 0));
            let mut shape = vec![w];
            shape.extend(row_shape);
            results.push(arr(shape, buf));
        }
        Ok(results)
    }

    /// `map` of a compiled scalar lambda over vectors: blocks are computed from the inputs
    /// in place and written straight into the preallocated results.
    #[allow(clippy::too_many_arguments)]
    fn map_planned(
        &self,
        f: &Frame,
        w: usize,
        lam: &Lambda,
        plan: &crate::vector::Plan,
        frees: &[Val],
        arrs: &[Arc<Array>],
        par: bool,
    ) -> R<Vec<Val>> {
        let mut outs = Vec::with_capacity(lam.ret.len());
        for t in &lam.ret {
            let Type::Prim(t) = t else {
                return err("internal error: a compiled lambda with an array result");
            };
            // Zero-filled vectors come from the allocator's zeroed pages: no extra pass.
            outs.push(Buffer::filled(*t, w, Prim::I32(0)));
        }
        let ptrs: Vec<OutPtr> = outs.iter_mut().map(OutPtr::new).collect();
        let inputs: Vec<&Buffer> = arrs.iter().map(|a| &a.data).collect();
        run_chunks(f, &chunks(w, par), |fr, lo, hi| {
            let mut b = lo;
            while b < hi {
                let e = (b + BLOCK).min(hi);
                self.check_interrupt()?;
                let ran = plan.run(frees, &inputs, b, e - b, |k, col, start| {
                    ptrs[k].write(b, col, start, e - b)
                });
                if ran.is_err() {
                    // Element by element, so that the first failing element is reported.
                    for i in b..e {
                        let args = arrs.iter().map(|a| row(a, i)).collect();
                        let r = self.apply(fr, lam, args)?;
                        for (p, v) in ptrs.iter().zip(&r) {
                            p.set(i, v.prim()?)?;
                        }
                    }
                }
                b = e;
            }
            Ok(())
        })?;
        drop(ptrs);
        Ok(outs.into_iter().map(|b| arr(vec![w], b)).collect())
    }

    /// The shape of a type, with dimensions that cannot be known (bound inside a lambda
    /// that never ran) taken as 0.
    pub fn static_shape(&self, f: &Frame, t: &Type) -> Vec<usize> {
        match t {
            Type::Array { shape, .. } => shape
                .iter()
                .map(|d| self.i64(f, d).unwrap_or(0).max(0) as usize)
                .collect(),
            _ => vec![],
        }
    }

    /// Fold elements `lo..hi` into `acc`; with `out`, also append every intermediate
    /// value (an inclusive scan).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fold(
        &self,
        f: &mut Frame,
        pre: Option<&Lambda>,
        lam: &Lambda,
        arrs: &[Arc<Array>],
        mut acc: Vec<Val>,
        lo: usize,
        hi: usize,
        mut out: Option<&mut Vec<(Buffer, Vec<usize>)>>,
    ) -> R<Vec<Val>> {
        let op = simple_op_of(lam);
        // A plain `reduce op` over one vector: fold the input in place.
        if let (None, Some(op), [a], [Val::Prim(p)], None) = (pre, op, arrs, &acc[..], &out) {
            if a.shape.len() == 1 {
                self.check_interrupt()?;
                let folded = fold_col(op, *p, &a.data, lo, hi - lo).map_err(at_operator(lam))?;
                return Ok(vec![Val::Prim(folded)]);
            }
        }
        let mut b = lo;
        while b < hi {
            let e = (b + BLOCK).min(hi);
            self.check_interrupt()?;
            let blk = self.block(f, pre, arrs, b, e, false)?;
            match (&blk, op, &acc[..]) {
                (Block::Cols(cols), Some(op), [Val::Prim(a)]) if cols.len() == 1 => {
                    let n = blk.len();
                    let last = match out.as_deref_mut() {
                        Some(o) => scan_col(op, *a, &cols[0], n, &mut o[0].0),
                        None => fold_col(op, *a, &cols[0], 0, n),
                    }
                    .map_err(at_operator(lam))?;
                    acc = vec![Val::Prim(last)];
                }
                (Block::Cols(cols), _, _)
                    if self.plans.get(lam).is_some()
                        && acc.iter().all(|a| matches!(a, Val::Prim(_))) =>
                {
                    // A compiled scalar operator: registers instead of values per element.
                    let plan = self.plans.get(lam).expect("checked");
                    let frees = plan
                        .frees
                        .iter()
                        .map(|v| self.get(f, *v).cloned())
                        .collect::<R<Vec<_>>>()?;
                    let mut a: Vec<Prim> = acc.iter().map(|v| v.prim()).collect::<R<_>>()?;
                    let (mut args, mut regs, mut res) = (Vec::new(), Vec::new(), Vec::new());
                    for i in 0..blk.len() {
                        args.clear();
                        args.extend_from_slice(&a);
                        args.extend(cols.iter().map(|c| c.get(i)));
                        if plan.eval(&frees, &args, &mut regs, &mut res).is_err() {
                            // The generic path reports the error at its operation.
                            let acc_vals = a.iter().map(|p| Val::Prim(*p)).collect();
                            let r = self.combine(f, lam, acc_vals, blk.elem(i))?;
                            res = r.iter().map(|v| v.prim()).collect::<R<_>>()?;
                        }
                        std::mem::swap(&mut a, &mut res);
                        if let Some(o) = out.as_deref_mut() {
                            for (slot, v) in o.iter_mut().zip(&a) {
                                slot.0.push_converted(*v);
                            }
                        }
                    }
                    acc = a.into_iter().map(Val::Prim).collect();
                }
                _ => {
                    for i in 0..blk.len() {
                        acc = self.combine(f, lam, acc, blk.elem(i))?;
                        if let Some(o) = out.as_deref_mut() {
                            for (slot, v) in o.iter_mut().zip(&acc) {
                                if slot.0.is_empty() {
                                    slot.1 = v.shape().to_vec();
                                    if let Val::Arr(a) = v {
                                        slot.0 = Buffer::with_capacity(a.data.elem_type(), 0);
                                    }
                                }
                                push_row(&mut slot.0, v)?;
                            }
                        }
                    }
                }
            }
            b = e;
        }
        Ok(acc)
    }

    #[allow(clippy::too_many_arguments)]
    fn scan(
        &self,
        f: &Frame,
        w: usize,
        pre: Option<&Lambda>,
        lam: &Lambda,
        arrs: &[Arc<Array>],
        ne: Vec<Val>,
        par: bool,
    ) -> R<Vec<Val>> {
        let cs = chunks(w, par);
        // Pass 1 (only with several chunks): the total of every chunk, then the carry into
        // each chunk as an exclusive scan of the totals.
        let carries: Vec<Vec<Val>> = if cs.len() > 1 {
            let totals = match self.plain_chunks(pre, lam, arrs, &ne, &cs) {
                Some(t) => t,
                None => run_chunks(f, &cs, |fr, lo, hi| {
                    self.fold(fr, pre, lam, arrs, ne.clone(), lo, hi, None)
                })?,
            };
            let mut fr = f.clone();
            let mut carry = ne.clone();
            let mut cs_out = Vec::with_capacity(totals.len());
            for t in totals {
                cs_out.push(carry.clone());
                carry = self.combine(&mut fr, lam, carry, t)?;
            }
            cs_out
        } else {
            vec![ne.clone()]
        };
        // Pass 2, for a plain `scan op` over one vector: scan the input in place into the
        // preallocated result.
        if let (Some(op), [a], [Val::Prim(p)]) = (plain_op(pre, lam), arrs, &ne[..]) {
            if a.shape.len() == 1 {
                let mut out = Buffer::filled(p.ty(), w, Prim::I32(0));
                let dst = OutPtr::new(&mut out);
                let init: Option<Vec<Prim>> = carries
                    .iter()
                    .map(|c| match c.as_slice() {
                        [Val::Prim(x)] => Some(*x),
                        _ => None,
                    })
                    .collect();
                let interleaved = cs.len() > 1
                    && init.is_some_and(|i| {
                        crate::interleave::chunks(op, &a.data, &cs, &i, Some(&dst)).is_some()
                    });
                if interleaved {
                    return Ok(vec![arr(vec![w], out)]);
                }
                run_chunks_lazily(f, &cs, |_, lo, hi| {
                    let k = cs.iter().position(|c| c.0 == lo && c.1 == hi).unwrap_or(0);
                    let acc = carries.get(k).and_then(|c| c.first()).cloned();
                    let acc = acc.unwrap_or(Val::Prim(*p)).prim()?;
                    scan_into(op, acc, &a.data, lo, hi - lo, &dst).map_err(at_operator(lam))
                })?;
                return Ok(vec![arr(vec![w], out)]);
            }
        }
        // Pass 2: scan every chunk from its carry.
        let jobs: Vec<(usize, usize, usize)> = cs
            .iter()
            .enumerate()
            .map(|(k, &(lo, hi))| (k, lo, hi))
            .collect();
        let bounds: Vec<(usize, usize)> = jobs.iter().map(|&(k, _, _)| (k, k + 1)).collect();
        let parts = run_chunks(f, &bounds, |fr, k, _| {
            let (_, lo, hi) = jobs[k];
            let mut out: Vec<(Buffer, Vec<usize>)> = ne
                .iter()
                .map(|v| match v {
                    Val::Prim(p) => (Buffer::with_capacity(p.ty(), hi - lo), vec![]),
                    Val::Arr(a) => (
                        Buffer::with_capacity(a.data.elem_type(), 0),
                        a.shape.clone(),
                    ),
                    _ => (Buffer::new(runic_data::PrimType::I8), vec![]),
                })
                .collect();
            self.fold(
                fr,
                pre,
                lam,
                arrs,
                carries[k].clone(),
                lo,
                hi,
                Some(&mut out),
            )?;
            Ok(out)
        })?;
        let mut results = Vec::with_capacity(ne.len());
        for k in 0..ne.len() {
            let mut buf: Option<Buffer> = None;
            let mut rs = ne[k].shape().to_vec();
            for p in &parts {
                if !p[k].0.is_empty() {
                    rs = p[k].1.clone();
                }
                match &mut buf {
                    None => buf = Some(p[k].0.clone()),
                    Some(d) => d.extend_converted(&p[k].0, 0, p[k].0.len()),
                }
            }
            let mut shape = vec![w];
            shape.extend(rs);
            let buf = buf.ok_or_else(|| ExecError::new("internal error: empty scan"))?;
            results.push(arr(shape, buf));
        }
        Ok(results)
    }
}

#[cfg(test)]
mod tests {
    /// The typed loops of `scan_into`, `scan_col` and `fold_col` give what `runic_prim`
    /// gives element by element, for every operator they take and the special values
    /// (NaN, signed zeros, infinities, integer overflow).
    #[test]
    fn typed_scans_match_the_element_by_element_scan() {
        use super::{fold_col, scan_col, scan_into, Buffer, OutPtr, Prim};
        use runic_ir::BinOp;
        let floats = [
            1.5,
            -0.0,
            0.0,
            f64::NAN,
            -2.0,
            f64::INFINITY,
            3.0,
            f64::NAN,
            -0.0,
            0.5,
            1e300,
            -1e-300,
        ];
        let ints = [3i64, -7, i64::MAX, 2, i64::MIN, 0, 5, -1];
        let bits = |b: &Buffer| {
            (0..b.len())
                .map(|i| format!("{:?}", b.get(i)))
                .collect::<Vec<_>>()
        };
        for op in [BinOp::Add, BinOp::Mul, BinOp::Min, BinOp::Max] {
            let cases = [
                (Buffer::F64(floats.to_vec().into()), Prim::F64(1.0)),
                (
                    Buffer::F32(floats.iter().map(|&x| x as f32).collect::<Vec<_>>().into()),
                    Prim::F32(-0.0),
                ),
                (Buffer::I64(ints.to_vec().into()), Prim::I64(1)),
                (
                    Buffer::I32(ints.iter().map(|&x| x as i32).collect::<Vec<_>>().into()),
                    Prim::I32(2),
                ),
            ];
            for (src, acc) in cases {
                let n = src.len();
                let mut typed = Buffer::filled(acc.ty(), n, acc);
                // Two chunks, the second from the first's last value, as the executor runs them.
                scan_into(op, acc, &src, 0, 5, &OutPtr::new(&mut typed)).unwrap();
                let carry = typed.get(4);
                scan_into(op, carry, &src, 5, n - 5, &OutPtr::new(&mut typed)).unwrap();
                let mut want = Buffer::filled(acc.ty(), n, acc);
                let mut a = acc;
                for i in 0..n {
                    a = runic_prim::binop(op, a, src.get(i)).unwrap();
                    want.set(i, a);
                }
                assert_eq!(bits(&typed), bits(&want), "{op:?} from {acc:?}");
                // The column loops: a scan appended to a buffer, and a fold.
                let mut appended = Buffer::with_capacity(acc.ty(), n);
                let last = scan_col(op, acc, &src, n, &mut appended).unwrap();
                assert_eq!(bits(&appended), bits(&want), "{op:?} from {acc:?}");
                let folded = fold_col(op, acc, &src, 0, n).unwrap();
                assert_eq!(format!("{last:?}"), format!("{a:?}"), "{op:?} from {acc:?}");
                assert_eq!(
                    format!("{folded:?}"),
                    format!("{a:?}"),
                    "{op:?} from {acc:?}"
                );
            }
        }
    }

    use super::*;

    /// An element's work counts the loops and SOACs of its lambda (sizes it cannot know
    /// count 1), not its scalar statements.
    #[test]
    fn an_elements_work_counts_its_loops_and_soacs() {
        let text = "entry main [n] (xs: [n]f64) =
                      map (\\i -> (loop acc = 0 for j < 1000 do acc + f64.i64 (i * j),
                                   f64.sum (map (* 2) xs),
                                   f64.i64 i + 1))
                          (iota 7)";
        let mut sources = runic_syntax::SourceMap::new();
        let file = sources.add("t.fut", text);
        let program = runic_syntax::parse_program(file, text, 0).unwrap();
        let checked = runic_types::check_program(program, &sources).unwrap();
        let prog = runic_lower::lower_with_sources(&checked, Some(&sources)).unwrap();
        let map = prog.funs[0]
            .body
            .stms
            .iter()
            .find_map(|s| match &s.exp {
                Exp::Soac(Soac::Map { lam, .. }) => Some(lam.clone()),
                _ => None,
            })
            .expect("the map over iota 7");
        let size = |s: &SubExp| match s {
            SubExp::Const(c) => c.as_int().map_or(1, |n| n as usize),
            SubExp::Var(_) => 50,
        };
        // The loop's 1 000 steps and the 50 elements of `xs` mapped and summed.
        assert_eq!(element_work(&map, &size), 1000 + 50 + 50);
        let unknown = |s: &SubExp| match s {
            SubExp::Const(c) => c.as_int().map_or(1, |n| n as usize),
            SubExp::Var(_) => 1,
        };
        assert!(element_work(&map, &unknown) >= 1000);
        let scalars = Lambda::new(
            map.params.clone(),
            Body {
                stms: vec![],
                result: vec![],
            },
            vec![],
        );
        assert_eq!(element_work(&scalars, &size), 1);
    }

    /// A map over 1 024 indices whose elements are rows of 192 sums is split across the
    /// workers like a map over 1 024 rows of 192; one of scalars stays whole.
    #[test]
    fn elements_that_do_work_are_split_across_workers() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let iota = Arc::new(Array::from_i64(vec![1024], (0..1024).collect()).unwrap());
        let rows = Arc::new(Array::from_f32(vec![1024, 192], vec![0.0; 1024 * 192]).unwrap());
        pool.install(|| {
            let iota = std::slice::from_ref(&iota);
            assert_eq!(chunks_of_rows(1024, true, iota, 1).len(), 1);
            assert!(chunks_of_rows(1024, true, iota, 192).len() > 1);
            assert!(chunks_of_rows(1024, true, std::slice::from_ref(&rows), 1).len() > 1);
            // Not when the caller runs sequentially.
            assert_eq!(chunks_of_rows(1024, false, iota, 192).len(), 1);
        });
    }

    /// A column reduction is split into chunks of at least `MIN_COLUMNS` columns, no more
    /// chunks than it had, covering every column once.
    #[test]
    fn column_reductions_are_split_into_wide_chunks() {
        assert_eq!(column_chunks(even_split(256, 8), 256), vec![(0, 256)]);
        assert_eq!(column_chunks(even_split(100, 1), 100), vec![(0, 100)]);
        let wide = column_chunks(even_split(4096, 8), 4096);
        assert_eq!(wide.len(), 8);
        let some = column_chunks(even_split(1500, 8), 1500);
        assert_eq!(some.len(), 2);
        for cs in [&wide, &some] {
            assert!(cs.iter().all(|(lo, hi)| hi - lo >= MIN_COLUMNS));
            assert_eq!(cs.first().unwrap().0, 0);
            assert!(cs.windows(2).all(|p| p[0].1 == p[1].0));
        }
        assert_eq!(some.last().unwrap().1, 1500);
    }
}
