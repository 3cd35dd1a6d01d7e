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
        // Spans inside the built-in prelude may have no file in `sources` (its spans use
        // `FileId(u32::MAX)` unless the caller registered it): report from the first user
        // frame instead.
        let known = |s: &Span| s.file.0 != u32::MAX;
        let backtrace: Vec<Span> = self.backtrace.iter().copied().filter(known).collect();
        let span = self
            .span
            .filter(known)
            .or_else(|| backtrace.first().copied());
        runic_syntax::render_runtime_error(&self.message, span, &backtrace, sources)
    }
}

impl std::fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RuntimeError {}
