//! The IR's data types.

pub use runic_prim::{BinOp, Prim, PrimType, UnOp};
use std::fmt;

/// A variable. Ids are unique within a [`Prog`]; [`Prog::names`] gives each a name hint for
/// printing (`xs_12`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VName(pub u32);

/// Hands out fresh variables and remembers, for each, a name hint for printing and (when
/// known) its type. Builders record the type of every variable they bind, so that rules
/// can ask for the type of any operand instead of keeping their own tables.
#[derive(Clone, Debug, Default)]
pub struct NameSource {
    hints: Vec<String>,
    types: Vec<Option<Type>>,
}

impl NameSource {
    pub fn fresh(&mut self, hint: &str) -> VName {
        self.hints.push(hint.to_string());
        VName(self.hints.len() as u32 - 1)
    }
    /// A fresh variable of a known type.
    pub fn fresh_typed(&mut self, hint: &str, ty: Type) -> VName {
        let v = self.fresh(hint);
        self.set_type(v, ty);
        v
    }
    pub fn hint(&self, v: VName) -> &str {
        self.hints
            .get(v.0 as usize)
            .map(String::as_str)
            .unwrap_or("v")
    }
    /// The recorded type of `v`, if any.
    pub fn type_of(&self, v: VName) -> Option<&Type> {
        self.types.get(v.0 as usize).and_then(Option::as_ref)
    }
    pub fn set_type(&mut self, v: VName, ty: Type) {
        let i = v.0 as usize;
        if self.types.len() <= i {
            self.types.resize(i + 1, None);
        }
        self.types[i] = Some(ty);
    }
    /// Records the type of every variable bound in `x` (after a pass that built IR without
    /// a builder, or changed types, so that the table is true again).
    pub fn record_types<T: crate::traverse::Walk + ?Sized>(&mut self, x: &T) {
        crate::traverse::record_binder_types(x, self);
    }
    pub fn len(&self) -> usize {
        self.hints.len()
    }
    pub fn is_empty(&self) -> bool {
        self.hints.is_empty()
    }
}

/// The identity of a lambda: stable across passes that keep the lambda (a clone has the
/// same id), fresh for a renamed copy. Caches of compiled code key on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LamId(pub u32);

impl LamId {
    /// An id no other lambda of this process has.
    pub fn fresh() -> LamId {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        LamId(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

impl Default for LamId {
    fn default() -> Self {
        LamId::fresh()
    }
}

/// A source location (byte range in a file of the program's source map). The IR keeps
/// locations as plain numbers so that it does not depend on the front end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Loc {
    pub file: u32,
    pub start: u32,
    pub end: u32,
}

/// Where a statement came from: its own location plus the call sites it was inlined
/// through (innermost first), so run-time errors report the same backtrace as the
/// interpreter.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct SrcInfo {
    pub loc: Option<Loc>,
    pub inlined_from: Vec<Loc>,
    /// `#[stripmine(k)]` on a loop: reverse-mode AD checkpoints it as `k + 1` nested loops
    /// (`Some(0)`: never strip-mine). `None`: AD decides (language.md §4.6 hints).
    pub stripmine: Option<u32>,
}

/// An operand: a variable or a constant.
#[derive(Clone, Debug, PartialEq)]
pub enum SubExp {
    Var(VName),
    Const(Prim),
}

impl SubExp {
    pub fn i64(v: i64) -> SubExp {
        SubExp::Const(Prim::I64(v))
    }
    pub fn as_var(&self) -> Option<VName> {
        match self {
            SubExp::Var(v) => Some(*v),
            SubExp::Const(_) => None,
        }
    }
}

/// Types of IR variables. Array dimensions are `i64` operands.
#[derive(Clone, Debug, PartialEq)]
pub enum Type {
    Prim(PrimType),
    Array {
        elem: PrimType,
        shape: Vec<SubExp>,
    },
    /// A write-only accumulator for arrays of the given shape and element types (used by
    /// reverse-mode AD for adjoints of free arrays): see [`Exp::WithAcc`].
    Acc {
        shape: Vec<SubExp>,
        elems: Vec<PrimType>,
    },
}

impl Type {
    pub fn rank(&self) -> usize {
        match self {
            Type::Array { shape, .. } => shape.len(),
            _ => 0,
        }
    }
    pub fn elem(&self) -> Option<PrimType> {
        match self {
            Type::Prim(p) | Type::Array { elem: p, .. } => Some(*p),
            Type::Acc { .. } => None,
        }
    }
    /// This type with an extra outer dimension.
    pub fn array_of(&self, outer: SubExp) -> Type {
        match self {
            Type::Prim(p) => Type::Array {
                elem: *p,
                shape: vec![outer],
            },
            Type::Array { elem, shape } => {
                let mut s = vec![outer];
                s.extend(shape.iter().cloned());
                Type::Array {
                    elem: *elem,
                    shape: s,
                }
            }
            Type::Acc { .. } => self.clone(),
        }
    }
    /// The type of one row (the outer dimension removed).
    pub fn row(&self) -> Type {
        match self {
            Type::Array { elem, shape } if shape.len() == 1 => Type::Prim(*elem),
            Type::Array { elem, shape } => Type::Array {
                elem: *elem,
                shape: shape[1..].to_vec(),
            },
            t => t.clone(),
        }
    }
}

/// A typed variable binding.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: VName,
    pub ty: Type,
}

/// One component of an index, kept in source form so that bounds errors can print the
/// index exactly as written (language.md §7.6).
#[derive(Clone, Debug, PartialEq)]
pub enum DimIndex {
    Fix(SubExp),
    Slice {
        start: Option<SubExp>,
        end: Option<SubExp>,
        stride: Option<SubExp>,
    },
}

impl DimIndex {
    /// A slice from 0 by steps of 1 (`a[:, j]`, `a[0:n, j]`) that ends at `dim`, or
    /// anywhere when `dim` is `None` (a caller that checks the length at run time).
    pub fn is_prefix_slice(&self, dim: Option<&SubExp>) -> bool {
        let is = |e: &Option<SubExp>, k: i128| match e {
            None => true,
            Some(SubExp::Const(c)) => c.as_int() == Some(k),
            Some(_) => false,
        };
        match self {
            DimIndex::Slice { start, end, stride } => {
                is(start, 0)
                    && is(stride, 1)
                    && dim.is_none_or(|d| end.as_ref().is_none_or(|e| e == d))
            }
            DimIndex::Fix(_) => false,
        }
    }
}

/// Scalar operations of three operands (language.md §10.9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TernOp {
    /// `set_bit i x b`
    SetBit,
    /// `mad_hi a b c`
    MadHi,
    /// `lerp v0 v1 t`
    Lerp,
    /// `mad a b c`
    Mad,
    /// `fma a b c` (single rounding)
    Fma,
}

/// `..<`, `..>` or `...` (shared with the interpreter through `runic-prim`).
pub use runic_prim::RangeKind;

/// Operations that are not control flow and not SOACs.
#[derive(Clone, Debug, PartialEq)]
pub enum BasicOp {
    SubExp(SubExp),
    BinOp(BinOp, SubExp, SubExp),
    UnOp(UnOp, SubExp),
    /// Three-operand scalar operations (module members such as `f32.fma`).
    TernOp(TernOp, SubExp, SubExp, SubExp),
    Convert(PrimType, SubExp),
    /// `a[i, j:k]` (a row, an element, or a slice).
    Index(VName, Vec<DimIndex>),
    /// `a with [idx] = v`: consumes `a`.
    Update(VName, Vec<DimIndex>, SubExp),
    /// `start [.. second] (..< | ..> | ...) end` at integer type `elem` (iota n is
    /// `0 .. 1 ..< n` at i64).
    Range {
        start: SubExp,
        second: Option<SubExp>,
        end: SubExp,
        kind: RangeKind,
        elem: PrimType,
    },
    /// An array of the given shape filled with `value` (a scalar or an array).
    Replicate(Vec<SubExp>, SubExp),
    /// Reinterpret a row-major array with a new shape of the same element count (a
    /// mismatch is unflatten's run-time error).
    Reshape {
        arr: VName,
        shape: Vec<SubExp>,
    },
    /// Permute the dimensions (`[1, 0]` is transpose).
    Rearrange(Vec<usize>, VName),
    /// Concatenate along dimension `dim`.
    Concat(usize, Vec<VName>),
    Copy(VName),
    /// An array literal of rows (scalars or arrays of equal shape).
    ArrayLit(Vec<SubExp>, Type),
    /// An array of the given shape with unspecified contents.
    Scratch(PrimType, Vec<SubExp>),
    /// The size of dimension `dim` of an array.
    ArraySize(VName, usize),
    /// Fail with `message` (already worded per language.md §9.6) unless `cond` holds.
    Assert {
        cond: SubExp,
        message: String,
    },
    /// Fail with the shape-mismatch message of §9.6 unless `arr` has exactly `shape`;
    /// `type_text` is the expected type as the user wrote it (e.g. `[1][4]i64`). In
    /// `type_text`, `{k}` (a decimal index) stands for the run-time value of `shape[k]`, so
    /// that messages show sizes known only at run time (`[{0}]i32` prints as `[2]i32`).
    ShapeCheck {
        arr: VName,
        shape: Vec<SubExp>,
        type_text: String,
    },
    /// Write `vals` at index `is` of the accumulator `acc` (out-of-bounds writes are
    /// ignored); returns the updated accumulator.
    UpdateAcc {
        acc: VName,
        is: Vec<SubExp>,
        vals: Vec<SubExp>,
    },
}

/// A lambda: parameters, a body, and the types of its results.
///
/// Equality ignores the [`LamId`]: two lambdas are equal when their code is.
#[derive(Clone, Debug)]
pub struct Lambda {
    pub params: Vec<Param>,
    pub body: Body,
    pub ret: Vec<Type>,
    pub id: LamId,
}

impl Lambda {
    /// A lambda with a fresh identity.
    pub fn new(params: Vec<Param>, body: Body, ret: Vec<Type>) -> Lambda {
        Lambda {
            params,
            body,
            ret,
            id: LamId::fresh(),
        }
    }

    /// The operator and operand type of `\x y -> x ⊕ y` on scalars (its parameters in
    /// this order): the lambdas the executor folds with its own loops, the accumulators'
    /// `+`.
    pub fn binop(&self) -> Option<(BinOp, PrimType)> {
        self.single_binop(false)
    }

    /// As [`Lambda::binop`], also for `\x y -> y ⊕ x` when `⊕` is commutative (`+`, `*`,
    /// `min`, `max`): what the derivative rules of an operator go by.
    pub fn binop_either_order(&self) -> Option<(BinOp, PrimType)> {
        self.single_binop(true)
    }

    fn single_binop(&self, either_order: bool) -> Option<(BinOp, PrimType)> {
        let ([x, y], [s], [SubExp::Var(r)], Type::Prim(t)) = (
            self.params.as_slice(),
            self.body.stms.as_slice(),
            self.body.result.as_slice(),
            self.params.first().map(|p| &p.ty)?,
        ) else {
            return None;
        };
        let op = s.binop_of(x.name, y.name, either_order)?;
        (s.pat.len() == 1 && s.binds(*r)).then_some((op, *t))
    }
}

impl PartialEq for Lambda {
    fn eq(&self, other: &Lambda) -> bool {
        self.params == other.params && self.body == other.body && self.ret == other.ret
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum LoopForm {
    /// `for i < bound` (`i` has the integer type of `bound`).
    For { i: VName, bound: SubExp },
    /// `while cond`, where `cond` is one of the loop parameters (a bool); the body computes
    /// its next value along with the others.
    While { cond: VName },
}

/// Second-order array combinators. `w` is the outer size of every input array.
#[derive(Clone, Debug, PartialEq)]
pub enum Soac {
    /// Results: one array per lambda result.
    Map {
        w: SubExp,
        lam: Lambda,
        arrs: Vec<VName>,
    },
    /// `reduce red ne (map pre arrs)`; `pre` is the identity when `None` (vertical fusion
    /// puts a producer map here). Results: one value per neutral element.
    Reduce {
        w: SubExp,
        arrs: Vec<VName>,
        pre: Option<Lambda>,
        lam: Lambda,
        neutral: Vec<SubExp>,
        commutative: bool,
    },
    /// Inclusive `scan op ne (map pre arrs)`. Results: one array per neutral element.
    Scan {
        w: SubExp,
        arrs: Vec<VName>,
        pre: Option<Lambda>,
        lam: Lambda,
        neutral: Vec<SubExp>,
    },
    /// `reduce_by_index dests op ne is vals` with one index array per destination
    /// dimension (1 for `hist`/`reduce_by_index`, 2 for `_2d`, …). Consumes `dests`.
    Hist {
        w: SubExp,
        dests: Vec<VName>,
        lam: Lambda,
        neutral: Vec<SubExp>,
        is: Vec<VName>,
        vals: Vec<VName>,
    },
    /// `scatter dests is vals` with one index array per destination dimension. Consumes
    /// `dests`; on duplicate indices the largest position wins.
    Scatter {
        w: SubExp,
        dests: Vec<VName>,
        is: Vec<VName>,
        vals: Vec<VName>,
    },
}

/// One accumulator input of [`Exp::WithAcc`]: the arrays it writes into, and an optional
/// combining operator (with neutral elements) for writes to the same position.
#[derive(Clone, Debug, PartialEq)]
pub struct AccInput {
    pub shape: Vec<SubExp>,
    pub arrays: Vec<VName>,
    pub op: Option<(Lambda, Vec<SubExp>)>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Exp {
    Basic(BasicOp),
    /// Call of a top-level function.
    Apply {
        fun: String,
        args: Vec<SubExp>,
        ret: Vec<Type>,
    },
    If {
        cond: SubExp,
        then_body: Body,
        else_body: Body,
        ret: Vec<Type>,
    },
    /// Loop parameters with their initial values.
    Loop {
        params: Vec<(Param, SubExp)>,
        form: LoopForm,
        body: Body,
    },
    Soac(Soac),
    /// `with_acc inputs lam`: `lam` takes one accumulator per input, returns the updated
    /// accumulators followed by other results; the statement's results are the final arrays
    /// followed by those other results.
    WithAcc {
        inputs: Vec<AccInput>,
        lam: Lambda,
    },
    /// Forward mode over a lambda: results are the lambda's results followed by their
    /// tangents. With `vector` set, each tangent argument has an extra outer dimension of
    /// seeds (`jmp`), and so does each result tangent.
    Jvp {
        lam: Lambda,
        args: Vec<SubExp>,
        tangents: Vec<SubExp>,
        vector: bool,
    },
    /// Reverse mode over a lambda: results are the lambda's results followed by the
    /// cotangents of the arguments. With `vector` set, cotangents carry an extra outer
    /// dimension of seeds (`mjp`).
    Vjp {
        lam: Lambda,
        args: Vec<SubExp>,
        cotangents: Vec<SubExp>,
        vector: bool,
    },
    /// `with_vjp f f' x`: the value of `f x`; reverse mode uses `f' (f x) dy` as the
    /// cotangent of `x`. `adj` takes the results of `f` followed by their cotangents.
    WithVjp {
        f: Lambda,
        adj: Lambda,
        args: Vec<SubExp>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stm {
    pub pat: Vec<Param>,
    pub exp: Exp,
    pub src: SrcInfo,
}

impl BasicOp {
    /// Whether the operation is a transcendental function (a polynomial or a library
    /// call), not arithmetic or `sqrt`: worth storing rather than computing again.
    pub fn is_transcendental(&self) -> bool {
        use runic_prim::UnOp::*;
        match self {
            BasicOp::UnOp(u, _) => matches!(
                u,
                Exp | Log
                    | Log2
                    | Log10
                    | Log1p
                    | Sin
                    | Cos
                    | Tan
                    | Asin
                    | Acos
                    | Atan
                    | SinPi
                    | CosPi
                    | TanPi
                    | AsinPi
                    | AcosPi
                    | AtanPi
                    | Sinh
                    | Cosh
                    | Tanh
                    | Asinh
                    | Acosh
                    | Atanh
                    | Erf
                    | Erfc
                    | Cbrt
            ),
            BasicOp::BinOp(b, _, _) => {
                matches!(b, BinOp::Pow | BinOp::Atan2 | BinOp::Atan2Pi | BinOp::Hypot)
            }
            _ => false,
        }
    }
}

impl Stm {
    /// The operator of `x ⊕ y` this statement computes (with `either_order`, also of
    /// `y ⊕ x` for a commutative `⊕`: `+`, `*`, `min`, `max`).
    pub fn binop_of(&self, x: VName, y: VName, either_order: bool) -> Option<BinOp> {
        let Exp::Basic(BasicOp::BinOp(op, SubExp::Var(a), SubExp::Var(c))) = &self.exp else {
            return None;
        };
        let commutative = matches!(op, BinOp::Add | BinOp::Mul | BinOp::Min | BinOp::Max);
        let in_order = (*a, *c) == (x, y);
        let swapped = (*a, *c) == (y, x) && either_order && commutative;
        (in_order || swapped).then_some(*op)
    }

    /// Whether the statement binds `v`.
    pub fn binds(&self, v: VName) -> bool {
        self.pat.iter().any(|p| p.name == v)
    }
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Body {
    pub stms: Vec<Stm>,
    pub result: Vec<SubExp>,
}

impl Body {
    /// The statement of the body that binds `v`.
    pub fn binding(&self, v: VName) -> Option<&Stm> {
        self.stms.iter().find(|s| s.binds(v))
    }
}

/// How an entry point's external parameters and results map onto the IR function.
#[derive(Clone, Debug, PartialEq)]
pub struct EntryInfo {
    /// The name the host calls.
    pub name: String,
    /// Each external parameter, in order: a data value is one IR parameter; a tuple or
    /// record of data values spans one IR parameter per leaf (its [`ValueLayout`]).
    pub params: Vec<EntryParam>,
    /// For each external result: how many IR results it spans and, if it is not a data
    /// value, a description of its type (it is then opaque to the host).
    pub results: Vec<EntryResult>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct EntryResult {
    pub type_text: String,
    pub num_values: usize,
    pub opaque: bool,
    /// For an opaque result that is a tuple or record of data values (nested any deep):
    /// how to rebuild it from its IR results, so hosts get the value, not its type.
    pub layout: Option<ValueLayout>,
}

/// An external parameter of an entry point.
#[derive(Clone, Debug, PartialEq)]
pub struct EntryParam {
    /// Its type as written (`[n]f32`, `(i32, {a: []f64})`).
    pub type_text: String,
    /// How its value maps onto IR parameters, taken in order.
    pub layout: ValueLayout,
}

impl EntryParam {
    /// A data value: one IR parameter.
    pub fn data(type_text: impl Into<String>) -> EntryParam {
        EntryParam {
            type_text: type_text.into(),
            layout: ValueLayout::Value,
        }
    }
}

/// The structure of a tuple or record value over IR values, taken in order.
#[derive(Clone, Debug, PartialEq)]
pub enum ValueLayout {
    /// One IR result: a data value.
    Value,
    Tuple(Vec<ValueLayout>),
    /// Fields in the order of their IR results.
    Record(Vec<(String, ValueLayout)>),
}

impl ValueLayout {
    /// How many IR values it spans.
    pub fn num_values(&self) -> usize {
        match self {
            ValueLayout::Value => 1,
            ValueLayout::Tuple(parts) => parts.iter().map(ValueLayout::num_values).sum(),
            ValueLayout::Record(fields) => fields.iter().map(|(_, l)| l.num_values()).sum(),
        }
    }
}

/// A top-level function.
#[derive(Clone, Debug, PartialEq)]
pub struct FunDef {
    pub name: String,
    pub params: Vec<Param>,
    pub ret: Vec<Type>,
    pub body: Body,
    pub entry: Option<EntryInfo>,
    pub src: SrcInfo,
}

/// A whole program.
#[derive(Clone, Debug, Default)]
pub struct Prog {
    pub funs: Vec<FunDef>,
    pub names: NameSource,
}

impl Prog {
    /// Records in [`Prog::names`] the type of every variable the functions bind
    /// (parameters included), for a pass that builds code with a typed builder.
    pub fn record_types(&mut self) {
        for f in &self.funs {
            self.names.record_types(f.params.as_slice());
            self.names.record_types(&f.body);
        }
    }
    pub fn fun(&self, name: &str) -> Option<&FunDef> {
        self.funs.iter().find(|f| f.name == name)
    }
    pub fn entry(&self, name: &str) -> Option<&FunDef> {
        self.funs
            .iter()
            .find(|f| f.entry.as_ref().is_some_and(|e| e.name == name))
    }
}

impl fmt::Display for VName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.0)
    }
}
