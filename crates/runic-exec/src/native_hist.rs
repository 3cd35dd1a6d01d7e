//! `reduce_by_index` with a runic-jit histogram kernel, with the evaluator's strategies
//! (`hist.rs`) and so its results bit for bit:
//! - `+` on `f32`/`f64`/`i32`/`i64` with few bins relative to the input: every chunk of
//!   the input builds a private histogram (from zero), merged into the destination in
//!   chunk order — the executor's fast path does the same, in the same chunks;
//! - otherwise (any operator): the bins are split into disjoint ranges, one per worker,
//!   and every worker applies, in input order, the elements that fall into its range on a
//!   copy of its bins — exactly the sequential result.
//!
//! Private histograms rather than atomics: the merge is deterministic (atomic adds of
//! floats would make results depend on timing), and with 1024 bins the private copies
//! live in the cache. A failing kernel leaves the destinations untouched (it works on
//! copies), so the evaluator redoes the histogram and reports the error.

use crate::error::R;
use crate::eval::{Ctx, Frame};
use crate::native::InputSpec;
use crate::out::OutPtr;
use rayon::prelude::*;
use runic_data::{Array, Buffer};
use runic_ir::{BinOp, Lambda};
use runic_jit::HistKernel;
use runic_prim::{Prim, PrimType};
use std::sync::Arc;

/// Split `n` items into at most `parts` contiguous ranges (as `hist.rs` does).
fn ranges(n: usize, parts: usize) -> Vec<(usize, usize)> {
    let parts = parts.max(1);
    (0..parts)
        .map(|k| (n * k / parts, n * (k + 1) / parts))
        .collect()
}

/// `d[b] = d[b] + h[b]` for every bin, as the executor's fast path merges.
fn merge_add(d: &mut Buffer, h: &Buffer) -> bool {
    match (d, h) {
        (Buffer::F32(d), Buffer::F32(h)) => d.iter_mut().zip(h).for_each(|(a, b)| *a += b),
        (Buffer::F64(d), Buffer::F64(h)) => d.iter_mut().zip(h).for_each(|(a, b)| *a += b),
        (Buffer::I32(d), Buffer::I32(h)) => d
            .iter_mut()
            .zip(h)
            .for_each(|(a, b)| *a = a.wrapping_add(*b)),
        (Buffer::I64(d), Buffer::I64(h)) => d
            .iter_mut()
            .zip(h)
            .for_each(|(a, b)| *a = a.wrapping_add(*b)),
        _ => return false,
    }
    true
}

impl Ctx<'_> {
    /// `reduce_by_index` into `dests` (scalar bins, `bins` per dimension) with a native
    /// kernel; `Ok(None)` when it cannot run or fails (the destinations are unchanged).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn hist_native(
        &self,
        f: &Frame,
        w: usize,
        dests: &mut [Array],
        lam: &Lambda,
        k: &HistKernel,
        is: &[Arc<Array>],
        vals: &[Arc<Array>],
        bins: &[usize],
        par: bool,
    ) -> R<Option<()>> {
        let nb: usize = bins.iter().product();
        let dims = bins.len();
        if dests.len() != k.dests.len()
            || dests
                .iter()
                .zip(&k.dests)
                .zip(&k.row_ranks)
                .any(|((d, t), r)| {
                    d.shape.len() != dims + r
                        || d.shape[..dims] != *bins
                        || d.data.elem_type() != *t
                        || d.data.len() != d.shape.iter().product::<usize>()
                })
        {
            return Ok(None);
        }
        // The rows of the destinations (empty for scalar bins), and their sizes.
        let row_shapes: Vec<Vec<usize>> = dests.iter().map(|d| d.shape[dims..].to_vec()).collect();
        let row_lens: Vec<usize> = row_shapes.iter().map(|s| s.iter().product()).collect();
        let mut arrs: Vec<Arc<Array>> = is.to_vec();
        arrs.extend(vals.iter().cloned());
        let mut elems = k.index_types.clone();
        elems.extend(&k.vals);
        let mut ranks = vec![1; k.index_types.len()];
        ranks.extend(k.row_ranks.iter().map(|r| r + 1));
        let extra = |lo: usize, hi: usize| -> Vec<Vec<usize>> {
            let mut e = vec![bins.to_vec(), vec![lo, hi]];
            e.extend(row_shapes.iter().filter(|s| !s.is_empty()).cloned());
            e
        };
        let spec = InputSpec {
            elems: &elems,
            ranks: &ranks,
            frees: &k.frees,
            free_arrays: &k.free_arrays,
        };
        let threads = rayon::current_num_threads();
        // Worth splitting by the scalars applied, not the elements: a histogram of 8 000
        // rows of 64 (a graph network's messages summed per node) is half a million.
        let row_len = row_lens.iter().copied().max().unwrap_or(1).max(1);
        let parallel = par && w.saturating_mul(row_len) >= 1 << 14 && threads > 1;
        let add = crate::soac::simple_op_of(lam) == Some(BinOp::Add)
            && matches!(
                k.dests.as_slice(),
                [PrimType::F32 | PrimType::F64 | PrimType::I32 | PrimType::I64]
            );
        if parallel && add && row_shapes[0].is_empty() && nb * threads * 4 <= w {
            let Some(kins) = self.kernel_ins(f, w, &arrs, &spec, &[], &extra(0, nb)) else {
                return Ok(None);
            };
            let t = k.dests[0];
            let privs: Vec<Option<Buffer>> = ranges(w, threads * 2)
                .into_par_iter()
                .map(|(lo, hi)| {
                    let mut h = Buffer::filled(t, nb, Prim::I32(0));
                    let base = OutPtr::new(&mut h).base();
                    // SAFETY: the inputs hold at least `w` elements of the kernel's types
                    // (checked by `kernel_ins`), `h` holds the `nb` bins and is this
                    // worker's alone.
                    let code = unsafe { k.run(lo, hi, &kins.ptrs(), &[base]) };
                    (code == 0).then_some(h)
                })
                .collect();
            let Some(privs) = privs.into_iter().collect::<Option<Vec<_>>>() else {
                return Ok(None);
            };
            for h in privs {
                if !merge_add(&mut dests[0].data, &h) {
                    return Ok(None);
                }
            }
            self.jit.ran();
            return Ok(Some(()));
        }
        // Disjoint ranges of bins, each on a copy, applied in input order.
        let parts = if parallel && nb >= 2 {
            ranges(nb, threads.min(nb))
        } else {
            vec![(0, nb)]
        };
        let work = |&(lo, hi): &(usize, usize)| -> Option<Vec<Buffer>> {
            let kins = self.kernel_ins(f, w, &arrs, &spec, &[], &extra(lo, hi))?;
            let mut local: Vec<Buffer> = dests
                .iter()
                .zip(&row_lens)
                .map(|(d, &n)| d.data.slice(lo * n, (hi - lo) * n))
                .collect();
            let ptrs: Vec<OutPtr> = local.iter_mut().map(OutPtr::new).collect();
            let outs: Vec<*mut u8> = ptrs.iter().map(|p| p.base()).collect();
            // SAFETY: as above; every local copy holds the `hi - lo` bins of its range.
            let code = unsafe { k.run(0, w, &kins.ptrs(), &outs) };
            drop(ptrs);
            (code == 0).then_some(local)
        };
        let locals: Vec<Option<Vec<Buffer>>> = if parts.len() > 1 {
            parts.par_iter().map(work).collect()
        } else {
            parts.iter().map(work).collect()
        };
        let Some(locals) = locals.into_iter().collect::<Option<Vec<_>>>() else {
            return Ok(None);
        };
        for (&(lo, hi), local) in parts.iter().zip(locals) {
            for ((d, l), &n) in dests.iter_mut().zip(local).zip(&row_lens) {
                d.data.copy_converted(lo * n, &l, 0, (hi - lo) * n);
            }
        }
        self.jit.ran();
        Ok(Some(()))
    }

    /// `scatter` into one destination of scalars with a native kernel: the positions are
    /// split into one range per worker, each writing, in input order, the elements that
    /// fall into its range straight into the destination (the last write wins, as
    /// sequentially). `false` when it cannot run (the built-in loop then writes every
    /// element again, with the same final result).
    pub(crate) fn scatter_native(
        &self,
        w: usize,
        d: &mut Array,
        k: &HistKernel,
        is: &[Arc<Array>],
        v: &Arc<Array>,
        par: bool,
    ) -> bool {
        let bins = d.shape.clone();
        let nb: usize = bins.iter().product();
        if k.dests.as_slice() != [d.data.elem_type()]
            || d.data.len() != nb
            || bins.len() != is.len()
        {
            return false;
        }
        let mut arrs: Vec<Arc<Array>> = is.to_vec();
        arrs.push(v.clone());
        let mut elems = k.index_types.clone();
        elems.extend(&k.vals);
        let ranks = vec![1; elems.len()];
        let spec = InputSpec {
            elems: &elems,
            ranks: &ranks,
            frees: &[],
            free_arrays: &[],
        };
        let f = Frame::new(0);
        let threads = rayon::current_num_threads();
        let parts = if par && w >= 1 << 14 && threads > 1 && nb >= 2 {
            ranges(nb, threads.min(nb))
        } else {
            vec![(0, nb)]
        };
        let size = d.data.elem_type().size_bytes();
        let base = OutPtr::new(&mut d.data).base() as usize;
        let work = |&(lo, hi): &(usize, usize)| -> bool {
            let Some(kins) =
                self.kernel_ins(&f, w, &arrs, &spec, &[], &[bins.clone(), vec![lo, hi]])
            else {
                return false;
            };
            let at = (base + lo * size) as *mut u8;
            // SAFETY: the inputs hold at least `w` elements of the kernel's types (checked by
            // `kernel_ins`), the destination its `nb` elements, and the ranges of positions
            // the workers write are disjoint.
            unsafe { k.run(0, w, &kins.ptrs(), &[at]) == 0 }
        };
        let ok: Vec<bool> = if parts.len() > 1 {
            parts.par_iter().map(work).collect()
        } else {
            parts.iter().map(work).collect()
        };
        let all = ok.iter().all(|&x| x);
        if all {
            self.jit.ran();
        }
        all
    }
}
