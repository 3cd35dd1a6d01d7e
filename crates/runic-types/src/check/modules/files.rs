//! Imported files: resolving `import "path"` against the importing file, reading and parsing
//! each file once, and detecting import cycles.

use super::ModVal;
use runic_syntax::{Diagnostic, FileId, Program};
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

/// The files of one checking run beyond the main file.
#[derive(Debug, Default)]
pub(crate) struct FileCtx {
    /// Directory of the file whose declarations are being checked.
    pub dir: PathBuf,
    /// The chain of files being checked, outermost first (for cycle errors).
    pub stack: Vec<PathBuf>,
    /// Files already checked, by normalised path.
    pub done: HashMap<PathBuf, ModVal>,
    /// Files read during checking, in the order they received ids from `first_file`; the
    /// caller adds them to its source map so diagnostics can show them.
    pub loaded: Vec<(String, String)>,
    pub first_file: u32,
}

/// What reading an import gave.
pub(crate) enum FetchError {
    /// A message for the import declaration.
    Import(String),
    /// The file does not parse.
    Syntax(Vec<Diagnostic>),
}

pub(crate) enum Fetched {
    Done(ModVal),
    Parsed(PathBuf, Program),
}

impl FileCtx {
    pub fn new(main: Option<&Path>, first_file: u32) -> FileCtx {
        let main = main.map(normalise);
        FileCtx {
            dir: main
                .as_ref()
                .and_then(|p| p.parent().map(Path::to_path_buf))
                .unwrap_or_default(),
            stack: main.into_iter().collect(),
            first_file,
            ..FileCtx::default()
        }
    }

    /// Resolves, reads and parses the file an import names (node ids from `*next_id`), or
    /// returns its module if it was already checked. Errors are messages for the import.
    pub fn fetch(&mut self, path: &str, next_id: &mut u32) -> Result<Fetched, FetchError> {
        let full = normalise(&self.dir.join(format!("{path}.fut")));
        if let Some(m) = self.done.get(&full) {
            return Ok(Fetched::Done(m.clone()));
        }
        if let Some(i) = self.stack.iter().position(|p| *p == full) {
            let chain: Vec<String> = self.stack[i..]
                .iter()
                .chain(std::iter::once(&full))
                .map(|p| p.display().to_string())
                .collect();
            return Err(FetchError::Import(format!(
                "Import cycle: {}.",
                chain.join(" imports ")
            )));
        }
        let shown = full.display().to_string();
        let bytes = std::fs::read(&full).map_err(|e| {
            let reason = e.to_string();
            let reason = reason.split(" (os error").next().unwrap_or("").to_string();
            FetchError::Import(format!(
                "Cannot import \"{path}\": cannot read {shown}: {reason}."
            ))
        })?;
        let text = String::from_utf8(bytes).map_err(|_| {
            FetchError::Import(format!(
                "Cannot import \"{path}\": {shown} is not valid UTF-8."
            ))
        })?;
        let file = FileId(self.first_file + self.loaded.len() as u32);
        self.loaded.push((shown, text.clone()));
        match runic_syntax::parse_program(file, &text, *next_id) {
            Ok(p) => {
                *next_id = p.next_id;
                Ok(Fetched::Parsed(full, p))
            }
            Err(ds) => Err(FetchError::Syntax(ds)),
        }
    }
}

/// The path with `.` and `..` removed lexically (the file need not exist).
pub(crate) fn normalise(p: &Path) -> PathBuf {
    let mut out: Vec<Component> = Vec::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.last() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir) => {}
                _ => out.push(c),
            },
            _ => out.push(c),
        }
    }
    out.iter().collect()
}
