//! runic-ad: automatic differentiation as IR-to-IR program transformations.
//!
//! - [`fwd`]: forward mode — eliminates every `Jvp` (and its vector form, `jmp`) by
//!   emitting tangent code next to the primal, with the scalar rules taken from the shared
//!   derivative table (`runic_prim::deriv`) through an IR-building [`alg::IrAlg`].
//!
//! Reverse mode (`Vjp`, `WithVjp`) is left in place for a later pass.

pub mod alg;
pub mod error;
pub mod fwd;
pub mod scope;

pub use error::AdError;
