//! Pretty-printer (work in progress).
use crate::ast::*;
pub fn print_program(_p: &Program) -> String { String::new() }
pub fn print_exp(_e: &Exp) -> String { String::new() }
pub fn print_type(_t: &TypeExp) -> String { String::new() }
pub fn print_pat(_p: &Pat) -> String { String::new() }
