//! Run-time errors and their report (data-tests-cli.md §6.1.3).

use runic_syntax::{SourceMap, Span};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeError {
    pub message: String,
    /// Location of the failing operation.
    pub span: Option<Span>,
    /// The failing operation followed by the enclosing call sites, innermost first.
    pub backtrace: Vec<Span>,
}

impl RuntimeError {
    pub fn new(message: impl Into<String>) -> RuntimeError {
        RuntimeError {
            message: message.into(),
            span: None,
            backtrace: Vec::new(),
        }
    }

    pub fn at(message: impl Into<String>, span: Span) -> RuntimeError {
        RuntimeError {
            message: message.into(),
            span: Some(span),
            backtrace: vec![span],
        }
    }

    /// Give a location to an error raised without one (inside a built-in).
    pub fn locate(mut self, span: Span) -> RuntimeError {
        if self.span.is_none() {
            self.span = Some(span);
            self.backtrace.push(span);
        }
        self
    }

    /// Record that the error passed through the call at `span`.
    pub fn through_call(mut self, span: Span) -> RuntimeError {
        if self.span.is_none() {
            return self.locate(span);
        }
        if self.backtrace.last() != Some(&span) {
            self.backtrace.push(span);
        }
        self
    }

    /// The report: location, message, source excerpt, blank line, backtrace.
    pub fn render(&self, sources: &SourceMap) -> String {
        let mut out = match self.span {
            Some(span) => {
                runic_syntax::Diagnostic::error(span, self.message.clone()).render(sources)
            }
            None => format!("Error: {}\n", self.message),
        };
        if !self.backtrace.is_empty() {
            out.push_str("\nBacktrace:\n");
            for (k, span) in self.backtrace.iter().enumerate() {
                let lead = if k == 0 { "-> " } else { "   " };
                let gap = if k >= 10 { " " } else { "  " };
                out.push_str(&format!("{lead}#{k}{gap}{}\n", sources.location(*span)));
            }
        }
        out
    }
}

impl std::fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RuntimeError {}
