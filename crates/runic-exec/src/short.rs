//! Products built row by row from rows of `B`: `C = A·B` (`m×k` times `k×p`, `B`'s rows
//! contiguous), each row of `C` the sum over `l` of `A[i][l]` in every lane times row `l`
//! of `B`, added in one term at a time (one rounding per term) in registers, without
//! packing. Two shapes gain from it over the general GEMM, which packs both operands into
//! panels for every block of `C`:
//! - a **short sum**, `k` at most [`SHORT`] (the MLP's `δ·W₂` through its 10-class layer,
//!   `[1024][10]` by `[10][256]`): with so few terms per element the packing and the tile
//!   bookkeeping cost as much as the arithmetic. Two rows of `C` at a time, four vectors
//!   of columns; `B` (at most 16 rows) stays in the L1 cache. AVX-512 where the CPU has
//!   it, else AVX2 + FMA.
//! - **few rows**, `m` at most [`FEW_ROWS`] and a longer sum (the MLP's `δᵀ·h`,
//!   `[10][1024]` by `[1024][256]`): bands of up to [`BAND`] rows of `C`, two vectors of
//!   columns at a time, each band crossing [`BLOCK`] rows of `B` while they are in cache,
//!   so `B` is read once per band, without packing (on a Zen 3 with AVX2, the MLP's
//!   product in its gradient: 106–140 → 99–121 µs per call; its `δ·W₂` on the short
//!   kernel in AVX2 registers: 133–164 → 110–124 µs). AVX2 + FMA only: on CPUs with
//!   AVX-512 the `gemm` crates' kernels take it (not measured against this one there).
//!
//! [`gemm`] returns false for any other layout or CPU, and the caller runs the general GEMM.
//! Results differ from it in the last bits, as blocked sums do.

use crate::packed::Product;
use crate::simd::Lanes;
#[cfg(target_arch = "x86_64")]
use crate::simd::{has_avx2_fma, has_avx512f, Vector};

/// The longest summed index of a short sum.
pub(crate) const SHORT: usize = 16;

/// The most rows of `C` a few-rows product has.
pub(crate) const FEW_ROWS: usize = 12;

/// The most rows of `C` a band of a few-rows product holds in registers: two vectors
/// each, 12 accumulators, with two vectors of `B` and a broadcast element of `A` in the
/// 16 registers of AVX2.
#[cfg(target_arch = "x86_64")]
const BAND: usize = 6;

/// Rows of `B` a few-rows band crosses before the next band starts: 256 rows of a
/// product split over two workers by 128 columns are 128 KB of `f32`, in the L2 cache for
/// the band after.
#[cfg(target_arch = "x86_64")]
const BLOCK: usize = 256;

/// Which kernel [`gemm`] runs a product on, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kernel {
    /// A short sum in 512-bit registers.
    Short512,
    /// A short sum in 256-bit registers.
    Short256,
    /// Few rows in 256-bit registers.
    FewRows256,
}

/// The kernel for `op` on this CPU: a short sum or few rows, `B`'s rows contiguous, and
/// at least a vector of columns (narrower products are thin.rs's or the GEMM's).
pub(crate) fn kernel<T: Lanes>(op: &Product<T>) -> Option<Kernel> {
    #[cfg(target_arch = "x86_64")]
    {
        if op.m == 0 || op.k == 0 || op.csb != 1 {
            return None;
        }
        let short = op.k <= SHORT;
        if has_avx512f() {
            let wide = op.p >= <T::Avx512 as Vector<T>>::LANES;
            return (short && wide).then_some(Kernel::Short512);
        }
        if !has_avx2_fma() || op.p < <T::Avx2 as Vector<T>>::LANES {
            return None;
        }
        if short {
            Some(Kernel::Short256)
        } else {
            (op.m <= FEW_ROWS).then_some(Kernel::FewRows256)
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = op;
        None
    }
}

/// `C = A·B`, or `C += A·B` when `accumulate`, if a kernel applies; false (nothing
/// written) otherwise.
///
/// # Safety
/// As [`crate::packed`]'s `Element::gemm`: the pointers and steps address `m×k`, `k×p` and
/// `m×p` elements inside their arrays (`C`'s columns contiguous), and `C` overlaps neither
/// operand.
pub(crate) unsafe fn gemm<T: Lanes>(op: &Product<T>) -> bool {
    let Some(kernel) = kernel(op) else {
        return false;
    };
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `kernel` chose a kernel the CPU has; the rest is the caller's contract.
    unsafe {
        match kernel {
            Kernel::Short512 => x86::short_512(op),
            Kernel::Short256 => x86::short_256(op),
            Kernel::FewRows256 => x86::few_rows_256(op),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = kernel;
    true
}

/// Rows `i..i+R` of `C`, columns `j..j+S·LANES` (the last vector `n` lanes wide): each
/// the sum over `l` of `A[i][l]` times row `l` of `B`, folded in order from zero, then
/// stored (or added to `C` when accumulating).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn tile<T: Lanes, V: Vector<T>, const R: usize, const S: usize>(
    op: &Product<T>,
    i: usize,
    j: usize,
    n: usize,
) {
    let width = |s: usize| if s + 1 == S { n } else { V::LANES };
    // SAFETY (whole body): rows i..i+R of A and C, columns j.. of B and C up to the
    // tile's width, are inside their arrays (the caller's tile).
    unsafe {
        let mut acc = [[V::zero(); S]; R];
        for l in 0..op.k {
            let row = op.b.offset(l as isize * op.rsb).add(j);
            let mut bv = [V::zero(); S];
            for (s, v) in bv.iter_mut().enumerate() {
                *v = V::load(row.add(s * V::LANES), width(s));
            }
            for (r, acc_r) in acc.iter_mut().enumerate() {
                let x = *op.a.offset((i + r) as isize * op.rsa + l as isize * op.csa);
                let av = V::splat(x);
                for (v, b) in acc_r.iter_mut().zip(bv) {
                    *v = V::fma(av, b, *v);
                }
            }
        }
        for (r, acc_r) in acc.iter().enumerate() {
            let out = op.c.offset((i + r) as isize * op.rsc).add(j);
            for (s, v) in acc_r.iter().enumerate() {
                let p = out.add(s * V::LANES);
                let v = if op.accumulate {
                    V::add(V::load(p, width(s)), *v)
                } else {
                    *v
                };
                v.store(p, width(s));
            }
        }
    }
}

/// Rows `i..i+R` of `C` through all its columns: `S` vectors at a time, then the vectors
/// left one at a time, the last one partial.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn across<T: Lanes, V: Vector<T>, const R: usize, const S: usize>(
    op: &Product<T>,
    i: usize,
) {
    let lanes = V::LANES;
    let mut j = 0;
    // SAFETY (every tile): inside C, rows i..i+R (the caller's) and columns j.. of it.
    unsafe {
        while j + S * lanes <= op.p {
            tile::<T, V, R, S>(op, i, j, lanes);
            j += S * lanes;
        }
        while j < op.p {
            let n = (op.p - j).min(lanes);
            tile::<T, V, R, 1>(op, i, j, n);
            j += n;
        }
    }
}

/// A short sum: pairs of rows, each through its columns four vectors at a time.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn short<T: Lanes, V: Vector<T>>(op: &Product<T>) {
    let mut i = 0;
    // SAFETY (both): rows i.. of C, inside it.
    while i + 2 <= op.m {
        unsafe { across::<T, V, 2, 4>(op, i) };
        i += 2;
    }
    if i < op.m {
        unsafe { across::<T, V, 1, 4>(op, i) };
    }
}

/// Few rows: for each block of [`BLOCK`] rows of `B` (its part of the sum added to `C`
/// after the first), the bands of rows of `C`, as even as [`BAND`] allows, each through
/// its columns two vectors at a time.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn few_rows<T: Lanes, V: Vector<T>>(op: &Product<T>) {
    let bands = op.m.div_ceil(BAND);
    let height = op.m.div_ceil(bands);
    let mut l0 = 0;
    while l0 < op.k {
        let l1 = (l0 + BLOCK).min(op.k);
        // SAFETY: columns l0..l1 of A and rows l0..l1 of B, inside them (l1 ≤ k).
        let part = unsafe {
            Product {
                k: l1 - l0,
                a: op.a.offset(l0 as isize * op.csa),
                b: op.b.offset(l0 as isize * op.rsb),
                accumulate: op.accumulate || l0 > 0,
                ..*op
            }
        };
        let mut i = 0;
        while i < op.m {
            let r = height.min(op.m - i);
            // SAFETY: rows i..i+r of C, inside it.
            unsafe {
                match r {
                    6 => across::<T, V, 6, 2>(&part, i),
                    5 => across::<T, V, 5, 2>(&part, i),
                    4 => across::<T, V, 4, 2>(&part, i),
                    3 => across::<T, V, 3, 2>(&part, i),
                    2 => across::<T, V, 2, 2>(&part, i),
                    _ => across::<T, V, 1, 2>(&part, i),
                }
            }
            i += r;
        }
        l0 = l1;
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{few_rows, short, Lanes, Product};

    /// [`short`] in AVX-512 registers.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn short_512<T: Lanes>(op: &Product<T>) {
        // SAFETY: AVX-512F is enabled for the 512-bit register; the caller's product.
        unsafe { short::<T, T::Avx512>(op) }
    }

    /// [`short`] in AVX2 registers.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn short_256<T: Lanes>(op: &Product<T>) {
        // SAFETY: AVX2 and FMA are enabled for the 256-bit register; the caller's product.
        unsafe { short::<T, T::Avx2>(op) }
    }

    /// [`few_rows`] in AVX2 registers.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn few_rows_256<T: Lanes>(op: &Product<T>) {
        // SAFETY: as for `short_256`.
        unsafe { few_rows::<T, T::Avx2>(op) }
    }
}

#[cfg(test)]
mod tests {
    use super::{gemm, FEW_ROWS, SHORT};
    use crate::packed::Product;
    use crate::simd::{has_avx2_fma, has_avx512f, Lanes};

    /// Whether a kernel takes an `m×k` by `k×p` product here, by the rules the module
    /// states: B's rows contiguous, a vector of columns (of the widest registers the CPU
    /// has), and a short sum; or, on CPUs with AVX2 but not AVX-512, few rows.
    fn applies<T>(m: usize, k: usize, p: usize, b_rows_contiguous: bool) -> bool {
        let size = std::mem::size_of::<T>();
        if m == 0 || k == 0 || !b_rows_contiguous {
            return false;
        }
        if has_avx512f() {
            return k <= SHORT && p >= 64 / size;
        }
        has_avx2_fma() && p >= 32 / size && (k <= SHORT || m <= FEW_ROWS)
    }

    /// Small integers: every product and partial sum is exact in both types. Not
    /// periodic in a row's length (a period of 17 made B's rows alike when their step
    /// was a multiple of 17, hiding a wrong row).
    fn val(s: usize) -> i8 {
        ((s * 7919 + s * s) % 251 % 17) as i8 - 8
    }

    /// Runs the kernel on `m×k` times `k×p`, A by rows or by columns (`a_t`), B's rows
    /// `pb` elements longer than `p`, C's rows `pc` longer, with a guard after C; checks
    /// that it takes exactly the products it should, that C is the definition (plus the
    /// old C when accumulating) and that nothing else of C's buffer changed.
    #[allow(clippy::too_many_arguments)]
    fn check<T: Lanes + From<i8> + Into<f64> + PartialEq + std::fmt::Debug>(
        m: usize,
        k: usize,
        p: usize,
        a_t: bool,
        pb: usize,
        pc: usize,
        accumulate: bool,
    ) -> bool {
        let a: Vec<T> = (0..m * k).map(|s| T::from(val(s))).collect();
        let (rsa, csa) = if a_t { (1, m) } else { (k, 1) };
        let rsb = p + pb;
        let b: Vec<T> = (0..k * rsb).map(|s| T::from(val(s + 3))).collect();
        let rsc = p + pc;
        let guard = 20;
        let mut c: Vec<T> = (0..m * rsc + guard).map(|s| T::from(val(s + 11))).collect();
        let before = c.clone();
        // SAFETY: the steps address m×k, k×p and m×p elements of the vectors, and C is its
        // own vector.
        let done = unsafe {
            gemm(&Product::new(
                m,
                k,
                p,
                a.as_ptr(),
                (rsa as isize, csa as isize),
                b.as_ptr(),
                (rsb as isize, 1),
                c.as_mut_ptr(),
                rsc as isize,
                accumulate,
            ))
        };
        assert_eq!(done, applies::<T>(m, k, p, true), "{m}×{k}×{p}");
        for (s, (got, old)) in c.iter().zip(&before).enumerate() {
            let (i, j) = (s / rsc, s % rsc);
            let want = if done && i < m && j < p {
                let dot: f64 = (0..k)
                    .map(|l| a[i * rsa + l * csa].into() * b[l * rsb + j].into())
                    .sum();
                dot + if accumulate { (*old).into() } else { 0.0 }
            } else {
                (*old).into()
            };
            assert_eq!(
                (*got).into(),
                want,
                "{m}×{k}×{p} a_t {a_t} acc {accumulate}: C[{s}]"
            );
        }
        done
    }

    /// Row counts across the pairs and the bands (one band of 1 to 6 rows, two of 4 and
    /// 3, 6 and 6, and the first count beyond a few), column counts across the groups of
    /// vectors and the partial last vector, every short summed length and the first
    /// beyond, sums across the blocks of B's rows (the last one partial), too few
    /// columns, both layouts of A, padded rows, accumulation.
    #[test]
    fn short_products_match_the_definition() {
        let mut taken = 0;
        for &(m, p) in &[
            (1, 16),
            (2, 17),
            (3, 64),
            (5, 65),
            (8, 100),
            (7, 15),
            (4, 8),
            (1, 7),
            (6, 33),
            (12, 40),
            (13, 24),
        ] {
            for k in [1, 2, 3, 10, 15, 16, 17, 40, 256, 600] {
                for a_t in [false, true] {
                    for accumulate in [false, true] {
                        taken += check::<f32>(m, k, p, a_t, 3, 2, accumulate) as usize;
                        taken += check::<f64>(m, k, p, a_t, 1, 5, accumulate) as usize;
                    }
                }
            }
        }
        if has_avx2_fma() {
            assert!(taken > 100);
        }
    }

    /// B's other layouts: a row repeated (row step 0, a broadcast) is taken and right; B
    /// by columns (column step not 1) is declined and C left as it was.
    #[test]
    fn b_layouts_are_taken_or_declined() {
        let (m, k, p) = (5, 4, 35);
        let a: Vec<f32> = (0..m * k).map(|s| val(s) as f32).collect();
        let b: Vec<f32> = (0..k * p).map(|s| val(s + 7) as f32).collect();
        for (rsb, csb) in [(0isize, 1isize), (1, k as isize)] {
            let mut c = vec![1.5f32; m * p];
            // SAFETY: with either layout, the steps address k×p elements of b (a row
            // repeated, or b read by columns) and m×k of a; C is its own vector.
            let done = unsafe {
                gemm(&Product::new(
                    m,
                    k,
                    p,
                    a.as_ptr(),
                    (k as isize, 1),
                    b.as_ptr(),
                    (rsb, csb),
                    c.as_mut_ptr(),
                    p as isize,
                    false,
                ))
            };
            assert_eq!(
                done,
                applies::<f32>(m, k, p, csb == 1),
                "steps ({rsb}, {csb})"
            );
            for i in 0..m {
                for j in 0..p {
                    let want = if done {
                        let at = |l: usize| b[(l as isize * rsb + j as isize * csb) as usize];
                        (0..k).map(|l| a[i * k + l] * at(l)).sum::<f32>()
                    } else {
                        1.5
                    };
                    assert_eq!(c[i * p + j], want, "steps ({rsb}, {csb}): C[{i}][{j}]");
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// Random shapes and paddings, in both types: C is the definition where the kernel
        /// runs, and nothing outside C is written.
        #[test]
        fn short_products_write_exactly_c(
            m in 0usize..15, k in 0usize..600, p in 1usize..90,
            a_t: bool, accumulate: bool, pb in 0usize..4, pc in 0usize..4,
        ) {
            check::<f32>(m, k, p, a_t, pb, pc, accumulate);
            check::<f64>(m, k, p, a_t, pb, pc, accumulate);
        }
    }
}
