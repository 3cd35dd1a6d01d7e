//! Maps whose lambda updates free accumulators (the SOACs reverse-mode AD produces) with a
//! runic-jit kernel. The kernel applies every update to the accumulator's array in
//! element order.
//!
//! In parallel, each worker's chunk but the first updates a private copy of the array that
//! starts at the operator's neutral element; the copies are merged into the array in chunk
//! order afterwards. Private copies rather than atomic adds: the result does not depend on
//! timing (atomic float adds would make it vary from run to run), and the kernel's update
//! stays a plain load-op-store. A few chunks per worker, while the copies stay small beside
//! the map, balance the work between the workers ([`chunks`]); when the copies would cost
//! more than a quarter of the map's work, or the operator is not a single binary operation
//! (or there is none: updates overwrite), the map runs as one chunk.
//!
//! A failing chunk (an error the kernel leaves to the evaluator) is redone on the
//! evaluator, which reports the error; the accumulators' contents do not matter then.

use crate::error::{err, R};
use crate::eval::{scalar_binop, Ctx, Frame};
use crate::native::InputSpec;
use crate::out::OutPtr;
use crate::value::*;
use rayon::prelude::*;
use runic_data::{Array, Buffer};
use runic_ir::Lambda;
use runic_jit::MapKernel;
use std::sync::Arc;

/// Chunks per worker when the private copies are small beside the map: with one chunk
/// per worker, a worker the machine slows down (or that wakes late) holds up the whole map
/// — k-means' gradient ran at one core's speed in about half its calls.
const CHUNKS_PER_WORKER: usize = 4;

/// How many chunks a map over `w` elements doing `work` in all (in scalars, as
/// `Ctx::element_work` counts them) runs in when each chunk but the first updates private
/// copies of `acc_len` accumulated elements: as many as there are elements of the map per
/// accumulated element, or, when each element does much work (an attention head's query:
/// its whole row of keys times their values, into accumulators larger than the map), as
/// many as keep the copies' filling and merging within a quarter of the work; a few per
/// worker at most. 1: run as one chunk.
fn chunks(w: usize, work: usize, acc_len: usize, threads: usize) -> usize {
    let acc_len = acc_len.max(1);
    let affordable = (w / acc_len).max(work / acc_len / 8);
    if threads < 2 || affordable == 0 {
        return 1;
    }
    (threads * CHUNKS_PER_WORKER)
        .min(affordable)
        .max(threads)
        .min(w)
        .max(1)
}

/// `d[e] = d[e] op h[e]` for every element.
fn merge(op: runic_ir::BinOp, d: &mut Buffer, h: &Buffer) -> R<()> {
    use runic_ir::BinOp::Add;
    match (op, &mut *d, h) {
        (Add, Buffer::F32(d), Buffer::F32(h)) => d.iter_mut().zip(h).for_each(|(a, b)| *a += b),
        (Add, Buffer::F64(d), Buffer::F64(h)) => d.iter_mut().zip(h).for_each(|(a, b)| *a += b),
        _ => {
            for e in 0..d.len() {
                let (a, b) = (d.get(e), h.get(e));
                let r = match crate::vector::fast_binop(op, a, b) {
                    Some(r) => r,
                    None => scalar_binop(op, a, b)?,
                };
                d.set_converted(e, r);
            }
        }
    }
    Ok(())
}

impl Ctx<'_> {
    /// `map lam arrs` with a kernel that updates accumulators; `Ok(None)` when the values
    /// in scope are not what it was compiled for (nothing was updated then).
    pub(crate) fn map_native_acc(
        &self,
        f: &Frame,
        w: usize,
        lam: &Lambda,
        k: &MapKernel,
        arrs: &[Arc<Array>],
        par: bool,
    ) -> R<Option<Vec<Val>>> {
        let Some(out_shapes) = self.out_shapes(f, w, lam, k) else {
            return Ok(None);
        };
        let mut cells = Vec::with_capacity(k.accs.len());
        for (v, _, _) in &k.accs {
            match self.get(f, *v) {
                Ok(Val::Acc(c)) => cells.push(c.clone()),
                _ => return Ok(None),
            }
        }
        let mut guards = Vec::with_capacity(cells.len());
        for c in &cells {
            guards.push(
                c.arrays.lock().map_err(|_| {
                    crate::error::ExecError::new("internal error: accumulator lock")
                })?,
            );
        }
        // The array each accumulator updates, and the operator and neutral element that
        // private copies need.
        let mut ops = Vec::with_capacity(cells.len());
        let mut acc_len = 0;
        for ((c, g), (_, t, r)) in cells.iter().zip(&guards).zip(&k.accs) {
            let [a] = g.as_slice() else { return Ok(None) };
            if a.shape.len() != *r
                || a.shape != c.shape
                || a.data.elem_type() != *t
                || a.data.len() != a.shape.iter().product::<usize>()
            {
                return Ok(None);
            }
            acc_len += a.data.len();
            ops.push(match &c.op {
                Some((l, ne)) => match (crate::soac::simple_op_of(l), ne.as_slice()) {
                    (Some(op), [Val::Prim(p)]) if p.ty() == *t => Some((op, *p)),
                    _ => None,
                },
                None => None,
            });
        }
        let n = if par && ops.iter().all(Option::is_some) {
            let work = w.saturating_mul(self.element_work(f, lam));
            chunks(w, work, acc_len, rayon::current_num_threads())
        } else {
            1
        };
        let cs: Vec<(usize, usize)> = (0..n).map(|c| (w * c / n, w * (c + 1) / n)).collect();
        // Chunk 0 updates the arrays; chunk c > 0 its private copies.
        let mut privs: Vec<Vec<Buffer>> = (1..n)
            .map(|_| {
                ops.iter()
                    .zip(&guards)
                    .map(|(o, g)| {
                        let (_, ne) = o.expect("checked");
                        Buffer::filled(ne.ty(), g[0].data.len(), ne)
                    })
                    .collect()
            })
            .collect();
        let spec = InputSpec {
            elems: &k.params,
            ranks: &k.ranks,
            frees: &k.frees,
            free_arrays: &k.free_arrays,
        };
        let mut kins = Vec::with_capacity(n);
        for c in 0..n {
            let accs: Vec<(usize, Vec<usize>)> = guards
                .iter_mut()
                .enumerate()
                .map(|(j, g)| {
                    let shape = g[0].shape.clone();
                    let buf = match c {
                        0 => &mut g[0].data,
                        c => &mut privs[c - 1][j],
                    };
                    (OutPtr::new(buf).base() as usize, shape)
                })
                .collect();
            match self.kernel_ins(f, w, arrs, &spec, &accs, &out_shapes) {
                Some(x) => kins.push(x),
                None => return Ok(None),
            }
        }
        let mut outs = crate::native::out_buffers(&k.results, &out_shapes)?;
        let ptrs: Vec<OutPtr> = outs.iter_mut().map(OutPtr::new).collect();
        let out_addrs: Vec<usize> = ptrs.iter().map(|p| p.base() as usize).collect();
        let run = |c: usize| -> i32 {
            let outs: Vec<*mut u8> = out_addrs.iter().map(|&a| a as *mut u8).collect();
            // SAFETY: the inputs hold at least `w` rows of the kernel's types (checked by
            // `kernel_ins`), the outputs `w` rows of its results, every chunk writes its own
            // rows and its own accumulator arrays (the locked arrays, or its private copies).
            unsafe { k.run(cs[c].0, cs[c].1, &kins[c].ptrs(), &outs) }
        };
        self.check_interrupt()?;
        let codes: Vec<i32> = if n > 1 {
            (0..n).into_par_iter().map(run).collect()
        } else {
            vec![run(0)]
        };
        drop(ptrs);
        if let Some(c) = codes.iter().position(|&code| code != 0) {
            drop(guards);
            // The evaluator reports the error of the first failing element.
            let mut fr = f.clone();
            for i in cs[c].0..cs[c].1 {
                let args = crate::native::element_args(arrs, &k.index_params, i);
                self.apply(&mut fr, lam, args)?;
            }
            return err("internal error: native code failed where the evaluator did not");
        }
        for p in privs {
            for ((g, h), o) in guards.iter_mut().zip(p).zip(&ops) {
                let (op, _) = o.expect("checked");
                merge(op, &mut g[0].data, &h)?;
            }
        }
        Ok(Some(self.native_results(outs, out_shapes)))
    }
}

#[cfg(test)]
mod tests {
    use super::chunks;

    #[test]
    fn chunks_follow_the_work_not_only_the_width() {
        // Accumulators no larger than the map: a few chunks per worker, as many as the
        // map has elements per accumulated element.
        assert_eq!(chunks(100_000, 100_000, 512, 2), 8);
        assert_eq!(chunks(1000, 1000, 400, 2), 2);
        // Larger accumulators than the map, but much work per element (256 queries, each
        // a row of 256 keys by 64 values, into 32 768 accumulated elements): split.
        assert_eq!(chunks(256, 256 * 16_384, 32_768, 2), 8);
        // Larger accumulators and little work per element: one chunk.
        assert_eq!(chunks(256, 256 * 64, 32_768, 2), 1);
        // One worker, or no elements: one chunk.
        assert_eq!(chunks(100_000, 100_000, 512, 1), 1);
        assert_eq!(chunks(0, 0, 512, 2), 1);
    }
}
