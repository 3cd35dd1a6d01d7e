//! runic-types: name resolution, type inference and size inference for runic programs.
//!
//! [`check_program`] takes a parsed program and returns a [`Checked`] program: the program
//! (with the prelude's definable functions prepended, local opens and dotted projections
//! resolved) plus a [`TypeInfo`] side table keyed by node id. The interpreter and the
//! lowering consume exactly this.

pub(crate) mod check;
mod exhaustive;
mod infer_ty;
pub mod intrinsics;
mod signature;
pub mod ty;
mod uniq;

use runic_syntax::ast::{Name, NodeId, Program};
use runic_syntax::{Diagnostic, FileId, SourceMap, Span};
use std::collections::HashMap;
use std::path::Path;
pub use ty::{Size, Type};

/// The source of the definable part of the prelude (Section 10).
pub const PRELUDE_SOURCE: &str = include_str!("prelude.fut");

/// The file name under which the prelude's spans should be registered in a `SourceMap`.
pub const PRELUDE_NAME: &str = runic_syntax::PRELUDE_NAME;

/// Type-check a program. The prelude's definitions are prepended (with node ids starting at
/// 0 when the user's ids do not collide with them, see [`first_user_node_id`]). The
/// prelude's spans use `FileId(u32::MAX)`; use [`check_program_with_prelude_file`] to give
/// them a real file.
pub fn check_program(program: Program, sources: &SourceMap) -> Result<Checked, Vec<Diagnostic>> {
    check_program_with_prelude_file(program, sources, FileId(u32::MAX))
}

/// The first node id not used by the prelude: parse user programs with this `first_id`.
pub fn first_user_node_id() -> u32 {
    runic_syntax::parse_program(FileId(u32::MAX), PRELUDE_SOURCE, 0)
        .map(|p| p.next_id)
        .unwrap_or(0)
}

/// As [`check_program`], with the prelude's spans in `prelude_file` (register
/// [`PRELUDE_SOURCE`] in the source map under [`PRELUDE_NAME`] to get that id). Imports are
/// resolved against the working directory.
pub fn check_program_with_prelude_file(
    program: Program,
    sources: &SourceMap,
    prelude_file: FileId,
) -> Result<Checked, Vec<Diagnostic>> {
    let mut sources = sources.clone();
    check_program_at(program, &mut sources, prelude_file, None)
}

/// Type-check the program of the file at `main` (imports are resolved against its
/// directory; `None` means the working directory). Imported files are read, checked once
/// each, and added to `sources`, so that diagnostics in them can be rendered.
pub fn check_program_at(
    program: Program,
    sources: &mut SourceMap,
    prelude_file: FileId,
    main: Option<&Path>,
) -> Result<Checked, Vec<Diagnostic>> {
    let first = first_user_node_id();
    let first_file = sources.len() as u32;
    let files = |ck: &mut check::Checker| {
        ck.files = check::modules::FileCtx::new(main, first_file);
    };
    let (r, loaded) = match check_with(program.clone(), prelude_file, 0, first, files) {
        (Ok(None), _) => {
            // The user's ids overlap the prelude's: put the prelude after them instead.
            let start = program.next_id;
            match check_with(program, prelude_file, start, 0, files) {
                (Ok(Some(c)), l) => (Ok(c), l),
                (Ok(None), l) => (
                    Err(vec![internal(
                        "node ids of the prelude and the program overlap",
                    )]),
                    l,
                ),
                (Err(e), l) => (Err(e), l),
            }
        }
        (Ok(Some(c)), l) => (Ok(c), l),
        (Err(e), l) => (Err(e), l),
    };
    for (name, text) in loaded {
        sources.add(name, text);
    }
    r.and_then(|c| {
        let errs = uniq::check_program(&c, sources);
        if errs.is_empty() {
            Ok(c)
        } else {
            Err(errs)
        }
    })
}

fn internal(msg: &str) -> Diagnostic {
    Diagnostic {
        severity: runic_syntax::Severity::Error,
        message: format!("internal error: {msg}"),
        span: None,
        notes: vec![],
        related: vec![],
    }
}

/// Check with the prelude's ids starting at `prelude_first`; `Ok(None)` when a user node
/// id below `guard` collides with a prelude id. Also returns the imported files read.
type Attempt = (
    Result<Option<Checked>, Vec<Diagnostic>>,
    Vec<(String, String)>,
);

fn check_with(
    program: Program,
    prelude_file: FileId,
    prelude_first: u32,
    guard: u32,
    setup: impl Fn(&mut check::Checker),
) -> Attempt {
    let prelude = match runic_syntax::parse_program(prelude_file, PRELUDE_SOURCE, prelude_first) {
        Ok(p) => p,
        Err(_) => return (Err(vec![internal("the prelude does not parse")]), vec![]),
    };
    let intrinsics = match signature::intrinsic_schemes() {
        Ok(i) => i,
        Err(m) => return (Err(vec![internal(&m)]), vec![]),
    };
    let mut ck = check::Checker::new(intrinsics);
    setup(&mut ck);
    ck.next_id = prelude.next_id.max(program.next_id);
    ck.elab_decs(prelude.decs);
    if !ck.errors.is_empty() {
        let mut errs = vec![internal("the prelude does not type-check")];
        errs.extend(ck.errors);
        return (Err(errs), vec![]);
    }
    ck.id_guard = guard;
    ck.warnings.clear();
    let prelude_decs = ck.out.len();
    ck.enter_main_file();
    ck.elab_decs(program.decs);
    let loaded = std::mem::take(&mut ck.files.loaded);
    if ck.id_collision {
        return (Ok(None), loaded);
    }
    if !ck.errors.is_empty() {
        return (Err(ck.errors), loaded);
    }
    (
        Ok(Some(Checked {
            program: Program {
                decs: std::mem::take(&mut ck.out),
                next_id: ck.next_id,
            },
            prelude_decs,
            info: ck.info,
            warnings: ck.warnings,
        })),
        loaded,
    )
}

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
    /// occurrence, in the order of the callee's size parameters (for intrinsics: the order of
    /// the parameter string in `intrinsics::INTRINSICS`; for numeric-module reductions such as
    /// `f32.sum`: `n`; for user functions: their explicit `[n]` parameters). A
    /// `Size::Unknown` here means "not known statically": read it from the argument shapes
    /// (the checker reports "ambiguous size" when it could not be read from them).
    /// Operators record at the `BinOp`/section node's id.
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
