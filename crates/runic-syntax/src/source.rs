//! Source files, spans and line/column positions.

/// Index of a file in a [`SourceMap`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// A byte range `start..end` in one file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: FileId, start: usize, end: usize) -> Span {
        Span {
            file,
            start: start as u32,
            end: end as u32,
        }
    }
    /// The smallest span covering both (they must be in the same file).
    pub fn to(self, other: Span) -> Span {
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// One loaded source file.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// The path as the user gave it (used verbatim in diagnostics).
    pub name: String,
    pub text: String,
    line_starts: Vec<usize>,
}

/// A 1-based line and column, with tabs expanded as the spec requires (a tab advances to the
/// next multiple of 8, plus 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineCol {
    pub line: usize,
    pub col: usize,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let text = text.into();
        let mut line_starts = vec![0];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i + 1);
            }
        }
        SourceFile {
            name: name.into(),
            text,
            line_starts,
        }
    }

    /// 0-based index of the line containing byte `offset`.
    pub fn line_index(&self, offset: usize) -> usize {
        match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        }
    }

    /// The text of 0-based line `idx`, without its line terminator.
    pub fn line_text(&self, idx: usize) -> &str {
        let start = self.line_starts[idx];
        let end = self
            .line_starts
            .get(idx + 1)
            .copied()
            .unwrap_or(self.text.len());
        self.text[start..end].trim_end_matches(['\n', '\r'])
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// Line and column of byte `offset` (clamped to the text).
    pub fn line_col(&self, offset: usize) -> LineCol {
        let offset = offset.min(self.text.len());
        let line = self.line_index(offset);
        let start = self.line_starts[line];
        let mut col = 1;
        let mut idx = start;
        for ch in self.text[start..].chars() {
            if idx >= offset {
                break;
            }
            col = if ch == '\t' {
                (col - 1) / 8 * 8 + 8 + 1
            } else {
                col + 1
            };
            idx += ch.len_utf8();
        }
        LineCol {
            line: line + 1,
            col,
        }
    }

    /// The source text covered by a span.
    pub fn slice(&self, span: Span) -> &str {
        let s = (span.start as usize).min(self.text.len());
        let e = (span.end as usize).clamp(s, self.text.len());
        self.text.get(s..e).unwrap_or("")
    }
}

/// The file name under which the prelude's source definitions are registered in a
/// [`SourceMap`] (re-exported by `runic-types`, which owns the prelude).
pub const PRELUDE_NAME: &str = "<prelude>";

/// All files of a program: the main file and its imports.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    pub fn new() -> SourceMap {
        SourceMap::default()
    }
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        self.files.push(SourceFile::new(name, text));
        FileId(self.files.len() as u32 - 1)
    }
    /// The file `id`; an empty file for an id this map does not know (a diagnostic in a
    /// file that was never registered still renders, without its text).
    pub fn get(&self, id: FileId) -> &SourceFile {
        static UNKNOWN: std::sync::OnceLock<SourceFile> = std::sync::OnceLock::new();
        self.files
            .get(id.0 as usize)
            .unwrap_or_else(|| UNKNOWN.get_or_init(|| SourceFile::new("<unknown file>", "")))
    }
    /// How many files are registered (the next file gets this id).
    pub fn len(&self) -> usize {
        self.files.len()
    }
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
    /// Whether `id` is the prelude (registered under [`PRELUDE_NAME`], or not registered:
    /// the type checker gives unregistered prelude spans `FileId(u32::MAX)`).
    pub fn is_prelude(&self, id: FileId) -> bool {
        self.files
            .get(id.0 as usize)
            .map_or(id.0 == u32::MAX, |f| f.name == PRELUDE_NAME)
    }
    /// `FILE:LINE:COL-ENDCOL` or `FILE:LINE:COL-ENDLINE:ENDCOL`, as in diagnostics and
    /// backtraces. `ENDCOL` is the column just after the span.
    pub fn location(&self, span: Span) -> String {
        let f = self.get(span.file);
        let a = f.line_col(span.start as usize);
        let b = f.line_col((span.end as usize).max(span.start as usize));
        if a.line == b.line {
            format!("{}:{}:{}-{}", f.name, a.line, a.col, b.col.max(a.col + 1))
        } else {
            format!("{}:{}:{}-{}:{}", f.name, a.line, a.col, b.line, b.col)
        }
    }
    /// The source text covered by a span.
    pub fn slice(&self, span: Span) -> &str {
        self.get(span.file).slice(span)
    }
}
