//! The executor's built-in `reduce op` and `scan op` over one vector of `f32`/`f64`/`i32`/
//! `i64` (`+`, `*`, `min`, `max`), with the chunks of a worker interleaved: each worker
//! folds (or scans) up to [`WAYS`] of its chunks in one loop, one accumulator per chunk.
//! Every chunk still combines its elements in order, so the results are bit for bit those
//! of folding the chunks one after the other; but the chunks' dependency chains (one
//! `fadd` waiting for the previous) overlap, so the loop runs at memory speed instead of
//! the adder's latency.

use crate::out::OutPtr;
use rayon::prelude::*;
use runic_data::Buffer;
use runic_ir::BinOp;
use runic_prim::Prim;

/// Chunks folded together in one loop.
const WAYS: usize = 4;

/// Groups of up to [`WAYS`] consecutive chunks, about one group per worker.
fn groups(cs: &[(usize, usize)]) -> Vec<Vec<(usize, usize)>> {
    let per = cs
        .len()
        .div_ceil(rayon::current_num_threads().max(1))
        .clamp(1, WAYS);
    cs.chunks(per).map(<[_]>::to_vec).collect()
}

/// Folds (with `out`: scans, writing every prefix at its position) the chunks `g` of `xs`,
/// chunk `k` from `init[k]`, interleaved; returns every chunk's last value.
fn run_group<T: Copy>(
    xs: &[T],
    g: &[(usize, usize)],
    init: &[T],
    op: impl Fn(T, T) -> T,
    out: Option<&OutPtr>,
) -> Option<Vec<T>> {
    let mut acc: Vec<T> = init.to_vec();
    let common = g.iter().map(|(lo, hi)| hi - lo).min().unwrap_or(0);
    // SAFETY (for `out`): the type was checked by the caller, and these chunks' positions
    // belong to this worker alone.
    let mut outs: Vec<&mut [T]> = match out {
        Some(o) => g
            .iter()
            .map(|&(lo, hi)| unsafe { o.slice_mut::<T>(lo, hi - lo) })
            .collect::<Result<_, _>>()
            .ok()?,
        None => Vec::new(),
    };
    macro_rules! lanes {
        ($n:expr) => {{
            let mut a: [T; $n] = std::array::from_fn(|k| acc[k]);
            let src: [&[T]; $n] = std::array::from_fn(|k| &xs[g[k].0..g[k].1]);
            if outs.is_empty() {
                for i in 0..common {
                    for k in 0..$n {
                        a[k] = op(a[k], src[k][i]);
                    }
                }
            } else {
                for i in 0..common {
                    for k in 0..$n {
                        a[k] = op(a[k], src[k][i]);
                        outs[k][i] = a[k];
                    }
                }
            }
            acc.copy_from_slice(&a);
        }};
    }
    match g.len() {
        1 => lanes!(1),
        2 => lanes!(2),
        3 => lanes!(3),
        4 => lanes!(4),
        _ => return None,
    }
    // The chunks' remaining elements (chunks differ in length by at most one), in order.
    for (k, &(lo, hi)) in g.iter().enumerate() {
        for i in common..hi - lo {
            acc[k] = op(acc[k], xs[lo + i]);
            if let Some(o) = outs.get_mut(k) {
                o[i] = acc[k];
            }
        }
    }
    Some(acc)
}

/// Every chunk of `xs` folded (or scanned into `out`) from its `init`, a group of chunks
/// per worker; `None` when a group cannot be run.
fn all_groups<T: Copy + Send + Sync>(
    xs: &[T],
    cs: &[(usize, usize)],
    init: &[T],
    op: impl Fn(T, T) -> T + Sync,
    out: Option<&OutPtr>,
) -> Option<Vec<T>> {
    let gs = groups(cs);
    let starts: Vec<usize> = gs
        .iter()
        .scan(0, |n, g| {
            let s = *n;
            *n += g.len();
            Some(s)
        })
        .collect();
    let parts: Vec<Option<Vec<T>>> = gs
        .par_iter()
        .zip(&starts)
        .map(|(g, &s)| run_group(xs, g, &init[s..s + g.len()], &op, out))
        .collect();
    let mut all = Vec::with_capacity(cs.len());
    for p in parts {
        all.extend(p?);
    }
    Some(all)
}

/// Calls `$m!(Variant, type, add, mul, min, max)` for each element type that folds and
/// scans run in typed loops, with the operations `runic_prim` gives on it: one list for
/// the interleaved passes here and `soac`'s `fold_col`, `scan_col` and `scan_into`.
macro_rules! with_typed_ops {
    ($m:ident) => {
        $m!(
            F32,
            f32,
            |a, b| a + b,
            |a, b| a * b,
            runic_prim::min_f32,
            runic_prim::max_f32
        );
        $m!(
            F64,
            f64,
            |a, b| a + b,
            |a, b| a * b,
            runic_prim::min_f64,
            runic_prim::max_f64
        );
        $m!(
            I32,
            i32,
            i32::wrapping_add,
            i32::wrapping_mul,
            i32::min,
            i32::max
        );
        $m!(
            I64,
            i64,
            i64::wrapping_add,
            i64::wrapping_mul,
            i64::min,
            i64::max
        );
    };
}
pub(crate) use with_typed_ops;

/// Every chunk of `col` folded (or, with `out`, scanned) with `op`, chunk `k` starting from
/// `init[k]`; `None` when the operator and type are not among these loops'.
pub(crate) fn chunks(
    op: BinOp,
    col: &Buffer,
    cs: &[(usize, usize)],
    init: &[Prim],
    out: Option<&OutPtr>,
) -> Option<Vec<Prim>> {
    // Scans interleave `+` only; other operators scan chunk by chunk (`soac::scan_into`).
    if out.is_some() && op != BinOp::Add {
        return None;
    }
    macro_rules! typed {
        ($V:ident, $t:ty, $add:expr, $mul:expr, $min:expr, $max:expr) => {
            if let Buffer::$V(xs) = col {
                if out.is_some_and(|o| o.elem() != runic_data::PrimType::$V) {
                    return None;
                }
                let init: Vec<$t> = init
                    .iter()
                    .map(|p| match p {
                        Prim::$V(x) => Some(*x),
                        _ => None,
                    })
                    .collect::<Option<_>>()?;
                // One instance of the loops per operator: through a function pointer, the
                // call per element would cost more than the memory traffic.
                let parts = match op {
                    BinOp::Add => all_groups(xs, cs, &init, $add, out),
                    BinOp::Mul => all_groups(xs, cs, &init, $mul, out),
                    BinOp::Min => all_groups(xs, cs, &init, $min, out),
                    BinOp::Max => all_groups(xs, cs, &init, $max, out),
                    _ => return None,
                }?;
                return Some(parts.into_iter().map(Prim::$V).collect());
            }
        };
    }
    with_typed_ops!(typed);
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Uneven chunks of `n` elements, as `soac::chunks` splits.
    fn split(n: usize, k: usize) -> Vec<(usize, usize)> {
        (0..k).map(|j| (n * j / k, n * (j + 1) / k)).collect()
    }

    #[test]
    fn interleaved_chunks_are_the_sequential_folds_and_scans() {
        let n = 10_007;
        let f32s: Vec<f32> = (0..n)
            .map(|i| ((i * 7919) % 1000) as f32 * 0.37 - 150.0)
            .collect();
        let f64s: Vec<f64> = f32s.iter().map(|&x| x as f64 * 1.1).collect();
        let i32s: Vec<i32> = (0..n as i32).map(|i| i.wrapping_mul(2654435)).collect();
        for k in [2, 3, 5, 8] {
            let cs = split(n, k);
            for op in [BinOp::Add, BinOp::Mul, BinOp::Min, BinOp::Max] {
                let got = chunks(
                    op,
                    &Buffer::F32(f32s.clone().into()),
                    &cs,
                    &vec![Prim::F32(1.0); k],
                    None,
                )
                .expect("supported");
                for (&(lo, hi), g) in cs.iter().zip(&got) {
                    let want = f32s[lo..hi].iter().fold(1.0f32, |a, &x| match op {
                        BinOp::Add => a + x,
                        BinOp::Mul => a * x,
                        BinOp::Min => runic_prim::min_f32(a, x),
                        _ => runic_prim::max_f32(a, x),
                    });
                    let Prim::F32(g) = g else { panic!("{g:?}") };
                    assert_eq!(g.to_bits(), want.to_bits(), "{op:?} {k}");
                }
                let got = chunks(
                    op,
                    &Buffer::I32(i32s.clone().into()),
                    &cs,
                    &vec![Prim::I32(3); k],
                    None,
                )
                .expect("supported");
                for (&(lo, hi), g) in cs.iter().zip(&got) {
                    let want = i32s[lo..hi].iter().fold(3i32, |a, &x| match op {
                        BinOp::Add => a.wrapping_add(x),
                        BinOp::Mul => a.wrapping_mul(x),
                        BinOp::Min => a.min(x),
                        _ => a.max(x),
                    });
                    assert_eq!(*g, Prim::I32(want), "{op:?} {k}");
                }
            }
            // A scan of f64 from every chunk's carry.
            let init: Vec<Prim> = (0..k).map(|j| Prim::F64(j as f64 * 0.5)).collect();
            let mut out = Buffer::filled(runic_data::PrimType::F64, n, Prim::I32(0));
            let dst = OutPtr::new(&mut out);
            chunks(
                BinOp::Add,
                &Buffer::F64(f64s.clone().into()),
                &cs,
                &init,
                Some(&dst),
            )
            .expect("supported");
            for (j, &(lo, hi)) in cs.iter().enumerate() {
                let mut a = j as f64 * 0.5;
                for (i, x) in f64s.iter().enumerate().take(hi).skip(lo) {
                    a += x;
                    assert_eq!(out.get(i), Prim::F64(a), "scan {k} at {i}");
                }
            }
            // Scans with other operators are left to `scan_into`.
            assert!(chunks(
                BinOp::Min,
                &Buffer::F64(f64s.clone().into()),
                &cs,
                &init,
                Some(&dst)
            )
            .is_none());
        }
    }
}
