//! Run-time errors of the ir backend, reported exactly like the interpreter's
//! (data-tests-cli.md §6.1.3).

use runic_ir::{Loc, SrcInfo};
use runic_syntax::{FileId, SourceMap, Span};

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
    /// it was inlined through).
    pub fn locate(mut self, src: &SrcInfo) -> ExecError {
        if self.loc.is_none() {
            if let Some(l) = src.loc {
                self.loc = Some(l);
                self.backtrace.push(l);
            }
        }
        for &l in &src.inlined_from {
            self.push_call(l);
        }
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
        for &l in &src.inlined_from {
            self.push_call(l);
        }
        self
    }

    fn push_call(&mut self, l: Loc) {
        if self.backtrace.last() != Some(&l) {
            self.backtrace.push(l);
        }
    }

    /// The report: location, message, source excerpt, blank line, backtrace.
    pub fn render(&self, sources: &SourceMap) -> String {
        let mut out = match self.loc {
            Some(l) => {
                runic_syntax::Diagnostic::error(span(l), self.message.clone()).render(sources)
            }
            None => format!("Error: {}\n", self.message),
        };
        if !self.backtrace.is_empty() {
            out.push_str("\nBacktrace:\n");
            for (k, l) in self.backtrace.iter().enumerate() {
                let lead = if k == 0 { "-> " } else { "   " };
                let gap = if k >= 10 { " " } else { "  " };
                out.push_str(&format!("{lead}#{k}{gap}{}\n", sources.location(span(*l))));
            }
        }
        out
    }
}

/// The front end's span for an IR location.
pub fn span(l: Loc) -> Span {
    Span {
        file: FileId(l.file),
        start: l.start,
        end: l.end,
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
