//! Forward-mode AD as a program transformation: every `Jvp` becomes ordinary IR that
//! computes the primal and, next to it, the tangents (language.md §11).
//!
//! Jvps are eliminated innermost first, so the body of an outer `Jvp` is already free of
//! forward-mode constructs when it is differentiated: the derivative code of an inner `jvp`
//! is ordinary code that the outer one differentiates in turn (nesting, no perturbation
//! confusion). Within one `Jvp`, every variable of primitive type may have a tangent
//! variable of the same type; a missing tangent means zero (no code is emitted for it until
//! an operation needs it materialised). Free variables of the lambda have no tangent here.
//!
//! `jmp` (`vector: true`) uses vector tangents: with `k` seeds, the tangent of a value of
//! type `[n]t` has type `[n][k]t` (seeds innermost). Loops, branches and straight-line code
//! run their primal once and carry arrays of tangents; each scalar rule becomes one `map`
//! over the seeds. A SOAC without a loop inside is the exception ([`Diff::per_seed`]): a
//! `map` over the seeds of its scalar derivative; a map of straight-line code is first
//! linearised into a primal map (run once) and a tangent map over its residuals.
//!
//! Accumulators (`with_acc`, from reverse mode: forward over reverse) get tangent
//! accumulators that receive the tangent of every update.
//!
//! Reduce, scan and histogram operators are differentiated on (value, tangent) pairs with a
//! zero tangent for the neutral element; when the tangent half of that operator reads no
//! primal operand (a linear operator such as `+`), the tangents get a SOAC of their own.
//! A float product's tangent uses its gradient, from a `vjp` this pass emits for reverse
//! mode ([`Diff::product_by_gradient`]): forward mode alone may leave `Vjp`s behind, and
//! [`crate::eliminate_where_possible`] runs both.
//!
//! One file per rule, each stating its rule: [`basic`] (scalar and array operations),
//! [`control`] (`if`, `loop`), [`map`] (including the per-seed rule of vector mode and the
//! linearisation of maps), [`reduce`] (`reduce`, `scan`, `reduce_by_index`, `scatter`),
//! [`acc`] (`with_acc`), [`product`] (`reduce (*)` by its gradient) and [`vector`] (`jmp`).

mod acc;
mod basic;
mod control;
mod map;
mod product;
mod reduce;
mod vector;

use crate::error::AdError;
use crate::scope::mentions;
use runic_ir::traverse::{any_exp, is_ad_construct, walk_stm_mut, VisitorMut};
use runic_ir::*;
use runic_prim::deriv::Partial;
use std::collections::{HashMap, HashSet};

type R<T> = Result<T, AdError>;

/// One operand's partial, the operand, and its tangent (if nonzero).
type Contribution = (Partial<SubExp>, (SubExp, Option<SubExp>));

/// Eliminate every `Jvp` of the program (innermost first). `Vjp`/`WithVjp` outside any
/// `Jvp`, and those this pass emits for float products, are left for reverse mode.
pub fn eliminate(prog: Prog) -> R<Prog> {
    let (prog, mut errors) = eliminate_where_possible(prog);
    if errors.is_empty() {
        Ok(prog)
    } else {
        Err(errors.swap_remove(0))
    }
}

/// Like [`eliminate`], but a `Jvp` that cannot be differentiated stays in place (the
/// executor reports it when it is reached) and its error is returned alongside, so that
/// one unsupported use does not make every other entry point of the program fail.
pub fn eliminate_where_possible(mut prog: Prog) -> (Prog, Vec<AdError>) {
    prog.record_types();
    let mut e = Elim {
        names: &mut prog.names,
        errors: Vec::new(),
        depth: 0,
    };
    for f in prog.funs.iter_mut() {
        e.body(&mut f.body);
    }
    let errors = e.errors;
    (prog, errors)
}

/// Walks a program bottom-up and replaces each `Jvp` statement by its expansion.
struct Elim<'n> {
    names: &'n mut NameSource,
    /// Why Jvps left in place could not be differentiated.
    errors: Vec<AdError>,
    /// How many AD constructs enclose the current statement (their derivatives will be
    /// differentiated again, so piecewise rules are not used inside them).
    depth: usize,
}

impl VisitorMut for Elim<'_> {
    /// Each statement's nested bodies and lambdas first (one level deeper inside an AD
    /// construct), then the statement itself if it is a `Jvp`.
    fn body(&mut self, b: &mut Body) {
        let mut stms = Vec::with_capacity(b.stms.len());
        for mut s in std::mem::take(&mut b.stms) {
            let ad = usize::from(is_ad_construct(&s.exp));
            self.depth += ad;
            walk_stm_mut(self, &mut s);
            self.depth -= ad;
            if !matches!(s.exp, Exp::Jvp { .. }) {
                stms.push(s);
                continue;
            }
            match self.expand(s.clone()) {
                Ok(new) => stms.extend(new),
                Err(e) => {
                    self.errors.push(e);
                    stms.push(s);
                }
            }
        }
        b.stms = stms;
    }
}

impl Elim<'_> {
    /// The statements replacing one (already Jvp-free inside) `Jvp` statement.
    fn expand(&mut self, s: Stm) -> R<Vec<Stm>> {
        let Exp::Jvp {
            lam,
            args,
            tangents,
            vector,
        } = s.exp
        else {
            return Ok(vec![s]);
        };
        if lam.params.len() != args.len() || args.len() != tangents.len() {
            return Err(AdError::internal(format!(
                "jvp with {} parameters, {} arguments and {} tangents",
                lam.params.len(),
                args.len(),
                tangents.len()
            )));
        }
        if s.pat.len() != 2 * lam.ret.len() {
            return Err(AdError::internal("jvp pattern does not match its lambda"));
        }
        let mut b = Builder::new(self.names);
        b.src = s.src;
        let mut d = Diff {
            tans: HashMap::new(),
            seeds: None,
            seeded_accs: HashSet::new(),
            differentiated_again: self.depth > 0,
        };
        if vector {
            d.vector_jvp(&mut b, lam, args, tangents, &s.pat)?;
        } else {
            d.scalar_jvp(&mut b, lam, args, tangents, &s.pat)?;
        }
        Ok(b.take_stms())
    }
}

/// Differentiation of the body of one `Jvp`.
struct Diff {
    /// Tangent of each variable that has a nonzero one.
    tans: HashMap<VName, SubExp>,
    /// In vector mode (`jmp`), the number of seeds `k`: the tangent of a value of type
    /// `[n]..t` then has type `[n]..[k]t` (seeds innermost, so that indexing, updates and
    /// map rows carry over unchanged); loops and branches run their primal once (SOACs
    /// without loops: see [`Diff::per_seed`]).
    seeds: Option<SubExp>,
    /// Tangent accumulators made in vector mode: their index space ends with the seed
    /// dimension, so every write names a seed.
    seeded_accs: HashSet<VName>,
    /// Whether the derivative will itself be differentiated: then every rule must be
    /// differentiable, and the zero-counting product rule is not used.
    differentiated_again: bool,
}

/// Whether a body may update an array in place (then a seed that is also an argument must
/// be copied). Conservative: any in-place operation or loop anywhere inside counts.
fn may_consume(body: &Body) -> bool {
    any_exp(body, |e| {
        matches!(
            e,
            Exp::Basic(BasicOp::Update(..))
                | Exp::Soac(Soac::Scatter { .. } | Soac::Hist { .. })
                | Exp::Loop { .. }
                | Exp::WithAcc { .. }
        )
    })
}

/// `p = v`, with the source information of the `jvp` being expanded (for its results,
/// bound after the body's statements have set the builder's).
fn bind_to(b: &mut Builder, p: &Param, v: SubExp, src: &SrcInfo) {
    b.add(Stm {
        pat: vec![p.clone()],
        exp: Exp::Basic(BasicOp::SubExp(v)),
        src: src.clone(),
    });
}

impl Diff {
    /// The type of the tangent of a value of type `ty` (see [`Diff::seeds`]). An
    /// accumulator's tangent is an accumulator (in vector mode, with the seeds as an extra
    /// index).
    fn tan_ty(&self, ty: &Type) -> Type {
        match (&self.seeds, ty) {
            (None, _) => ty.clone(),
            (Some(k), Type::Acc { shape, elems }) => Type::Acc {
                shape: shape.iter().cloned().chain([k.clone()]).collect(),
                elems: elems.clone(),
            },
            (Some(k), Type::Prim(p)) => Type::Array {
                elem: *p,
                shape: vec![k.clone()],
            },
            (Some(k), Type::Array { elem, shape }) => Type::Array {
                elem: *elem,
                shape: shape.iter().cloned().chain([k.clone()]).collect(),
            },
        }
    }

    /// A fresh parameter for the tangent of `p`.
    fn tangent_param(&mut self, b: &mut Builder, p: &Param) -> Param {
        let hint = format!("d{}", b.names.hint(p.name));
        let dp = b.param(&hint, self.tan_ty(&p.ty));
        if self.seeds.is_some() && matches!(dp.ty, Type::Acc { .. }) {
            self.seeded_accs.insert(dp.name);
        }
        dp
    }

    /// Whether an expression reads an accumulator. Such a SOAC is not differentiated per
    /// seed: re-running its primal per seed would repeat its writes.
    fn uses_acc(&self, names: &NameSource, e: &Exp) -> bool {
        let mut used = HashSet::new();
        mentions(e, &mut used);
        used.iter()
            .any(|v| matches!(names.type_of(*v), Some(Type::Acc { .. })))
    }

    fn tan_opt(&self, s: &SubExp) -> Option<SubExp> {
        match s {
            SubExp::Var(v) => self.tans.get(v).cloned(),
            SubExp::Const(_) => None,
        }
    }

    fn tan_of_var(&self, v: VName) -> Option<VName> {
        self.tans.get(&v).and_then(SubExp::as_var)
    }

    /// The zero tangent of a value of type `ty`.
    fn zero(&mut self, b: &mut Builder, ty: &Type) -> R<SubExp> {
        match self.tan_ty(ty) {
            Type::Prim(p) => Ok(SubExp::Const(Prim::zero(p))),
            Type::Array { elem, shape } => {
                let z = SubExp::Const(Prim::zero(elem));
                Ok(b.let_basic("zeros", BasicOp::Replicate(shape, z))?)
            }
            Type::Acc { .. } => Err(AdError::unsupported("tangents of accumulators")),
        }
    }

    /// The tangent of `s`, materialised (zero when it has none).
    fn tan(&mut self, b: &mut Builder, s: &SubExp) -> R<SubExp> {
        let t = self.tan_opt(s);
        self.materialise(b, t, s)
    }

    /// `tan` for an array variable.
    fn tan_var(&mut self, b: &mut Builder, v: VName) -> R<VName> {
        let t = self.tan(b, &SubExp::Var(v))?;
        t.as_var()
            .ok_or_else(|| AdError::internal(format!("the tangent of array {v} is a scalar")))
    }

    /// Materialise an optional tangent of the value `of`.
    fn materialise(&mut self, b: &mut Builder, t: Option<SubExp>, of: &SubExp) -> R<SubExp> {
        match t {
            Some(t) => Ok(t),
            None => {
                let ty = b.type_of(of)?;
                self.zero(b, &ty)
            }
        }
    }

    fn scalar_jvp(
        &mut self,
        b: &mut Builder,
        lam: Lambda,
        args: Vec<SubExp>,
        tangents: Vec<SubExp>,
        pat: &[Param],
    ) -> R<()> {
        let src = b.src.clone();
        self.bind_args(b, &lam.params, &args, &tangents, &lam.body)?;
        let res = lam.body.result.clone();
        let tres = self.body(b, lam.body)?;
        let (pat, dpat) = pat.split_at(res.len());
        for (p, r) in pat.iter().zip(&res) {
            bind_to(b, p, r.clone(), &src);
        }
        for ((dp, t), r) in dpat.iter().zip(tres).zip(&res) {
            let t = self.materialise(b, t, r)?;
            bind_to(b, dp, t, &src);
        }
        Ok(())
    }

    /// Bind the lambda's parameters to the arguments and give each a tangent variable bound
    /// to its seed (copied when the seed is also an argument, so that in-place updates of
    /// one cannot be seen through the other).
    fn bind_args(
        &mut self,
        b: &mut Builder,
        params: &[Param],
        args: &[SubExp],
        tangents: &[SubExp],
        body: &Body,
    ) -> R<()> {
        for (p, a) in params.iter().zip(args) {
            b.let_pat(vec![p.clone()], Exp::Basic(BasicOp::SubExp(a.clone())));
        }
        crate::scope::check_seed_shapes(b, args, tangents, 0)?;
        let consumes = may_consume(body);
        for (p, t) in params.iter().zip(tangents) {
            let aliased = consumes && matches!(t, SubExp::Var(_)) && args.contains(t);
            let op = match t {
                SubExp::Var(v) if aliased && p.ty.rank() > 0 => BasicOp::Copy(*v),
                _ => BasicOp::SubExp(t.clone()),
            };
            let hint = format!("d{}", b.names.hint(p.name));
            let dp = b.bind1(&hint, Exp::Basic(op), self.tan_ty(&p.ty));
            self.tans.insert(p.name, SubExp::Var(dp));
        }
        Ok(())
    }

    /// Emit the primal and tangent statements of a body; the tangents of its results.
    fn body(&mut self, b: &mut Builder, body: Body) -> R<Vec<Option<SubExp>>> {
        for s in body.stms {
            self.stm(b, s)?;
        }
        Ok(body.result.iter().map(|r| self.tan_opt(r)).collect())
    }

    fn stm(&mut self, b: &mut Builder, s: Stm) -> R<()> {
        b.src = s.src.clone();
        match s.exp {
            Exp::Basic(op) => {
                b.let_pat(s.pat.clone(), Exp::Basic(op.clone()));
                if let [p] = s.pat.as_slice() {
                    if let Some(t) = self.basic(b, p, op)? {
                        self.tans.insert(p.name, t);
                    }
                }
                Ok(())
            }
            Exp::If {
                cond,
                then_body,
                else_body,
                ret,
            } => self.if_(b, s.pat, cond, then_body, else_body, ret),
            Exp::Loop { params, form, body } => self.loop_(b, s.pat, params, form, body),
            // Vector mode: a SOAC without a loop inside runs per seed.
            Exp::Soac(_)
                if self.seeds.is_some()
                    && !any_exp(&s.exp, |e| matches!(e, Exp::Loop { .. }))
                    && !self.uses_acc(b.names, &s.exp) =>
            {
                self.per_seed(b, s)
            }
            Exp::Soac(Soac::Map { w, lam, arrs }) => self.map(b, s.pat, w, lam, arrs),
            Exp::Soac(soac) => self.fold(b, s.pat, soac),
            Exp::Apply { fun, .. } => Err(AdError::unsupported(format!(
                "jvp through a call of the function {fun}"
            ))),
            Exp::WithAcc { inputs, lam } => self.with_acc(b, s.pat, inputs, lam),
            Exp::Vjp { .. } | Exp::WithVjp { .. } => Err(AdError::unsupported(
                "forward mode over reverse mode (jvp of vjp or with_vjp)",
            )),
            Exp::Jvp { .. } => Err(AdError::internal("a nested jvp was not eliminated first")),
        }
    }

    /// A body differentiated in a nested builder, and its result tangents.
    fn sub_body(&mut self, b: &mut Builder, body: Body) -> R<(Body, Vec<Option<SubExp>>)> {
        let mut tans = Vec::new();
        let body = b.body_try(|b| {
            let res = body.result.clone();
            tans = self.body(b, body)?;
            Ok::<_, AdError>(res)
        })?;
        Ok((body, tans))
    }

    /// Append to a differentiated body the tangents of its results marked active,
    /// materialised (zeros where missing).
    fn finish_tangents(
        &mut self,
        b: &mut Builder,
        body: &mut Body,
        tans: &[Option<SubExp>],
        active: &[bool],
    ) -> R<()> {
        let res = body.result.clone();
        let mut sb = Builder::new(b.names);
        sb.src = b.src.clone();
        for ((r, t), a) in res.iter().zip(tans).zip(active) {
            if *a {
                let t = self.materialise(&mut sb, t.clone(), r)?;
                body.result.push(t);
            }
        }
        body.stms.extend(sb.take_stms());
        Ok(())
    }

    /// Bind tangent variables for the active entries of a pattern.
    fn tangent_pat(&mut self, b: &mut Builder, pat: &[Param], active: &[bool]) -> Vec<Param> {
        let mut out = Vec::new();
        for (p, a) in pat.iter().zip(active) {
            if *a {
                let dp = self.tangent_param(b, p);
                self.tans.insert(p.name, SubExp::Var(dp.name));
                out.push(dp);
            }
        }
        out
    }

    /// `pat ++ tangent_pat(pat, active)`: a pattern with the tangents of its active
    /// entries appended.
    fn with_tangents(&mut self, b: &mut Builder, pat: Vec<Param>, active: &[bool]) -> Vec<Param> {
        let dpat = self.tangent_pat(b, &pat, active);
        pat.into_iter().chain(dpat).collect()
    }

    /// `ty ++ [tan_ty(t) | t active]`: types with the tangent types of the active ones
    /// appended.
    fn with_tangent_types(&self, ty: Vec<Type>, active: &[bool]) -> Vec<Type> {
        let dty: Vec<Type> = ty
            .iter()
            .zip(active)
            .filter(|(_, a)| **a)
            .map(|(t, _)| self.tan_ty(t))
            .collect();
        ty.into_iter().chain(dty).collect()
    }

    /// Whether a lambda reads a variable that has a tangent (a free variable tracked here).
    fn reads_tracked(&self, lam: &Lambda) -> bool {
        let mut used = HashSet::new();
        mentions(lam, &mut used);
        used.iter().any(|v| self.tans.contains_key(v))
    }

    fn any_tracked(&self, vs: &[VName]) -> bool {
        vs.iter().any(|v| self.tans.contains_key(v))
    }

    fn zeros_of(&mut self, b: &mut Builder, vals: &[SubExp]) -> R<Vec<SubExp>> {
        let mut out = Vec::new();
        for v in vals {
            let t = b.type_of(v)?;
            out.push(self.zero(b, &t)?);
        }
        Ok(out)
    }

    fn tans_of(&mut self, b: &mut Builder, vs: &[VName]) -> R<Vec<VName>> {
        vs.iter().map(|v| self.tan_var(b, *v)).collect()
    }
}
