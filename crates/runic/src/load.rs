//! Loading a program: read the file, parse, type-check, and render diagnostics in the
//! spec's layout (§6.0). Every way of loading a program (the library, every CLI subcommand)
//! goes through here.

use runic_syntax::{diag, Diagnostic, SourceMap};
use runic_types::Checked;
use std::path::Path;
use std::sync::Arc;

/// A type-checked program with its sources.
#[derive(Clone)]
pub struct Loaded {
    pub sources: Arc<SourceMap>,
    pub checked: Arc<Checked>,
}

impl Loaded {
    /// The rendered warnings (empty when there are none).
    pub fn warnings(&self) -> String {
        render(&self.checked.warnings, &self.sources)
    }
}

/// Why a program could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    /// The file could not be read: the message, ready to print.
    Io(String),
    /// Parse or type errors: the rendered diagnostics, exactly as `runic check` prints them.
    Compile(String),
}

impl LoadError {
    pub fn text(&self) -> &str {
        match self {
            LoadError::Io(s) | LoadError::Compile(s) => s,
        }
    }
}

pub fn render(diags: &[Diagnostic], sources: &SourceMap) -> String {
    if diags.is_empty() {
        String::new()
    } else {
        diag::render_all(diags, sources)
    }
}

/// Read a source file (the name in diagnostics is the path as given).
pub fn read_source(path: &Path) -> Result<String, LoadError> {
    std::fs::read(path)
        .map_err(|e| {
            LoadError::Io(format!(
                "Error: cannot read {}: {}",
                path.display(),
                io_reason(&e)
            ))
        })
        .and_then(|bytes| {
            String::from_utf8(bytes).map_err(|e| {
                // Point at the first bad byte: the valid prefix gives its line and column.
                let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
                let line = 1 + good.iter().filter(|&&b| b == b'\n').count();
                let start = good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
                let col = 1 + String::from_utf8_lossy(&good[start..]).chars().count();
                LoadError::Io(format!(
                    "{}:{line}:{col}: Error: invalid UTF-8 (runic source files must be UTF-8)",
                    path.display()
                ))
            })
        })
}

/// The OS error text without Rust's " (os error N)" suffix.
pub fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// Parse only (for `dev --stop-after=parse`).
pub fn parse_text(name: &str, text: &str) -> Result<(SourceMap, runic_syntax::Program), LoadError> {
    let mut sources = SourceMap::new();
    let file = sources.add(name, text);
    // The prelude's nodes are numbered from 0; the user's continue after them.
    match runic_syntax::parse_program(file, text, runic_types::first_user_node_id()) {
        Ok(p) => Ok((sources, p)),
        Err(diags) => Err(LoadError::Compile(render(&diags, &sources))),
    }
}

/// Parse and type-check source text that is already in memory.
pub fn load_text(name: &str, text: &str) -> Result<Loaded, LoadError> {
    let (sources, program) = parse_text(name, text)?;
    check(sources, program)
}

/// Type-check a parsed program. The prelude is registered in the source map so that errors
/// and backtraces that pass through prelude code (`|>`, `foldl`, `vjp`, …) can be located.
pub fn check(mut sources: SourceMap, program: runic_syntax::Program) -> Result<Loaded, LoadError> {
    let prelude = sources.add(runic_types::PRELUDE_NAME, runic_types::PRELUDE_SOURCE);
    // `parse_text` registers the program first; its name is the path imports are resolved
    // against.
    let main = std::path::PathBuf::from(&sources.get(runic_syntax::FileId(0)).name);
    match runic_types::check_program_at(program, &mut sources, prelude, Some(&main)) {
        Ok(checked) => Ok(Loaded {
            sources: Arc::new(sources),
            checked: Arc::new(checked),
        }),
        Err(diags) => Err(LoadError::Compile(render(&diags, &sources))),
    }
}

/// Read, parse and type-check a program file.
pub fn load(path: &Path) -> Result<Loaded, LoadError> {
    let text = read_source(path)?;
    load_text(&path.display().to_string(), &text)
}

/// Run `f` on a thread with a large stack: the interpreter recurses on the program's
/// structure, and deep recursion must not overflow the main thread's small stack.
pub fn with_big_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(BIG_STACK)
            .spawn_scoped(s, f)
            .map(|h| h.join())
            .unwrap_or_else(|e| panic!("cannot start a worker thread: {e}"))
            .unwrap_or_else(|payload| std::panic::resume_unwind(payload))
    })
}

pub const BIG_STACK: usize = 256 << 20;
