//! Products with few columns: `C = A·B` (`m×k` times `k×p`) where `C` has at most
//! [`THIN`] columns (a 10-class output layer) and both operands are contiguous along the
//! sum. The general GEMM packs both operands into panels and pads the partial ones; with
//! so few columns that costs more than the arithmetic (the MLP's logits, `[1024][256]` by
//! `[256][10]`: 130–143 µs here against 154–232 µs through the `gemm` crates). One
//! register-tiled kernel, AVX2 + FMA, chosen at run time, [`along`]: vectorised along
//! the sum, up to 2×6 dot products at once, each a vector of partial sums added up at
//! the end. (A sibling vectorised along `C`'s rows, for few rows or few summed terms,
//! lost to the `gemm` crates' AVX-512 kernels on a Zen 4: the MLP's `δᵀ·h` 250–290 →
//! 110 µs, GMM's 16×16 products summed over 10 000 points 17–21 → 13 ms per batch;
//! short.rs now builds such products a row band at a time, in registers.)
//!
//! [`gemm`] returns false for any other layout or CPU, and the caller runs the general GEMM.
//! Results differ from it in the last bits, as blocked sums do.

use crate::packed::Product;
use crate::simd::Lanes;
#[cfg(target_arch = "x86_64")]
use crate::simd::{avx2_lanes, has_avx2_fma, Vector};

/// The largest thin side.
pub(crate) const THIN: usize = 16;

/// The fewest vectors in a sum that [`along`] takes: each of its dot products ends in a
/// horizontal sum of a vector, as dear as several steps (GMM's 16×16 `f64` products,
/// 4 vectors long, ran 40 % slower than the general GEMM's).
const ALONG_MIN: usize = 16;

/// `C = A·B`, or `C += A·B` when `accumulate`, if a thin kernel applies; false (nothing
/// written) otherwise.
///
/// # Safety
/// As [`crate::packed`]'s `Element::gemm`: the pointers and steps address `m×k`, `k×p` and
/// `m×p` elements inside their arrays (`C`'s columns contiguous), and `C` overlaps
/// neither operand.
pub(crate) unsafe fn gemm<T: Lanes>(op: &Product<T>) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if op.m == 0 || op.p == 0 || !has_avx2_fma() {
            return false;
        }
        if op.p <= THIN && op.csa == 1 && op.rsb == 1 && op.k >= ALONG_MIN * avx2_lanes::<T>() {
            // SAFETY: the CPU has AVX2 and FMA; the rest is the caller's contract.
            unsafe { x86::along_all(op) };
            return true;
        }
        false
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = op;
        false
    }
}

/// `along` one tile: the `R×S` dot products of rows `i..i+R` of A with columns `j..j+S`
/// of B, into C.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn along<T: Lanes, V: Vector<T>, const R: usize, const S: usize>(
    op: &Product<T>,
    i: usize,
    j: usize,
) {
    // SAFETY (whole body): rows i..i+R of A (k contiguous elements each), columns j..j+S
    // of B (k contiguous elements each) and those elements of C are inside their arrays.
    unsafe {
        let a = op.a.offset(i as isize * op.rsa);
        let b = op.b.offset(j as isize * op.csb);
        // acc[s][r]: the dot product of row r of the tile with its column s.
        let mut acc = [[V::zero(); R]; S];
        let mut step = |l: usize, w: usize| {
            let mut av = [V::zero(); R];
            for (r, x) in av.iter_mut().enumerate() {
                *x = V::load(a.offset(r as isize * op.rsa).add(l), w);
            }
            for (s, col) in acc.iter_mut().enumerate() {
                let bv = V::load(b.offset(s as isize * op.csb).add(l), w);
                for (x, ar) in col.iter_mut().zip(av) {
                    *x = V::fma(ar, bv, *x);
                }
            }
        };
        let mut l = 0;
        while l + V::LANES <= op.k {
            step(l, V::LANES);
            l += V::LANES;
        }
        if l < op.k {
            step(l, op.k - l);
        }
        for (s, col) in acc.iter().enumerate() {
            for (r, x) in col.iter().enumerate() {
                let c = op.c.offset((i + r) as isize * op.rsc).add(j + s);
                let t = x.sum();
                *c = if op.accumulate { *c + t } else { t };
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{along, Lanes, Product};

    /// The whole of `C` by `along` tiles: pairs of rows, each through the columns in
    /// groups of up to 6.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn along_all<T: Lanes>(op: &Product<T>) {
        let (m, p) = (op.m, op.p);
        let mut i = 0;
        while i < m {
            let rows = (m - i).min(2);
            let mut j = 0;
            while j < p {
                let cols = (p - j).min(6);
                // SAFETY: the tile is inside C.
                unsafe {
                    if rows == 2 {
                        along_cols::<T, 2>(op, cols, i, j)
                    } else {
                        along_cols::<T, 1>(op, cols, i, j)
                    }
                }
                j += cols;
            }
            i += rows;
        }
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn along_cols<T: Lanes, const R: usize>(
        op: &Product<T>,
        cols: usize,
        i: usize,
        j: usize,
    ) {
        // SAFETY: the caller's tile; AVX2 and FMA are enabled for the 256-bit register.
        unsafe {
            match cols {
                6 => along::<T, T::Avx2, R, 6>(op, i, j),
                5 => along::<T, T::Avx2, R, 5>(op, i, j),
                4 => along::<T, T::Avx2, R, 4>(op, i, j),
                3 => along::<T, T::Avx2, R, 3>(op, i, j),
                2 => along::<T, T::Avx2, R, 2>(op, i, j),
                _ => along::<T, T::Avx2, R, 1>(op, i, j),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{gemm, Lanes, THIN};
    use crate::packed::Product;
    use crate::simd::{avx2_lanes, has_avx2_fma};

    /// `C` for `m×k` times `k×p` with the given steps, by the definition (in `f64`).
    #[allow(clippy::too_many_arguments)]
    fn naive<T: Copy + Into<f64>>(
        m: usize,
        k: usize,
        p: usize,
        a: &[T],
        (rsa, csa): (usize, usize),
        b: &[T],
        (rsb, csb): (usize, usize),
    ) -> Vec<f64> {
        let mut c = vec![0.0; m * p];
        for i in 0..m {
            for j in 0..p {
                c[i * p + j] = (0..k)
                    .map(|l| a[i * rsa + l * csa].into() * b[l * rsb + j * csb].into())
                    .sum();
            }
        }
        c
    }

    /// Every layout and shape the kernel takes, and some it must refuse, against the
    /// definition: row counts across the 2-row tiles, column counts across the 6-column
    /// ones, sums shorter than a vector and with a tail, both transpositions of each
    /// operand, and accumulation into C.
    fn check<T: Lanes + Into<f64> + From<i8> + std::fmt::Debug>(tol: f64) {
        let mut taken = 0;
        let val = |s: usize| T::from(((s * 7919) % 17) as i8 - 8);
        for &(m, k, p) in &[
            (1, 1, 8),
            (7, 3, 19),
            (13, 10, 256),
            (10, 300, 33),
            (9, 200, 12),
            (6, 16, 16),
            (37, 45, 10),
            (4, 5, 3),
            (33, 257, 16),
            (2, 100, 1),
            (20, 20, 20),
        ] {
            for a_t in [false, true] {
                for b_t in [false, true] {
                    let a: Vec<T> = (0..m * k).map(val).collect();
                    let b: Vec<T> = (0..k * p).map(|s| val(s + 3)).collect();
                    let sa = if a_t { (1, m) } else { (k, 1) };
                    let sb = if b_t { (1, k) } else { (p, 1) };
                    let want = naive(m, k, p, &a, sa, &b, sb);
                    for accumulate in [false, true] {
                        let mut c: Vec<T> = (0..m * p).map(|s| val(s + 11)).collect();
                        let before: Vec<f64> = c.iter().map(|&x| x.into()).collect();
                        let sai = (sa.0 as isize, sa.1 as isize);
                        let sbi = (sb.0 as isize, sb.1 as isize);
                        // SAFETY: the steps address m×k, k×p and m×p elements of the
                        // vectors, and C is its own vector.
                        let done = unsafe {
                            gemm(&Product::new(
                                m,
                                k,
                                p,
                                a.as_ptr(),
                                sai,
                                b.as_ptr(),
                                sbi,
                                c.as_mut_ptr(),
                                p as isize,
                                accumulate,
                            ))
                        };
                        // The kernel applies to few columns, with rows of A and columns
                        // of B contiguous and long enough.
                        let along = p <= THIN
                            && sa.1 == 1
                            && sb.0 == 1
                            && k >= super::ALONG_MIN * avx2_lanes::<T>();
                        assert_eq!(
                            done,
                            has_avx2_fma() && along,
                            "{m}×{k}×{p} a_t {a_t} b_t {b_t}"
                        );
                        if !done {
                            assert_eq!(c.iter().map(|&x| x.into()).collect::<Vec<f64>>(), before);
                            continue;
                        }
                        taken += 1;
                        for s in 0..m * p {
                            let w = want[s] + if accumulate { before[s] } else { 0.0 };
                            let got: f64 = c[s].into();
                            assert!((got - w).abs() <= tol * (1.0 + w.abs()), "{m}×{k}×{p} a_t {a_t} b_t {b_t} acc {accumulate}: C[{s}] = {got}, want {w}");
                        }
                    }
                }
            }
        }
        if has_avx2_fma() {
            assert!(taken > 0);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// Random shapes, transpositions and padded rows: where a kernel takes the product,
        /// C is the definition and the padding of C's rows (and the guard after it) is
        /// untouched; where none does, nothing is written.
        #[test]
        fn thin_products_write_exactly_c(
            m in 1usize..24, k in 1usize..160, p in 1usize..24,
            a_t: bool, b_t: bool, accumulate: bool,
            pads in (0usize..3, 0usize..3, 0usize..3),
        ) {
            let val = |s: usize| ((s * 7919) % 17) as f32 - 8.0;
            let (pa, pb, pc) = pads;
            // Row-major with padded rows, or transposed (columns padded).
            let (sa, a_len) = if a_t { ((1, m + pa), k * (m + pa)) } else { ((k + pa, 1), m * (k + pa)) };
            let (sb, b_len) = if b_t { ((1, k + pb), p * (k + pb)) } else { ((p + pb, 1), k * (p + pb)) };
            let a: Vec<f32> = (0..a_len).map(val).collect();
            let b: Vec<f32> = (0..b_len).map(|s| val(s + 5)).collect();
            let rsc = p + pc;
            let guard = 8;
            let mut c: Vec<f32> = (0..m * rsc + guard).map(|s| val(s + 9)).collect();
            let before = c.clone();
            let want = naive(m, k, p, &a, sa, &b, sb);
            // SAFETY: the steps address m×k, k×p and m×p elements of the vectors.
            let done = unsafe {
                gemm(&Product::new(m, k, p, a.as_ptr(), (sa.0 as isize, sa.1 as isize), b.as_ptr(),
                     (sb.0 as isize, sb.1 as isize), c.as_mut_ptr(), rsc as isize, accumulate))
            };
            for (s, (&got, &old)) in c.iter().zip(&before).enumerate() {
                let (i, j) = (s / rsc, s % rsc);
                let inside = i < m && j < p;
                let expect = if done && inside {
                    want[i * p + j] as f32 + if accumulate { old } else { 0.0 }
                } else {
                    old
                };
                proptest::prop_assert_eq!(got, expect, "C[{}] ({}, {}), done {}", s, i, j, done);
            }
        }
    }

    #[test]
    fn thin_products_match_the_definition() {
        // Small integers: every product and partial sum is exact in both types.
        check::<f32>(0.0);
        check::<f64>(0.0);
    }
}
