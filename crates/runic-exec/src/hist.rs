//! `reduce_by_index` (hist) and `scatter`.
//!
//! Strategies at the top level:
//! - hist with few bins relative to the input: every chunk of the input builds a private
//!   histogram, and the private histograms are merged into the destination in chunk order;
//! - hist with many bins, and scatter: the destination is split into disjoint bin ranges, one
//!   per worker; every worker reads all indices and applies, in input order, the ones that
//!   fall into its range. No locks, no merging, and the result is exactly the sequential one
//!   (for scatter: the largest position wins on duplicates).

use crate::error::{err, R};
use crate::eval::{scalar_binop, Ctx, Frame};
use crate::index::{self, DimVal};
use crate::value::*;
use rayon::prelude::*;
use runic_data::{Array, Buffer};
use runic_ir::*;
use std::sync::Arc;

const PAR_MIN: usize = 1 << 14;

/// The flat bin of element `j`, or None when out of bounds.
fn bin_of(is: &[Arc<Array>], bins: &[usize], j: usize) -> Option<usize> {
    let mut flat = 0usize;
    for (a, &w) in is.iter().zip(bins) {
        let c = a.data.get(j).to_i64()?;
        if c < 0 || c as usize >= w {
            return None;
        }
        flat = flat * w + c as usize;
    }
    Some(flat)
}

/// Split `n` items into at most `parts` contiguous ranges.
fn ranges(n: usize, parts: usize) -> Vec<(usize, usize)> {
    let parts = parts.max(1);
    (0..parts)
        .map(|k| (n * k / parts, n * (k + 1) / parts))
        .collect()
}

fn unwrap_arr(a: Arc<Array>) -> Array {
    Arc::try_unwrap(a).unwrap_or_else(|a| (*a).clone())
}

macro_rules! hist_typed {
    ($dest:expr, $vals:expr, $is:expr, $bins:expr, $w:expr, $par:expr, $V:ident, $t:ty, $add:expr) => {
        if let (Buffer::$V(d), Buffer::$V(v)) = (&mut *$dest, $vals) {
            let add: fn($t, $t) -> $t = $add;
            let nb = d.len();
            let threads = rayon::current_num_threads();
            if !$par || $w < PAR_MIN || threads < 2 {
                for j in 0..$w {
                    if let Some(b) = bin_of($is, $bins, j) {
                        d[b] = add(d[b], v[j]);
                    }
                }
            } else if nb * threads * 4 <= $w {
                // Private histograms per chunk, merged in order.
                let privs: Vec<Vec<$t>> = ranges($w, threads * 2)
                    .into_par_iter()
                    .map(|(lo, hi)| {
                        let mut h: Vec<$t> = vec![<$t>::default(); nb];
                        for j in lo..hi {
                            if let Some(b) = bin_of($is, $bins, j) {
                                h[b] = add(h[b], v[j]);
                            }
                        }
                        h
                    })
                    .collect();
                for h in privs {
                    for b in 0..nb {
                        d[b] = add(d[b], h[b]);
                    }
                }
            } else {
                // Disjoint bin ranges per worker.
                let per = nb.div_ceil(threads).max(1);
                d.par_chunks_mut(per).enumerate().for_each(|(k, part)| {
                    let base = k * per;
                    for j in 0..$w {
                        if let Some(b) = bin_of($is, $bins, j) {
                            if b >= base && b < base + part.len() {
                                part[b - base] = add(part[b - base], v[j]);
                            }
                        }
                    }
                });
            }
            return Ok(());
        }
    };
}

/// Private histograms start from zero, the identity of the additive fast paths.
fn hist_fast(
    op: BinOp,
    dest: &mut Buffer,
    vals: &Buffer,
    is: &[Arc<Array>],
    bins: &[usize],
    w: usize,
    par: bool,
) -> R<()> {
    if op == BinOp::Add {
        hist_typed!(dest, vals, is, bins, w, par, F32, f32, |a, b| a + b);
        hist_typed!(dest, vals, is, bins, w, par, F64, f64, |a, b| a + b);
        hist_typed!(dest, vals, is, bins, w, par, I32, i32, |a: i32, b| a
            .wrapping_add(b));
        hist_typed!(dest, vals, is, bins, w, par, I64, i64, |a: i64, b| a
            .wrapping_add(b));
    }
    for j in 0..w {
        if let Some(b) = bin_of(is, bins, j) {
            let new = scalar_binop(op, dest.get(b), vals.get(j))?;
            dest.set_converted(b, new);
        }
    }
    Ok(())
}

/// Any operator, in parallel: every worker owns a disjoint range of bins, works on a private
/// copy of those rows, and applies in input order every element that falls into its range.
/// Each bin therefore sees exactly the sequential sequence of operator applications, so the
/// result is bit-identical to the sequential one for every operator; when several elements
/// fail, the one earliest in the input is reported, as the interpreter would.
#[allow(clippy::too_many_arguments)]
fn hist_by_bin_ranges(
    cx: &Ctx,
    f: &Frame,
    w: usize,
    dests: &mut [Array],
    lam: &Lambda,
    is: &[Arc<Array>],
    vals: &[Arc<Array>],
    bins: &[usize],
    row_shapes: &[Vec<usize>],
) -> R<()> {
    let total: usize = bins.iter().product();
    let row_lens: Vec<usize> = row_shapes.iter().map(|r| r.iter().product()).collect();
    let parts = ranges(total, rayon::current_num_threads().min(total));
    let work = |lo: usize, hi: usize| -> Result<Vec<Array>, (usize, crate::error::ExecError)> {
        let mut fr = f.clone();
        let mut local: Vec<Array> = dests
            .iter()
            .zip(row_shapes.iter().zip(&row_lens))
            .map(|(d, (rs, &len))| Array {
                shape: [hi - lo].into_iter().chain(rs.iter().copied()).collect(),
                data: d.data.slice(lo * len, (hi - lo) * len),
            })
            .collect();
        let planned = PlannedOp::new(cx, f, lam, row_shapes);
        let mut scratch = Scratch::default();
        for j in 0..w {
            if j & 4095 == 0 {
                cx.check_interrupt().map_err(|e| (j, e))?;
            }
            let Some(b) = bin_of(is, bins, j).filter(|b| (lo..hi).contains(b)) else {
                continue;
            };
            if let Some(p) = &planned {
                let mut ds: Vec<&mut Buffer> = local.iter_mut().map(|d| &mut d.data).collect();
                // On an error, the generic path below reports it at its operation.
                if p.update(&mut ds, b - lo, vals, j, &mut scratch).is_ok() {
                    continue;
                }
            }
            let at = [DimVal::Idx((b - lo) as i64)];
            let mut args = Vec::with_capacity(local.len() + vals.len());
            for d in &local {
                args.push(index::index(d, &at).map_err(|m| (j, crate::error::ExecError::new(m)))?);
            }
            for v in vals {
                args.push(row(v, j));
            }
            let new = cx.apply(&mut fr, lam, args).map_err(|e| (j, e))?;
            for (d, x) in local.iter_mut().zip(&new) {
                let sel = index::select(&d.shape, &at)
                    .map_err(|m| (j, crate::error::ExecError::new(m)))?;
                index::write(d, &sel, x).map_err(|m| (j, crate::error::ExecError::new(m)))?;
            }
        }
        Ok(local)
    };
    let results: Vec<_> = parts.par_iter().map(|&(lo, hi)| work(lo, hi)).collect();
    if let Some((_, e)) = results
        .iter()
        .filter_map(|r| r.as_ref().err())
        .min_by_key(|(j, _)| *j)
    {
        return Err(e.clone());
    }
    for (&(lo, hi), local) in parts.iter().zip(results) {
        let local = local.map_err(|(_, e)| e)?;
        for ((d, l), &len) in dests.iter_mut().zip(local).zip(&row_lens) {
            d.data.copy_converted(lo * len, &l.data, 0, (hi - lo) * len);
        }
    }
    Ok(())
}

/// A compiled scalar operator of a histogram, with its free variables' values: bins are
/// updated on registers instead of through values.
struct PlannedOp<'p> {
    plan: &'p crate::vector::Plan,
    frees: Vec<Val>,
}

impl PlannedOp<'_> {
    fn new<'p>(
        cx: &Ctx<'p>,
        f: &Frame,
        lam: &Lambda,
        row_shapes: &[Vec<usize>],
    ) -> Option<PlannedOp<'p>> {
        if row_shapes.iter().any(|r| !r.is_empty()) {
            return None;
        }
        let plan = cx.plans.get(lam)?;
        let frees = plan
            .frees
            .iter()
            .map(|v| cx.get(f, *v).cloned())
            .collect::<R<Vec<_>>>()
            .ok()?;
        Some(PlannedOp { plan, frees })
    }

    /// `dest[b] = dest[b] ⊙ vals[j]` for every destination.
    fn update(
        &self,
        dests: &mut [&mut Buffer],
        b: usize,
        vals: &[Arc<Array>],
        j: usize,
        scratch: &mut Scratch,
    ) -> R<()> {
        scratch.args.clear();
        scratch.args.extend(dests.iter().map(|d| d.get(b)));
        scratch.args.extend(vals.iter().map(|v| v.data.get(j)));
        self.plan.eval(
            &self.frees,
            &scratch.args,
            &mut scratch.regs,
            &mut scratch.out,
        )?;
        for (d, x) in dests.iter_mut().zip(&scratch.out) {
            d.set_converted(b, *x);
        }
        Ok(())
    }
}

#[derive(Default)]
struct Scratch {
    args: Vec<Prim>,
    regs: Vec<Prim>,
    out: Vec<Prim>,
}

#[allow(clippy::too_many_arguments)]
pub fn hist(
    cx: &Ctx,
    f: &mut Frame,
    w: usize,
    dests: Vec<Arc<Array>>,
    lam: &Lambda,
    ne: &[Val],
    is: &[Arc<Array>],
    vals: &[Arc<Array>],
    par: bool,
    native: Option<&runic_jit::HistKernel>,
) -> R<Vec<Val>> {
    let dims = is.len();
    let mut dests: Vec<Array> = dests.into_iter().map(unwrap_arr).collect();
    let Some(first) = dests.first() else {
        return Ok(vec![]);
    };
    if dests.iter().any(|d| d.shape.len() < dims) {
        return err("internal error: hist destination rank");
    }
    let bins: Vec<usize> = first.shape[..dims].to_vec();
    if dests.iter().any(|d| d.shape[..dims] != bins[..]) {
        return err("internal error: hist destinations with different numbers of bins");
    }
    // Each destination has its own row shape (a tuple of a scalar and an array is fine).
    let row_shapes: Vec<Vec<usize>> = dests.iter().map(|d| d.shape[dims..].to_vec()).collect();
    for (k, n) in ne.iter().enumerate() {
        let row_shape = row_shapes.get(k).map(Vec::as_slice).unwrap_or_default();
        if n.shape() != row_shape {
            return err("Row shape of destination array does not match shape of neutral element");
        }
        if vals
            .get(k)
            .map(|v| &v.shape[1..] != row_shape)
            .unwrap_or(true)
        {
            return err("Row shape of value array does not match row shape of hist target");
        }
    }
    if let Some(k) = native {
        if cx
            .hist_native(f, w, &mut dests, lam, k, is, vals, &bins, par)?
            .is_some()
        {
            return Ok(dests.into_iter().map(|d| Val::Arr(Arc::new(d))).collect());
        }
    }
    // Fast path: one scalar destination and a single-operator lambda.
    if let (Some(op), [dest], [v], true) = (
        crate::soac::simple_op_of(lam),
        dests.as_mut_slice(),
        vals,
        row_shapes[0].is_empty(),
    ) {
        hist_fast(op, &mut dest.data, &v.data, is, &bins, w, par)
            .map_err(crate::soac::at_operator(lam))?;
        return Ok(vec![Val::Arr(Arc::new(std::mem::replace(
            dest,
            Array {
                shape: vec![0],
                data: Buffer::new(runic_data::PrimType::I8),
            },
        )))]);
    }
    let total: usize = bins.iter().product();
    if par && w >= PAR_MIN && total >= 2 && rayon::current_num_threads() > 1 {
        hist_by_bin_ranges(cx, f, w, &mut dests, lam, is, vals, &bins, &row_shapes)?;
        return Ok(dests.into_iter().map(|d| Val::Arr(Arc::new(d))).collect());
    }
    // General case: sequential, in input order.
    let planned = PlannedOp::new(cx, f, lam, &row_shapes);
    let mut scratch = Scratch::default();
    for j in 0..w {
        if j & 4095 == 0 {
            cx.check_interrupt()?;
        }
        let Some(b) = bin_of(is, &bins, j) else {
            continue;
        };
        if let Some(p) = &planned {
            let mut ds: Vec<&mut Buffer> = dests.iter_mut().map(|d| &mut d.data).collect();
            // On an error, the generic path below reports it at its operation.
            if p.update(&mut ds, b, vals, j, &mut scratch).is_ok() {
                continue;
            }
        }
        let coords: Vec<DimVal> = is
            .iter()
            .map(|a| DimVal::Idx(a.data.get(j).to_i64().unwrap_or(0)))
            .collect();
        let mut args = Vec::with_capacity(2 * dests.len());
        for d in &dests {
            args.push(index::index(d, &coords).map_err(crate::error::ExecError::new)?);
        }
        for v in vals {
            args.push(row(v, j));
        }
        let new = cx.apply(f, lam, args)?;
        for (d, x) in dests.iter_mut().zip(&new) {
            let sel = index::select(&d.shape, &coords).map_err(crate::error::ExecError::new)?;
            index::write(d, &sel, x).map_err(crate::error::ExecError::new)?;
        }
    }
    Ok(dests.into_iter().map(|d| Val::Arr(Arc::new(d))).collect())
}

pub fn scatter(
    cx: &Ctx,
    w: usize,
    dests: Vec<Arc<Array>>,
    is: &[Arc<Array>],
    vals: &[Arc<Array>],
    par: bool,
    native: Option<&[Arc<runic_jit::HistKernel>]>,
) -> R<Vec<Val>> {
    let dims = is.len();
    let mut out = Vec::with_capacity(dests.len());
    for (k, (d, v)) in dests.into_iter().zip(vals).enumerate() {
        let mut d = unwrap_arr(d);
        if let Some(kernel) = native.and_then(|ks| ks.get(k)) {
            if cx.scatter_native(w, &mut d, kernel, is, v, par) {
                out.push(Val::Arr(Arc::new(d)));
                continue;
            }
        }
        if d.shape.len() < dims {
            return err("internal error: scatter destination rank");
        }
        let bins: Vec<usize> = d.shape[..dims].to_vec();
        let inner: usize = d.shape[dims..].iter().product();
        if v.shape[1..] != d.shape[dims..] {
            return err("Shape of slice does not match shape of value.");
        }
        let nb: usize = bins.iter().product();
        let threads = rayon::current_num_threads();
        if par && w >= PAR_MIN && threads > 1 && nb > 0 {
            let per_bins = nb.div_ceil(threads).max(1);
            runic_data::with_buffer2!(&mut d.data, &v.data, dd, vv => {
                dd.par_chunks_mut(per_bins * inner.max(1)).enumerate().for_each(|(k, part)| {
                    let base = k * per_bins;
                    let count = part.len() / inner.max(1);
                    for j in 0..w {
                        if let Some(b) = bin_of(is, &bins, j) {
                            if b >= base && b < base + count {
                                let o = (b - base) * inner;
                                part[o..o + inner].copy_from_slice(&vv[j * inner..(j + 1) * inner]);
                            }
                        }
                    }
                });
            }, return err("internal error: scatter element types differ"));
        } else {
            for j in 0..w {
                if let Some(b) = bin_of(is, &bins, j) {
                    d.data.copy_converted(b * inner, &v.data, j * inner, inner);
                }
            }
        }
        out.push(Val::Arr(Arc::new(d)));
    }
    Ok(out)
}
