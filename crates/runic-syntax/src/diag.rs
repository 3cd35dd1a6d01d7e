//! Diagnostics: errors and warnings with a source location, rendered in the layout that
//! `data-tests-cli.md` §6.0 prescribes:
//!
//! ```text
//! prog.fut:4:26-36: Error: Cannot unify "f64" with "i32".
//!    4 | def main = (2.0 + 3.0) / (2 + 3i32)
//!      |                          ^^^^^^^^^^
//! ```
//!
//! The layout is fixed by the spec (test runners match it with regular expressions), and no
//! diagnostics crate emits exactly this form, so the renderer is the small function below.

use crate::source::{SourceMap, Span};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    /// Where; `None` for errors about the program as a whole.
    pub span: Option<Span>,
    /// Extra lines printed after the source excerpt (hints, related locations).
    pub notes: Vec<String>,
    /// Other places the message is about, each printed with its own location and excerpt.
    pub related: Vec<(Span, String)>,
}

impl Diagnostic {
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            span: Some(span),
            notes: vec![],
            related: vec![],
        }
    }
    pub fn warning(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            message: message.into(),
            span: Some(span),
            notes: vec![],
            related: vec![],
        }
    }
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }
    /// Adds another location the message is about.
    pub fn with_related(mut self, span: Span, what: impl Into<String>) -> Diagnostic {
        self.related.push((span, what.into()));
        self
    }
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Render with location, message, source line and `^^^` marker; ends with a newline.
    pub fn render(&self, sources: &SourceMap) -> String {
        let word = match self.severity {
            Severity::Error => "Error",
            Severity::Warning => "Warning",
        };
        let mut out = String::new();
        match self.span {
            None => out.push_str(&format!("{word}: {}\n", self.message)),
            Some(span) => {
                out.push_str(&format!(
                    "{}: {word}: {}\n",
                    sources.location(span),
                    self.message
                ));
                out.push_str(&excerpt(sources, span));
            }
        }
        for (span, what) in &self.related {
            out.push_str(&format!("{}: Note: {what}\n", sources.location(*span)));
            out.push_str(&excerpt(sources, *span));
        }
        for n in &self.notes {
            out.push_str(n);
            out.push('\n');
        }
        out
    }
}

/// The first line of `span` with a marker under the spanned columns.
fn excerpt(sources: &SourceMap, span: Span) -> String {
    let file = sources.get(span.file);
    let start = (span.start as usize).min(file.text.len());
    let end = (span.end as usize).max(start);
    let line = file.line_index(start);
    let text = file.line_text(line);
    let a = file.line_col(start);
    let b = file.line_col(end);
    let end_col = if b.line == a.line {
        b.col.max(a.col + 1)
    } else {
        a.col.max(expanded_width(text) + 1)
    };
    let gutter = format!("{:>4}", a.line);
    let pad = " ".repeat(gutter.len());
    format!(
        "{gutter} | {}\n{pad} | {}{}\n",
        expand_tabs(text),
        " ".repeat(a.col - 1),
        "^".repeat((end_col - a.col).max(1))
    )
}

fn expand_tabs(s: &str) -> String {
    let mut out = String::new();
    for ch in s.chars() {
        if ch == '\t' {
            let n = 8 - out.chars().count() % 8;
            out.push_str(&" ".repeat(n));
        } else {
            out.push(ch);
        }
    }
    out
}

fn expanded_width(s: &str) -> usize {
    expand_tabs(s).chars().count()
}

/// Render several diagnostics in source order, separated by blank lines.
pub fn render_all(diags: &[Diagnostic], sources: &SourceMap) -> String {
    let mut sorted: Vec<&Diagnostic> = diags.iter().collect();
    sorted.sort_by_key(|d| d.span.map(|s| (s.file, s.start)));
    sorted
        .iter()
        .map(|d| d.render(sources))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The report of a run-time error (data-tests-cli.md §6.1.3), the same for both backends: the
/// error at `span` (a bare `Error:` line without one), then a blank line and the backtrace —
/// the failing operation and the enclosing call sites, innermost first.
///
/// An error raised inside a prelude definition (a combinator such as `flip` or `|>`, or an
/// AD wrapper such as `vjp`) is the user's: it is reported at the innermost call site in a
/// user file, and the prelude frames inside that call are left out of the backtrace.
pub fn render_runtime_error(
    message: &str,
    span: Option<Span>,
    backtrace: &[Span],
    sources: &SourceMap,
) -> String {
    let (span, backtrace) = match span {
        Some(s) if sources.is_prelude(s.file) => {
            match backtrace.iter().position(|f| !sources.is_prelude(f.file)) {
                Some(k) => (Some(backtrace[k]), &backtrace[k..]),
                None => (span, backtrace),
            }
        }
        _ => (span, backtrace),
    };
    let mut out = match span {
        Some(span) => Diagnostic::error(span, message).render(sources),
        None => format!("Error: {message}\n"),
    };
    if !backtrace.is_empty() {
        out.push_str("\nBacktrace:\n");
        for (k, span) in backtrace.iter().enumerate() {
            let lead = if k == 0 { "-> " } else { "   " };
            let gap = if k >= 10 { " " } else { "  " };
            out.push_str(&format!("{lead}#{k}{gap}{}\n", sources.location(*span)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::PRELUDE_NAME;

    #[test]
    fn errors_inside_the_prelude_are_reported_at_the_user_call() {
        let mut sm = SourceMap::new();
        let user = sm.add("prog.fut", "def main = g 1\n");
        let prelude = sm.add(PRELUDE_NAME, "def g x = h x\ndef h x = x\n");
        let (inner, outer) = (Span::new(prelude, 24, 25), Span::new(prelude, 10, 13));
        let call = Span::new(user, 11, 14);
        let out = render_runtime_error("boom", Some(inner), &[inner, outer, call], &sm);
        assert_eq!(
            out,
            "prog.fut:1:12-15: Error: boom\n   1 | def main = g 1\n     |            ^^^\n\nBacktrace:\n-> #0  prog.fut:1:12-15\n"
        );
        // Without a user frame, the prelude location is all there is.
        let out = render_runtime_error("boom", Some(inner), &[inner], &sm);
        assert!(out.starts_with("<prelude>:2:"), "{out}");
    }

    #[test]
    fn renders_the_spec_example() {
        let mut sm = SourceMap::new();
        let src = "\n\n\ndef main = (2.0 + 3.0) / (2 + 3i32)\n";
        let f = sm.add("prog.fut", src);
        let start = src.find("(2 +").unwrap();
        let d = Diagnostic::error(
            Span::new(f, start, start + 10),
            "Cannot unify \"f64\" with \"i32\".",
        );
        assert_eq!(
            d.render(&sm),
            "prog.fut:4:26-36: Error: Cannot unify \"f64\" with \"i32\".\n   4 | def main = (2.0 + 3.0) / (2 + 3i32)\n     |                          ^^^^^^^^^^\n"
        );
    }

    #[test]
    fn tabs_advance_to_next_multiple_of_eight_plus_one() {
        let mut sm = SourceMap::new();
        let f = sm.add("t.fut", "\tx");
        assert_eq!(sm.location(Span::new(f, 1, 2)), "t.fut:1:9-10");
    }
}
