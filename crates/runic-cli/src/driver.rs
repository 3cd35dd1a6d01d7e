//! Loading a program (read, parse, type-check, render diagnostics) is the library's
//! (`runic::load`); the CLI only decides how a failure exits.

use crate::error::CliError;
pub use runic::load::*;

impl From<LoadError> for CliError {
    fn from(e: LoadError) -> CliError {
        CliError::User(e.text().trim_end().to_string())
    }
}
