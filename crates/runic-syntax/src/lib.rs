//! runic-syntax: lexer, parser, abstract syntax tree with spans, pretty-printer and
//! diagnostics rendering for the runic language (a dialect of Futhark).
//!
//! Entry points: [`parse_program`], [`parse_exp`], [`parse_type`]; [`pretty::print_program`]
//! turns a tree back into source that parses to the same tree (see [`normalize`]).

pub mod ast;
pub mod diag;
pub mod source;

pub use ast::*;
pub use diag::{Diagnostic, Severity};
pub use source::{FileId, LineCol, SourceFile, SourceMap, Span};
