//! runic-jit: native code for the compiled path, with Cranelift.
//!
//! This first slice compiles *scalar* lambdas — scalar parameters and results, a body of
//! straight-line scalar operations (`BasicOp::SubExp/BinOp/UnOp/TernOp/Convert`) and `if`s
//! whose branches are themselves such bodies — into two kinds of element-loop kernels:
//!
//! - [`MapKernel`]: `map lam xs ys …` over elements `start..end`, each parameter read from its
//!   input column, each result written to its output column;
//! - [`FoldKernel`]: `reduce op ne (map pre xs …)` folded over elements `start..end` into an
//!   accumulator, so that chunks can be folded in parallel and combined in order.
//!
//! Semantics are `runic_prim`'s, bit for bit: native instructions are used where they give
//! exactly its results (integer wrap-around, floor division and modulo, the NaN rules of
//! `min`/`max`, every conversion, `f32` arithmetic rounded once, …); everything else
//! (transcendental functions, `**`, `f16`, rare conversions) calls the same `runic_prim`
//! functions through the shims of [`shims`]. A kernel returns 0, or a nonzero failure code
//! when an operation fails (division by zero, negative exponent), so that the caller can redo
//! the elements on its slow path and report the error with the exact message.
//!
//! Map kernels also take rows of their inputs, index them and free arrays, and run nested
//! SOACs as sequential loops (`nest.rs`: inner reductions, `for`/`while` loops with scalar
//! parameters; `rows.rs`: nested maps, `iota`, `replicate` and array literals into
//! per-call scratch buffers or straight into the output's rows, `if`s with array results;
//! `columns.rs`: nested maps whose elements are reductions down columns, loops swapped).
//!
//! Flat maps, nested maps over contiguous rows and sums of `f32`/`f64` whose lambdas use
//! only vectorisable operations run in SIMD lanes first (`simd/`; `RUNIC_SIMD=0` turns
//! it off); `exp`, `log` and `tanh` there are polynomials within a few ulp of std's. Maps
//! folding or mapping short rows (a row's maximum, log-sum-exp or softmax over ten
//! classes) run a row per lane (`simd/rows/`).
//!
//! Anything else makes [`compile_map`]/[`compile_fold`] return `Err` with the reason.
//!
//! `RUNIC_JIT_DUMP=1` prints every kernel's Cranelift IR and machine code to stderr as it is
//! compiled (for developers tuning the generated code).

mod columns;
mod folds;
mod gen;
mod hist;
mod inplace;
mod kernels;
mod nest;
mod rows;
mod scalar;
mod simd;

pub use nest::FAIL_INDEX;

/// Whether a nested map's lambda runs as a column reduction with its loops swapped
/// (`columns.rs`), for the executor's explanations.
pub fn is_column_reduction(lam: &runic_ir::Lambda) -> bool {
    columns::column(lam).is_some()
}
pub mod shims;

pub use shims::{from_raw, to_raw};

use cranelift_jit::JITModule;
use runic_ir::{Lambda, PrimType, VName};

/// `fn(start, end, ins, outs) -> code`: see [`MapKernel::run`].
pub type MapFn = unsafe extern "C" fn(i64, i64, *const *const u8, *const *mut u8) -> i32;
/// `fn(start, end, ins, acc, outs) -> code`: see [`FoldKernel::run`] and [`ScanKernel::run`].
pub type FoldFn = unsafe extern "C" fn(i64, i64, *const *const u8, *mut u64, *const *mut u8) -> i32;

/// The executable memory of a compiled kernel; freed when the kernel is dropped.
struct Code(Option<JITModule>);

// SAFETY: after `finalize_definitions` the module is never used again except to free its
// memory on drop; the code it holds is immutable and reentrant (it keeps no state between
// calls), so calling it from several threads at once is sound.
unsafe impl Send for Code {}
unsafe impl Sync for Code {}

impl Drop for Code {
    fn drop(&mut self) {
        if let Some(m) = self.0.take() {
            // SAFETY: the only pointers into this memory are the kernel's function pointer,
            // which is dropped together with this `Code`.
            unsafe { m.free_memory() };
        }
    }
}

/// The type of a variable a lambda uses but does not bind.
#[derive(Clone, Debug, PartialEq)]
pub enum VarType {
    Scalar(PrimType),
    /// Element type and rank.
    Array(PrimType, usize),
    /// An accumulator of one array (element type, rank) updated with its operator, whose
    /// scalar lambda has no free variables (`None`: updates overwrite).
    Acc(PrimType, usize, Option<Lambda>),
    /// An `i64` vector that is `iota n` (element `j` is `j`), bound outside the kernel:
    /// passed in as an array, but the loops that map or reduce over it use their counter
    /// (a hoisted `iota` costs no loads, and a reduction down columns over it runs in
    /// SIMD lanes as one the kernel made does).
    Iota,
}

/// A compiled `map` body. Columns hold elements in their natural size (`bool`: one byte, 0
/// or 1; `f16`: its 16 bits).
pub struct MapKernel {
    f: MapFn,
    /// Element type of each input (one per lambda parameter).
    pub params: Vec<PrimType>,
    /// Rank of each input: 1 for a column of scalars, more when the lambda takes rows.
    pub ranks: Vec<usize>,
    /// Element type of each output (one per lambda result).
    pub results: Vec<PrimType>,
    /// Rank of each output: 1 for a column of scalars, more when the lambda returns arrays
    /// (each written into its row of the output).
    pub result_ranks: Vec<usize>,
    /// The lambda's free scalar variables, passed after the input columns.
    pub frees: Vec<(VName, PrimType)>,
    /// The lambda's free arrays (element type, rank), passed after the free scalars.
    pub free_arrays: Vec<(VName, PrimType, usize)>,
    /// The lambda's free accumulators (element type, rank of the array they update),
    /// passed after the free arrays: a pointer to the first element of each array.
    pub accs: Vec<(VName, PrimType, usize)>,
    /// Lanes per vector of the SIMD loop that runs the body first (0: scalar code only;
    /// see `simd/`).
    pub simd_lanes: usize,
    /// Each element is a reduction down a column, run with the loops swapped
    /// (`columns.rs`).
    pub column_reduction: bool,
    /// The column reduction's steps run in SIMD lanes (when, at run time, its elements are
    /// consecutive and the rows it reads are in bounds; otherwise its scalar loops do).
    pub column_lanes: bool,
    /// Its elements are short rows folded and mapped a row per SIMD lane (`simd/rows/`;
    /// when, at run time, every row is at most 32 long).
    pub row_lanes: bool,
    /// Which of the lambda's parameters are the element's index (their input an `iota`
    /// the caller need not build): bound to the kernel's counter, they have no input
    /// pointer, and `params`/`ranks` describe the other parameters only.
    pub index_params: Vec<bool>,
    _code: Code,
}

impl MapKernel {
    /// Run the body on elements `start..end`.
    ///
    /// `ins` holds, for each parameter, a pointer to the first element of its input, then
    /// for each free scalar a pointer to its value, for each free array and then each
    /// accumulator a pointer to its first element, and last a pointer to the dimensions
    /// (`i64`) of every input, then of every free array, of every accumulator's array, and
    /// of every output (all of its `result_ranks` dimensions); `outs` a pointer to the
    /// first element of each output. Accumulator updates are applied to their arrays in
    /// element order (an index out of range is skipped).
    /// Returns 0, or a failure code: then some elements of the range may have been written
    /// and others not.
    ///
    /// # Safety
    /// Every input must hold at least `end` rows of its type and of the dimensions given,
    /// free arrays the elements their dimensions say, every free-variable pointer must
    /// point to a value of its type, and no other thread may access the elements
    /// `start..end` of the output columns during the call.
    pub unsafe fn run(&self, start: usize, end: usize, ins: &[*const u8], outs: &[*mut u8]) -> i32 {
        assert_eq!(
            ins.len(),
            self.params.len() + self.frees.len() + self.free_arrays.len() + self.accs.len() + 1
        );
        assert_eq!(outs.len(), self.results.len());
        // The scratch buffers of this call, after the caller's pointers.
        let mut arena = shims::Scratch::default();
        let mut all = ins.to_vec();
        all.push(&mut arena as *mut shims::Scratch as *const u8);
        (self.f)(start as i64, end as i64, all.as_ptr(), outs.as_ptr())
    }
}

/// A compiled fold: `acc = op(acc, pre(x))` for every element `x` in order.
pub struct FoldKernel {
    f: FoldFn,
    /// Element type of each input.
    pub elems: Vec<PrimType>,
    /// Rank of each input: 1 for a column of scalars, more when `pre` takes rows.
    pub ranks: Vec<usize>,
    /// Type (the element type of an array) of each accumulator value.
    pub accs: Vec<PrimType>,
    /// Rank of each accumulator value: 0 for a scalar, whose raw word the accumulator
    /// holds; more for an array, whose dense buffer the accumulator word points to (its
    /// dimensions follow those of the free arrays in `ins`).
    pub acc_ranks: Vec<usize>,
    /// The free scalar variables of `pre` and `op`, passed after the inputs.
    pub frees: Vec<(VName, PrimType)>,
    /// The free arrays of `pre` and `op` (element type, rank), passed after the scalars.
    pub free_arrays: Vec<(VName, PrimType, usize)>,
    /// Which element parameters are the element's index, as [`MapKernel::index_params`]:
    /// no input for them, `elems`/`ranks` describe the others.
    pub index_params: Vec<bool>,
    _code: Code,
}

impl FoldKernel {
    /// Fold elements `start..end` into `acc` (one raw word per accumulator value, see
    /// [`to_raw`]). `ins` as for [`MapKernel::run`] (inputs, free scalars, free arrays,
    /// then the dimensions of the inputs and free arrays). Returns 0, or a failure code
    /// (then `acc` is unchanged).
    ///
    /// # Safety
    /// As for [`MapKernel::run`]: inputs of at least `end` rows of their types and
    /// dimensions, valid free-variable pointers.
    pub unsafe fn run(&self, start: usize, end: usize, ins: &[*const u8], acc: &mut [u64]) -> i32 {
        // SAFETY: the caller's contract; a fold writes no outputs.
        unsafe { self.call(start, end, ins, acc, std::ptr::null()) }
    }

    /// The compiled function on `ins` (plus a scratch arena), `acc` and `outs`.
    unsafe fn call(
        &self,
        start: usize,
        end: usize,
        ins: &[*const u8],
        acc: &mut [u64],
        outs: *const *mut u8,
    ) -> i32 {
        let n = self.elems.len() + self.frees.len() + self.free_arrays.len() + 1;
        assert_eq!(ins.len(), n);
        assert_eq!(acc.len(), self.accs.len());
        let mut arena = shims::Scratch::default();
        let mut all = ins.to_vec();
        all.push(&mut arena as *mut shims::Scratch as *const u8);
        (self.f)(
            start as i64,
            end as i64,
            all.as_ptr(),
            acc.as_mut_ptr(),
            outs,
        )
    }
}

/// A compiled inclusive scan: `acc = op(acc, pre(x))` for every element `x` in order,
/// every intermediate `acc` written to the outputs at the element's position. Its inputs,
/// accumulators and free variables are described as a fold's (the fields of
/// [`FoldKernel`], reached through `Deref`); the output of an array accumulator holds a
/// row per element.
pub struct ScanKernel(pub(crate) FoldKernel);

impl std::ops::Deref for ScanKernel {
    type Target = FoldKernel;
    fn deref(&self) -> &FoldKernel {
        &self.0
    }
}

impl ScanKernel {
    /// Scan elements `start..end` from `acc` (raw words, see [`to_raw`]) into the outputs
    /// (one column per accumulator value, written at `start..end`); `acc` ends as the last
    /// value. Returns 0, or a failure code (then some outputs may have been written).
    ///
    /// # Safety
    /// As for [`FoldKernel::run`] (the same `ins`); every output holds at least `end` elements of its type
    /// and no other thread accesses its elements `start..end` during the call.
    pub unsafe fn run(
        &self,
        start: usize,
        end: usize,
        ins: &[*const u8],
        acc: &mut [u64],
        outs: &[*mut u8],
    ) -> i32 {
        assert_eq!(outs.len(), self.accs.len());
        // SAFETY: the caller's contract.
        unsafe { self.0.call(start, end, ins, acc, outs.as_ptr()) }
    }
}

/// A compiled `reduce_by_index`: `dest[b] = op(dest[b], v)` for the elements of a range
/// whose bin `b` falls into a range of bins, in input order.
pub struct HistKernel {
    f: MapFn,
    /// Element type of each index array (one per dimension of the destinations).
    pub index_types: Vec<PrimType>,
    /// Element type of each value array.
    pub vals: Vec<PrimType>,
    /// Rank of the rows of each destination (0: scalar bins); the value arrays' rows have
    /// the same. Their dimensions follow `lo` and `hi` in `ins`.
    pub row_ranks: Vec<usize>,
    /// Element type of each destination.
    pub dests: Vec<PrimType>,
    /// The operator's free scalar variables, passed after the value arrays.
    pub frees: Vec<(VName, PrimType)>,
    /// The operator's free arrays, passed after the free scalars.
    pub free_arrays: Vec<(VName, PrimType, usize)>,
    _code: Code,
}

impl HistKernel {
    /// Apply elements `start..end` whose flat bin is in `lo..hi` to the destinations,
    /// each of which points to the element of bin `lo`. `ins` as for [`MapKernel::run`]:
    /// the index arrays and value arrays (as inputs), free scalars, free arrays, then the
    /// dimensions: one per input, those of the free arrays, the number of bins of every
    /// dimension, then `lo` and `hi`. Returns 0, or a failure code (then some elements
    /// may have been applied).
    ///
    /// # Safety
    /// As for [`MapKernel::run`]: inputs of at least `end` elements, destinations of at
    /// least `hi - lo` elements used by no other thread during the call.
    pub unsafe fn run(
        &self,
        start: usize,
        end: usize,
        ins: &[*const u8],
        dests: &[*mut u8],
    ) -> i32 {
        let n = self.index_types.len() + self.vals.len();
        assert_eq!(ins.len(), n + self.frees.len() + self.free_arrays.len() + 1);
        assert_eq!(dests.len(), self.dests.len());
        let mut arena = shims::Scratch::default();
        let mut all = ins.to_vec();
        all.push(&mut arena as *mut shims::Scratch as *const u8);
        (self.f)(start as i64, end as i64, all.as_ptr(), dests.as_ptr())
    }
}

/// Compile the body of a `map`. Its parameters may be rows of the inputs, which its body
/// indexes and folds with inner reductions (see `nest.rs`). `free_type` gives the type of a
/// variable the lambda uses but does not bind (`None`: neither a scalar nor an array, so the
/// lambda is not compiled).
pub fn compile_map(
    lam: &Lambda,
    free_type: &dyn Fn(VName) -> Option<VarType>,
) -> Result<MapKernel, String> {
    kernels::compile_map(lam, &[], free_type)
}

/// [`compile_map`] of a map whose inputs marked in `index` are `iota`s (`index[k]` for
/// parameter `k`): an `i64` parameter among them is bound to the element's index, its
/// input not read (see [`MapKernel::index_params`]; a column reduction takes none).
pub fn compile_map_indexed(
    lam: &Lambda,
    index: &[bool],
    free_type: &dyn Fn(VName) -> Option<VarType>,
) -> Result<MapKernel, String> {
    kernels::compile_map(lam, index, free_type)
}

/// Compile `reduce_by_index` with the operator `op` (scalar destinations) whose index
/// arrays have the types `index_types`.
pub fn compile_hist(
    op: &Lambda,
    index_types: &[PrimType],
    free_type: &dyn Fn(VName) -> Option<VarType>,
) -> Result<HistKernel, String> {
    hist::compile_hist(op, index_types, free_type)
}

/// Compile `scatter` into one destination of scalars of type `elem` whose index arrays have
/// the types `index_types`: a [`HistKernel`] whose update overwrites.
pub fn compile_scatter(index_types: &[PrimType], elem: PrimType) -> Result<HistKernel, String> {
    hist::compile_scatter(index_types, elem)
}

/// Compile `scan op ne (map pre xs …)` (`pre` = `None`: the identity) into an inclusive
/// scan over elements.
pub fn compile_scan(
    pre: Option<&Lambda>,
    op: &Lambda,
    free_type: &dyn Fn(VName) -> Option<VarType>,
) -> Result<ScanKernel, String> {
    folds::compile_scan(pre, op, &[], free_type)
}

/// [`compile_scan`] whose inputs marked in `index` are `iota`s, as
/// [`compile_map_indexed`]'s (see [`FoldKernel::index_params`]).
pub fn compile_scan_indexed(
    pre: Option<&Lambda>,
    op: &Lambda,
    index: &[bool],
    free_type: &dyn Fn(VName) -> Option<VarType>,
) -> Result<ScanKernel, String> {
    folds::compile_scan(pre, op, index, free_type)
}

/// Compile `reduce op ne (map pre xs …)` (`pre` = `None`: the identity) into a fold over
/// elements. `pre` may take rows and index free arrays, as a map's lambda. A sum (`op` is
/// `+`) of `f32`/`f64` whose `pre` vectorises adds in SIMD lanes (reassociated, as the
/// language allows for a reduction's operator); [`compile_fold_in_order`] never does.
pub fn compile_fold(
    pre: Option<&Lambda>,
    op: &Lambda,
    free_type: &dyn Fn(VName) -> Option<VarType>,
) -> Result<FoldKernel, String> {
    folds::compile_fold(pre, op, &[], free_type, false)
}

/// [`compile_fold`] (or, `in_order`, [`compile_fold_in_order`]) whose inputs marked in
/// `index` are `iota`s, as [`compile_map_indexed`]'s (see [`FoldKernel::index_params`]).
pub fn compile_fold_indexed(
    pre: Option<&Lambda>,
    op: &Lambda,
    index: &[bool],
    free_type: &dyn Fn(VName) -> Option<VarType>,
    in_order: bool,
) -> Result<FoldKernel, String> {
    folds::compile_fold(pre, op, index, free_type, in_order)
}

/// [`compile_fold`] combining the elements strictly in order (the carries of a scan, which
/// must be those of the scan itself).
pub fn compile_fold_in_order(
    pre: Option<&Lambda>,
    op: &Lambda,
    free_type: &dyn Fn(VName) -> Option<VarType>,
) -> Result<FoldKernel, String> {
    folds::compile_fold(pre, op, &[], free_type, true)
}
