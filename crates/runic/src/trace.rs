//! Seed 000's tracing API at the library level: a function written as a Rust closure over
//! traced values becomes a compiled entry point, differentiated and run by the same pipeline
//! as a program's. The tracing itself is `runic-trace`'s; this module only compiles what it
//! records ([`Program::from_ir`]) and hands back the one entry point.
//!
//! ```
//! use runic::trace::{dot, ParamSpec, PrimType::F32};
//! // ∇ (x·x) = 2x, compiled once, called like any entry point.
//! let g = runic::grad(&[ParamSpec::array(F32, &["n"])], &[0], |a| dot(a[0], a[0]))?;
//! let x = ndarray::arr1(&[1.0f32, -2.0, 0.5]);
//! let dx = g.call((&x,))?.into_array::<f32, ndarray::Ix1>(0)?;
//! assert_eq!(dx, ndarray::arr1(&[2.0f32, -4.0, 1.0]));
//! # Ok::<(), runic::Error>(())
//! ```

pub use runic_trace::{
    constant, dot, iota, map2, map3, map_n, max, min, replicate, select, zip, Operand, ParamSpec,
    PrimType, TraceError, Traced, Tracer, Zip,
};

use crate::{Entry, Error, Program};

/// Compile a trace into its entry point.
fn compile(traced: Result<Traced, TraceError>) -> Result<Entry, Error> {
    let t = traced.map_err(|e| Error::Compile(format!("Error: in the traced function: {e}")))?;
    Program::from_ir(t.prog)?.entry(&t.entry)
}

/// The traced function itself: parameters as `params` describes, results as `f` returns.
pub fn trace(
    params: &[ParamSpec],
    f: impl FnOnce(&[Tracer]) -> Vec<Tracer>,
) -> Result<Entry, Error> {
    compile(runic_trace::trace(params, f))
}

/// The gradient of a scalar function with respect to the parameters `wrt`: one result per
/// parameter in `wrt`, in that order.
pub fn grad(
    params: &[ParamSpec],
    wrt: &[usize],
    f: impl FnOnce(&[Tracer]) -> Tracer,
) -> Result<Entry, Error> {
    compile(runic_trace::grad(params, wrt, f))
}

/// Reverse mode: the entry takes the parameters and one cotangent per result of `f`, and
/// returns `f`'s results followed by the cotangents of the parameters in `wrt`.
pub fn vjp(
    params: &[ParamSpec],
    wrt: &[usize],
    f: impl FnOnce(&[Tracer]) -> Vec<Tracer>,
) -> Result<Entry, Error> {
    compile(runic_trace::vjp(params, wrt, f))
}

/// Forward mode: the entry takes the parameters and one tangent per parameter in `wrt`,
/// and returns `f`'s results followed by their tangents.
pub fn jvp(
    params: &[ParamSpec],
    wrt: &[usize],
    f: impl FnOnce(&[Tracer]) -> Vec<Tracer>,
) -> Result<Entry, Error> {
    compile(runic_trace::jvp(params, wrt, f))
}
