//! runic-syntax: lexer, parser, abstract syntax tree with spans, pretty-printer and
//! diagnostics rendering for the runic language (a dialect of Futhark).
//!
//! Entry points: [`parse_program`], [`parse_exp`], [`parse_type`]; [`pretty::print_program`]
//! turns a tree back into source that parses to the same tree (see [`normalize`]).

pub mod ast;
pub mod diag;
pub mod lexer;
pub mod normalize;
mod parser;
pub mod pretty;
pub mod source;

pub use ast::*;
pub use diag::{render_runtime_error, Diagnostic, Severity};
pub use parser::fixity;
pub use source::{FileId, LineCol, SourceFile, SourceMap, Span, PRELUDE_NAME};

/// Parses a whole source file. `first_id` is the first [`NodeId`] handed out; the result's
/// `next_id` is one past the last.
pub fn parse_program(file: FileId, text: &str, first_id: u32) -> Result<Program, Vec<Diagnostic>> {
    with_parser_stack(|| parse_program_here(file, text, first_id))
}

fn parse_program_here(file: FileId, text: &str, first_id: u32) -> Result<Program, Vec<Diagnostic>> {
    let toks = lexer::lex(file, text)?;
    let mut p = parser::Parser::new(file, toks, first_id);
    let decs = p.program();
    if p.errors.is_empty() {
        Ok(Program {
            decs,
            next_id: p.next_id(),
        })
    } else {
        Err(p.errors)
    }
}

/// Parses a single expression (the whole text). Returns it with the next free node id.
pub fn parse_exp(file: FileId, text: &str, first_id: u32) -> Result<(Exp, u32), Vec<Diagnostic>> {
    with_parser_stack(|| parse_exp_here(file, text, first_id))
}

fn parse_exp_here(file: FileId, text: &str, first_id: u32) -> Result<(Exp, u32), Vec<Diagnostic>> {
    let toks = lexer::lex(file, text)?;
    let mut p = parser::Parser::new(file, toks, first_id);
    let e = p.whole(|p| p.exp()).map_err(|e| vec![e])?;
    Ok((e, p.next_id()))
}

/// Parses a single type (the whole text). Node ids inside size expressions start at 0.
pub fn parse_type(file: FileId, text: &str) -> Result<TypeExp, Vec<Diagnostic>> {
    with_parser_stack(|| {
        let toks = lexer::lex(file, text)?;
        let mut p = parser::Parser::new(file, toks, 0);
        p.whole(|p| p.ty()).map_err(|e| vec![e])
    })
}

/// Parses a single pattern (the whole text); used by tests and tools.
pub fn parse_pat(file: FileId, text: &str, first_id: u32) -> Result<(Pat, u32), Vec<Diagnostic>> {
    with_parser_stack(|| {
        let toks = lexer::lex(file, text)?;
        let mut p = parser::Parser::new(file, toks, first_id);
        let e = p.whole(|p| p.pat()).map_err(|e| vec![e])?;
        Ok((e, p.next_id()))
    })
}

/// Stack for the parser thread: enough for the deepest nesting the parser accepts
/// (`parser::MAX_DEPTH`) even in unoptimised builds, whatever stack the caller has.
const PARSER_STACK: usize = 256 << 20;

/// Runs `f` on a thread with a large stack (falling back to the current thread if no thread
/// can be started). Panics propagate to the caller.
fn with_parser_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    let slot = std::sync::Mutex::new(Some(f));
    let take = || slot.lock().ok().and_then(|mut g| g.take());
    let spawned = std::thread::scope(|s| {
        let handle = std::thread::Builder::new()
            .stack_size(PARSER_STACK)
            .spawn_scoped(s, || take().map(|f| f()));
        match handle {
            Ok(h) => match h.join() {
                Ok(r) => r,
                Err(panic) => std::panic::resume_unwind(panic),
            },
            Err(_) => None,
        }
    });
    match spawned {
        Some(r) => r,
        None => match take() {
            Some(f) => f(),
            None => unreachable_take(),
        },
    }
}

#[cold]
fn unreachable_take<T>() -> T {
    // `take` yields the closure exactly once: either the thread ran it or it is still here.
    panic!("parser closure consumed twice")
}
