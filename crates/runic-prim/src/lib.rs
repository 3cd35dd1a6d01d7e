//! runic-prim: the primitive types, scalar values and scalar operations of runic
//! (language.md §5.1, §9), shared by the front end, the interpreter and the compiled path so
//! that every backend computes exactly the same thing.

pub mod deriv;
pub mod index;
pub mod ops;
pub mod types;

pub use index::RangeKind;
pub use ops::*;
pub use types::PrimType;
