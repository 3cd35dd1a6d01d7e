//! The error of the AD passes.

use std::fmt;

/// What kind of failure an [`AdError`] is: it decides what the user sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdErrorKind {
    /// A construct the ir backend cannot differentiate yet: the construct stays in the
    /// program and reaching it is a run-time error that says why.
    Unsupported,
    /// A primitive without a derivative (`gamma` in reverse mode, …): as `Unsupported`.
    NotDifferentiable,
    /// A bug in the AD passes (an invariant broken). It fails loudly in debug builds and
    /// tests, and is reported as an internal compiler error when a user runs the program.
    Internal,
}

/// Why a program could not be differentiated (never a wrong program instead).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdError {
    pub kind: AdErrorKind,
    pub message: String,
}

impl AdError {
    /// A construct the ir backend cannot differentiate yet.
    pub fn unsupported(what: impl fmt::Display) -> AdError {
        AdError {
            kind: AdErrorKind::Unsupported,
            message: format!("not yet supported by the ir backend: {what}"),
        }
    }
    /// A primitive without a derivative.
    pub fn not_differentiable(what: impl fmt::Display) -> AdError {
        AdError {
            kind: AdErrorKind::NotDifferentiable,
            message: format!("{what} is not differentiable"),
        }
    }
    /// A broken invariant of the AD passes.
    pub fn internal(what: impl fmt::Display) -> AdError {
        AdError {
            kind: AdErrorKind::Internal,
            message: format!("internal: {what}"),
        }
    }
    pub fn is_internal(&self) -> bool {
        self.kind == AdErrorKind::Internal
    }
}

/// A builder that could not type what it built is a bug in the rule that used it.
impl From<runic_ir::TypeError> for AdError {
    fn from(e: runic_ir::TypeError) -> AdError {
        AdError::internal(e)
    }
}

impl fmt::Display for AdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for AdError {}
