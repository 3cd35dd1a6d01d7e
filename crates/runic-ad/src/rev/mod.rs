//! Reverse-mode AD as a program transformation: every `Vjp` becomes ordinary IR with a
//! forward sweep (the primal) followed by a return sweep that propagates adjoints from the
//! results back to the arguments (language.md §11; design/ad-rules.md).
//!
//! - Statements are processed in reverse; each variable's adjoint starts at zero (no entry
//!   in [`Rev::adjs`]) and accumulates. Only *active* variables — those that depend on the
//!   differentiated arguments — get adjoints.
//! - Nested scopes (branches, loop bodies, lambdas) are differentiated by **redundant
//!   execution**: the return sweep re-runs a renamed copy of the scope's primal, then its
//!   own return sweep. Only loops keep a tape (the loop-carried values of every iteration).
//! - Adjoints of free arrays inside a `map` go through accumulators (`with_acc`), never a
//!   per-element copy of the array; adjoints of free scalars are summed with a `reduce`.
//!
//! One file per rule: [`basic`] (scalar and array operations), [`if_`], [`loop_`],
//! [`map`], [`reduce`], [`scan`], [`hist`], [`scatter`], [`with_vjp`], [`with_acc`] (the
//! accumulators of an inner `vjp`, differentiated again). Each states its rule.
//! Around them: [`normalise`] (statements rewritten into the forms the rules handle),
//! [`checkpoint`] (strip-mining loops), [`build`] (builder-like helpers), [`common`]
//! (helpers several rules share) and [`sort`] (the radix sort of the histogram rule).
//! `Vjp`s are eliminated innermost first, so nested uses work.

mod basic;
mod build;
mod checkpoint;
mod common;
mod hist;
mod if_;
mod loop_;
mod map;
mod normalise;
mod reduce;
mod residual;
mod scan;
mod scatter;
mod sort;
mod with_acc;
mod with_vjp;

use crate::error::AdError;
use crate::scope::mentions;
use runic_ir::traverse::{walk_stm_mut, VisitorMut};
use runic_ir::*;
use std::collections::{HashMap, HashSet};

pub(crate) type R<T> = Result<T, AdError>;

/// Eliminate every `Vjp` (and every `WithVjp` outside one) that can be differentiated; the
/// others stay in place (the executor reports them if reached) and their errors are
/// returned. A `Vjp` whose lambda still contains a `Jvp` is left for a later round (the
/// caller alternates with forward mode).
pub fn eliminate_where_possible(mut prog: Prog) -> (Prog, Vec<AdError>) {
    prog.record_types();
    let mut e = Elim {
        names: &mut prog.names,
        errors: Vec::new(),
        depth: 0,
        in_vjp: false,
    };
    for f in prog.funs.iter_mut() {
        e.body(&mut f.body);
    }
    let errors = e.errors;
    (prog, errors)
}

/// Whether a lambda (after its nested Vjps were eliminated) still holds a forward-mode
/// construct, which must be eliminated first.
fn has_jvp(l: &Lambda) -> bool {
    runic_ir::traverse::any_exp(&l.body, |e| matches!(e, Exp::Jvp { .. }))
}

/// A walk over the program that expands every `Vjp` after the constructs nested in it.
struct Elim<'n> {
    names: &'n mut NameSource,
    errors: Vec<AdError>,
    /// How many `Jvp`/`Vjp` lambdas enclose the current statement.
    depth: usize,
    /// Inside the lambda of a `Vjp` (a `WithVjp` there belongs to that differentiation and
    /// must stay).
    in_vjp: bool,
}

impl VisitorMut for Elim<'_> {
    /// The constructs nested in a statement; inside a `Jvp` or `Vjp` one level deeper.
    fn stm(&mut self, s: &mut Stm) {
        let outer = (self.depth, self.in_vjp);
        match s.exp {
            Exp::Jvp { .. } => self.depth += 1,
            Exp::Vjp { .. } => (self.depth, self.in_vjp) = (self.depth + 1, true),
            _ => {}
        }
        walk_stm_mut(self, s);
        (self.depth, self.in_vjp) = outer;
    }

    /// Each statement after the ones nested in it: a `Vjp` becomes its derivative code (or
    /// stays behind an assertion that says why it cannot), a `WithVjp` outside any `Vjp`
    /// becomes its function.
    fn body(&mut self, b: &mut Body) {
        for mut s in std::mem::take(&mut b.stms) {
            let errors_before = self.errors.len();
            self.stm(&mut s);
            match &s.exp {
                Exp::Vjp { lam, .. } if !has_jvp(lam) => match self.expand(s.clone()) {
                    Ok(new) => b.stms.extend(new),
                    Err(e) => {
                        // Reaching it is a run-time error that says why (an inner failure
                        // explains an outer one).
                        let why = self.errors.get(errors_before).unwrap_or(&e).message.clone();
                        self.errors.push(e);
                        let already = matches!(
                            b.stms.last(),
                            Some(Stm { exp: Exp::Basic(BasicOp::Assert { message, .. }), .. })
                                if *message == why
                        );
                        if !already {
                            let mut ab = Builder::new(self.names);
                            ab.src = s.src.clone();
                            let cond = SubExp::Const(Prim::Bool(false));
                            let assert = BasicOp::Assert { cond, message: why };
                            ab.let_basic("unsupported", assert)
                                .expect("an assertion is a bool");
                            b.stms.extend(ab.take_stms());
                        }
                        b.stms.push(s);
                    }
                },
                Exp::WithVjp { .. } if !self.in_vjp => {
                    let inlined = self.inline_with_vjp(s);
                    b.stms.extend(inlined)
                }
                _ => b.stms.push(s),
            }
        }
    }
}

impl Elim<'_> {
    /// A `with_vjp f f' x` that no reverse mode differentiates is just `f x`.
    fn inline_with_vjp(&mut self, s: Stm) -> Vec<Stm> {
        let Exp::WithVjp { f, args, .. } = &s.exp else {
            return vec![s];
        };
        let mut b = Builder::new(self.names);
        b.src = s.src.clone();
        let results = b.inline(f, args);
        for (p, r) in s.pat.into_iter().zip(results) {
            build::copy_to(&mut b, p, r);
        }
        b.take_stms()
    }

    fn expand(&mut self, s: Stm) -> R<Vec<Stm>> {
        let Exp::Vjp {
            lam,
            args,
            cotangents,
            vector,
        } = s.exp
        else {
            return Ok(vec![s]);
        };
        if lam.params.len() != args.len() || cotangents.len() != lam.ret.len() {
            return Err(AdError::internal("vjp arity does not match its lambda"));
        }
        if s.pat.len() != lam.ret.len() + lam.params.len() {
            return Err(AdError::internal("vjp pattern does not match its lambda"));
        }
        let mut b = Builder::new(self.names);
        b.src = s.src.clone();
        let mut rev = Rev::new();
        rev.differentiated_again = self.depth > 0;
        rev.vjp(&mut b, lam, args, cotangents, vector, &s.pat)?;
        Ok(b.take_stms())
    }
}

/// What the forward sweep saved for a statement's return sweep (keyed by the statement's
/// first result).
pub(crate) enum Saved {
    /// A loop's tape: per loop parameter, its value at the start of each iteration (see
    /// [`loop_::Tape`]), and the number of iterations.
    Tape {
        tapes: Vec<loop_::Tape>,
        count: SubExp,
        /// A strip-mined loop's storage holding the inner tape of its last chunk.
        kept: Option<Vec<VName>>,
        /// What the tape keeps of the body's statements besides the parameters
        /// ([`loop_::kept_stms`]: results of expensive maps, residuals), one array per value.
        stored: Vec<VName>,
    },
    /// A `with_vjp`: the renamed adjoint function (its parameters are the results of `f`
    /// followed by their cotangents).
    WithVjp { adj: Lambda },
    /// Values a rule's forward sweep computed beside the primal for its return sweep (the
    /// position of a `reduce min`'s extremum; a `reduce (*)`'s product of non-zeros and
    /// number of zeros). A rule rewrites the forward sweep by emitting a statement of its
    /// own in [`Rev::fwd_stm`] (binding the primal's results and these values) and reading
    /// them back with `saved.remove` in its reverse.
    Values(Vec<SubExp>),
    /// The residuals of an elementwise map ([`residual`]), arrays in `residual::paths`
    /// order: computed by the forward sweep's map, or restored from a loop's tape, or
    /// rows of an enclosing map's residuals.
    Residuals(Vec<VName>),
}

/// The state of one reverse-mode differentiation.
pub(crate) struct Rev {
    /// Variables that depend on the differentiated arguments.
    pub active: HashSet<VName>,
    /// The adjoint accumulated so far of each active variable (absent: zero).
    pub adjs: HashMap<VName, SubExp>,
    /// Arrays whose adjoint is an accumulator in the current scope (inside a `map`).
    pub accs: HashMap<VName, VName>,
    /// Adjoint arrays this scope may update in place (fresh, not shared).
    pub owned: HashSet<VName>,
    pub saved: HashMap<VName, Saved>,
    /// Accumulators of a `with_acc` being differentiated, with the adjoints of their
    /// destination arrays (`None`: zero), which their updates read ([`with_acc`]).
    pub acc_cots: HashMap<VName, Option<Vec<VName>>>,
    /// Inner loops of strip-mined loops whose last chunk's tape the forward sweep kept
    /// (keyed by the inner loop's first result).
    pub last_chunk: HashMap<VName, loop_::LastChunk>,
    /// Statements of a re-executed loop body (keyed by their first result) whose results
    /// the loop's return sweep has already restored from its tape: the forward sweep does
    /// not emit them again.
    pub restored: HashSet<VName>,
    /// The derivative code will itself be differentiated (this `Vjp` is inside another AD
    /// construct): rules whose code is exact but not differentiable — the zero-counting
    /// `*` rules — give way to the general ones.
    pub differentiated_again: bool,
    /// The forward sweep being emitted is the primal's own run (not a re-execution inside
    /// a return sweep): maps there compute their residuals ([`residual`]).
    pub in_primal: bool,
}

impl Rev {
    pub fn new() -> Self {
        Rev {
            active: HashSet::new(),
            adjs: HashMap::new(),
            accs: HashMap::new(),
            owned: HashSet::new(),
            saved: HashMap::new(),
            acc_cots: HashMap::new(),
            last_chunk: HashMap::new(),
            restored: HashSet::new(),
            differentiated_again: false,
            in_primal: false,
        }
    }

    /// The `Vjp` statement: bind the arguments, run the forward sweep, seed the results'
    /// adjoints with the cotangents, run the return sweep, and bind the arguments' adjoints.
    /// With `vector` (`mjp`), the return sweep is mapped over the rows of the cotangents
    /// while the forward sweep runs once.
    fn vjp(
        &mut self,
        b: &mut Builder,
        lam: Lambda,
        args: Vec<SubExp>,
        cotangents: Vec<SubExp>,
        vector: bool,
        pat: &[Param],
    ) -> R<()> {
        let src = b.src.clone();
        let n = lam.ret.len();
        for (p, a) in lam.params.iter().zip(&args) {
            build::copy_to(b, p.clone(), a.clone());
            self.mark_active(p);
        }
        let body = lam.body;
        self.in_primal = true;
        let stms = self.forward(b, &body.stms);
        self.in_primal = false;
        let stms = stms?;
        let params = lam.params;
        let results = body.result;
        crate::scope::check_seed_shapes(b, &results, &cotangents, usize::from(vector))?;
        if !vector {
            for (r, c) in results.iter().zip(&cotangents) {
                self.add_adj(b, r, c.clone())?;
            }
            self.backward(b, stms)?;
            b.src = src;
            for (p, r) in pat.iter().zip(&results) {
                build::copy_to(b, p.clone(), r.clone());
            }
            for (p, x) in pat[n..].iter().zip(&params) {
                let a = self.adj(b, x.name)?;
                build::copy_to(b, p.clone(), a);
            }
            return Ok(());
        }
        // mjp: the return sweep for one row of cotangents, mapped over the rows.
        let seeds: Vec<VName> = cotangents
            .iter()
            .map(|c| {
                c.as_var()
                    .ok_or_else(|| AdError::internal("mjp cotangents must be arrays"))
            })
            .collect::<R<_>>()?;
        let Some(&first) = seeds.first() else {
            return Err(AdError::unsupported("mjp of a function without results"));
        };
        let k = b.let_basic("seeds", BasicOp::ArraySize(first, 0))?;
        let mut mb = Builder::new(b.names);
        mb.src = src.clone();
        let rows: Vec<Param> = pat[..n]
            .iter()
            .map(|p| mb.param("seed", p.ty.clone()))
            .collect();
        let saved_owned = std::mem::take(&mut self.owned);
        for (r, row) in results.iter().zip(&rows) {
            self.add_adj(&mut mb, r, SubExp::Var(row.name))?;
        }
        self.backward(&mut mb, stms)?;
        let mut res = Vec::new();
        for p in &params {
            res.push(self.adj(&mut mb, p.name)?);
        }
        self.owned = saved_owned;
        let body = mb.finish(res);
        b.src = src;
        for (p, r) in pat.iter().zip(&results) {
            build::copy_to(b, p.clone(), r.clone());
        }
        let ret = params.iter().map(|p| p.ty.clone()).collect();
        let lam = Lambda::new(rows, body, ret);
        b.let_pat(
            pat[n..].to_vec(),
            Exp::Soac(Soac::Map {
                w: k,
                lam,
                arrs: seeds,
            }),
        );
        Ok(())
    }

    /// The forward sweep of a scope's statements: emits the primal (with what the return
    /// sweep needs saved) and returns the statements for the return sweep.
    pub fn forward(&mut self, b: &mut Builder, stms: &[Stm]) -> R<Vec<Stm>> {
        let mut out = Vec::with_capacity(stms.len());
        for s in stms {
            for s in normalise::normalise(b.names, s.clone())? {
                self.fwd_stm(b, &s)?;
                out.push(s);
            }
        }
        Ok(out)
    }

    /// The return sweep over statements (in reverse).
    pub fn backward(&mut self, b: &mut Builder, stms: Vec<Stm>) -> R<()> {
        for s in stms.into_iter().rev() {
            self.rev_stm(b, s)?;
        }
        Ok(())
    }

    /// A renamed copy of `body` re-executed, then its return sweep with `seeds` as the
    /// adjoints of its results (redundant execution of a nested scope). Adjoints of its
    /// free variables accumulate in `self.adjs`.
    pub fn sweep(&mut self, b: &mut Builder, body: Body, seeds: Vec<Option<SubExp>>) -> R<()> {
        let stms = self.forward(b, &body.stms)?;
        for (r, s) in body.result.iter().zip(seeds) {
            if let Some(s) = s {
                self.add_adj(b, r, s)?;
            }
        }
        self.backward(b, stms)
    }

    /// Emit one statement of the forward sweep.
    fn fwd_stm(&mut self, b: &mut Builder, s: &Stm) -> R<()> {
        b.names.record_types(s);
        let mut used = HashSet::new();
        mentions(&s.exp, &mut used);
        let is_active = used.iter().any(|v| self.active.contains(v));
        if is_active {
            for p in &s.pat {
                self.mark_active(p);
            }
        }
        b.src = s.src.clone();
        if s.pat
            .first()
            .is_some_and(|p| self.restored.contains(&p.name))
        {
            return Ok(());
        }
        // Inside a `with_acc` being differentiated, the primal runs without its updates.
        let stripped;
        let s = if used.iter().any(|v| self.acc_cots.contains_key(v)) {
            match with_acc::strip_updates(self, s.clone())? {
                Some(t) => {
                    stripped = t;
                    &stripped
                }
                None => return Ok(()),
            }
        } else {
            s
        };
        match &s.exp {
            Exp::Loop { .. } if is_active => loop_::forward(self, b, s),
            Exp::Soac(Soac::Reduce { .. }) if is_active && !self.differentiated_again => {
                reduce::forward(self, b, s)
            }
            Exp::Soac(Soac::Map { .. }) if is_active => map::forward(self, b, s),
            Exp::WithVjp { .. } => with_vjp::forward(self, b, s, is_active),
            Exp::Vjp { .. } | Exp::Jvp { .. } => Err(AdError::internal(
                "a nested jvp or vjp was not eliminated first",
            )),
            Exp::Apply { fun, .. } if is_active => Err(AdError::unsupported(format!(
                "vjp through a call of the function {fun}"
            ))),
            _ => {
                let s = copy_consumed(b, s.clone())?;
                b.add(s);
                Ok(())
            }
        }
    }

    /// Emit one statement's return sweep (its results' adjoints are final).
    fn rev_stm(&mut self, b: &mut Builder, s: Stm) -> R<()> {
        let has_adj = s.pat.iter().any(|p| self.adjs.contains_key(&p.name));
        if !has_adj && !self.updates_acc_cots(&s.exp) {
            return Ok(());
        }
        b.src = s.src.clone();
        let pat = s.pat;
        match s.exp {
            Exp::Basic(BasicOp::UpdateAcc { acc, is, vals }) => {
                with_acc::update_reverse(self, b, acc, is, vals)
            }
            Exp::Basic(op) => basic::reverse(self, b, &pat, op),
            Exp::If {
                cond,
                then_body,
                else_body,
                ..
            } => if_::reverse(self, b, &pat, cond, then_body, else_body),
            Exp::Loop { params, form, body } => loop_::reverse(self, b, &pat, params, form, body),
            Exp::Soac(Soac::Map { w, lam, arrs }) => map::reverse(self, b, &pat, w, lam, arrs),
            Exp::Soac(Soac::Reduce {
                w,
                arrs,
                lam,
                neutral,
                ..
            }) => reduce::reverse(self, b, &pat, w, arrs, lam, neutral),
            Exp::Soac(Soac::Scan {
                w,
                arrs,
                lam,
                neutral,
                ..
            }) => scan::reverse(self, b, &pat, w, arrs, lam, neutral),
            Exp::Soac(Soac::Hist {
                w,
                dests,
                lam,
                neutral,
                is,
                vals,
            }) => hist::reverse(self, b, &pat, w, dests, lam, neutral, is, vals),
            Exp::Soac(Soac::Scatter { w, dests, is, vals }) => {
                scatter::reverse(self, b, &pat, w, dests, is, vals)
            }
            Exp::WithVjp { args, .. } => with_vjp::reverse(self, b, &pat, args),
            Exp::WithAcc { inputs, lam } => with_acc::reverse(self, b, &pat, inputs, lam),
            Exp::Apply { fun, .. } => Err(AdError::unsupported(format!(
                "vjp through a call of the function {fun}"
            ))),
            Exp::Jvp { .. } | Exp::Vjp { .. } => Err(AdError::internal(
                "a nested jvp or vjp was not eliminated first",
            )),
        }
    }

    // ----- variables, types and adjoints -----

    pub fn mark_active(&mut self, p: &Param) {
        if differentiable(&p.ty) {
            self.active.insert(p.name);
        }
    }

    pub fn is_active(&self, s: &SubExp) -> bool {
        matches!(s, SubExp::Var(v) if self.active.contains(v))
    }

    /// Whether `x` may update an accumulator being differentiated with an active value
    /// (then its return sweep runs even without adjoints of its results).
    pub fn updates_acc_cots<T: runic_ir::traverse::Walk + ?Sized>(&self, x: &T) -> bool {
        self.mentions_acc_cots(x, &[])
    }

    /// [`Rev::updates_acc_cots`] for a scope whose inputs `arrs` are also active values.
    pub fn mentions_acc_cots<T: runic_ir::traverse::Walk + ?Sized>(
        &self,
        x: &T,
        arrs: &[VName],
    ) -> bool {
        if self.acc_cots.is_empty() {
            return false;
        }
        let mut used = HashSet::new();
        mentions(x, &mut used);
        used.extend(arrs);
        used.iter().any(|v| self.acc_cots.contains_key(v))
            && used.iter().any(|v| self.active.contains(v))
    }

    /// The zero adjoint of type `ty` (a fresh array for arrays, which this scope owns).
    pub fn zeros(&mut self, b: &mut Builder, ty: &Type) -> R<SubExp> {
        if let Type::Acc { .. } = ty {
            return Err(AdError::unsupported("adjoints of accumulators"));
        }
        let z = b.zeros(ty)?;
        if let SubExp::Var(v) = z {
            self.owned.insert(v);
        }
        Ok(z)
    }

    /// The adjoint of `v` so far (zero when none), without giving up ownership.
    pub fn adj(&mut self, b: &mut Builder, v: VName) -> R<SubExp> {
        if let Some(a) = self.adjs.get(&v) {
            return Ok(a.clone());
        }
        let ty = b.type_of(&SubExp::Var(v))?;
        let z = self.zeros(b, &ty)?;
        if self.active.contains(&v) {
            self.adjs.insert(v, z.clone());
        }
        Ok(z)
    }

    /// The adjoint of the array `v` as a variable this scope owns (copied if shared), to be
    /// updated in place.
    pub fn owned_adj(&mut self, b: &mut Builder, v: VName) -> R<VName> {
        let a = self.adj(b, v)?;
        let a = a
            .as_var()
            .ok_or_else(|| AdError::internal(format!("the adjoint of array {v} is a scalar")))?;
        if self.owned.contains(&a) {
            return Ok(a);
        }
        let c = b.let_exp("adj", Exp::Basic(BasicOp::Copy(a)))?[0];
        self.owned.insert(c);
        self.adjs.insert(v, SubExp::Var(c));
        Ok(c)
    }

    /// `adj(x) += c` (ignored for constants and inactive variables).
    pub fn add_adj(&mut self, b: &mut Builder, x: &SubExp, c: SubExp) -> R<()> {
        let SubExp::Var(v) = x else { return Ok(()) };
        if !self.active.contains(v) {
            return Ok(());
        }
        if let Some(&acc) = self.accs.get(v) {
            return build::acc_add_all(b, acc, Vec::new(), c);
        }
        let new = match self.adjs.get(v).cloned() {
            // The contributing adjoint is dead once its statement is processed, so its
            // ownership (if any) passes on with it.
            None => c,
            Some(old) => {
                let ty = b.type_of(&SubExp::Var(*v))?;
                let r = build::add_values(b, &ty, old, c)?;
                if let SubExp::Var(rv) = &r {
                    if ty.rank() > 0 {
                        self.owned.insert(*rv);
                    }
                }
                r
            }
        };
        self.adjs.insert(*v, new);
        Ok(())
    }

    /// `adj(arr)[idx] += c` (for `x = arr[idx]`).
    pub fn add_adj_at(
        &mut self,
        b: &mut Builder,
        arr: VName,
        idx: &[DimIndex],
        c: SubExp,
    ) -> R<()> {
        if !self.active.contains(&arr) {
            return Ok(());
        }
        if let Some(&acc) = self.accs.get(&arr) {
            return build::acc_add_at(b, acc, arr, idx, c);
        }
        let a = self.owned_adj(b, arr)?;
        // `old` has the type of `c` (`idx` may be a slice, whose size is known at run time).
        let cty = b.type_of(&c)?;
        let old = b.bind1(
            "old",
            Exp::Basic(BasicOp::Index(a, idx.to_vec())),
            cty.clone(),
        );
        let sum = build::add_values(b, &cty, SubExp::Var(old), c)?;
        let upd = b.let_exp("adj", Exp::Basic(BasicOp::Update(a, idx.to_vec(), sum)))?[0];
        self.owned.remove(&a);
        self.owned.insert(upd);
        self.adjs.insert(arr, SubExp::Var(upd));
        Ok(())
    }

    /// Free active variables of `x` (an expression or body of a nested scope) whose
    /// adjoints are not accumulators: the adjoints the scope must hand back.
    pub fn free_adjoints<T: runic_ir::traverse::Walk + ?Sized>(&self, x: &T) -> Vec<VName> {
        let mut used = HashSet::new();
        mentions(x, &mut used);
        let mut v: Vec<VName> = used
            .into_iter()
            .filter(|v| self.active.contains(v) && !self.accs.contains_key(v))
            .collect();
        v.sort();
        v
    }
}

/// The arrays `e` updates in place.
fn consumed_mut(e: &mut Exp) -> Vec<&mut VName> {
    match e {
        Exp::Basic(BasicOp::Update(arr, _, _)) => vec![arr],
        Exp::Soac(Soac::Scatter { dests, .. }) | Exp::Soac(Soac::Hist { dests, .. }) => {
            dests.iter_mut().collect()
        }
        Exp::WithAcc { inputs, .. } => inputs.iter_mut().flat_map(|i| &mut i.arrays).collect(),
        _ => Vec::new(),
    }
}

/// `s` with every array it updates in place replaced by a fresh copy (emitted into `b`):
/// the return sweep may still read the original.
fn copy_consumed(b: &mut Builder, mut s: Stm) -> R<Stm> {
    for v in consumed_mut(&mut s.exp) {
        if b.names.type_of(*v).is_some() {
            *v = b.let_exp("copy", Exp::Basic(BasicOp::Copy(*v)))?[0];
        }
    }
    Ok(s)
}

/// Whether values of type `t` have adjoints (every numeric type, §11.2; not `bool`).
pub(crate) fn differentiable(t: &Type) -> bool {
    match t {
        Type::Prim(p) | Type::Array { elem: p, .. } => *p != PrimType::Bool,
        Type::Acc { .. } => false,
    }
}
