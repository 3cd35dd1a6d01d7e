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
//! [`map`], [`reduce`], [`scan`], [`hist`], [`scatter`], [`with_vjp`]. Each states its rule.
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
mod scan;
mod scatter;
mod sort;
mod with_vjp;

use crate::error::AdError;
use crate::scope::mentions;
use runic_ir::traverse::{Renamer, VisitorMut};
use runic_ir::*;
use std::collections::{HashMap, HashSet};

pub(crate) type R<T> = Result<T, AdError>;

/// Eliminate every `Vjp` (and every `WithVjp` outside one) that can be differentiated; the
/// others stay in place (the executor reports them if reached) and their errors are
/// returned. A `Vjp` whose lambda still contains a `Jvp` is left for a later round (the
/// caller alternates with forward mode).
pub fn eliminate_where_possible(mut prog: Prog) -> (Prog, Vec<AdError>) {
    for f in &prog.funs {
        prog.names.record_types(f.params.as_slice());
        prog.names.record_types(&f.body);
    }
    let mut e = Elim {
        names: &mut prog.names,
        errors: Vec::new(),
        depth: 0,
    };
    for f in prog.funs.iter_mut() {
        let body = std::mem::take(&mut f.body);
        f.body = e.body(body, false);
    }
    let errors = e.errors;
    (prog, errors)
}

/// Whether a lambda (after its nested Vjps were eliminated) still holds a forward-mode
/// construct, which must be eliminated first.
fn has_jvp(l: &Lambda) -> bool {
    runic_ir::traverse::any_exp(&l.body, |e| matches!(e, Exp::Jvp { .. }))
}

struct Elim<'n> {
    names: &'n mut NameSource,
    errors: Vec<AdError>,
    /// How many `Jvp`/`Vjp` lambdas enclose the current statement.
    depth: usize,
}

impl Elim<'_> {
    /// `in_vjp`: the body is inside the lambda of a `Vjp` (a `WithVjp` there belongs to
    /// that differentiation and must stay).
    fn body(&mut self, b: Body, in_vjp: bool) -> Body {
        let mut stms = Vec::with_capacity(b.stms.len());
        for mut s in b.stms {
            let errors_before = self.errors.len();
            self.nested(&mut s.exp, in_vjp);
            match &s.exp {
                Exp::Vjp { lam, .. } if !has_jvp(lam) => match self.expand(s.clone()) {
                    Ok(new) => stms.extend(new),
                    Err(e) => {
                        // Reaching it is a run-time error that says why (an inner failure
                        // explains an outer one).
                        let why = self.errors.get(errors_before).unwrap_or(&e).message.clone();
                        self.errors.push(e);
                        let already = matches!(
                            stms.last(),
                            Some(Stm { exp: Exp::Basic(BasicOp::Assert { message, .. }), .. })
                                if *message == why
                        );
                        if already {
                            stms.push(s);
                            continue;
                        }
                        let ok = self
                            .names
                            .fresh_typed("unsupported", Type::Prim(PrimType::Bool));
                        stms.push(Stm {
                            pat: vec![Param {
                                name: ok,
                                ty: Type::Prim(PrimType::Bool),
                            }],
                            exp: Exp::Basic(BasicOp::Assert {
                                cond: SubExp::Const(Prim::Bool(false)),
                                message: why,
                            }),
                            src: s.src.clone(),
                        });
                        stms.push(s);
                    }
                },
                Exp::WithVjp { .. } if !in_vjp => stms.extend(self.inline_with_vjp(s)),
                _ => stms.push(s),
            }
        }
        Body {
            stms,
            result: b.result,
        }
    }

    fn lambda(&mut self, l: &mut Lambda, in_vjp: bool) {
        l.body = self.body(std::mem::take(&mut l.body), in_vjp);
    }

    fn nested(&mut self, e: &mut Exp, in_vjp: bool) {
        match e {
            Exp::Basic(_) | Exp::Apply { .. } => {}
            Exp::If {
                then_body,
                else_body,
                ..
            } => {
                *then_body = self.body(std::mem::take(then_body), in_vjp);
                *else_body = self.body(std::mem::take(else_body), in_vjp);
            }
            Exp::Loop { body, .. } => *body = self.body(std::mem::take(body), in_vjp),
            Exp::Soac(s) => match s {
                Soac::Map { lam, .. } | Soac::Hist { lam, .. } => self.lambda(lam, in_vjp),
                Soac::Reduce { pre, lam, .. } | Soac::Scan { pre, lam, .. } => {
                    if let Some(p) = pre {
                        self.lambda(p, in_vjp);
                    }
                    self.lambda(lam, in_vjp);
                }
                Soac::Scatter { .. } => {}
            },
            Exp::WithAcc { inputs, lam } => {
                for i in inputs {
                    if let Some((l, _)) = &mut i.op {
                        self.lambda(l, in_vjp);
                    }
                }
                self.lambda(lam, in_vjp);
            }
            Exp::Jvp { lam, .. } => {
                self.depth += 1;
                self.lambda(lam, in_vjp);
                self.depth -= 1;
            }
            Exp::Vjp { lam, .. } => {
                self.depth += 1;
                self.lambda(lam, true);
                self.depth -= 1;
            }
            Exp::WithVjp { f, adj, .. } => {
                self.lambda(f, in_vjp);
                self.lambda(adj, in_vjp);
            }
        }
    }

    /// A `with_vjp f f' x` that no reverse mode differentiates is just `f x`.
    fn inline_with_vjp(&mut self, s: Stm) -> Vec<Stm> {
        let Exp::WithVjp { mut f, args, .. } = s.exp else {
            return vec![s];
        };
        Renamer {
            names: self.names,
            map: HashMap::new(),
        }
        .lambda(&mut f);
        let mut out = Vec::new();
        for (p, a) in f.params.iter().zip(args) {
            out.push(build::copy_stm(p.clone(), a, &s.src));
        }
        out.extend(f.body.stms);
        for (p, r) in s.pat.into_iter().zip(f.body.result) {
            out.push(build::copy_stm(p, r, &s.src));
        }
        out
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
    /// A loop's tape: one array per loop parameter with the value at the start of each
    /// iteration, and the number of iterations.
    Tape { tapes: Vec<VName>, count: SubExp },
    /// A `with_vjp`: the renamed adjoint function (its parameters are the results of `f`
    /// followed by their cotangents).
    WithVjp { adj: Lambda },
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
    /// The derivative code will itself be differentiated (this `Vjp` is inside another AD
    /// construct): rules whose code is exact but not differentiable — the zero-counting
    /// `*` rules — give way to the general ones.
    pub differentiated_again: bool,
}

impl Rev {
    pub fn new() -> Self {
        Rev {
            active: HashSet::new(),
            adjs: HashMap::new(),
            accs: HashMap::new(),
            owned: HashSet::new(),
            saved: HashMap::new(),
            differentiated_again: false,
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
            b.names.set_type(p.name, p.ty.clone());
            b.add(build::copy_stm(p.clone(), a.clone(), &src));
            self.mark_active(p);
        }
        let body = lam.body;
        let stms = self.forward(b, &body.stms)?;
        let params = lam.params;
        let results = body.result;
        crate::scope::check_seed_shapes(b, &results, &cotangents, usize::from(vector))?;
        if !vector {
            for (r, c) in results.iter().zip(&cotangents) {
                self.add_adj(b, r, c.clone())?;
            }
            self.backward(b, stms)?;
            for (i, r) in results.iter().enumerate() {
                b.add(build::copy_stm(pat[i].clone(), r.clone(), &src));
            }
            for (i, p) in params.iter().enumerate() {
                let a = self.adj(b, p.name)?;
                b.add(build::copy_stm(pat[n + i].clone(), a, &src));
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
        let k = self.bind(
            b,
            "seeds",
            Exp::Basic(BasicOp::ArraySize(first, 0)),
            Type::Prim(PrimType::I64),
        );
        let mut mb = Builder::new(b.names);
        mb.src = src.clone();
        let rows: Vec<Param> = results
            .iter()
            .zip(&pat[..n])
            .map(|(_, p)| self.fresh_param(&mut mb, "seed", &p.ty))
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
        for (i, r) in results.iter().enumerate() {
            b.add(build::copy_stm(pat[i].clone(), r.clone(), &src));
        }
        let ret: Vec<Type> = params.iter().map(|p| p.ty.clone()).collect();
        b.add(Stm {
            pat: pat[n..].to_vec(),
            exp: Exp::Soac(Soac::Map {
                w: SubExp::Var(k),
                lam: Lambda {
                    id: runic_ir::LamId::fresh(),
                    params: rows,
                    body,
                    ret,
                },
                arrs: seeds,
            }),
            src,
        });
        Ok(())
    }

    /// The forward sweep of a scope's statements: emits the primal (with what the return
    /// sweep needs saved) and returns the statements for the return sweep.
    pub fn forward(&mut self, b: &mut Builder, stms: &[Stm]) -> R<Vec<Stm>> {
        let mut out = Vec::with_capacity(stms.len());
        for s in stms {
            for s in normalise::normalise(b.names, s.clone()) {
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
        match &s.exp {
            Exp::Loop { .. } if is_active => loop_::forward(self, b, s),
            Exp::WithVjp { .. } => with_vjp::forward(self, b, s, is_active),
            Exp::Vjp { .. } | Exp::Jvp { .. } => Err(AdError::internal(
                "a nested jvp or vjp was not eliminated first",
            )),
            Exp::Apply { fun, .. } if is_active => Err(AdError::unsupported(format!(
                "vjp through a call of the function {fun}"
            ))),
            _ => {
                let s = copy_consumed(self, b, s.clone());
                b.add(s);
                Ok(())
            }
        }
    }

    /// Emit one statement's return sweep (its results' adjoints are final).
    fn rev_stm(&mut self, b: &mut Builder, s: Stm) -> R<()> {
        let has_adj = s.pat.iter().any(|p| self.adjs.contains_key(&p.name));
        if !has_adj {
            return Ok(());
        }
        b.src = s.src.clone();
        let pat = s.pat;
        match s.exp {
            Exp::Basic(op) => basic::reverse(self, b, &pat, op),
            Exp::If {
                cond,
                then_body,
                else_body,
                ret,
            } => if_::reverse(self, b, &pat, cond, then_body, else_body, ret),
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
            Exp::WithAcc { .. } => Err(AdError::unsupported("vjp of with_acc (accumulators)")),
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

    pub fn bind(&mut self, b: &mut Builder, hint: &str, exp: Exp, ty: Type) -> VName {
        b.bind1(hint, exp, ty)
    }

    pub fn bind_many(
        &mut self,
        b: &mut Builder,
        hint: &str,
        exp: Exp,
        tys: Vec<Type>,
    ) -> Vec<VName> {
        let hints: Vec<&str> = tys.iter().map(|_| hint).collect();
        b.bind_named(&hints, exp, tys)
    }

    pub fn fresh_param(&mut self, b: &mut Builder, hint: &str, ty: &Type) -> Param {
        b.param(hint, ty.clone())
    }

    /// The zero adjoint of type `ty` (a fresh array for arrays).
    pub fn zeros(&mut self, b: &mut Builder, ty: &Type) -> R<SubExp> {
        match ty {
            Type::Prim(p) => Ok(SubExp::Const(Prim::zero(*p))),
            Type::Array { elem, shape } => {
                let z = SubExp::Const(Prim::zero(*elem));
                let exp = Exp::Basic(BasicOp::Replicate(shape.clone(), z));
                let v = self.bind(b, "zeros", exp, ty.clone());
                self.owned.insert(v);
                Ok(SubExp::Var(v))
            }
            Type::Acc { .. } => Err(AdError::unsupported("adjoints of accumulators")),
        }
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
        let ty = b.type_of(&SubExp::Var(a))?;
        let c = self.bind(b, "adj", Exp::Basic(BasicOp::Copy(a)), ty);
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
            return build::acc_add_all(self, b, acc, Vec::new(), c);
        }
        let new = match self.adjs.get(v).cloned() {
            // The contributing adjoint is dead once its statement is processed, so its
            // ownership (if any) passes on with it.
            None => c,
            Some(old) => {
                let ty = b.type_of(&SubExp::Var(*v))?;
                let r = build::add_values(self, b, &ty, old, c)?;
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
            let mut is = Vec::new();
            for d in idx {
                match d {
                    // Accumulator indices are i64 (array indices may be any integer type).
                    DimIndex::Fix(i) => {
                        let t = crate::alg::prim_of(b.names, i)?;
                        let i = if t == PrimType::I64 {
                            i.clone()
                        } else {
                            let c = b.convert(PrimType::I64, i.clone());
                            c
                        };
                        is.push(i)
                    }
                    DimIndex::Slice { .. } => {
                        return Err(AdError::unsupported(
                            "vjp of a slice of a free array inside a map",
                        ))
                    }
                }
            }
            return build::acc_add_all(self, b, acc, is, c);
        }
        let a = self.owned_adj(b, arr)?;
        let ty = b.type_of(&SubExp::Var(a))?;
        let cty = b.type_of(&c)?;
        let old = self.bind(
            b,
            "old",
            Exp::Basic(BasicOp::Index(a, idx.to_vec())),
            cty.clone(),
        );
        let sum = build::add_values(self, b, &cty, SubExp::Var(old), c)?;
        let upd = self.bind(
            b,
            "adj",
            Exp::Basic(BasicOp::Update(a, idx.to_vec(), sum)),
            ty,
        );
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

    /// A renamed copy of a lambda (for re-executing it).
    pub fn renamed(&mut self, b: &mut Builder, l: &Lambda) -> Lambda {
        let mut l = l.clone();
        Renamer {
            names: b.names,
            map: HashMap::new(),
        }
        .lambda(&mut l);
        b.names.record_types(&l);
        l
    }
}

/// The arrays `e` updates in place.
fn consumed_mut(e: &mut Exp) -> Vec<&mut VName> {
    match e {
        Exp::Basic(BasicOp::Update(arr, _, _)) => vec![arr],
        Exp::Soac(Soac::Scatter { dests, .. }) | Exp::Soac(Soac::Hist { dests, .. }) => {
            dests.iter_mut().collect()
        }
        _ => Vec::new(),
    }
}

/// `s` with every array it updates in place replaced by a fresh copy (emitted into `b`):
/// the return sweep may still read the original.
fn copy_consumed(rev: &mut Rev, b: &mut Builder, mut s: Stm) -> Stm {
    for v in consumed_mut(&mut s.exp) {
        let Some(ty) = b.names.type_of(*v).cloned() else {
            continue;
        };
        let c = rev.bind(b, "copy", Exp::Basic(BasicOp::Copy(*v)), ty);
        *v = c;
    }
    s
}

/// Whether values of type `t` have adjoints (every numeric type, §11.2; not `bool`).
pub(crate) fn differentiable(t: &Type) -> bool {
    match t {
        Type::Prim(p) | Type::Array { elem: p, .. } => *p != PrimType::Bool,
        Type::Acc { .. } => false,
    }
}
