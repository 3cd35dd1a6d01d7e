//! `reduce` and `scan` with runic-jit fold and scan kernels. Accumulators are scalars (a
//! raw word each) or arrays (a vectorised operator such as `map2 (+)`: a dense buffer
//! each, which the kernel reads the initial value from and writes the final one to).

use crate::error::R;
use crate::eval::{Ctx, Frame};
use crate::native::InputSpec;
use crate::out::OutPtr;
use crate::value::*;
use runic_data::{Array, Buffer};
use runic_ir::{Lambda, VName};
use runic_jit::{FoldKernel, ScanKernel};
use runic_prim::PrimType;
use std::sync::Arc;

/// The accumulator of a kernel call: raw words (scalars, or the addresses of `bufs`, one
/// per array value), and the buffers of the array values.
struct Acc {
    words: Vec<u64>,
    bufs: Vec<Option<Buffer>>,
    shapes: Vec<Vec<usize>>,
}

impl Acc {
    /// The accumulator holding `vals`, when they have the kernel's types and ranks.
    fn of(vals: &[Val], accs: &[PrimType], ranks: &[usize]) -> Option<Acc> {
        if vals.len() != accs.len() {
            return None;
        }
        let (mut words, mut bufs, mut shapes) = (Vec::new(), Vec::new(), Vec::new());
        for ((v, t), r) in vals.iter().zip(accs).zip(ranks) {
            match v {
                Val::Prim(p) if *r == 0 && p.ty() == *t => {
                    words.push(runic_jit::to_raw(*p));
                    bufs.push(None);
                    shapes.push(vec![]);
                }
                Val::Arr(a)
                    if a.shape.len() == *r
                        && a.data.elem_type() == *t
                        && a.data.len() == a.shape.iter().product::<usize>() =>
                {
                    let mut b = a.data.clone();
                    words.push(OutPtr::new(&mut b).base() as u64);
                    bufs.push(Some(b));
                    shapes.push(a.shape.clone());
                }
                _ => return None,
            }
        }
        Some(Acc {
            words,
            bufs,
            shapes,
        })
    }

    /// The shapes of the array values (the kernels' extra dimensions).
    fn array_shapes(&self) -> Vec<Vec<usize>> {
        self.shapes
            .iter()
            .filter(|s| !s.is_empty())
            .cloned()
            .collect()
    }

    /// The values the accumulator holds.
    fn vals(self, accs: &[PrimType]) -> Vec<Val> {
        self.words
            .iter()
            .zip(self.bufs)
            .zip(self.shapes)
            .zip(accs)
            .map(|(((w, b), s), t)| match b {
                Some(b) => arr(s, b),
                None => Val::Prim(runic_jit::from_raw(*t, *w)),
            })
            .collect()
    }
}

impl Ctx<'_> {
    /// The per-chunk results of `reduce lam ne (map pre vs)` with a native fold, or
    /// `None` when there is none; `arrs` are the arrays of the inputs `vs` that are not
    /// `k`'s index parameters (a failing chunk is redone on all of `vs`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fold_native(
        &self,
        f: &Frame,
        w: usize,
        pre: Option<&Lambda>,
        lam: &Lambda,
        k: &FoldKernel,
        (arrs, vs): (&[Arc<Array>], &[VName]),
        ne: &[Val],
        cs: &[(usize, usize)],
    ) -> R<Option<Vec<Vec<Val>>>> {
        let Some(init) = Acc::of(ne, &k.accs, &k.acc_ranks) else {
            return Ok(None);
        };
        let spec = InputSpec {
            elems: &k.elems,
            ranks: &k.ranks,
            frees: &k.frees,
            free_arrays: &k.free_arrays,
        };
        let Some(kins) = self.kernel_ins(f, w, arrs, &spec, &[], &init.array_shapes()) else {
            return Ok(None);
        };
        let parts = crate::soac::run_chunks_lazily(f, cs, |fr, lo, hi| {
            self.check_interrupt()?;
            let mut acc = Acc::of(ne, &k.accs, &k.acc_ranks)
                .ok_or_else(|| crate::error::ExecError::new("internal error: accumulator"))?;
            // SAFETY: as in `map_native`; the kernel only reads its inputs and writes the
            // accumulator's own buffers.
            let code = unsafe { k.run(lo, hi, &kins.ptrs(), &mut acc.words) };
            if code != 0 {
                // The evaluator reports the failure.
                let all = self.arrays(fr.get(), vs, w)?;
                return self.fold(fr.get(), pre, lam, &all, ne.to_vec(), lo, hi, None);
            }
            Ok(acc.vals(&k.accs))
        })?;
        self.jit.ran();
        Ok(Some(parts))
    }

    /// `scan lam ne (map pre arrs)` with native kernels, or `None` when there are none or a
    /// chunk fails (then the evaluator redoes the scan and reports the error). The same
    /// passes as the evaluator's: the chunks' totals (with several chunks), their carries
    /// combined in order, and every chunk scanned from its carry, so results are the
    /// evaluator's bit for bit.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn scan_native(
        &self,
        f: &Frame,
        w: usize,
        lam: &Lambda,
        (fk, sk): (&FoldKernel, &ScanKernel),
        arrs: &[Arc<Array>],
        ne: &[Val],
        cs: &[(usize, usize)],
    ) -> R<Option<Vec<Val>>> {
        let Some(init) = Acc::of(ne, &sk.accs, &sk.acc_ranks) else {
            return Ok(None);
        };
        let shapes = init.array_shapes();
        let fspec = InputSpec {
            elems: &fk.elems,
            ranks: &fk.ranks,
            frees: &fk.frees,
            free_arrays: &fk.free_arrays,
        };
        let sspec = InputSpec {
            elems: &sk.elems,
            ranks: &sk.ranks,
            frees: &sk.frees,
            free_arrays: &sk.free_arrays,
        };
        let (Some(fins), Some(sins)) = (
            self.kernel_ins(f, w, arrs, &fspec, &[], &shapes),
            self.kernel_ins(f, w, arrs, &sspec, &[], &shapes),
        ) else {
            return Ok(None);
        };
        // Pass 1 (several chunks only): every chunk's total, then the carries in order.
        let mut carries = vec![ne.to_vec()];
        if cs.len() > 1 {
            let totals = crate::soac::run_chunks_lazily(f, cs, |_, lo, hi| {
                self.check_interrupt()?;
                let Some(mut acc) = Acc::of(ne, &fk.accs, &fk.acc_ranks) else {
                    return Ok(None);
                };
                // SAFETY: every input holds at least `w` rows of the kernel's types (checked
                // by `kernel_ins`), and the kernel only reads them.
                let code = unsafe { fk.run(lo, hi, &fins.ptrs(), &mut acc.words) };
                Ok((code == 0).then(|| acc.vals(&fk.accs)))
            })?;
            let mut fr = f.clone();
            let mut carry = ne.to_vec();
            carries.clear();
            for t in totals {
                let Some(t) = t else { return Ok(None) };
                carries.push(carry.clone());
                carry = self.combine(&mut fr, lam, carry, t)?;
            }
        }
        // Pass 2: every chunk scanned from its carry into the preallocated results.
        let mut out_shapes = Vec::new();
        for v in ne {
            let mut s = vec![w];
            s.extend_from_slice(v.shape());
            out_shapes.push(s);
        }
        let mut outs = crate::native::out_buffers(&sk.accs, &out_shapes)?;
        let out_ptrs: Vec<OutPtr> = outs.iter_mut().map(OutPtr::new).collect();
        let out_addrs: Vec<usize> = out_ptrs.iter().map(|p| p.base() as usize).collect();
        let jobs: Vec<(usize, usize)> = (0..cs.len()).map(|k| (k, k + 1)).collect();
        let ok = crate::soac::run_chunks_lazily(f, &jobs, |_, k, _| {
            self.check_interrupt()?;
            let (lo, hi) = cs[k];
            let outs: Vec<*mut u8> = out_addrs.iter().map(|&a| a as *mut u8).collect();
            let Some(mut acc) = Acc::of(&carries[k], &sk.accs, &sk.acc_ranks) else {
                return Ok(false);
            };
            // SAFETY: as in pass 1; the outputs hold `w` rows of the accumulator types and
            // chunks are disjoint.
            Ok(unsafe { sk.run(lo, hi, &sins.ptrs(), &mut acc.words, &outs) } == 0)
        })?;
        drop(out_ptrs);
        if ok.contains(&false) {
            return Ok(None);
        }
        Ok(Some(self.native_results(outs, out_shapes)))
    }
}
