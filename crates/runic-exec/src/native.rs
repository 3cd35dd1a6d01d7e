//! Native kernels (`runic-jit`) for top-level `map` and `reduce` over vectors: each chunk of
//! the iteration space runs compiled code; a chunk whose kernel fails is redone on the
//! evaluator, which reports the error exactly as it would have.
//!
//! Kernels are compiled on first use and cached by lambda id for the life of the
//! [`crate::Executor`], so a program is compiled once however often it runs. `RUNIC_JIT=0`
//! turns native code off (both paths stay testable).

use crate::error::R;
use crate::eval::{Ctx, Frame};
use crate::out::OutPtr;
use crate::value::*;
use runic_data::{Array, Buffer};
use runic_ir::{LamId, Lambda, PrimType, VName};
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
        free_type: &dyn Fn(VName) -> Option<PrimType>,
    ) -> Option<Arc<MapKernel>> {
        if !self.enabled {
            return None;
        }
        let mut m = self.maps.lock().ok()?;
        m.entry(lam.id)
            .or_insert_with(|| runic_jit::compile_map(lam, free_type).map(Arc::new))
            .as_ref()
            .ok()
            .cloned()
    }

    fn fold_kernel(
        &self,
        pre: Option<&Lambda>,
        lam: &Lambda,
        free_type: &dyn Fn(VName) -> Option<PrimType>,
    ) -> Option<Arc<FoldKernel>> {
        if !self.enabled {
            return None;
        }
        let mut m = self.folds.lock().ok()?;
        m.entry((pre.map(|p| p.id), lam.id))
            .or_insert_with(|| runic_jit::compile_fold(pre, lam, free_type).map(Arc::new))
            .as_ref()
            .ok()
            .cloned()
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
    /// `map lam arrs` over vectors with a native kernel, or `None` when there is none.
    pub(crate) fn map_native(
        &self,
        f: &Frame,
        w: usize,
        lam: &Lambda,
        arrs: &[Arc<Array>],
        cs: &[(usize, usize)],
    ) -> R<Option<Vec<Val>>> {
        if !arrs.iter().all(|a| a.shape.len() == 1) {
            return Ok(None);
        }
        let ty = |v: VName| match self.get(f, v) {
            Ok(Val::Prim(p)) => Some(p.ty()),
            _ => None,
        };
        let Some(k) = self.jit.map_kernel(lam, &ty) else {
            return Ok(None);
        };
        if arrs
            .iter()
            .zip(&k.params)
            .any(|(a, t)| a.data.elem_type() != *t || a.data.len() < w)
        {
            return Ok(None);
        }
        let Some(frees) = free_words(self, f, &k.frees) else {
            return Ok(None);
        };
        let mut ins: Vec<usize> = arrs.iter().map(|a| data_ptr(&a.data)).collect();
        ins.extend(frees.iter().map(|w| w as *const u64 as usize));
        // Zero-filled vectors come from the allocator's zeroed pages: no extra pass.
        let mut outs: Vec<Buffer> = k
            .results
            .iter()
            .map(|t| Buffer::filled(*t, w, Prim::I32(0)))
            .collect();
        let ptrs: Vec<OutPtr> = outs.iter_mut().map(OutPtr::new).collect();
        let out_addrs: Vec<usize> = ptrs.iter().map(|p| p.base() as usize).collect();
        crate::soac::run_chunks(f, cs, |fr, lo, hi| {
            self.check_interrupt()?;
            let ins: Vec<*const u8> = ins.iter().map(|&a| a as *const u8).collect();
            let outs: Vec<*mut u8> = out_addrs.iter().map(|&a| a as *mut u8).collect();
            // SAFETY: every input holds at least `w` elements of the kernel's parameter
            // type (checked above), the free words hold values of their types, the
            // outputs hold `w` elements of the result types, and chunks are disjoint.
            let code = unsafe { k.run(lo, hi, &ins, &outs) };
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
            Ok(())
        })?;
        drop(ptrs);
        Ok(Some(outs.into_iter().map(|b| arr(vec![w], b)).collect()))
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
        arrs: &[Arc<Array>],
        ne: &[Val],
        cs: &[(usize, usize)],
    ) -> R<Option<Vec<Vec<Val>>>> {
        if !arrs.iter().all(|a| a.shape.len() == 1) {
            return Ok(None);
        }
        let ty = |v: VName| match self.get(f, v) {
            Ok(Val::Prim(p)) => Some(p.ty()),
            _ => None,
        };
        let Some(k) = self.jit.fold_kernel(pre, lam, &ty) else {
            return Ok(None);
        };
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
