//! Run-time errors of the ir backend as data: the interpreter's message, the IR location of
//! the failing operation and the backtrace. The CLI renders them with the interpreter's report
//! (data-tests-cli.md §6.1.3); this crate knows nothing of source files.

use runic_ir::{Loc, SrcInfo};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecError {
    pub message: String,
    /// Location of the failing operation.
    pub loc: Option<Loc>,
    /// The failing operation followed by the enclosing call sites, innermost first.
    pub backtrace: Vec<Loc>,
}

impl ExecError {
    pub fn new(message: impl Into<String>) -> ExecError {
        ExecError {
            message: message.into(),
            loc: None,
            backtrace: Vec::new(),
        }
    }

    /// Locate an error raised without a location at the statement `src` (and the call sites
    /// it was inlined through). An error that already has one came from a statement inside
    /// `src` (a SOAC's lambda), whose own call sites say where it stands in the source: a
    /// pass may have moved it under `src` (fusion puts a producer's body in its consumer's
    /// lambda), so `src`'s call sites are not necessarily around it.
    pub fn locate(mut self, src: &SrcInfo) -> ExecError {
        if self.loc.is_some() {
            return self;
        }
        if let Some(l) = src.loc {
            self.loc = Some(l);
            self.backtrace.push(l);
        }
        self.push_chain(&src.inlined_from);
        self
    }

    /// Record that the error passed through the call statement `src`.
    pub fn through_call(mut self, src: &SrcInfo) -> ExecError {
        if self.loc.is_none() {
            return self.locate(src);
        }
        if let Some(l) = src.loc {
            self.push_call(l);
        }
        self.push_chain(&src.inlined_from);
        self
    }

    /// The call sites a statement was inlined through, innermost first. An error from
    /// inside the statement (a called function's body) may already have passed through
    /// statements inlined through the same sites: a backtrace ending with them keeps them once.
    fn push_chain(&mut self, chain: &[Loc]) {
        if !chain.is_empty() && self.backtrace.ends_with(chain) {
            return;
        }
        for &l in chain {
            self.push_call(l);
        }
    }

    fn push_call(&mut self, l: Loc) {
        if self.backtrace.last() != Some(&l) {
            self.backtrace.push(l);
        }
    }
}

impl std::fmt::Display for ExecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ExecError {}

pub type R<T> = Result<T, ExecError>;

pub fn err<T>(m: impl Into<String>) -> R<T> {
    Err(ExecError::new(m))
}
