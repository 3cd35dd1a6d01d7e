//! runic-ad: automatic differentiation as IR-to-IR program transformations.
//!
//! - [`fwd`]: forward mode — eliminates every `Jvp` (and its vector form, `jmp`) by
//!   emitting tangent code next to the primal, with the scalar rules taken from the shared
//!   derivative table (`runic_prim::deriv`) through an IR-building [`alg::IrAlg`].
//!
//! - [`rev`]: reverse mode — eliminates every `Vjp` (`vjp`, `mjp`) and `WithVjp` with a
//!   forward sweep and a return sweep that keeps the parallelism of the primal (one file
//!   per rule under `rev/`).
//!
//! [`eliminate_where_possible`] alternates the two, innermost constructs first, so any
//! nesting of the modes is differentiated.

pub mod alg;
pub mod error;
pub mod fwd;
pub mod rev;
pub mod scope;

pub use error::{AdError, AdErrorKind};

use runic_ir::traverse::{count_exps, is_ad_construct};

/// Eliminate every AD construct of the program that can be differentiated (forward and
/// reverse mode alternately, until nothing changes); the errors of the ones left in place.
///
/// An internal error (a bug in a rule) panics in debug builds, so tests catch it where it
/// happens; release builds return it and the caller reports it.
pub fn eliminate_where_possible(mut prog: runic_ir::Prog) -> (runic_ir::Prog, Vec<AdError>) {
    let mut left = ad_constructs(&prog);
    loop {
        let (p, mut errors) = fwd::eliminate_where_possible(prog);
        let (p, rev_errors) = rev::eliminate_where_possible(p);
        errors.extend(rev_errors);
        if let Some(e) = errors.iter().find(|e| e.is_internal()) {
            debug_assert!(false, "AD pass failed: {e}");
        }
        let now = ad_constructs(&p);
        if errors.is_empty() || now >= left {
            return (p, errors);
        }
        left = now;
        prog = p;
    }
}

/// How many AD constructs a program still holds.
fn ad_constructs(prog: &runic_ir::Prog) -> usize {
    prog.funs
        .iter()
        .map(|f| count_exps(&f.body, is_ad_construct))
        .sum()
}
