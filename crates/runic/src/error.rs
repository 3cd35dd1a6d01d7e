//! The one error type of the library.

use std::fmt;

/// Why compiling a program, finding an entry point, or calling it failed. Every variant's
/// text (its `Display`) is what the `runic` command would print for the same failure.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The program file could not be read (`Error: cannot read …`).
    Io(String),
    /// Parse or type errors: the rendered diagnostics, `file:line:col: Error: …` with the
    /// source line and caret, exactly as `runic check` prints them.
    Compile(String),
    /// A run-time error of a call (index out of bounds, failed assertion, …): the located
    /// report with its backtrace, as `runic run` prints it.
    Runtime(String),
    /// An argument does not fit its parameter: wrong element type, rank or size.
    Argument {
        entry: String,
        /// 0-based position of the argument.
        index: usize,
        /// The parameter's name, when it is a plain variable in the source.
        name: Option<String>,
        /// What was expected and what was given.
        message: String,
    },
    /// The call has the wrong number of arguments.
    Arity {
        entry: String,
        expected: usize,
        given: usize,
    },
    /// No entry point of that name; `available` lists the ones the program has.
    UnknownEntry {
        name: String,
        available: Vec<String>,
    },
    /// A result was taken out as a type it does not have.
    Result {
        entry: String,
        /// 0-based position of the result.
        index: usize,
        message: String,
    },
    /// A field of a [`Record`](crate::Record) is missing or was taken out as a type it
    /// does not have.
    Field { name: String, message: String },
    /// A bug in runic (a caught panic or a broken invariant); never the caller's fault.
    Internal(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(m) | Error::Compile(m) | Error::Runtime(m) => f.write_str(m.trim_end()),
            Error::Argument {
                entry,
                index,
                name,
                message,
            } => {
                let named = name.as_ref().map(|n| format!(" ({n})")).unwrap_or_default();
                write!(
                    f,
                    "Error: argument {}{named} of \"{entry}\": {message}",
                    index + 1
                )
            }
            Error::Arity {
                entry,
                expected,
                given,
            } => write!(
                f,
                "Error: entry point \"{entry}\" takes {expected} argument{}, but {given} {} given",
                if *expected == 1 { "" } else { "s" },
                if *given == 1 { "was" } else { "were" }
            ),
            Error::UnknownEntry { name, available } => {
                let list = if available.is_empty() {
                    "none".to_string()
                } else {
                    available.join(", ")
                };
                write!(
                    f,
                    "Error: no entry point named \"{name}\"; entry points: {list}"
                )
            }
            Error::Result {
                entry,
                index,
                message,
            } => write!(f, "Error: result {} of \"{entry}\": {message}", index + 1),
            Error::Field { name, message } => write!(f, "Error: field {name}: {message}"),
            Error::Internal(m) => {
                let m = m.trim_end();
                if m.starts_with("Error:") {
                    f.write_str(m)
                } else {
                    write!(f, "Error: internal error (a bug in runic): {m}")
                }
            }
        }
    }
}

impl std::error::Error for Error {}

impl From<crate::load::LoadError> for Error {
    fn from(e: crate::load::LoadError) -> Error {
        match e {
            crate::load::LoadError::Io(m) => Error::Io(m),
            crate::load::LoadError::Compile(m) => Error::Compile(m),
        }
    }
}

impl From<crate::engine::CallError> for Error {
    fn from(e: crate::engine::CallError) -> Error {
        use crate::engine::CallError;
        match e {
            CallError::Runtime(r) => Error::Runtime(r),
            // Library calls have no time limit; a timeout can only be a bug.
            CallError::Timeout(_) => Error::Internal(e.text()),
            CallError::Internal(m) => Error::Internal(m),
        }
    }
}
