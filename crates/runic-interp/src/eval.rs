//! The evaluator: its state ([`Eval`]), with one submodule per part of evaluation.

mod apply;
mod exp;
mod loops;
mod names;
mod patterns;
mod update;
mod values;

use crate::error::RuntimeError;
use crate::index::DimVal;
use crate::value::Value;
use runic_syntax::ast::*;
use runic_syntax::{SourceMap, Span};
use runic_types::Checked;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};

use names::{collect_exp_names, collect_pat_names};
pub use values::{binop_values, convert_value, unop_value};

pub type R<T> = Result<T, RuntimeError>;

/// Evaluation state for one entry-point call (lives on the evaluation thread).
pub struct Eval<'a> {
    pub checked: &'a Checked,
    pub sources: &'a SourceMap,
    /// Top-level value definitions by name: declaration indices, ascending.
    globals: HashMap<&'a str, Vec<usize>>,
    consts: RefCell<HashMap<usize, Value<'a>>>,
    /// Every name bound anywhere by a pattern, a local function or a top-level definition;
    /// an operator symbol outside this set is certainly the built-in one.
    bound_names: HashSet<&'a str>,
    interrupt: Option<&'a AtomicBool>,
    /// `x with ...` updates that may take `x` out of its binding (see `consume`).
    safe_updates: HashSet<NodeId>,
    /// Current depth of nested closure calls, bounded by [`MAX_CALL_DEPTH`].
    depth: std::cell::Cell<usize>,
    /// Occurrences whose size arguments are being evaluated right now. A size term may
    /// mention the very occurrence it belongs to (`zip xs (iota (length xs))` makes `xs`'s
    /// size the term `length xs`); such a size is then read from the arguments instead.
    sizing: RefCell<HashSet<NodeId>>,
    /// Automatic-differentiation state (active tapes and perturbation levels).
    pub ad: crate::ad::AdState<'a>,
}

/// Nested closure calls allowed before reporting runaway recursion (each call uses a few
/// evaluator frames on the 1 GiB evaluation stack).
const MAX_CALL_DEPTH: usize = 10_000;

/// A pre-evaluated step of an update path.
enum Step<'a> {
    Field(&'a str),
    Index(Vec<DimVal>, Span),
}

impl<'a> Eval<'a> {
    pub fn new(
        checked: &'a Checked,
        sources: &'a SourceMap,
        interrupt: Option<&'a AtomicBool>,
    ) -> Eval<'a> {
        let mut globals: HashMap<&'a str, Vec<usize>> = HashMap::new();
        let mut bound_names = HashSet::new();
        for (i, d) in checked.program.decs.iter().enumerate() {
            if let Dec::Val(vb) = d {
                globals.entry(vb.name.as_str()).or_default().push(i);
                bound_names.insert(vb.name.as_str());
                for p in &vb.params {
                    collect_pat_names(p, &mut bound_names);
                }
                collect_exp_names(&vb.body, &mut bound_names);
            }
        }
        Eval {
            checked,
            sources,
            globals,
            consts: RefCell::new(HashMap::new()),
            bound_names,
            interrupt,
            safe_updates: crate::consume::safe_updates(&checked.program.decs),
            depth: std::cell::Cell::new(0),
            sizing: RefCell::new(HashSet::new()),
            ad: Default::default(),
        }
    }

    fn check_interrupt(&self) -> R<()> {
        if let Some(flag) = self.interrupt {
            if flag.load(Ordering::Relaxed) {
                return Err(RuntimeError::new("interrupted"));
            }
        }
        Ok(())
    }
}
