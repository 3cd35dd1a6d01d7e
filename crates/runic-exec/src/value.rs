//! Run-time values of the ir backend: scalars, arrays (flat typed buffers with a shape,
//! shared by reference count and updated in place when unshared) and accumulators.

use crate::error::{err, R};
use runic_data::{Array, Buffer};
use runic_prim::Prim;
use std::sync::{Arc, Mutex};

#[derive(Clone, Debug, Default)]
pub enum Val {
    /// A slot that has not been bound yet.
    #[default]
    Unset,
    Prim(Prim),
    Arr(Arc<Array>),
    Acc(Arc<AccCell>),
    /// `iota n` (its length in the one-element shape), not built: the program reads it
    /// only as an input of maps, reductions and scans in its body
    /// ([`crate::native::Jit::builds_lazily`]), whose kernels bind its element to their
    /// counter; any other reader builds the array ([`Val::built`]).
    Iota([usize; 1]),
}

/// The state of a `with_acc` accumulator: the arrays it writes into and its combining
/// operator. Shared between the workers of a parallel map, hence the lock.
#[derive(Debug)]
pub struct AccCell {
    pub arrays: Mutex<Vec<Array>>,
    /// Outer (indexed) dimensions.
    pub shape: Vec<usize>,
    /// Index of the `with_acc` input (for the combining operator).
    pub op: Option<(runic_ir::Lambda, Vec<Val>)>,
    /// The values in scope at `with_acc`, for an operator that is not a simple binary
    /// operation: its body may read variables bound outside it (such as a size).
    pub env: Option<Vec<Val>>,
}

impl Val {
    pub fn prim(&self) -> R<Prim> {
        match self {
            Val::Prim(p) => Ok(*p),
            _ => err("internal error: expected a scalar"),
        }
    }
    pub fn arr(&self) -> R<&Arc<Array>> {
        match self {
            Val::Arr(a) => Ok(a),
            _ => err("internal error: expected an array"),
        }
    }
    pub fn i64(&self) -> R<i64> {
        self.prim()?
            .to_i64()
            .ok_or_else(|| crate::error::ExecError::new("internal error: expected an integer"))
    }
    pub fn bool(&self) -> R<bool> {
        self.prim()?
            .as_bool()
            .ok_or_else(|| crate::error::ExecError::new("internal error: expected a boolean"))
    }
    /// The shape of a value (empty for scalars).
    pub fn shape(&self) -> &[usize] {
        match self {
            Val::Arr(a) => &a.shape,
            Val::Iota(n) => n,
            _ => &[],
        }
    }

    /// The array of an `iota` not built ([`Val::Iota`]), now built; other values as they
    /// are.
    pub fn built(&self) -> R<Val> {
        match self {
            Val::Iota([n]) => crate::index::range(
                Prim::I64(0),
                None,
                Prim::I64(*n as i64),
                runic_ir::RangeKind::UpToExclusive,
            )
            .map_err(crate::error::ExecError::new),
            v => Ok(v.clone()),
        }
    }
}

/// An array value (rank ≥ 1 is the caller's concern; rank 0 arrays never exist).
pub fn arr(shape: Vec<usize>, data: Buffer) -> Val {
    Val::Arr(Arc::new(Array { shape, data }))
}

/// Row `i` of an array: a scalar for rank 1, otherwise a copied sub-array.
pub fn row(a: &Array, i: usize) -> Val {
    if a.shape.len() == 1 {
        Val::Prim(a.data.get(i))
    } else {
        let inner: usize = a.shape[1..].iter().product();
        arr(a.shape[1..].to_vec(), a.data.slice(i * inner, inner))
    }
}

pub use runic_prim::index::shape_string;

/// Append a value (a scalar or an array of the row shape) to a buffer of rows.
pub fn push_row(dst: &mut Buffer, v: &Val) -> R<()> {
    match v {
        Val::Prim(p) => dst.push_converted(*p),
        Val::Arr(a) => dst.extend_converted(&a.data, 0, a.data.len()),
        _ => return err("internal error: an accumulator as an array element"),
    }
    Ok(())
}
