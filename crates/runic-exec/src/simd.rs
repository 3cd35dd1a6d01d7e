//! The SIMD registers of the product kernels ([`crate::thin`], [`crate::short`]): one
//! trait, [`Vector`], over the x86 register types, so that a kernel is written once,
//! generic over its register, and compiled for each instruction set by calling it from a
//! function with that target feature enabled (AVX2 + FMA: 256-bit registers; AVX-512F:
//! 512-bit). The methods are `#[inline(always)]`: inlined there, their intrinsics become
//! that instruction set's instructions.

/// The element types of the product kernels, with their register in each instruction set.
pub(crate) trait Lanes: Copy + std::ops::Add<Output = Self> {
    /// A 256-bit register of them (AVX2 + FMA).
    #[cfg(target_arch = "x86_64")]
    type Avx2: Vector<Self>;
    /// A 512-bit register of them (AVX-512F).
    #[cfg(target_arch = "x86_64")]
    type Avx512: Vector<Self>;
}

#[cfg(target_arch = "x86_64")]
impl Lanes for f32 {
    type Avx2 = std::arch::x86_64::__m256;
    type Avx512 = std::arch::x86_64::__m512;
}

#[cfg(target_arch = "x86_64")]
impl Lanes for f64 {
    type Avx2 = std::arch::x86_64::__m256d;
    type Avx512 = std::arch::x86_64::__m512d;
}

#[cfg(not(target_arch = "x86_64"))]
impl Lanes for f32 {}

#[cfg(not(target_arch = "x86_64"))]
impl Lanes for f64 {}

/// Elements of `T` in a 256-bit register (1 where there are no x86 kernels).
pub(crate) fn avx2_lanes<T: Lanes>() -> usize {
    #[cfg(target_arch = "x86_64")]
    return <T::Avx2 as Vector<T>>::LANES;
    #[cfg(not(target_arch = "x86_64"))]
    return 1;
}

/// Whether the CPU runs the 256-bit kernels.
pub(crate) fn has_avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma");
    #[cfg(not(target_arch = "x86_64"))]
    return false;
}

/// Whether the CPU runs the 512-bit kernels.
pub(crate) fn has_avx512f() -> bool {
    #[cfg(target_arch = "x86_64")]
    return std::is_x86_feature_detected!("avx512f");
    #[cfg(not(target_arch = "x86_64"))]
    return false;
}

/// A register of [`Vector::LANES`] elements of `T`.
///
/// # Safety
/// Every method is an instruction of the register's instruction set: call them only from
/// code compiled with that feature enabled, which runs only where the CPU has it.
#[cfg(target_arch = "x86_64")]
pub(crate) trait Vector<T>: Copy {
    const LANES: usize;
    /// All lanes zero.
    unsafe fn zero() -> Self;
    /// `x` in every lane.
    unsafe fn splat(x: T) -> Self;
    /// The first `n` lanes from `p` (all when `n == LANES`), the others zero; memory
    /// after the `n` elements is not read.
    unsafe fn load(p: *const T, n: usize) -> Self;
    /// The first `n` lanes to `p`; the memory after them untouched.
    unsafe fn store(self, p: *mut T, n: usize);
    /// `a·b + c` lane by lane, rounded once.
    unsafe fn fma(a: Self, b: Self, c: Self) -> Self;
    /// `a + b` lane by lane.
    unsafe fn add(a: Self, b: Self) -> Self;
    /// The sum of the lanes.
    unsafe fn sum(self) -> T;
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::Vector;
    use std::arch::x86_64::*;

    /// Lanes `0..n` set (their sign bits), as 32-bit lanes.
    #[inline(always)]
    unsafe fn mask32(n: usize) -> __m256i {
        // SAFETY: register arithmetic (AVX2 is enabled where this is inlined).
        unsafe {
            _mm256_cmpgt_epi32(
                _mm256_set1_epi32(n as i32),
                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
            )
        }
    }

    /// Lanes `0..n` set, as 64-bit lanes.
    #[inline(always)]
    unsafe fn mask64(n: usize) -> __m256i {
        // SAFETY: as above.
        unsafe { _mm256_cmpgt_epi64(_mm256_set1_epi64x(n as i64), _mm256_setr_epi64x(0, 1, 2, 3)) }
    }

    /// The mask of lanes `0..n` of an AVX-512 register.
    #[inline(always)]
    fn first(n: usize) -> u16 {
        if n >= 16 {
            u16::MAX
        } else {
            (1u16 << n) - 1
        }
    }

    // In each method, the caller's `n` lanes at `p` are readable (load) or writable
    // (store); masked lanes are neither read nor written.

    impl Vector<f32> for __m256 {
        const LANES: usize = 8;
        #[inline(always)]
        unsafe fn zero() -> Self {
            unsafe { _mm256_setzero_ps() }
        }
        #[inline(always)]
        unsafe fn splat(x: f32) -> Self {
            unsafe { _mm256_set1_ps(x) }
        }
        #[inline(always)]
        unsafe fn load(p: *const f32, n: usize) -> Self {
            unsafe {
                if n == 8 {
                    _mm256_loadu_ps(p)
                } else {
                    _mm256_maskload_ps(p, mask32(n))
                }
            }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f32, n: usize) {
            unsafe {
                if n == 8 {
                    _mm256_storeu_ps(p, self)
                } else {
                    _mm256_maskstore_ps(p, mask32(n), self)
                }
            }
        }
        #[inline(always)]
        unsafe fn fma(a: Self, b: Self, c: Self) -> Self {
            unsafe { _mm256_fmadd_ps(a, b, c) }
        }
        #[inline(always)]
        unsafe fn add(a: Self, b: Self) -> Self {
            unsafe { _mm256_add_ps(a, b) }
        }
        #[inline(always)]
        unsafe fn sum(self) -> f32 {
            unsafe {
                let v = self;
                let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
                let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
                let s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
                _mm_cvtss_f32(s)
            }
        }
    }

    impl Vector<f64> for __m256d {
        const LANES: usize = 4;
        #[inline(always)]
        unsafe fn zero() -> Self {
            unsafe { _mm256_setzero_pd() }
        }
        #[inline(always)]
        unsafe fn splat(x: f64) -> Self {
            unsafe { _mm256_set1_pd(x) }
        }
        #[inline(always)]
        unsafe fn load(p: *const f64, n: usize) -> Self {
            unsafe {
                if n == 4 {
                    _mm256_loadu_pd(p)
                } else {
                    _mm256_maskload_pd(p, mask64(n))
                }
            }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f64, n: usize) {
            unsafe {
                if n == 4 {
                    _mm256_storeu_pd(p, self)
                } else {
                    _mm256_maskstore_pd(p, mask64(n), self)
                }
            }
        }
        #[inline(always)]
        unsafe fn fma(a: Self, b: Self, c: Self) -> Self {
            unsafe { _mm256_fmadd_pd(a, b, c) }
        }
        #[inline(always)]
        unsafe fn add(a: Self, b: Self) -> Self {
            unsafe { _mm256_add_pd(a, b) }
        }
        #[inline(always)]
        unsafe fn sum(self) -> f64 {
            unsafe {
                let v = self;
                let s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
                let s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
                _mm_cvtsd_f64(s)
            }
        }
    }

    impl Vector<f32> for __m512 {
        const LANES: usize = 16;
        #[inline(always)]
        unsafe fn zero() -> Self {
            unsafe { _mm512_setzero_ps() }
        }
        #[inline(always)]
        unsafe fn splat(x: f32) -> Self {
            unsafe { _mm512_set1_ps(x) }
        }
        #[inline(always)]
        unsafe fn load(p: *const f32, n: usize) -> Self {
            unsafe {
                if n == 16 {
                    _mm512_loadu_ps(p)
                } else {
                    _mm512_maskz_loadu_ps(first(n), p)
                }
            }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f32, n: usize) {
            unsafe {
                if n == 16 {
                    _mm512_storeu_ps(p, self)
                } else {
                    _mm512_mask_storeu_ps(p, first(n), self)
                }
            }
        }
        #[inline(always)]
        unsafe fn fma(a: Self, b: Self, c: Self) -> Self {
            unsafe { _mm512_fmadd_ps(a, b, c) }
        }
        #[inline(always)]
        unsafe fn add(a: Self, b: Self) -> Self {
            unsafe { _mm512_add_ps(a, b) }
        }
        #[inline(always)]
        unsafe fn sum(self) -> f32 {
            unsafe { _mm512_reduce_add_ps(self) }
        }
    }

    impl Vector<f64> for __m512d {
        const LANES: usize = 8;
        #[inline(always)]
        unsafe fn zero() -> Self {
            unsafe { _mm512_setzero_pd() }
        }
        #[inline(always)]
        unsafe fn splat(x: f64) -> Self {
            unsafe { _mm512_set1_pd(x) }
        }
        #[inline(always)]
        unsafe fn load(p: *const f64, n: usize) -> Self {
            unsafe {
                if n == 8 {
                    _mm512_loadu_pd(p)
                } else {
                    _mm512_maskz_loadu_pd(first(n) as u8, p)
                }
            }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f64, n: usize) {
            unsafe {
                if n == 8 {
                    _mm512_storeu_pd(p, self)
                } else {
                    _mm512_mask_storeu_pd(p, first(n) as u8, self)
                }
            }
        }
        #[inline(always)]
        unsafe fn fma(a: Self, b: Self, c: Self) -> Self {
            unsafe { _mm512_fmadd_pd(a, b, c) }
        }
        #[inline(always)]
        unsafe fn add(a: Self, b: Self) -> Self {
            unsafe { _mm512_add_pd(a, b) }
        }
        #[inline(always)]
        unsafe fn sum(self) -> f64 {
            unsafe { _mm512_reduce_add_pd(self) }
        }
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::{has_avx2_fma, has_avx512f, Lanes, Vector};

    /// Every method of `V` on every partial width: a masked load reads `n` elements and
    /// zeroes the rest, a masked store writes `n` and leaves the guard after them, and the
    /// arithmetic is lane by lane (small integers: exact).
    #[inline(always)]
    unsafe fn exercise<T, V>()
    where
        T: Lanes + From<i16> + PartialEq + std::fmt::Debug,
        V: Vector<T>,
    {
        let lanes = V::LANES;
        let src: Vec<T> = (0..lanes).map(|i| T::from(i as i16 + 1)).collect();
        for n in 0..=lanes {
            // SAFETY: n ≤ LANES elements of src are read, of out written; the caller runs
            // this with V's instruction set enabled.
            unsafe {
                let v = V::load(src.as_ptr(), n);
                let mut out = vec![T::from(-9); lanes + 1];
                V::store(v, out.as_mut_ptr(), lanes);
                for (i, x) in out.iter().enumerate().take(lanes) {
                    let want = if i < n { src[i] } else { T::from(0) };
                    assert_eq!(*x, want, "load of {n}: lane {i}");
                }
                assert_eq!(
                    out[lanes],
                    T::from(-9),
                    "store of all lanes wrote past them"
                );
                let mut part = vec![T::from(-9); lanes + 1];
                V::store(V::splat(T::from(5)), part.as_mut_ptr(), n);
                for (i, x) in part.iter().enumerate() {
                    let want = T::from(if i < n { 5 } else { -9 });
                    assert_eq!(*x, want, "store of {n}: lane {i}");
                }
            }
        }
        // SAFETY: as above.
        unsafe {
            let a = V::load(src.as_ptr(), lanes);
            let r = V::add(
                V::fma(a, V::splat(T::from(2)), V::splat(T::from(1))),
                V::zero(),
            );
            let mut out = vec![T::from(0); lanes];
            V::store(r, out.as_mut_ptr(), lanes);
            let want: Vec<T> = (0..lanes)
                .map(|i| T::from(2 * (i as i16 + 1) + 1))
                .collect();
            assert_eq!(out, want);
            // 1 + 2 + … + lanes.
            let total = V::sum(a);
            assert_eq!(total, T::from((lanes * (lanes + 1) / 2) as i16));
        }
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn exercise_avx2() {
        // SAFETY: AVX2 and FMA are enabled here.
        unsafe {
            exercise::<f32, <f32 as Lanes>::Avx2>();
            exercise::<f64, <f64 as Lanes>::Avx2>();
        }
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn exercise_avx512() {
        // SAFETY: AVX-512F is enabled here.
        unsafe {
            exercise::<f32, <f32 as Lanes>::Avx512>();
            exercise::<f64, <f64 as Lanes>::Avx512>();
        }
    }

    #[test]
    fn registers_load_store_and_add_lane_by_lane() {
        if has_avx2_fma() {
            // SAFETY: the CPU has AVX2 and FMA.
            unsafe { exercise_avx2() };
        }
        if has_avx512f() {
            // SAFETY: the CPU has AVX-512F.
            unsafe { exercise_avx512() };
        }
    }
}
