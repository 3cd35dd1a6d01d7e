//! Native kernels (`runic-jit`) for top-level `map` and `reduce` over vectors: each chunk of
//! the iteration space runs compiled code; a chunk whose kernel fails is redone on the
//! evaluator, which reports the error exactly as it would have.
//!
//! Kernels are compiled on first use and cached by lambda id for the life of the
//! [`crate::Executor`], so a program is compiled once however often it runs. `RUNIC_JIT=0`
//! turns native code off (both paths stay testable).

use crate::error::{err, R};
use crate::eval::{Ctx, Frame};
use crate::out::OutPtr;
use crate::value::*;
use runic_data::{Array, Buffer};
use runic_ir::{LamId, Lambda, PrimType, Soac, VName};
use runic_jit::{FoldKernel, MapKernel};
use runic_prim::Prim;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

type Cache<K, T> = Mutex<HashMap<K, Result<Arc<T>, String>>>;

/// The compiled kernels of a program.
pub struct Jit {
    enabled: bool,
    maps: Cache<LamId, MapKernel>,
    folds: Cache<(Option<LamId>, LamId), FoldKernel>,
}

impl Default for Jit {
    fn default() -> Self {
        Jit::new(std::env::var("RUNIC_JIT").map_or(true, |v| v != "0"))
    }
}

impl Jit {
    pub fn new(enabled: bool) -> Jit {
        Jit {
            enabled,
            maps: Mutex::default(),
            folds: Mutex::default(),
        }
    }

    fn map_kernel(
        &self,
        lam: &Lambda,
        free_type: &dyn Fn(VName) -> Option<runic_jit::VarType>,
    ) -> Result<Arc<MapKernel>, String> {
        let mut m = self.maps.lock().map_err(|_| "a poisoned kernel cache")?;
        m.entry(lam.id)
            .or_insert_with(|| runic_jit::compile_map(lam, free_type).map(Arc::new))
            .clone()
    }

    fn fold_kernel(
        &self,
        pre: Option<&Lambda>,
        lam: &Lambda,
        free_type: &dyn Fn(VName) -> Option<PrimType>,
    ) -> Result<Arc<FoldKernel>, String> {
        let mut m = self.folds.lock().map_err(|_| "a poisoned kernel cache")?;
        m.entry((pre.map(|p| p.id), lam.id))
            .or_insert_with(|| runic_jit::compile_fold(pre, lam, free_type).map(Arc::new))
            .clone()
    }

    /// How a SOAC runs when it is at the top level (split across the workers). The one
    /// decision the executor follows and `explain` reports; `ty` gives the type of a
    /// variable in scope (from run-time values, or from the IR's binder types).
    pub(crate) fn route(&self, s: &Soac, ty: &dyn Fn(VName) -> Option<VarTy>) -> Route {
        let scalar = |v: VName| match ty(v) {
            Some(VarTy::Prim(t)) => Some(t),
            _ => None,
        };
        let vectors = |arrs: &[VName]| -> Result<(), String> {
            for a in arrs {
                match ty(*a) {
                    Some(VarTy::Arr(_, 1)) => {}
                    Some(VarTy::Arr(_, r)) => {
                        return Err(format!(
                            "an input of rank {r} (its lambda takes rows): only vectors compile"
                        ))
                    }
                    _ => return Err("an input that is not an array".into()),
                }
            }
            Ok(())
        };
        let off = || Route::Evaluator("native code is off (RUNIC_JIT=0)".into());
        match s {
            Soac::Map { lam, arrs, .. } => {
                if !self.enabled {
                    return off();
                }
                // Rows of arrays are fine: the kernel indexes them in place.
                if arrs.iter().any(|a| ty(*a).is_none_or(|t| t.rank() == 0)) {
                    return Route::Evaluator("an input that is not an array".into());
                }
                let jt = |v: VName| match ty(v) {
                    Some(VarTy::Prim(t)) => Some(runic_jit::VarType::Scalar(t)),
                    Some(VarTy::Arr(t, r)) => Some(runic_jit::VarType::Array(t, r)),
                    None => None,
                };
                match self.map_kernel(lam, &jt) {
                    Ok(k) => Route::Map(k),
                    Err(why) => Route::Evaluator(why),
                }
            }
            Soac::Reduce { pre, lam, arrs, .. } => {
                if crate::soac::plain_op(pre.as_ref(), lam).is_some() {
                    return Route::Builtin("a single operator, folded by the executor's loop");
                }
                if !self.enabled {
                    return off();
                }
                if let Err(why) = vectors(arrs) {
                    return Route::Evaluator(why);
                }
                match self.fold_kernel(pre.as_ref(), lam, &scalar) {
                    Ok(k) => Route::Fold(k),
                    Err(why) => Route::Evaluator(why),
                }
            }
            Soac::Scan { pre, lam, arrs, .. } => {
                match (crate::soac::plain_op(pre.as_ref(), lam), arrs.as_slice()) {
                    (Some(_), [a]) if ty(*a).is_some_and(|t| t.rank() == 1) => Route::Builtin(
                        "a single operator over a vector, scanned by the executor's loop",
                    ),
                    _ => Route::Evaluator("runic-jit does not compile scans yet".into()),
                }
            }
            Soac::Hist { lam, dests, is, .. } => {
                let scalar_rows =
                    matches!(dests.as_slice(), [d] if ty(*d).is_some_and(|t| t.rank() == is.len()));
                if crate::soac::simple_op_of(lam).is_some() && scalar_rows {
                    Route::Builtin("a single operator, the executor's histogram loop")
                } else {
                    Route::Evaluator(
                        "runic-jit does not compile reduce_by_index yet (a general operator)"
                            .into(),
                    )
                }
            }
            Soac::Scatter { .. } => Route::Builtin("the executor's scatter loop"),
        }
    }
}

/// What [`Jit::route`] needs to know of a variable.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum VarTy {
    Prim(PrimType),
    /// Element type and rank.
    Arr(PrimType, usize),
}

impl VarTy {
    pub fn rank(self) -> usize {
        match self {
            VarTy::Prim(_) => 0,
            VarTy::Arr(_, r) => r,
        }
    }
    pub fn of_val(v: &Val) -> Option<VarTy> {
        match v {
            Val::Prim(p) => Some(VarTy::Prim(p.ty())),
            Val::Arr(a) => Some(VarTy::Arr(a.data.elem_type(), a.shape.len())),
            _ => None,
        }
    }
    pub fn of_type(t: &runic_ir::Type) -> Option<VarTy> {
        match t {
            runic_ir::Type::Prim(p) => Some(VarTy::Prim(*p)),
            runic_ir::Type::Array { elem, shape } => Some(VarTy::Arr(*elem, shape.len())),
            _ => None,
        }
    }
}

/// See [`Jit::route`].
pub(crate) enum Route {
    /// A runic-jit map kernel.
    Map(Arc<MapKernel>),
    /// A runic-jit fold kernel.
    Fold(Arc<FoldKernel>),
    /// A loop of the executor's own (native Rust, not generated code).
    Builtin(&'static str),
    /// The evaluator (column programs or element by element), and why.
    Evaluator(String),
}

impl Route {
    /// The line `explain` prints.
    pub fn describe(&self) -> String {
        match self {
            Route::Map(_) => "native (runic-jit map kernel)".into(),
            Route::Fold(_) => "native (runic-jit fold kernel)".into(),
            Route::Builtin(d) => format!("built-in ({d})"),
            Route::Evaluator(why) => format!("not native: {why}"),
        }
    }
}

/// Address of the first element of a buffer.
fn data_ptr(b: &Buffer) -> usize {
    runic_data::with_buffer!(b, v => v.as_ptr() as usize)
}

/// The raw words of the free variables a kernel reads, if they are the scalars it expects.
fn free_words(cx: &Ctx, f: &Frame, frees: &[(VName, PrimType)]) -> Option<Vec<u64>> {
    frees
        .iter()
        .map(|(v, t)| match cx.get(f, *v) {
            Ok(Val::Prim(p)) if p.ty() == *t => Some(runic_jit::to_raw(*p)),
            _ => None,
        })
        .collect()
}

impl Ctx<'_> {
    /// [`Jit::route`] of a SOAC about to run at the top level, from the values in scope.
    pub(crate) fn route(&self, f: &Frame, s: &Soac) -> Route {
        self.jit
            .route(s, &|v| self.get(f, v).ok().and_then(VarTy::of_val))
    }

    /// `map lam arrs` over vectors with a native kernel, or `None` when there is none.
    pub(crate) fn map_native(
        &self,
        f: &Frame,
        w: usize,
        lam: &Lambda,
        k: &MapKernel,
        arrs: &[Arc<Array>],
        cs: &[(usize, usize)],
    ) -> R<Option<Vec<Val>>> {
        // The route was chosen from the types of these values; a mismatch is a bug, caught
        // here rather than by unsafe code.
        let valid = |a: &Array, t: PrimType, r: usize| {
            a.shape.len() == r
                && a.data.elem_type() == t
                && a.data.len() == a.shape.iter().product::<usize>()
        };
        if arrs.len() != k.params.len()
            || arrs
                .iter()
                .zip(k.params.iter().zip(&k.ranks))
                .any(|(a, (t, r))| !valid(a, *t, *r) || a.shape[0] < w)
        {
            return Ok(None);
        }
        let Some(frees) = free_words(self, f, &k.frees) else {
            return Ok(None);
        };
        let mut free_arrs = Vec::with_capacity(k.free_arrays.len());
        for (v, t, r) in &k.free_arrays {
            match self.get(f, *v) {
                Ok(Val::Arr(a)) if valid(a, *t, *r) => free_arrs.push(a.clone()),
                _ => return Ok(None),
            }
        }
        // The shape of each output: `w`, then the declared shape of an array result.
        let mut out_shapes = Vec::with_capacity(k.results.len());
        for (t, r) in lam.ret.iter().zip(&k.result_ranks) {
            let mut shape = vec![w];
            if let runic_ir::Type::Array { shape: s, .. } = t {
                for d in s {
                    match self.sub(f, d) {
                        Ok(Val::Prim(Prim::I64(n))) if n >= 0 => shape.push(n as usize),
                        _ => return Ok(None),
                    }
                }
            }
            if shape.len() != *r {
                return Ok(None);
            }
            out_shapes.push(shape);
        }
        let dims: Vec<i64> = arrs
            .iter()
            .map(|a| &a.shape)
            .chain(free_arrs.iter().map(|a| &a.shape))
            .chain(&out_shapes)
            .flat_map(|s| s.iter().map(|&d| d as i64))
            .collect();
        let mut ins: Vec<usize> = arrs.iter().map(|a| data_ptr(&a.data)).collect();
        ins.extend(frees.iter().map(|w| w as *const u64 as usize));
        ins.extend(free_arrs.iter().map(|a| data_ptr(&a.data)));
        ins.push(dims.as_ptr() as usize);
        // Zero-filled vectors come from the allocator's zeroed pages: no extra pass.
        let mut outs: Vec<Buffer> = k
            .results
            .iter()
            .zip(&out_shapes)
            .map(|(t, s)| Buffer::try_filled(*t, s.iter().product(), Prim::I32(0)))
            .collect::<Result<_, _>>()
            .or_else(err)?;
        // Array results: a failing chunk makes the evaluator redo the whole map (it reports
        // the failure, or builds the rows its own way).
        let rows_out = k.result_ranks.iter().any(|&r| r > 1);
        let ptrs: Vec<OutPtr> = outs.iter_mut().map(OutPtr::new).collect();
        let out_addrs: Vec<usize> = ptrs.iter().map(|p| p.base() as usize).collect();
        let done = crate::soac::run_chunks(f, cs, |fr, lo, hi| {
            self.check_interrupt()?;
            let ins: Vec<*const u8> = ins.iter().map(|&a| a as *const u8).collect();
            let outs: Vec<*mut u8> = out_addrs.iter().map(|&a| a as *mut u8).collect();
            // SAFETY: every input holds at least `w` elements of the kernel's parameter
            // type (checked above), the free words hold values of their types, the
            // outputs hold `w` elements of the result types, and chunks are disjoint.
            let code = unsafe { k.run(lo, hi, &ins, &outs) };
            if code != 0 && rows_out {
                return Ok(false);
            }
            if code != 0 {
                // Element by element on the evaluator, which reports the failure.
                for i in lo..hi {
                    let args = arrs.iter().map(|a| row(a, i)).collect();
                    let r = self.apply(fr, lam, args)?;
                    for (p, v) in ptrs.iter().zip(&r) {
                        p.set(i, v.prim()?)?;
                    }
                }
            }
            Ok(true)
        })?;
        drop(ptrs);
        if done.contains(&false) {
            return Ok(None);
        }
        Ok(Some(
            outs.into_iter()
                .zip(out_shapes)
                .map(|(b, s)| arr(s, b))
                .collect(),
        ))
    }

    /// The per-chunk results of `reduce lam ne (map pre arrs)` over vectors with a native
    /// fold, or `None` when there is none.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fold_native(
        &self,
        f: &Frame,
        w: usize,
        pre: Option<&Lambda>,
        lam: &Lambda,
        k: &FoldKernel,
        arrs: &[Arc<Array>],
        ne: &[Val],
        cs: &[(usize, usize)],
    ) -> R<Option<Vec<Vec<Val>>>> {
        if !arrs.iter().all(|a| a.shape.len() == 1) {
            return Ok(None);
        }
        if arrs.len() != k.elems.len()
            || arrs
                .iter()
                .zip(&k.elems)
                .any(|(a, t)| a.data.elem_type() != *t || a.data.len() < w)
        {
            return Ok(None);
        }
        let mut init = Vec::with_capacity(ne.len());
        for (v, t) in ne.iter().zip(&k.accs) {
            match v {
                Val::Prim(p) if p.ty() == *t => init.push(runic_jit::to_raw(*p)),
                _ => return Ok(None),
            }
        }
        let Some(frees) = free_words(self, f, &k.frees) else {
            return Ok(None);
        };
        let mut ins: Vec<usize> = arrs.iter().map(|a| data_ptr(&a.data)).collect();
        ins.extend(frees.iter().map(|w| w as *const u64 as usize));
        let parts = crate::soac::run_chunks(f, cs, |fr, lo, hi| {
            self.check_interrupt()?;
            let ins: Vec<*const u8> = ins.iter().map(|&a| a as *const u8).collect();
            let mut acc = init.clone();
            // SAFETY: as in `map_native`; the kernel only reads its inputs.
            let code = unsafe { k.run(lo, hi, &ins, &mut acc) };
            if code != 0 {
                // The evaluator reports the failure.
                return self.fold(fr, pre, lam, arrs, ne.to_vec(), lo, hi, None);
            }
            Ok(acc
                .iter()
                .zip(&k.accs)
                .map(|(r, t)| Val::Prim(runic_jit::from_raw(*t, *r)))
                .collect())
        })?;
        Ok(Some(parts))
    }
}
