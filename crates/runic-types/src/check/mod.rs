//! The checker proper: name resolution, inference of expressions and patterns, and the
//! per-definition solving steps of Section 6.1. This module holds the `Checker` state and the
//! helpers every part shares; each submodule adds the `Checker` methods for one part.

mod apply;
mod binders;
mod declarations;
mod def;
mod entry;
mod exp;
mod export;
mod hoist;
mod index;
mod literal;
pub(crate) mod modules;
mod names;
mod pat;
mod pipe;
mod scope;
mod type_exp;

use crate::infer_ty::{map_sizes, Cons, Subst, Sz, Tv, T};
use crate::TypeInfo;
use runic_syntax::ast::*;
use runic_syntax::{Diagnostic, Span};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

pub(crate) type R<X> = Result<X, Box<Diagnostic>>;

/// Names with the spans of their definitions.
type NamedSpans = Vec<(Name, Span)>;

pub(crate) fn err<X>(span: Span, msg: impl Into<String>) -> R<X> {
    Err(Box::new(Diagnostic::error(span, msg)))
}

/// A (possibly) polymorphic type.
#[derive(Clone, Debug)]
pub(crate) struct Scheme {
    pub tparams: Vec<Name>,
    /// Size parameters reported in `TypeInfo::size_args`, in order.
    pub sparams: Vec<Name>,
    /// Size parameters instantiated freshly but not reported (anonymous parameter sizes).
    pub hidden: Vec<Name>,
    /// Existential sizes: a fresh rigid unknown per occurrence.
    pub exist: Vec<Name>,
    /// Rigid unknowns of the definition that stand for anonymous parameter sizes.
    pub implicit: Vec<u32>,
    /// Type parameters declared unlifted (`'a`, `'~a`): no instance may be functional.
    pub no_fun: Vec<Name>,
    /// Type parameters declared plainly unlifted (`'a`): no instance may be size-lifted
    /// either (their values may be array elements).
    pub strict: Vec<Name>,
    /// False for monomorphic local bindings (used as is).
    pub poly: bool,
    /// The number of parameters a definition takes (its body runs once that many arguments
    /// are given); `None` when every arrow of the type is a parameter (built-ins, specs).
    pub arity: Option<usize>,
    pub ty: T,
}

impl Default for Scheme {
    fn default() -> Scheme {
        Scheme {
            tparams: vec![],
            sparams: vec![],
            hidden: vec![],
            exist: vec![],
            implicit: vec![],
            no_fun: vec![],
            strict: vec![],
            poly: false,
            arity: None,
            ty: T::unit(),
        }
    }
}

impl Scheme {
    pub fn mono(ty: T) -> Scheme {
        Scheme {
            ty,
            ..Scheme::default()
        }
    }
}

enum Scope {
    Val(Name, Rc<Scheme>),
    Open(PrimType),
    /// `M.(e)` for a module `M` that is not a numeric module.
    OpenEnv(Rc<modules::Env>),
    TParam(Name),
}

#[derive(Debug)]
pub(crate) struct TypeAbbr {
    params: Vec<TypeParam>,
    body: T,
    /// As declared (`type`, `type~`, `type^`), for matching against module types.
    lifted: Liftedness,
}

/// How an anonymous size `[]` in a written type is read.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Anon {
    /// Inferred from context.
    Flex,
    /// A parameter of a definition: a rigid unknown, instantiated per use.
    Implicit,
    /// A result: existential.
    Exist,
}

struct Occurrence {
    id: NodeId,
    span: Span,
    name: String,
    sizes: Vec<(Name, Sz, bool)>,
    /// The rigid unknowns that have a run-time name at the occurrence (see
    /// `Checker::named_unknowns`).
    named: Vec<(u32, Name)>,
}

struct LitCheck {
    ty: T,
    lit: Literal,
    negated: bool,
    span: Span,
}

/// What an unqualified or qualified name denotes.
enum Denot {
    /// A value, and the flat name a use must be rewritten to (none for locals).
    Value(Rc<Scheme>, Option<Name>),
    /// A member of a numeric module.
    Member(PrimType, Name),
    /// An overloaded built-in operator.
    Builtin(Name),
}

pub(crate) struct Checker {
    pub s: Subst,
    scopes: Vec<Scope>,
    intrinsics: HashMap<Name, Rc<Scheme>>,
    /// Declarations in scope, outermost (the prelude) first.
    frames: Vec<modules::Frame>,
    /// The flat program being produced.
    pub out: Vec<Dec>,
    /// Every flat name emitted, with its scheme.
    flat: HashMap<Name, Rc<Scheme>>,
    flat_used: HashSet<Name>,
    /// The path of module names flat names are formed from; empty at the main file's top.
    prefix: Vec<Name>,
    /// Is the main file's top level being checked (entry points are only found there)?
    in_main: bool,
    /// Above zero while a parametric module's body is checked on its own (its definitions
    /// are discarded afterwards).
    generic: u32,
    /// The definitions behind abstract types, by their unique constructor name.
    abstract_defs: HashMap<Name, Rc<TypeAbbr>>,
    pub files: modules::FileCtx,
    pub next_id: u32,
    // Per top-level definition.
    var_start: usize,
    exp_rec: Vec<(NodeId, T, Span)>,
    pat_rec: Vec<(NodeId, T)>,
    occs: Vec<Occurrence>,
    lits: Vec<LitCheck>,
    eqs: Vec<(T, Span)>,
    matches: Vec<(Span, T, Vec<Pat>)>,
    irrefutable: Vec<(Span, T)>,
    origins: Vec<(Tv, Span)>,
    implicit: Vec<u32>,
    def_span: Span,
    flex_out: HashMap<u32, u32>,
    // Outputs.
    pub info: TypeInfo,
    pub errors: Vec<Diagnostic>,
    pub warnings: Vec<Diagnostic>,
    /// Node ids below this belong to the prelude; seeing one in the user's file means the
    /// two id ranges collide.
    pub id_guard: u32,
    pub id_collision: bool,
    /// The functions whose bodies are being checked, innermost last: a use of one of them
    /// inside is a recursive call.
    defining: Vec<(Name, Span)>,
    /// Per definition: instances of unlifted type parameters (with the parameter and the
    /// use), and the types of `if`/`match` results and loop parameters; none may be a
    /// function (checked once the definition is solved).
    unlifted: Vec<(T, Name, Span)>,
    /// Per definition: instances of `'a` parameters, which may not be size-lifted; and the
    /// definition's own size-lifted type parameters (`'~b`).
    strict_unlifted: Vec<(T, Name, Span)>,
    size_lifted_params: Vec<Name>,
    /// Per definition: the types of lambda parameters (a functional one must be fixed).
    lambda_params: Vec<(T, Span)>,
    no_fun_sites: Vec<(T, Span, &'static str)>,
    /// Per declaration list being checked, its value names and the index of the next one:
    /// a use of a name defined later is a forward reference (as in mutual recursion).
    later: Vec<(Rc<NamedSpans>, usize)>,
    /// Rigid unknowns that are the sizes of a `let`-bound variable in scope, with the hidden
    /// size name the `let` binds at run time (innermost last).
    named_unknowns: Vec<(u32, Name)>,
    /// Names bound to the size of a value (`let [n] ys = xs`, `let n = length xs`): equating
    /// an anonymous parameter size with one is not a scope violation.
    size_witnesses: Vec<Name>,
    /// Per definition: types written in ascriptions (`e : t`, `(p: t)` in a `let`), whose
    /// sizes in sum payloads must be settled by the time the definition is solved.
    /// With each, the number of rigid unknowns before it was converted (the unknowns it
    /// made are the anonymous sizes of the abbreviations it uses).
    ascribed: Vec<(Span, T, u32)>,
}

fn ordinal(i: usize) -> String {
    match i {
        1 => "first".into(),
        2 => "second".into(),
        3 => "third".into(),
        4 => "fourth".into(),
        5 => "fifth".into(),
        6 => "sixth".into(),
        _ => format!("{i}th"),
    }
}

fn count_sizes(t: &T, out: &mut Vec<Sz>) {
    map_sizes(t, &mut |s| {
        out.push(s.clone());
        s.clone()
    });
}

impl Checker {
    pub fn new(intrinsics: HashMap<Name, Rc<Scheme>>) -> Checker {
        Checker {
            s: Subst::default(),
            scopes: Vec::new(),
            intrinsics,
            frames: vec![modules::Frame::default()],
            out: Vec::new(),
            flat: HashMap::new(),
            flat_used: HashSet::new(),
            prefix: Vec::new(),
            in_main: false,
            generic: 0,
            abstract_defs: HashMap::new(),
            files: modules::FileCtx::default(),
            next_id: 0,
            var_start: 0,
            exp_rec: Vec::new(),
            pat_rec: Vec::new(),
            occs: Vec::new(),
            lits: Vec::new(),
            eqs: Vec::new(),
            matches: Vec::new(),
            irrefutable: Vec::new(),
            origins: Vec::new(),
            implicit: Vec::new(),
            def_span: Span::default(),
            flex_out: HashMap::new(),
            info: TypeInfo::default(),
            errors: Vec::new(),
            warnings: Vec::new(),
            id_guard: 0,
            id_collision: false,
            defining: Vec::new(),
            unlifted: Vec::new(),
            strict_unlifted: Vec::new(),
            size_lifted_params: Vec::new(),
            lambda_params: Vec::new(),
            no_fun_sites: Vec::new(),
            later: Vec::new(),
            named_unknowns: Vec::new(),
            size_witnesses: Vec::new(),
            ascribed: Vec::new(),
        }
    }

    fn fresh_prims(&mut self, ps: Vec<PrimType>, span: Span) -> T {
        let t = self.s.fresh(Cons::Prims(ps));
        if let T::Var(v) = t {
            self.origins.push((v, span));
        }
        t
    }

    /// [`Checker::expect`] for the types of two branches (or a loop parameter and the
    /// loop's body), whose sizes may differ: the caller joins them.
    fn expect_joinable(&mut self, expected: &T, found: &T, span: Span, what: &str) -> R<()> {
        self.s.joining = true;
        let r = self.expect(expected, found, span, what);
        self.s.joining = false;
        r
    }

    fn expect(&mut self, expected: &T, found: &T, span: Span, what: &str) -> R<()> {
        self.s.at = Some(span);
        let r = self.s.unify(expected, found);
        self.s.at = None;
        match r {
            Ok(()) => Ok(()),
            Err(c) => {
                let mut d = Diagnostic::error(span, c.message);
                let informative = |t: &T| !matches!(self.s.shallow(t), T::Var(_));
                if !what.is_empty() && informative(expected) && informative(found) {
                    d = d.with_note(format!(
                        "Expected type \"{}\" but found \"{}\" in {what}.",
                        self.s.show(expected),
                        self.s.show(found)
                    ));
                }
                Err(Box::new(d))
            }
        }
    }

    pub fn fresh_id(&mut self) -> NodeId {
        self.next_id += 1;
        NodeId(self.next_id - 1)
    }
}
