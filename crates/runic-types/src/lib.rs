//! runic-types: name resolution, type inference and size inference for runic programs.
//!
//! [`check_program`] takes a parsed program and returns a [`Checked`] program: the program
//! (with the prelude's definable functions prepended, local opens and dotted projections
//! resolved) plus a [`TypeInfo`] side table keyed by node id. The interpreter and the
//! lowering consume exactly this.

pub mod ty;

use runic_syntax::ast::{Name, NodeId, Program};
use runic_syntax::{Diagnostic, Span};
use std::collections::HashMap;
pub use ty::{Size, Type};

/// What the type checker learned about a program.
#[derive(Clone, Debug, Default)]
pub struct TypeInfo {
    /// The type of every expression node, after solving and defaulting. Type variables that
    /// were generalised appear as [`Type::Param`].
    pub exp_types: HashMap<NodeId, Type>,
    /// The type of every pattern node.
    pub pat_types: HashMap<NodeId, Type>,
    /// At every occurrence (a `Var` node, or an operator's node) of a function with size
    /// parameters: the value of each size parameter as a size term in the scope of the
    /// occurrence, in the order of the callee's size parameters.
    pub size_args: HashMap<NodeId, Vec<(Name, Size)>>,
    /// The entry points of the main file, in declaration order.
    pub entries: Vec<EntryPoint>,
}

/// An entry point's external signature, after eta-expansion of a functional result.
#[derive(Clone, Debug)]
pub struct EntryPoint {
    pub name: Name,
    /// Index into `Checked::program.decs` of its declaration.
    pub dec_index: usize,
    /// Written parameters followed by the ones added by eta-expansion.
    pub params: Vec<EntryParam>,
    /// The result, split one level if it is a tuple.
    pub results: Vec<Type>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct EntryParam {
    /// The parameter's name when it is a plain variable pattern.
    pub name: Option<Name>,
    pub ty: Type,
}

/// A type-checked program.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The prelude's definable functions followed by the user's declarations.
    pub program: Program,
    /// Number of leading declarations of `program` that come from the prelude.
    pub prelude_decs: usize,
    pub info: TypeInfo,
    pub warnings: Vec<Diagnostic>,
}
