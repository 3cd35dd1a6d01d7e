//! The element types of products and their packed GEMM kernel: the `gemm` crates'
//! (`gemm-f32`, `gemm-f64`), AVX-512 where the CPU has it and AVX2 + FMA otherwise, chosen
//! on the first call. A product with few columns goes to [`crate::thin`]'s kernel first,
//! one with a short sum or few rows to [`crate::short`]'s.

/// The element types with a GEMM kernel.
pub(crate) trait Element:
    crate::simd::Lanes + Copy + Default + Send + Sync + std::ops::AddAssign + From<u8> + 'static
{
    /// The `gemm` crates' kernel for the type (chosen for the CPU on the first call).
    fn kernel() -> Kernel<Self>;

    /// `C = A·B`, or `C += A·B` when `accumulate` (`m×k` times `k×n`, with the given
    /// steps; `C`'s columns are contiguous): on a thin or short kernel when one applies,
    /// else packed.
    ///
    /// # Safety
    /// The pointers and steps must address `m×k`, `k×n` and `m×n` elements inside their
    /// arrays, and `C` must not overlap `A` or `B`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn gemm(
        m: usize,
        k: usize,
        n: usize,
        a: *const Self,
        a_steps: (isize, isize),
        b: *const Self,
        b_steps: (isize, isize),
        c: *mut Self,
        rsc: isize,
        accumulate: bool,
    ) {
        let op = Product::new(m, k, n, a, a_steps, b, b_steps, c, rsc, accumulate);
        // SAFETY (all three calls): the caller's contract is theirs.
        if unsafe { crate::thin::gemm(&op) || crate::short::gemm(&op) } {
            return;
        }
        unsafe { packed(Self::kernel(), &op) }
    }
}

/// One product for a kernel: `C = A·B`, or `C += A·B` when `accumulate` (`m×k` times
/// `k×p`), each operand by the steps of its rows and columns, `C`'s rows `rsc` apart and
/// its columns contiguous.
pub(crate) struct Product<T> {
    pub(crate) m: usize,
    pub(crate) k: usize,
    pub(crate) p: usize,
    pub(crate) a: *const T,
    pub(crate) rsa: isize,
    pub(crate) csa: isize,
    pub(crate) b: *const T,
    pub(crate) rsb: isize,
    pub(crate) csb: isize,
    pub(crate) c: *mut T,
    pub(crate) rsc: isize,
    pub(crate) accumulate: bool,
}

impl<T> Product<T> {
    /// The product of `m×k` `A` and `k×p` `B` into `C`, each matrix by its steps.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        m: usize,
        k: usize,
        p: usize,
        a: *const T,
        (rsa, csa): (isize, isize),
        b: *const T,
        (rsb, csb): (isize, isize),
        c: *mut T,
        rsc: isize,
        accumulate: bool,
    ) -> Product<T> {
        Product {
            m,
            k,
            p,
            a,
            rsa,
            csa,
            b,
            rsb,
            csb,
            c,
            rsc,
            accumulate,
        }
    }
}

impl Element for f32 {
    fn kernel() -> Kernel<f32> {
        gemm_f32::gemm::f32::get_gemm_fn()
    }
}

impl Element for f64 {
    fn kernel() -> Kernel<f64> {
        gemm_f64::gemm::f64::get_gemm_fn()
    }
}

/// The `gemm` crates' blocked kernel for one element type: `dst := α·dst + β·lhs·rhs`
/// (`dst` read only when asked), sizes `m, n, k`, each matrix given by its column and
/// row steps.
type Kernel<T> = unsafe fn(
    usize,
    usize,
    usize,
    *mut T,
    isize,
    isize,
    bool,
    *const T,
    isize,
    isize,
    *const T,
    isize,
    isize,
    T,
    T,
    bool,
    bool,
    bool,
    gemm_common::Parallelism,
);

/// `C = A·B` or `C += A·B` through the `gemm` crates' packed kernels, on this thread
/// (AVX-512 where the CPU has it: the MLP's products 40 % faster than `matrixmultiply`'s
/// AVX2 kernels). Their kernels want `C` by columns and ours is by rows, so they compute
/// `Cᵀ = Bᵀ·Aᵀ`, which is the same memory with the steps swapped.
///
/// # Safety
/// As [`Element::gemm`]; the steps must not be negative.
unsafe fn packed<T: Copy + From<u8>>(kernel: Kernel<T>, op: &Product<T>) {
    let one = T::from(1);
    let none = gemm_common::Parallelism::None;
    // SAFETY: the caller's contract: every step addresses elements inside the arrays.
    unsafe {
        kernel(
            op.p,
            op.m,
            op.k,
            op.c,
            op.rsc,
            1,
            op.accumulate,
            op.b,
            op.rsb,
            op.csb,
            op.a,
            op.rsa,
            op.csa,
            one,
            one,
            false,
            false,
            false,
            none,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::Element;

    /// The packed kernel on every layout the executor hands it: each operand by rows, by
    /// columns, or broadcast (step 0 along the summed index), `C` with a row step wider
    /// than its width, written and accumulated into; sizes past the kernels' blocks and
    /// thin ones, `f32` and `f64`.
    #[test]
    fn packed_products_match_a_naive_product() {
        fn check<T: Element + Into<f64> + From<u8>>() {
            for &(m, k, n) in &[(67, 300, 45), (5, 7, 3), (200, 33, 130), (1, 1, 1)] {
                let a: Vec<T> = (0..m * k).map(|x| T::from(((x * 7) % 11) as u8)).collect();
                let b: Vec<T> = (0..k * n).map(|x| T::from(((x * 5) % 13) as u8)).collect();
                let a_layouts = [(k as isize, 1), (1, m as isize), (k as isize, 0)];
                let b_layouts = [(n as isize, 1), (1, k as isize), (0, 1)];
                for (rsa, csa) in a_layouts {
                    for (rsb, csb) in b_layouts {
                        let at = |i: usize, l: usize| a[i * rsa as usize + l * csa as usize];
                        let bt = |l: usize, j: usize| b[l * rsb as usize + j * csb as usize];
                        let rsc = n + 3;
                        let mut c = vec![T::from(1); m * rsc];
                        for accumulate in [false, true] {
                            // SAFETY: every step addresses elements inside a, b and c.
                            unsafe {
                                T::gemm(
                                    m,
                                    k,
                                    n,
                                    a.as_ptr(),
                                    (rsa, csa),
                                    b.as_ptr(),
                                    (rsb, csb),
                                    c.as_mut_ptr(),
                                    rsc as isize,
                                    accumulate,
                                )
                            };
                            let times = if accumulate { 2.0 } else { 1.0 };
                            for i in 0..m {
                                for j in 0..n {
                                    let want: f64 =
                                        (0..k).map(|l| at(i, l).into() * bt(l, j).into()).sum();
                                    let got: f64 = c[i * rsc + j].into();
                                    assert_eq!(got, times * want, "{m}×{k}·{k}×{n} {i} {j}");
                                }
                                for j in n..rsc {
                                    assert_eq!(c[i * rsc + j].into(), 1.0, "padding");
                                }
                            }
                        }
                    }
                }
            }
        }
        check::<f32>();
        check::<f64>();
    }
}
