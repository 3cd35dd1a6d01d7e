//! The text of `runic test` reports (§6.2.1): `FAIL`/`PASS`/`SKIP` header lines, indented
//! detail lines, and the summary (§6.2.2).

use std::fmt::Write;

/// Which case (or group of cases) a report line is about.
pub struct Subject<'a> {
    pub path: &'a str,
    pub line: usize,
    /// Entry point and case index; `None` for whole-file results.
    pub case: Option<(&'a str, usize)>,
    pub backend: &'a str,
    /// Number of cases a whole-file result stands for.
    pub cases: usize,
}

impl Subject<'_> {
    /// `PATH:LINE entry=E case=K backend=B`, or `PATH:LINE backend=B (N cases)`.
    pub fn header(&self, status: &str) -> String {
        let mut s = format!("{status} {}:{}", self.path, self.line);
        if let Some((entry, index)) = self.case {
            let _ = write!(s, " entry={entry} case={index}");
        }
        let _ = write!(s, " backend={}", self.backend);
        if self.case.is_none() && self.cases > 1 {
            let _ = write!(s, " ({} cases)", self.cases);
        }
        s
    }
}

/// One finished report: a header and detail lines, printed as a unit.
pub fn block(header: String, details: &[String]) -> String {
    let mut out = header;
    out.push('\n');
    for d in details {
        out.push_str(&indent(d, 2));
    }
    out
}

/// Indent every non-empty line of `text` by `n` spaces; the result ends with a newline.
pub fn indent(text: &str, n: usize) -> String {
    let pad = " ".repeat(n);
    let mut out = String::new();
    for line in text.trim_end_matches('\n').split('\n') {
        let line = line.trim_end();
        if !line.is_empty() {
            out.push_str(&pad);
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// A detail line introducing an indented multi-line text (an error report, diagnostics).
pub fn with_text(intro: &str, text: &str) -> String {
    format!("{intro}\n{}", indent(text, 2))
}

/// The closing lines: `K skipped` (if any) and `N passed, M failed`.
pub fn summary(passed: usize, failed: usize, skipped: usize) -> String {
    let mut s = String::new();
    if skipped > 0 {
        let _ = writeln!(s, "{skipped} skipped");
    }
    let _ = writeln!(s, "{passed} passed, {failed} failed");
    s
}

/// Cut a description to its first `max` characters followed by `...` when longer.
pub fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() > max {
        let mut s: String = text.chars().take(max).collect();
        s.push_str("...");
        s
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_and_file_headers() {
        let s = Subject {
            path: "tests/dot.fut",
            line: 5,
            case: Some(("dot", 0)),
            backend: "ir",
            cases: 1,
        };
        assert_eq!(
            s.header("FAIL"),
            "FAIL tests/dot.fut:5 entry=dot case=0 backend=ir"
        );
        let s = Subject {
            path: "a.fut",
            line: 1,
            case: None,
            backend: "interp",
            cases: 3,
        };
        assert_eq!(s.header("FAIL"), "FAIL a.fut:1 backend=interp (3 cases)");
        let s = Subject {
            path: "a.fut",
            line: 1,
            case: None,
            backend: "interp",
            cases: 1,
        };
        assert_eq!(s.header("FAIL"), "FAIL a.fut:1 backend=interp");
    }

    #[test]
    fn blocks_indent_details() {
        let text = block(
            "FAIL x.fut:2 entry=main case=0 backend=interp".into(),
            &[
                "dataset: #0 (\"1i32\")".into(),
                with_text(
                    "expected success, but execution failed:",
                    "Error: boom\n\nBacktrace:\n-> #0  x.fut:1:1-2\n",
                ),
            ],
        );
        assert_eq!(
            text,
            "FAIL x.fut:2 entry=main case=0 backend=interp\n  dataset: #0 (\"1i32\")\n  expected success, but execution failed:\n    Error: boom\n\n    Backtrace:\n    -> #0  x.fut:1:1-2\n"
        );
    }

    #[test]
    fn summary_lines() {
        assert_eq!(summary(3, 0, 0), "3 passed, 0 failed\n");
        assert_eq!(summary(3540, 2, 7), "7 skipped\n3540 passed, 2 failed\n");
    }

    #[test]
    fn truncation() {
        assert_eq!(truncate("abc", 3), "abc");
        assert_eq!(truncate("abcd", 3), "abc...");
    }
}
