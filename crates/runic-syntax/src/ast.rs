//! The abstract syntax tree of a runic source file.
//!
//! Every expression and pattern carries a [`NodeId`] (unique within one [`Program`], handed out
//! by the parser) and a [`Span`]. The type checker records what it learns about a node in side
//! tables keyed by `NodeId` (see `runic-types`), so the tree itself stays plain syntax.
//!
//! Parentheses are not represented: the pretty-printer adds them where they are needed, and
//! printing then re-parsing gives back the same tree (modulo spans and ids; see
//! [`crate::normalize`]).

// Trees are built once and moved around by reference; boxing the big variants would only
// make every pattern match noisier.
#![allow(clippy::large_enum_variant)]

use crate::source::Span;

/// A plain name: a variable, a function, a field, a type, a module or an operator symbol.
pub type Name = String;

/// Identifies an expression or pattern node within one program.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

/// A possibly qualified name: `x`, `f32.sqrt`, `f32.+`, `M.N.x`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct QualName {
    pub quals: Vec<Name>,
    pub name: Name,
}

impl QualName {
    pub fn unqual(name: impl Into<Name>) -> Self {
        QualName {
            quals: Vec::new(),
            name: name.into(),
        }
    }
    pub fn is_qualified(&self) -> bool {
        !self.quals.is_empty()
    }
}

impl std::fmt::Display for QualName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for q in &self.quals {
            write!(f, "{q}.")?;
        }
        write!(f, "{}", self.name)
    }
}

/// The twelve primitive types (defined in `runic-prim`, shared by every stage).
pub use runic_prim::PrimType;

/// A whole source file.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub decs: Vec<Dec>,
    /// One more than the largest `NodeId` in the tree; later passes that add nodes take ids
    /// from here.
    pub next_id: u32,
}

impl Program {
    pub fn fresh_id(&mut self) -> NodeId {
        let id = NodeId(self.next_id);
        self.next_id += 1;
        id
    }
}

/// A top-level (or module-level) declaration.
#[derive(Clone, Debug, PartialEq)]
pub enum Dec {
    Val(ValBind),
    Type(TypeBind),
    /// `open mod_exp`
    Open(ModExp, Span),
    /// `import "path"`
    Import(String, Span),
    /// `local dec`
    Local(Box<Dec>, Span),
    /// `module M params [: mt] = mod_exp`
    Module(ModBind),
    /// `module type S = mt`
    ModType(ModTypeBind),
}

impl Dec {
    pub fn span(&self) -> Span {
        match self {
            Dec::Val(v) => v.span,
            Dec::Type(t) => t.span,
            Dec::Module(m) => m.span,
            Dec::ModType(m) => m.span,
            Dec::Open(_, s) | Dec::Import(_, s) | Dec::Local(_, s) => *s,
        }
    }
}

/// `module name (p: mt)... [: mt] = body`
#[derive(Clone, Debug, PartialEq)]
pub struct ModBind {
    pub name: Name,
    pub name_span: Span,
    pub params: Vec<ModParam>,
    pub sig: Option<ModTypeExp>,
    pub body: ModExp,
    pub span: Span,
}

/// `(name: mt)`, a parameter of a parametric module.
#[derive(Clone, Debug, PartialEq)]
pub struct ModParam {
    pub name: Name,
    pub name_span: Span,
    pub sig: ModTypeExp,
    pub span: Span,
}

/// `module type name = mt`
#[derive(Clone, Debug, PartialEq)]
pub struct ModTypeBind {
    pub name: Name,
    pub name_span: Span,
    pub def: ModTypeExp,
    pub span: Span,
}

/// A module expression (spec §4.9).
#[derive(Clone, Debug, PartialEq)]
pub enum ModExp {
    /// `M`, `M.N`
    Var(QualName, Span),
    /// `{ decs }`
    Struct(Vec<Dec>, Span),
    /// `import "path"`
    Import(String, Span),
    /// `m : mt` (opaque) or, when the flag is set, `m :> mt` (transparent).
    Ascribe(Box<ModExp>, ModTypeExp, bool, Span),
    /// `f m`: application of a parametric module.
    Apply(Box<ModExp>, Box<ModExp>, Span),
    /// `\(p: mt) [: mt] -> m`
    Lambda(ModParam, Option<ModTypeExp>, Box<ModExp>, Span),
}

impl ModExp {
    pub fn span(&self) -> Span {
        match self {
            ModExp::Var(_, s)
            | ModExp::Struct(_, s)
            | ModExp::Import(_, s)
            | ModExp::Ascribe(_, _, _, s)
            | ModExp::Apply(_, _, s)
            | ModExp::Lambda(_, _, _, s) => *s,
        }
    }
}

/// A module type (signature) expression.
#[derive(Clone, Debug, PartialEq)]
pub enum ModTypeExp {
    /// `S`, `M.S`
    Var(QualName, Span),
    /// `{ specs }`
    Sig(Vec<Spec>, Span),
    /// `mt with t params = type`
    With(Box<ModTypeExp>, QualName, Vec<TypeParam>, TypeExp, Span),
    /// `(p: mt) -> mt` or `mt -> mt`
    Arrow(Option<Name>, Box<ModTypeExp>, Box<ModTypeExp>, Span),
}

impl ModTypeExp {
    pub fn span(&self) -> Span {
        match self {
            ModTypeExp::Var(_, s)
            | ModTypeExp::Sig(_, s)
            | ModTypeExp::With(_, _, _, _, s)
            | ModTypeExp::Arrow(_, _, _, s) => *s,
        }
    }
}

/// One specification in a module type.
#[derive(Clone, Debug, PartialEq)]
pub enum Spec {
    /// `val name tparams : type`
    Val {
        name: Name,
        name_span: Span,
        type_params: Vec<TypeParam>,
        ty: TypeExp,
        span: Span,
    },
    /// `type[^~] name params [= type]`
    Type {
        name: Name,
        lifted: Liftedness,
        params: Vec<TypeParam>,
        def: Option<TypeExp>,
        span: Span,
    },
    /// `module name : mt`
    Module {
        name: Name,
        sig: ModTypeExp,
        span: Span,
    },
    /// `include mt`
    Include(ModTypeExp, Span),
}

impl Spec {
    pub fn span(&self) -> Span {
        match self {
            Spec::Val { span, .. } | Spec::Type { span, .. } | Spec::Module { span, .. } => *span,
            Spec::Include(_, s) => *s,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValKind {
    Def,
    Entry,
    /// Deprecated top-level `let`; means `def`.
    Let,
}

/// `def name tparams params [: ret] = body` (also `entry`, and operator definitions, whose
/// `name` is the symbol, e.g. `"<+>"`).
#[derive(Clone, Debug, PartialEq)]
pub struct ValBind {
    pub kind: ValKind,
    pub name: Name,
    pub name_span: Span,
    pub type_params: Vec<TypeParam>,
    pub params: Vec<Pat>,
    pub ret: Option<TypeExp>,
    pub body: Exp,
    pub attrs: Vec<Attr>,
    /// Text of a preceding `-- |` documentation comment, if any.
    pub doc: Option<String>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Liftedness {
    /// `'a`, `type`
    Unlifted,
    /// `'~a`, `type~`
    SizeLifted,
    /// `'^a`, `type^`
    Lifted,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeParam {
    /// `[n]`
    Size(Name, Span),
    /// `'a`, `'~a`, `'^a`
    Type(Name, Liftedness, Span),
}

impl TypeParam {
    pub fn name(&self) -> &Name {
        match self {
            TypeParam::Size(n, _) | TypeParam::Type(n, _, _) => n,
        }
    }
    pub fn span(&self) -> Span {
        match self {
            TypeParam::Size(_, s) | TypeParam::Type(_, _, s) => *s,
        }
    }
}

/// `type[^~] name params = def`
#[derive(Clone, Debug, PartialEq)]
pub struct TypeBind {
    pub name: Name,
    pub lifted: Liftedness,
    pub params: Vec<TypeParam>,
    pub def: TypeExp,
    pub attrs: Vec<Attr>,
    pub doc: Option<String>,
    pub span: Span,
}

/// `#[attr]`: `NAME`, `INT` or `NAME(attr, ...)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attr {
    Name(Name),
    Int(i64),
    Call(Name, Vec<Attr>),
}

/// A type as written in the source.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeExp {
    /// `i32`, `t`, `M.t`
    Var(QualName, Span),
    /// `t [n] u8`: application of a type abbreviation to one argument (curried).
    Apply(Box<TypeExp>, Box<TypeArg>, Span),
    /// `(t1, t2, ...)`; `()` is the empty tuple. Never has exactly one element.
    Tuple(Vec<TypeExp>, Span),
    /// `{f1: t1, ...}`, fields in source order.
    Record(Vec<(Name, TypeExp)>, Span),
    /// `[d]t`
    Array(SizeExp, Box<TypeExp>, Span),
    /// `*t`
    Unique(Box<TypeExp>, Span),
    /// `t1 -> t2` or `(x: t1) -> t2`
    Arrow(Option<Name>, Box<TypeExp>, Box<TypeExp>, Span),
    /// `#c t1 t2 | #d | ...`, constructors in source order.
    Sum(Vec<(Name, Vec<TypeExp>)>, Span),
    /// `?[n][m].t`
    Exists(Vec<Name>, Box<TypeExp>, Span),
}

impl TypeExp {
    pub fn span(&self) -> Span {
        match self {
            TypeExp::Var(_, s)
            | TypeExp::Apply(_, _, s)
            | TypeExp::Tuple(_, s)
            | TypeExp::Record(_, s)
            | TypeExp::Array(_, _, s)
            | TypeExp::Unique(_, s)
            | TypeExp::Arrow(_, _, _, s)
            | TypeExp::Sum(_, s)
            | TypeExp::Exists(_, _, s) => *s,
        }
    }

    /// The argument types of a function type (none for other types) and its final result.
    fn arrows(&self) -> (Vec<&TypeExp>, &TypeExp) {
        let mut args = Vec::new();
        let mut t = self;
        while let TypeExp::Arrow(_, a, res, _) = t {
            args.push(&**a);
            t = res;
        }
        (args, t)
    }

    /// Whether this is an array type on its face (`[n]t`, `*[n]t`).
    pub fn is_array(&self) -> bool {
        match self {
            TypeExp::Array(..) => true,
            TypeExp::Unique(inner, _) => inner.is_array(),
            _ => false,
        }
    }

    /// What a function value bound to a parameter of this declared type must return, with
    /// the type's number of arguments: its declared result when that is an array type
    /// (`[n]i32 -> [n]i32`), or the shape of its own argument whose type is the plain type
    /// parameter it returns (`t -> t`: any two values of type `t` have one shape). `None`
    /// for other types, whose results cannot differ in shape from the declaration.
    pub fn result_check<'t, V>(&'t self, params: &[TypeParam]) -> Option<(usize, Expect<'t, V>)> {
        let (args, ret) = self.arrows();
        if args.is_empty() {
            return None;
        }
        let expect = match ret.plain_type_param(params) {
            Some(t) => {
                let index = args
                    .iter()
                    .position(|a| a.plain_type_param(params) == Some(t))?;
                Expect::LikeArg { index, seen: None }
            }
            None if ret.is_array() => Expect::Declared(ret),
            None => return None,
        };
        Some((args.len(), expect))
    }

    /// The plain (unlifted) type parameter among `params` that this type names, if any.
    fn plain_type_param<'p>(&self, params: &'p [TypeParam]) -> Option<&'p str> {
        let TypeExp::Var(q, _) = self else {
            return None;
        };
        params.iter().find_map(|tp| match tp {
            TypeParam::Type(n, Liftedness::Unlifted, _) if q.quals.is_empty() && q.name == *n => {
                Some(n.as_str())
            }
            _ => None,
        })
    }
}

/// The shape a function value must return when it was bound to a parameter of a declared
/// function type ([`TypeExp::result_check`]); `V` is a backend's value.
#[derive(Clone, Debug)]
pub enum Expect<'t, V> {
    /// The declared result type, with the sizes as the callee bound them.
    Declared(&'t TypeExp),
    /// The shape of the function's own argument number `index`; `seen` once it is given.
    LikeArg { index: usize, seen: Option<V> },
}

impl<V: Clone> Expect<'_, V> {
    /// This expectation after the function's argument number `given` (`arg`).
    pub fn after_arg(&self, given: usize, arg: &V) -> Self {
        match self {
            Expect::LikeArg { index, seen: None } if *index == given => Expect::LikeArg {
                index: *index,
                seen: Some(arg.clone()),
            },
            e => e.clone(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeArg {
    Size(SizeExp),
    Type(TypeExp),
}

/// The size in `[d]`: `[]` (anonymous) or `[e]`.
#[derive(Clone, Debug, PartialEq)]
pub enum SizeExp {
    Anon(Span),
    Exp(Box<Exp>),
}

/// A literal as written (its type is decided by the type checker unless it has a suffix).
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    /// Integer literal: exact value (underscores removed) and optional suffix.
    Int {
        value: u128,
        suffix: Option<PrimType>,
    },
    /// Float literal. `text` is the decimal text without underscores and suffix (e.g.
    /// `"1.5e3"`), so that it can be rounded directly to any float type; hexadecimal floats
    /// are stored already converted, as the shortest decimal text of their f64 value.
    Float {
        text: String,
        suffix: Option<PrimType>,
    },
    Bool(bool),
    /// Character literal: its code point (typed like an unsuffixed integer).
    Char(u32),
    /// String literal: its UTF-8 bytes (a `[n]u8`).
    String(Vec<u8>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Exp {
    pub id: NodeId,
    pub span: Span,
    pub kind: ExpKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum RangeEnd {
    /// `..<`
    UpToExclusive,
    /// `..>`
    DownToExclusive,
    /// `...`
    Inclusive,
}

/// One component of an index: `e`, or a slice `i:j:s` with any part omitted.
#[derive(Clone, Debug, PartialEq)]
pub enum DimIndex {
    Index(Exp),
    Slice {
        start: Option<Exp>,
        end: Option<Exp>,
        stride: Option<Exp>,
    },
}

/// A step of an in-place or functional update path: `[i, j]` or `.f` / `f`.
#[derive(Clone, Debug, PartialEq)]
pub enum UpdateStep {
    Index(Vec<DimIndex>, Span),
    Field(Name, Span),
}

/// A step of a projection section `(.f[i].g)`.
#[derive(Clone, Debug, PartialEq)]
pub enum ProjStep {
    Field(Name),
    Index(Vec<DimIndex>),
}

#[derive(Clone, Debug, PartialEq)]
pub enum RecordField {
    /// `f = e`
    Explicit(Name, Exp),
    /// `f`, meaning `f = f`
    Punned(Name, Span),
}

/// A binary operator as used in an expression or section.
#[derive(Clone, Debug, PartialEq)]
pub struct BinOpName {
    /// The operator symbol (`+`, `f32.+`, `<+>`) or, for backtick operators, the function name.
    pub name: QualName,
    /// True for `` `f` ``.
    pub backtick: bool,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum LoopForm {
    /// `for i < bound`
    For {
        var: Name,
        var_span: Span,
        bound: Box<Exp>,
    },
    /// `for pat in array`
    ForIn { pat: Pat, array: Box<Exp> },
    /// `while cond`
    While(Box<Exp>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct MatchCase {
    pub pat: Pat,
    pub body: Exp,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExpKind {
    Literal(Literal),
    /// A name, possibly dotted. Before type checking, `a.b.c` with all components plain names
    /// is a `Var` whose meaning (module access or field projection) is not yet known; the
    /// type checker rewrites projections into [`ExpKind::Project`].
    Var(QualName),
    /// `(e1, ..., en)`, n ≠ 1; `()` is the empty tuple.
    Tuple(Vec<Exp>),
    Record(Vec<RecordField>),
    /// `[e1, ..., en]`
    ArrayLit(Vec<Exp>),
    /// `start [.. second] (..< | ..> | ...) end`
    Range {
        start: Box<Exp>,
        second: Option<Box<Exp>>,
        end: Box<Exp>,
        kind: RangeEnd,
    },
    /// `e.f` (also `e.0`)
    Project(Box<Exp>, Name),
    /// `a[i, j:k]`
    Index(Box<Exp>, Vec<DimIndex>),
    /// `f a1 a2 ...` (at least one argument).
    Apply(Box<Exp>, Vec<Exp>),
    /// Prefix `-e`
    Negate(Box<Exp>),
    /// Prefix `!e`
    Not(Box<Exp>),
    /// `lhs op rhs`, including `&&`, `||` and backtick operators.
    BinOp {
        op: BinOpName,
        lhs: Box<Exp>,
        rhs: Box<Exp>,
    },
    /// `(op)`
    OpSection(BinOpName),
    /// `(e op)`
    LeftSection {
        op: BinOpName,
        lhs: Box<Exp>,
    },
    /// `(op e)`
    RightSection {
        op: BinOpName,
        rhs: Box<Exp>,
    },
    /// `(.f.g)`, `(.[i])`
    ProjSection(Vec<ProjStep>),
    /// `\p1 p2 [: t] -> body`
    Lambda {
        params: Vec<Pat>,
        ret: Option<TypeExp>,
        body: Box<Exp>,
    },
    If {
        cond: Box<Exp>,
        then_branch: Box<Exp>,
        else_branch: Box<Exp>,
    },
    /// `let [n] pat = rhs in body`
    LetPat {
        sizes: Vec<(Name, Span)>,
        pat: Pat,
        rhs: Box<Exp>,
        body: Box<Exp>,
    },
    /// `let f tparams params [: ret] = rhs in body`
    LetFun {
        name: Name,
        name_span: Span,
        type_params: Vec<TypeParam>,
        params: Vec<Pat>,
        ret: Option<TypeExp>,
        rhs: Box<Exp>,
        body: Box<Exp>,
    },
    /// `let a[i].f = rhs in body` (in-place update of the variable `name`).
    LetUpdate {
        name: Name,
        name_span: Span,
        steps: Vec<UpdateStep>,
        rhs: Box<Exp>,
        body: Box<Exp>,
    },
    /// `target with steps = value`
    Update {
        target: Box<Exp>,
        steps: Vec<UpdateStep>,
        value: Box<Exp>,
    },
    /// `loop pat [= init] form do body`
    Loop {
        pat: Pat,
        init: Option<Box<Exp>>,
        form: LoopForm,
        body: Box<Exp>,
    },
    /// `match e case p -> e ...`
    Match {
        scrutinee: Box<Exp>,
        cases: Vec<MatchCase>,
    },
    /// `e : t`
    Ascribe(Box<Exp>, TypeExp),
    /// `e :> t`
    Coerce(Box<Exp>, TypeExp),
    /// `assert cond body`
    Assert {
        cond: Box<Exp>,
        body: Box<Exp>,
    },
    /// `#[attr] e`
    Attr(Attr, Box<Exp>),
    /// `#c e1 ... en`
    Constr(Name, Vec<Exp>),
    /// `M.(e)`
    LocalOpen(QualName, Box<Exp>),
    /// `???`
    Hole,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Pat {
    pub id: NodeId,
    pub span: Span,
    pub kind: PatKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum PatKind {
    /// `x`, or an operator binding `(+)` (the name is then the symbol).
    Var(Name),
    /// `_`
    Wildcard,
    /// `(p1, ..., pn)`, n ≠ 1; `()` is the empty tuple pattern.
    Tuple(Vec<Pat>),
    /// `{f1 = p1, f2, f3: t}`; a punned field `f2` is stored as `("f2", Var "f2")`, `f3: t`
    /// as `("f3", Ascribe(Var "f3", t))`.
    Record(Vec<(Name, Pat)>),
    /// `p : t`
    Ascribe(Box<Pat>, TypeExp),
    /// A literal pattern; `negated` for `-3`, `-0.5`.
    Literal { lit: Literal, negated: bool },
    /// `#c p1 ... pn`
    Constr(Name, Vec<Pat>),
    /// `#[attr] p`
    Attr(Attr, Box<Pat>),
}
