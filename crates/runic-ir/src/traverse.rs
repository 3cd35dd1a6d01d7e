//! One traversal of the IR, in scope order, and the queries built on it.
//!
//! [`Visitor`] walks statements, expressions, nested bodies and lambdas read-only;
//! [`VisitorMut`] walks them mutably (substitution, renaming). Both visit in *scope order*:
//! the operands of a statement before the variables it binds, a loop's initial values and
//! bound before its parameters, the dimensions of a pattern element before its name (they
//! may name earlier elements of the same pattern). Every pass that needs to look inside the
//! IR (free variables, uses, binders, "does this body hold an X") goes through here, so a
//! new construct is added in one place.

use crate::ir::*;
use std::collections::{HashMap, HashSet};

/// A read-only walk over the IR. Override the hooks you need; call the matching `walk_*`
/// function from an override to keep descending.
pub trait Visitor {
    /// A variable read (an operand, an array input, a dimension in a type).
    fn use_var(&mut self, _v: VName) {}
    /// A variable bound (pattern element, lambda/loop parameter, loop counter).
    fn bind_var(&mut self, _v: VName, _ty: Option<&Type>) {}
    fn stm(&mut self, s: &Stm) {
        walk_stm(self, s)
    }
    fn exp(&mut self, e: &Exp) {
        walk_exp(self, e)
    }
    fn body(&mut self, b: &Body) {
        walk_body(self, b)
    }
    fn lambda(&mut self, l: &Lambda) {
        walk_lambda(self, l)
    }
}

/// A mutable walk over the IR, in the same scope order as [`Visitor`]. `use_var` sees
/// every read variable (array inputs as well as operands), `subexp` every operand (so a
/// substitution may replace a variable by a constant where the IR allows one), `bind_var`
/// every binder.
pub trait VisitorMut {
    /// An operand; by default its variable goes to [`VisitorMut::use_var`].
    fn subexp(&mut self, s: &mut SubExp) {
        if let SubExp::Var(v) = s {
            self.use_var(v);
        }
    }
    /// A variable read where only a variable is allowed (array inputs and the like).
    fn use_var(&mut self, _v: &mut VName) {}
    /// A variable bound, with its type when it has one (loop counters do not).
    fn bind_var(&mut self, _v: &mut VName, _ty: Option<&Type>) {}
    /// A lambda about to be walked (e.g. to give a copy a new identity).
    fn enter_lambda(&mut self, _l: &mut Lambda) {}
    fn stm(&mut self, s: &mut Stm) {
        walk_stm_mut(self, s)
    }
    fn exp(&mut self, e: &mut Exp) {
        walk_exp_mut(self, e)
    }
    fn body(&mut self, b: &mut Body) {
        walk_body_mut(self, b)
    }
    fn lambda(&mut self, l: &mut Lambda) {
        walk_lambda_mut(self, l)
    }
}

/// The walk itself, written once and instantiated for shared (`Visitor`) and mutable
/// (`VisitorMut`) references: `$m` is empty or `mut`, and the small adapters say how an
/// operand, a variable read, a binder and a lambda reach each trait's hooks.
macro_rules! walkers {
    ($Vis:ident, [$($m:tt)?], $sub:ident, $var:ident, $bind:ident, $enter:ident,
     $walk_body:ident, $walk_stm:ident, $walk_lambda:ident, $walk_exp:ident,
     $walk_soac:ident, $walk_basic:ident, $ty:ident) => {
        pub fn $walk_body<V: $Vis + ?Sized>(v: &mut V, b: &$($m)? Body) {
            for s in &$($m)? b.stms {
                v.stm(s);
            }
            for r in &$($m)? b.result {
                $sub(v, r);
            }
        }

        pub fn $walk_stm<V: $Vis + ?Sized>(v: &mut V, s: &$($m)? Stm) {
            v.exp(&$($m)? s.exp);
            for p in &$($m)? s.pat {
                $ty(v, &$($m)? p.ty);
                $bind(v, &$($m)? p.name, Some(&p.ty));
            }
        }

        pub fn $walk_lambda<V: $Vis + ?Sized>(v: &mut V, l: &$($m)? Lambda) {
            $enter(v, l);
            for p in &$($m)? l.params {
                $ty(v, &$($m)? p.ty);
                $bind(v, &$($m)? p.name, Some(&p.ty));
            }
            v.body(&$($m)? l.body);
            for t in &$($m)? l.ret {
                $ty(v, t);
            }
        }

        /// The variables of a type's dimensions.
        pub fn $ty<V: $Vis + ?Sized>(v: &mut V, t: &$($m)? Type) {
            match t {
                Type::Array { shape, .. } | Type::Acc { shape, .. } => {
                    for d in shape {
                        $sub(v, d);
                    }
                }
                Type::Prim(_) => {}
            }
        }

        pub fn $walk_exp<V: $Vis + ?Sized>(v: &mut V, e: &$($m)? Exp) {
            match e {
                Exp::Basic(op) => $walk_basic(v, op),
                Exp::Apply { args, ret, .. } => {
                    for a in args {
                        $sub(v, a);
                    }
                    for t in ret {
                        $ty(v, t);
                    }
                }
                Exp::If {
                    cond,
                    then_body,
                    else_body,
                    ret,
                } => {
                    $sub(v, cond);
                    v.body(then_body);
                    v.body(else_body);
                    for t in ret {
                        $ty(v, t);
                    }
                }
                Exp::Loop { params, form, body } => {
                    for (_, init) in &$($m)? *params {
                        $sub(v, init);
                    }
                    if let LoopForm::For { i, bound } = &$($m)? *form {
                        $sub(v, bound);
                        $bind(v, i, None);
                    }
                    for (p, _) in &$($m)? *params {
                        $ty(v, &$($m)? p.ty);
                        $bind(v, &$($m)? p.name, Some(&p.ty));
                    }
                    if let LoopForm::While { cond } = &$($m)? *form {
                        $var(v, cond);
                    }
                    v.body(body);
                }
                Exp::Soac(s) => $walk_soac(v, s),
                Exp::WithAcc { inputs, lam } => {
                    for i in inputs {
                        for d in &$($m)? i.shape {
                            $sub(v, d);
                        }
                        for a in &$($m)? i.arrays {
                            $var(v, a);
                        }
                        if let Some((l, ne)) = &$($m)? i.op {
                            for n in ne {
                                $sub(v, n);
                            }
                            v.lambda(l);
                        }
                    }
                    v.lambda(lam);
                }
                Exp::Jvp {
                    lam,
                    args,
                    tangents: seeds,
                    ..
                }
                | Exp::Vjp {
                    lam,
                    args,
                    cotangents: seeds,
                    ..
                } => {
                    for a in args.iter_any().chain(seeds.iter_any()) {
                        $sub(v, a);
                    }
                    v.lambda(lam);
                }
                Exp::WithVjp { f, adj, args } => {
                    for a in args {
                        $sub(v, a);
                    }
                    v.lambda(f);
                    v.lambda(adj);
                }
            }
        }

        fn $walk_soac<V: $Vis + ?Sized>(v: &mut V, s: &$($m)? Soac) {
            match s {
                Soac::Map { w, lam, arrs } => {
                    $sub(v, w);
                    for a in arrs {
                        $var(v, a);
                    }
                    v.lambda(lam);
                }
                Soac::Reduce {
                    w,
                    arrs,
                    pre,
                    lam,
                    neutral,
                    ..
                }
                | Soac::Scan {
                    w,
                    arrs,
                    pre,
                    lam,
                    neutral,
                } => {
                    $sub(v, w);
                    for a in arrs {
                        $var(v, a);
                    }
                    for n in neutral {
                        $sub(v, n);
                    }
                    if let Some(p) = pre {
                        v.lambda(p);
                    }
                    v.lambda(lam);
                }
                Soac::Hist {
                    w,
                    dests,
                    lam,
                    neutral,
                    is,
                    vals,
                } => {
                    $sub(v, w);
                    for a in dests.iter_any().chain(is.iter_any()).chain(vals.iter_any()) {
                        $var(v, a);
                    }
                    for n in neutral {
                        $sub(v, n);
                    }
                    v.lambda(lam);
                }
                Soac::Scatter { w, dests, is, vals } => {
                    $sub(v, w);
                    for a in dests.iter_any().chain(is.iter_any()).chain(vals.iter_any()) {
                        $var(v, a);
                    }
                }
            }
        }

        pub fn $walk_basic<V: $Vis + ?Sized>(v: &mut V, op: &$($m)? BasicOp) {
            match op {
                BasicOp::SubExp(a) | BasicOp::UnOp(_, a) | BasicOp::Convert(_, a) => $sub(v, a),
                BasicOp::BinOp(_, a, b) => {
                    $sub(v, a);
                    $sub(v, b);
                }
                BasicOp::TernOp(_, a, b, c) => {
                    $sub(v, a);
                    $sub(v, b);
                    $sub(v, c);
                }
                BasicOp::Index(a, ds) | BasicOp::Update(a, ds, ..) => {
                    $var(v, a);
                    for d in ds {
                        match d {
                            DimIndex::Fix(s) => $sub(v, s),
                            DimIndex::Slice { start, end, stride } => {
                                for s in [start, end, stride].into_iter().flatten() {
                                    $sub(v, s);
                                }
                            }
                        }
                    }
                    if let BasicOp::Update(_, _, x) = op {
                        $sub(v, x);
                    }
                }
                BasicOp::Range {
                    start, second, end, ..
                } => {
                    $sub(v, start);
                    if let Some(s) = second {
                        $sub(v, s);
                    }
                    $sub(v, end);
                }
                BasicOp::Replicate(shape, x) => {
                    for d in shape {
                        $sub(v, d);
                    }
                    $sub(v, x);
                }
                BasicOp::Reshape { arr, shape } | BasicOp::ShapeCheck { arr, shape, .. } => {
                    $var(v, arr);
                    for d in shape {
                        $sub(v, d);
                    }
                }
                BasicOp::Rearrange(_, a) | BasicOp::Copy(a) | BasicOp::ArraySize(a, _) => {
                    $var(v, a)
                }
                BasicOp::Concat(_, arrs) => {
                    for a in arrs {
                        $var(v, a);
                    }
                }
                BasicOp::ArrayLit(rows, t) => {
                    for r in rows {
                        $sub(v, r);
                    }
                    $ty(v, t);
                }
                BasicOp::Scratch(_, shape) => {
                    for d in shape {
                        $sub(v, d);
                    }
                }
                BasicOp::Assert { cond, .. } => $sub(v, cond),
                BasicOp::UpdateAcc { acc, is, vals } => {
                    $var(v, acc);
                    for x in is.iter_any().chain(vals.iter_any()) {
                        $sub(v, x);
                    }
                }
            }
        }
    };
}

/// `iter()` or `iter_mut()`, whichever the reference allows (so the walk is written once).
trait IterAny<'a, T: 'a> {
    type Iter: Iterator;
    fn iter_any(self) -> Self::Iter;
}

impl<'a, T: 'a> IterAny<'a, T> for &'a Vec<T> {
    type Iter = std::slice::Iter<'a, T>;
    fn iter_any(self) -> Self::Iter {
        self.iter()
    }
}

impl<'a, T: 'a> IterAny<'a, T> for &'a mut Vec<T> {
    type Iter = std::slice::IterMut<'a, T>;
    fn iter_any(self) -> Self::Iter {
        self.iter_mut()
    }
}

fn sub_ref<V: Visitor + ?Sized>(v: &mut V, s: &SubExp) {
    if let SubExp::Var(x) = s {
        v.use_var(*x);
    }
}
fn var_ref<V: Visitor + ?Sized>(v: &mut V, x: &VName) {
    v.use_var(*x);
}
fn bind_ref<V: Visitor + ?Sized>(v: &mut V, x: &VName, t: Option<&Type>) {
    v.bind_var(*x, t);
}
fn enter_ref<V: Visitor + ?Sized>(_: &mut V, _: &Lambda) {}

fn sub_mut<V: VisitorMut + ?Sized>(v: &mut V, s: &mut SubExp) {
    v.subexp(s);
}
fn var_mut<V: VisitorMut + ?Sized>(v: &mut V, x: &mut VName) {
    v.use_var(x);
}
fn bind_mut<V: VisitorMut + ?Sized>(v: &mut V, x: &mut VName, t: Option<&Type>) {
    v.bind_var(x, t);
}
fn enter_mut<V: VisitorMut + ?Sized>(v: &mut V, l: &mut Lambda) {
    v.enter_lambda(l);
}

walkers!(
    Visitor,
    [],
    sub_ref,
    var_ref,
    bind_ref,
    enter_ref,
    walk_body,
    walk_stm,
    walk_lambda,
    walk_exp,
    walk_soac,
    walk_basic,
    walk_type
);
walkers!(
    VisitorMut, [mut], sub_mut, var_mut, bind_mut, enter_mut, walk_body_mut, walk_stm_mut,
    walk_lambda_mut, walk_exp_mut, walk_soac_mut, walk_basic_mut, type_mut
);

// ---------------------------------------------------------------------------------------
// Queries.

/// Collects what a walk sees.
#[derive(Default)]
struct Collect {
    uses: HashSet<VName>,
    binds: HashSet<VName>,
}

impl Visitor for Collect {
    fn use_var(&mut self, v: VName) {
        self.uses.insert(v);
    }
    fn bind_var(&mut self, v: VName, _: Option<&Type>) {
        self.binds.insert(v);
    }
}

/// Something the queries can walk: a body, a statement, an expression, a lambda or a type.
pub trait Walk {
    fn walk_with<V: Visitor>(&self, v: &mut V);
}

impl Walk for Body {
    fn walk_with<V: Visitor>(&self, v: &mut V) {
        v.body(self)
    }
}
impl Walk for Stm {
    fn walk_with<V: Visitor>(&self, v: &mut V) {
        v.stm(self)
    }
}
impl Walk for [Stm] {
    fn walk_with<V: Visitor>(&self, v: &mut V) {
        self.iter().for_each(|s| v.stm(s))
    }
}
impl Walk for Exp {
    fn walk_with<V: Visitor>(&self, v: &mut V) {
        v.exp(self)
    }
}
impl Walk for Lambda {
    fn walk_with<V: Visitor>(&self, v: &mut V) {
        v.lambda(self)
    }
}
impl Walk for Type {
    fn walk_with<V: Visitor>(&self, v: &mut V) {
        walk_type(v, self)
    }
}
impl Walk for SubExp {
    fn walk_with<V: Visitor>(&self, v: &mut V) {
        sub_ref(v, self)
    }
}
impl Walk for [SubExp] {
    fn walk_with<V: Visitor>(&self, v: &mut V) {
        self.iter().for_each(|x| sub_ref(v, x))
    }
}
impl<T> Walk for Vec<T>
where
    [T]: Walk,
{
    fn walk_with<V: Visitor>(&self, v: &mut V) {
        self.as_slice().walk_with(v)
    }
}
impl<T: Walk + ?Sized> Walk for &T {
    fn walk_with<V: Visitor>(&self, v: &mut V) {
        (**self).walk_with(v)
    }
}
impl Walk for Param {
    fn walk_with<V: Visitor>(&self, v: &mut V) {
        walk_param(v, self)
    }
}
impl Walk for [Param] {
    fn walk_with<V: Visitor>(&self, v: &mut V) {
        self.iter().for_each(|p| walk_param(v, p))
    }
}

fn walk_param<V: Visitor + ?Sized>(v: &mut V, p: &Param) {
    walk_type(v, &p.ty);
    v.bind_var(p.name, Some(&p.ty));
}

fn collect<T: Walk + ?Sized>(x: &T) -> Collect {
    let mut c = Collect::default();
    x.walk_with(&mut c);
    c
}

/// Every variable read anywhere in `x`, nested scopes included (also variables bound and
/// read inside `x`). Since a variable is bound once per function, a binder inside `x` is
/// never read outside it, so this answers "does `x` depend on `v`" for any `v` bound
/// outside `x`.
pub fn uses<T: Walk + ?Sized>(x: &T) -> HashSet<VName> {
    collect(x).uses
}

/// Adds the variables [`uses`] finds to `out`.
pub fn add_uses<T: Walk + ?Sized>(x: &T, out: &mut HashSet<VName>) {
    let mut c = Collect {
        uses: std::mem::take(out),
        binds: HashSet::new(),
    };
    x.walk_with(&mut c);
    *out = c.uses;
}

/// Every variable bound anywhere in `x` (pattern elements, parameters, loop counters).
pub fn binders<T: Walk + ?Sized>(x: &T) -> HashSet<VName> {
    collect(x).binds
}

/// The variables `x` reads that it does not bind itself: what it needs from its context.
pub fn free_vars<T: Walk + ?Sized>(x: &T) -> HashSet<VName> {
    let c = collect(x);
    c.uses.difference(&c.binds).copied().collect()
}

/// `n` when `e` is `iota n` (`0 .. 1 ..< n` at i64).
pub fn iota_width(e: &Exp) -> Option<SubExp> {
    match e {
        Exp::Basic(BasicOp::Range {
            start: SubExp::Const(s),
            second,
            end,
            kind: RangeKind::UpToExclusive,
            elem: PrimType::I64,
        }) if s.as_int() == Some(0)
            && second
                .as_ref()
                .is_none_or(|t| matches!(t, SubExp::Const(c) if c.as_int() == Some(1))) =>
        {
            Some(end.clone())
        }
        _ => None,
    }
}

/// The variables bound to `iota n` anywhere in `x`, with `n`.
pub fn iotas<T: Walk + ?Sized>(x: &T) -> HashMap<VName, SubExp> {
    struct Iotas(HashMap<VName, SubExp>);
    impl Visitor for Iotas {
        fn stm(&mut self, s: &Stm) {
            if let (Some(w), [p]) = (iota_width(&s.exp), s.pat.as_slice()) {
                self.0.insert(p.name, w);
            }
            walk_stm(self, s)
        }
    }
    let mut v = Iotas(HashMap::new());
    x.walk_with(&mut v);
    v.0
}

/// Whether any expression in `x`, at any depth, satisfies `pred`.
pub fn any_exp<T: Walk + ?Sized>(x: &T, pred: impl Fn(&Exp) -> bool) -> bool {
    count_exps(x, pred) > 0
}

/// How many expressions in `x`, at any depth, satisfy `pred`.
pub fn count_exps<T: Walk + ?Sized>(x: &T, pred: impl Fn(&Exp) -> bool) -> usize {
    struct Count<F> {
        pred: F,
        n: usize,
    }
    impl<F: Fn(&Exp) -> bool> Visitor for Count<F> {
        fn exp(&mut self, e: &Exp) {
            if (self.pred)(e) {
                self.n += 1;
            }
            walk_exp(self, e)
        }
    }
    let mut c = Count { pred, n: 0 };
    x.walk_with(&mut c);
    c.n
}

/// Whether `e` is one of the AD constructs (`jvp`, `vjp`, `with_vjp`).
pub fn is_ad_construct(e: &Exp) -> bool {
    matches!(e, Exp::Jvp { .. } | Exp::Vjp { .. } | Exp::WithVjp { .. })
}

/// Whether `e` writes to an accumulator (an `update_acc`).
pub fn is_update_acc(e: &Exp) -> bool {
    matches!(e, Exp::Basic(BasicOp::UpdateAcc { .. }))
}

/// Where [`binder_types`] puts what it finds.
pub trait TypeSink {
    fn put(&mut self, v: VName, t: Type);
    fn get(&self, v: VName) -> Option<&Type>;
}

impl TypeSink for std::collections::HashMap<VName, Type> {
    fn put(&mut self, v: VName, t: Type) {
        self.insert(v, t);
    }
    fn get(&self, v: VName) -> Option<&Type> {
        std::collections::HashMap::get(self, &v)
    }
}

impl TypeSink for NameSource {
    fn put(&mut self, v: VName, t: Type) {
        self.set_type(v, t);
    }
    fn get(&self, v: VName) -> Option<&Type> {
        self.type_of(v)
    }
}

/// The type of every variable bound in `x`, with the variable (loop counters get the type
/// of their bound, which must then be known: constants, or variables typed in `types`).
pub fn binder_types<T: Walk + ?Sized>(x: &T, types: &mut std::collections::HashMap<VName, Type>) {
    record_binder_types(x, types)
}

/// [`binder_types`] into any sink (a map, or the types of a [`NameSource`]).
pub fn record_binder_types<T: Walk + ?Sized, S: TypeSink>(x: &T, sink: &mut S) {
    struct Types<'a, S> {
        out: &'a mut S,
    }
    impl<S: TypeSink> Visitor for Types<'_, S> {
        fn bind_var(&mut self, v: VName, ty: Option<&Type>) {
            if let Some(t) = ty {
                self.out.put(v, t.clone());
            }
        }
        fn exp(&mut self, e: &Exp) {
            if let Exp::Loop {
                form: LoopForm::For { i, bound },
                ..
            } = e
            {
                let t = match bound {
                    SubExp::Const(c) => Type::Prim(c.ty()),
                    SubExp::Var(b) => self
                        .out
                        .get(*b)
                        .cloned()
                        .unwrap_or(Type::Prim(PrimType::I64)),
                };
                self.out.put(*i, t);
            }
            walk_exp(self, e)
        }
    }
    x.walk_with(&mut Types { out: sink });
}

/// Renames every binder of a body or lambda to a fresh variable (uses follow, types are
/// recorded, lambdas get fresh ids), so that a copy can live in the same function as the
/// original (each variable is bound once per function).
pub struct Renamer<'a> {
    pub names: &'a mut NameSource,
    pub map: std::collections::HashMap<VName, VName>,
}

impl<'a> Renamer<'a> {
    pub fn new(names: &'a mut NameSource) -> Self {
        Renamer {
            names,
            map: std::collections::HashMap::new(),
        }
    }
}

impl VisitorMut for Renamer<'_> {
    fn use_var(&mut self, v: &mut VName) {
        if let Some(n) = self.map.get(v) {
            *v = *n;
        }
    }
    fn bind_var(&mut self, v: &mut VName, ty: Option<&Type>) {
        let hint = self.names.hint(*v).to_string();
        let n = match ty {
            Some(t) => self.names.fresh_typed(&hint, t.clone()),
            None => {
                let n = self.names.fresh(&hint);
                if let Some(t) = self.names.type_of(*v).cloned() {
                    self.names.set_type(n, t);
                }
                n
            }
        };
        self.map.insert(*v, n);
        *v = n;
    }
    fn enter_lambda(&mut self, l: &mut Lambda) {
        l.id = LamId::fresh();
    }
}

/// Replaces variables by operands everywhere in a body (operands, array inputs, types).
/// An array input mapped to a constant stays as it is.
pub struct Substitute<'m>(pub &'m std::collections::HashMap<VName, SubExp>);

impl VisitorMut for Substitute<'_> {
    fn subexp(&mut self, s: &mut SubExp) {
        if let SubExp::Var(v) = s {
            if let Some(r) = self.0.get(v) {
                *s = r.clone();
            }
        }
    }
    fn use_var(&mut self, v: &mut VName) {
        if let Some(SubExp::Var(r)) = self.0.get(v) {
            *v = *r;
        }
    }
}

/// Whether two lambdas of `prog` share an id.
pub fn has_duplicate_lambda_ids(prog: &Prog) -> bool {
    struct Ids(HashSet<LamId>, bool);
    impl Visitor for Ids {
        fn lambda(&mut self, l: &Lambda) {
            self.1 |= !self.0.insert(l.id);
            walk_lambda(self, l)
        }
    }
    let mut ids = Ids(HashSet::new(), false);
    prog.funs.iter().for_each(|f| ids.body(&f.body));
    ids.1
}

/// Gives every lambda of `prog` that shares its id with an earlier one a fresh id, so that
/// ids are unique within the program (clones keep their id through passes; a cache keyed
/// by id needs them unique once the program is final).
pub fn make_lambda_ids_unique(prog: &mut Prog) {
    struct Ids(HashSet<LamId>);
    impl VisitorMut for Ids {
        fn enter_lambda(&mut self, l: &mut Lambda) {
            if !self.0.insert(l.id) {
                l.id = LamId::fresh();
                self.0.insert(l.id);
            }
        }
    }
    let mut ids = Ids(HashSet::new());
    for f in &mut prog.funs {
        ids.body(&mut f.body);
    }
}

// =======================================================================================
// Bodies at every depth: `WalkMut` and `for_each_body_mut` (added for runic-opt's passes;
// kept in one block at the end of the file to ease merging with other additions).
// =======================================================================================

/// Something a [`VisitorMut`] can walk: a body, a statement (or statements), an expression
/// or a lambda. The mutable counterpart of [`Walk`].
pub trait WalkMut {
    fn walk_mut_with<V: VisitorMut>(&mut self, v: &mut V);
}

impl WalkMut for Body {
    fn walk_mut_with<V: VisitorMut>(&mut self, v: &mut V) {
        v.body(self)
    }
}
impl WalkMut for Stm {
    fn walk_mut_with<V: VisitorMut>(&mut self, v: &mut V) {
        v.stm(self)
    }
}
impl WalkMut for [Stm] {
    fn walk_mut_with<V: VisitorMut>(&mut self, v: &mut V) {
        self.iter_mut().for_each(|s| v.stm(s))
    }
}
impl<T> WalkMut for Vec<T>
where
    [T]: WalkMut,
{
    fn walk_mut_with<V: VisitorMut>(&mut self, v: &mut V) {
        self.as_mut_slice().walk_mut_with(v)
    }
}
impl WalkMut for Exp {
    fn walk_mut_with<V: VisitorMut>(&mut self, v: &mut V) {
        walk_exp_mut(v, self)
    }
}
impl WalkMut for Lambda {
    fn walk_mut_with<V: VisitorMut>(&mut self, v: &mut V) {
        v.lambda(self)
    }
}

/// Calls `f` on every body in `x` at any depth — the branches of an `if`, loop bodies, and
/// the bodies of lambdas (SOAC operators and `pre` lambdas, accumulator operators, AD
/// constructs) — innermost first: when `f` sees a body, it has seen every body nested in
/// it. `x` itself is included when it is a body.
///
/// For a rewrite that needs no context from the enclosing scope (a pass that needs some,
/// e.g. a substitution or the variables in scope, is a [`VisitorMut`] overriding `body`).
/// Tested in `tests/bodies.rs` (kept out of this file, which is near the size limit).
pub fn for_each_body_mut<T: WalkMut + ?Sized>(x: &mut T, f: impl FnMut(&mut Body)) {
    struct Bodies<F>(F);
    impl<F: FnMut(&mut Body)> VisitorMut for Bodies<F> {
        fn body(&mut self, b: &mut Body) {
            walk_body_mut(self, b);
            (self.0)(b)
        }
    }
    x.walk_mut_with(&mut Bodies(f))
}

// ======================= end of the WalkMut / for_each_body_mut block ====================

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::Builder;

    fn f32t() -> Type {
        Type::Prim(PrimType::F32)
    }

    /// `\x -> let y = x + c in loop (a = y) for i < n do a * x`, with `c` and `n` free.
    fn sample(names: &mut NameSource) -> (Lambda, VName, VName) {
        let c = names.fresh("c");
        let n = names.fresh("n");
        let mut b = Builder::new(names);
        let lam = b.lambda(vec![("x", f32t())], vec![f32t()], |b, ps| {
            let x = SubExp::Var(ps[0]);
            let y = b.binop(BinOp::Add, x.clone(), SubExp::Var(c), PrimType::F32);
            let a = b.fresh("a");
            let i = b.fresh("i");
            let body = b.body(|b| vec![b.binop(BinOp::Mul, SubExp::Var(a), x, PrimType::F32)]);
            let r = b.bind(
                Exp::Loop {
                    params: vec![(
                        Param {
                            name: a,
                            ty: f32t(),
                        },
                        y,
                    )],
                    form: LoopForm::For {
                        i,
                        bound: SubExp::Var(n),
                    },
                    body,
                },
                vec![f32t()],
            );
            vec![SubExp::Var(r[0])]
        });
        (lam, c, n)
    }

    #[test]
    fn free_vars_are_reads_not_bound_inside() {
        let mut names = NameSource::default();
        let (lam, c, n) = sample(&mut names);
        let free = free_vars(&lam);
        assert_eq!(free, [c, n].into_iter().collect());
        let bound = binders(&lam);
        assert!(bound.contains(&lam.params[0].name));
        assert!(!bound.contains(&c));
        assert!(uses(&lam).contains(&lam.params[0].name));
    }

    #[test]
    fn user_text_does_not_fool_queries() {
        // An assertion whose message looks like the debug form of IR constructs.
        let mut names = NameSource::default();
        let mut b = Builder::new(&mut names);
        b.bind(
            Exp::Basic(BasicOp::Assert {
                cond: SubExp::Const(Prim::Bool(true)),
                message: "Jvp { VName(7) } UpdateAcc".into(),
            }),
            vec![Type::Prim(PrimType::Bool)],
        );
        let body = b.finish(vec![]);
        assert!(!any_exp(&body, is_ad_construct));
        assert!(!any_exp(&body, is_update_acc));
        assert!(uses(&body).is_empty());
    }

    #[test]
    fn counts_nested_constructs() {
        let mut names = NameSource::default();
        let (lam, _, _) = sample(&mut names);
        assert_eq!(
            count_exps(&lam, |e| matches!(e, Exp::Basic(BasicOp::BinOp(..)))),
            2
        );
        assert!(any_exp(&lam, |e| matches!(e, Exp::Loop { .. })));
    }

    #[test]
    fn substitution_reaches_types_and_nested_bodies() {
        let mut names = NameSource::default();
        let (mut lam, c, n) = sample(&mut names);
        let m: std::collections::HashMap<VName, SubExp> =
            [(c, SubExp::Const(Prim::F32(1.0))), (n, SubExp::i64(3))]
                .into_iter()
                .collect();
        Substitute(&m).lambda(&mut lam);
        assert!(free_vars(&lam).is_empty());
    }

    #[test]
    fn binder_types_include_loop_counters() {
        let mut names = NameSource::default();
        let (lam, _, n) = sample(&mut names);
        let mut types = std::collections::HashMap::new();
        types.insert(n, Type::Prim(PrimType::I32));
        binder_types(&lam, &mut types);
        let counters: Vec<_> = types
            .values()
            .filter(|t| **t == Type::Prim(PrimType::I32))
            .collect();
        assert_eq!(counters.len(), 2);
        assert_eq!(types[&lam.params[0].name], f32t());
    }

    /// Both walks come from one definition: they see the same events in the same order.
    #[test]
    fn shared_and_mutable_walks_agree() {
        #[derive(Default)]
        struct Log(Vec<(bool, VName)>);
        impl Visitor for Log {
            fn use_var(&mut self, v: VName) {
                self.0.push((false, v));
            }
            fn bind_var(&mut self, v: VName, _: Option<&Type>) {
                self.0.push((true, v));
            }
        }
        impl VisitorMut for Log {
            fn use_var(&mut self, v: &mut VName) {
                self.0.push((false, *v));
            }
            fn bind_var(&mut self, v: &mut VName, _: Option<&Type>) {
                self.0.push((true, *v));
            }
        }
        let mut names = NameSource::default();
        let (mut lam, _, _) = sample(&mut names);
        let mut shared = Log::default();
        Visitor::lambda(&mut shared, &lam);
        let mut mutable = Log::default();
        VisitorMut::lambda(&mut mutable, &mut lam);
        assert_eq!(shared.0, mutable.0);
        // Scope order: the lambda's parameter is bound before it is read.
        let x = lam.params[0].name;
        let first_bind = shared.0.iter().position(|e| *e == (true, x));
        let first_use = shared.0.iter().position(|e| *e == (false, x));
        assert!(first_bind < first_use);
    }

    /// Clones keep their id; before running, duplicates get fresh ids and the first keeps
    /// its own.
    #[test]
    fn duplicate_lambda_ids_are_made_unique() {
        let mut prog = Prog::default();
        let (lam, c, n) = sample(&mut prog.names);
        let f32t = Type::Prim(PrimType::F32);
        let xs = prog.names.fresh_typed("xs", f32t.array_of(SubExp::Var(n)));
        let mut b = crate::builder::Builder::new(&mut prog.names);
        let map = |l: Lambda| {
            Exp::Soac(Soac::Map {
                w: SubExp::Var(n),
                lam: l,
                arrs: vec![xs],
            })
        };
        let ty = vec![f32t.array_of(SubExp::Var(n))];
        b.bind(map(lam.clone()), ty.clone());
        b.bind(map(lam.clone()), ty);
        let body = b.finish(vec![]);
        prog.funs.push(FunDef {
            name: "f".into(),
            params: [c, n, xs]
                .iter()
                .map(|&v| Param {
                    name: v,
                    ty: f32t.clone(),
                })
                .collect(),
            ret: vec![],
            body,
            entry: None,
            src: SrcInfo::default(),
        });
        assert!(has_duplicate_lambda_ids(&prog));
        make_lambda_ids_unique(&mut prog);
        assert!(!has_duplicate_lambda_ids(&prog));
        let Exp::Soac(Soac::Map { lam: first, .. }) = &prog.funs[0].body.stms[0].exp else {
            panic!("a map");
        };
        assert_eq!(first.id, lam.id);
    }
}
