//! How a command fails, and the exit status that goes with it (data-tests-cli.md §6.0).

use std::fmt;

#[derive(Debug)]
pub enum CliError {
    /// A command-line usage error: exit status 2.
    Usage(String),
    /// An error caused by the user's program, data or files: exit status 1. The text is
    /// printed verbatim (it already carries `Error:` and locations where they apply).
    User(String),
    /// Failure already reported on stdout/stderr: exit status 1, nothing more to print.
    Reported,
}

impl CliError {
    pub fn user(msg: impl Into<String>) -> CliError {
        CliError::User(msg.into())
    }
    pub fn usage(msg: impl Into<String>) -> CliError {
        CliError::Usage(msg.into())
    }
    pub fn exit_status(&self) -> i32 {
        match self {
            CliError::Usage(_) => 2,
            CliError::User(_) | CliError::Reported => 1,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Usage(m) => write!(f, "error: {m}"),
            CliError::User(m) => f.write_str(m),
            CliError::Reported => Ok(()),
        }
    }
}

pub type CliResult<T = ()> = Result<T, CliError>;

/// The backends this build has.
pub const BACKENDS: &[&str] = &["interp", "ir"];

/// Reject a backend this build does not have (a usage error, §6.0).
pub fn check_backend(name: &str) -> CliResult {
    if BACKENDS.contains(&name) {
        Ok(())
    } else {
        Err(CliError::usage(format!(
            "backend {name} is not available in this build; available: {}",
            BACKENDS.join(", ")
        )))
    }
}
