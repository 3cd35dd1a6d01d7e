//! Products whose summed index is short: `C = A·B` (`m×k` times `k×p`) with `k` at most
//! [`SHORT`] (the MLP's `δ·W₂` through its 10-class layer, `[1024][10]` by `[10][256]`)
//! and `B`'s rows contiguous. The general GEMM packs both operands into panels for every
//! block of `C`; with so few terms per element the packing and the tile bookkeeping cost
//! as much as the arithmetic. Here each row of `C` is built in AVX-512 registers, two rows
//! at a time: for each term `l`, `A[i][l]` in every lane times a row of `B`, added in
//! (one rounding per term, in order). `B` (at most 16 rows) stays in the L1 cache when its
//! rows are at most a few thousand elements long.
//!
//! [`gemm`] returns false for any other layout or CPU, and the caller runs the general GEMM.
//! Results differ from it in the last bits, as blocked sums do.

use crate::packed::Product;

/// The longest summed index this kernel takes.
pub(crate) const SHORT: usize = 16;

/// `C = A·B`, or `C += A·B` when `accumulate`, if the kernel applies; false (nothing
/// written) otherwise.
///
/// # Safety
/// As [`crate::packed`]'s `Element::gemm`: the pointers and steps address `m×k`, `k×p` and
/// `m×p` elements inside their arrays (`C`'s columns contiguous), and `C` overlaps neither
/// operand.
pub(crate) unsafe fn gemm<T: Lanes>(op: &Product<T>) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        // At least a vector of columns: narrower products are thin.rs's or the GEMM's.
        let fits = op.m > 0 && (1..=SHORT).contains(&op.k) && op.p >= T::LANES;
        if !fits || op.csb != 1 || !has_avx512f() {
            return false;
        }
        // SAFETY: the CPU has AVX-512F; the rest is the caller's contract.
        unsafe { x86::rows_all(op) };
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = op;
        false
    }
}

#[cfg(target_arch = "x86_64")]
fn has_avx512f() -> bool {
    std::is_x86_feature_detected!("avx512f")
}

/// The element types of the kernel: [`Lanes::LANES`] of them in a 512-bit register.
///
/// # Safety
/// The methods are AVX-512F instructions: call them only from code compiled with that
/// feature enabled (`x86::rows_all`), which runs only where the CPU has it.
pub(crate) trait Lanes: Copy {
    const LANES: usize;
    #[cfg(target_arch = "x86_64")]
    type V: Copy;
    /// All lanes zero.
    #[cfg(target_arch = "x86_64")]
    unsafe fn zero() -> Self::V;
    /// `x` in every lane.
    #[cfg(target_arch = "x86_64")]
    unsafe fn splat(x: Self) -> Self::V;
    /// The first `n` lanes from `p` (all when `n == LANES`), the others zero.
    #[cfg(target_arch = "x86_64")]
    unsafe fn load(p: *const Self, n: usize) -> Self::V;
    /// The first `n` lanes of `v` to `p`; the memory after them untouched.
    #[cfg(target_arch = "x86_64")]
    unsafe fn store(p: *mut Self, v: Self::V, n: usize);
    /// `a·b + c` lane by lane, rounded once.
    #[cfg(target_arch = "x86_64")]
    unsafe fn fma(a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// `a + b` lane by lane.
    #[cfg(target_arch = "x86_64")]
    unsafe fn add(a: Self::V, b: Self::V) -> Self::V;
}

/// Rows `i..i+R` of `C`, columns `j..j+S·LANES` (the last vector `n` lanes wide): each
/// the sum over `l` of `A[i][l]` times row `l` of `B`, folded in order from zero.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn tile<T: Lanes, const R: usize, const S: usize>(
    op: &Product<T>,
    i: usize,
    j: usize,
    n: usize,
) {
    let width = |s: usize| if s + 1 == S { n } else { T::LANES };
    // SAFETY (whole body): rows i..i+R of A and C, columns j.. of B and C up to the
    // tile's width, are inside their arrays (the caller's tile).
    unsafe {
        let mut acc = [[T::zero(); S]; R];
        for l in 0..op.k {
            let row = op.b.offset(l as isize * op.rsb).add(j);
            let mut bv = [T::zero(); S];
            for (s, v) in bv.iter_mut().enumerate() {
                *v = T::load(row.add(s * T::LANES), width(s));
            }
            for (r, acc_r) in acc.iter_mut().enumerate() {
                let x = *op.a.offset((i + r) as isize * op.rsa + l as isize * op.csa);
                let av = T::splat(x);
                for (v, b) in acc_r.iter_mut().zip(bv) {
                    *v = T::fma(av, b, *v);
                }
            }
        }
        for (r, acc_r) in acc.iter().enumerate() {
            let out = op.c.offset((i + r) as isize * op.rsc).add(j);
            for (s, v) in acc_r.iter().enumerate() {
                let p = out.add(s * T::LANES);
                let v = if op.accumulate {
                    T::add(T::load(p, width(s)), *v)
                } else {
                    *v
                };
                T::store(p, v, width(s));
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{tile, Lanes, Product};
    use std::arch::x86_64::*;

    /// Columns taken at once: four vectors (two rows of them are eight accumulators).
    const GROUP: usize = 4;

    /// The whole of `C`: pairs of rows, each through its columns four vectors at a time,
    /// then the vectors left, the last one partial.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn rows_all<T: Lanes>(op: &Product<T>) {
        let (m, p) = (op.m, op.p);
        let lanes = T::LANES;
        let mut i = 0;
        while i < m {
            let two = m - i >= 2;
            let mut j = 0;
            // SAFETY (every tile): inside C, rows i.. and columns j.. of the product.
            unsafe {
                while j + GROUP * lanes <= p {
                    if two {
                        tile::<T, 2, GROUP>(op, i, j, lanes)
                    } else {
                        tile::<T, 1, GROUP>(op, i, j, lanes)
                    }
                    j += GROUP * lanes;
                }
                while j < p {
                    let n = (p - j).min(lanes);
                    if two {
                        tile::<T, 2, 1>(op, i, j, n)
                    } else {
                        tile::<T, 1, 1>(op, i, j, n)
                    }
                    j += n;
                }
            }
            i += if two { 2 } else { 1 };
        }
    }

    /// The mask of lanes `0..n`.
    #[inline(always)]
    fn first(n: usize) -> u16 {
        if n >= 16 {
            u16::MAX
        } else {
            (1u16 << n) - 1
        }
    }

    // The methods are only called from `rows_all` (AVX-512F enabled), into which they are
    // inlined; their intrinsics then compile to AVX-512 instructions.
    impl Lanes for f32 {
        const LANES: usize = 16;
        type V = __m512;
        #[inline(always)]
        unsafe fn zero() -> __m512 {
            unsafe { _mm512_setzero_ps() }
        }
        #[inline(always)]
        unsafe fn splat(x: f32) -> __m512 {
            unsafe { _mm512_set1_ps(x) }
        }
        #[inline(always)]
        unsafe fn load(p: *const f32, n: usize) -> __m512 {
            // SAFETY: the caller's n lanes at p are readable; masked lanes are not read.
            unsafe {
                if n == 16 {
                    _mm512_loadu_ps(p)
                } else {
                    _mm512_maskz_loadu_ps(first(n), p)
                }
            }
        }
        #[inline(always)]
        unsafe fn store(p: *mut f32, v: __m512, n: usize) {
            // SAFETY: the caller's n lanes at p are writable; masked lanes are not written.
            unsafe {
                if n == 16 {
                    _mm512_storeu_ps(p, v)
                } else {
                    _mm512_mask_storeu_ps(p, first(n), v)
                }
            }
        }
        #[inline(always)]
        unsafe fn fma(a: __m512, b: __m512, c: __m512) -> __m512 {
            unsafe { _mm512_fmadd_ps(a, b, c) }
        }
        #[inline(always)]
        unsafe fn add(a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_add_ps(a, b) }
        }
    }

    impl Lanes for f64 {
        const LANES: usize = 8;
        type V = __m512d;
        #[inline(always)]
        unsafe fn zero() -> __m512d {
            unsafe { _mm512_setzero_pd() }
        }
        #[inline(always)]
        unsafe fn splat(x: f64) -> __m512d {
            unsafe { _mm512_set1_pd(x) }
        }
        #[inline(always)]
        unsafe fn load(p: *const f64, n: usize) -> __m512d {
            // SAFETY: as for f32.
            unsafe {
                if n == 8 {
                    _mm512_loadu_pd(p)
                } else {
                    _mm512_maskz_loadu_pd(first(n) as u8, p)
                }
            }
        }
        #[inline(always)]
        unsafe fn store(p: *mut f64, v: __m512d, n: usize) {
            // SAFETY: as for f32.
            unsafe {
                if n == 8 {
                    _mm512_storeu_pd(p, v)
                } else {
                    _mm512_mask_storeu_pd(p, first(n) as u8, v)
                }
            }
        }
        #[inline(always)]
        unsafe fn fma(a: __m512d, b: __m512d, c: __m512d) -> __m512d {
            unsafe { _mm512_fmadd_pd(a, b, c) }
        }
        #[inline(always)]
        unsafe fn add(a: __m512d, b: __m512d) -> __m512d {
            unsafe { _mm512_add_pd(a, b) }
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
impl Lanes for f32 {
    const LANES: usize = 1;
}

#[cfg(not(target_arch = "x86_64"))]
impl Lanes for f64 {
    const LANES: usize = 1;
}

#[cfg(test)]
mod tests {
    use super::{gemm, Lanes, SHORT};
    use crate::packed::Product;

    /// Whether the kernel can run here.
    fn avx512() -> bool {
        #[cfg(target_arch = "x86_64")]
        return super::has_avx512f();
        #[cfg(not(target_arch = "x86_64"))]
        return false;
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
        let applies = avx512() && m > 0 && (1..=SHORT).contains(&k) && p >= T::LANES;
        assert_eq!(done, applies, "{m}×{k}×{p}");
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

    /// Row counts across the pairs, column counts across the groups of four vectors and
    /// the partial last vector, every summed length the kernel takes and the first it
    /// does not, too few columns, both layouts of A, padded rows, accumulation.
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
        ] {
            for k in [1, 2, 3, 10, 15, 16, 17] {
                for a_t in [false, true] {
                    for accumulate in [false, true] {
                        taken += check::<f32>(m, k, p, a_t, 3, 2, accumulate) as usize;
                        taken += check::<f64>(m, k, p, a_t, 1, 5, accumulate) as usize;
                    }
                }
            }
        }
        if avx512() {
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
            assert_eq!(done, avx512() && csb == 1, "steps ({rsb}, {csb})");
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
            m in 0usize..12, k in 0usize..20, p in 1usize..90,
            a_t: bool, accumulate: bool, pb in 0usize..4, pc in 0usize..4,
        ) {
            check::<f32>(m, k, p, a_t, pb, pc, accumulate);
            check::<f64>(m, k, p, a_t, pb, pc, accumulate);
        }
    }
}
