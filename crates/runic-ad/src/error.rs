//! The error of the AD passes.

use std::fmt;

/// Why a program could not be differentiated (never a wrong program instead).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdError {
    pub message: String,
}

impl AdError {
    pub fn new(message: impl Into<String>) -> AdError {
        AdError {
            message: message.into(),
        }
    }
    /// A construct the ir backend cannot differentiate yet.
    pub fn unsupported(what: impl fmt::Display) -> AdError {
        AdError::new(format!("not yet supported by the ir backend: {what}"))
    }
}

impl fmt::Display for AdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for AdError {}
