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

use crate::alg::{prim_of, IrAlg};
use crate::error::AdError;
use crate::scope::{mentions, simple_binop};
use runic_ir::traverse::{Renamer, VisitorMut};
use runic_ir::*;
use runic_prim::deriv::{self, Algebra, Partial};
use std::collections::{HashMap, HashSet};

type R<T> = Result<T, AdError>;

/// One operand's partial, the operand, and its tangent (if nonzero).
type Contribution = (Partial<SubExp>, (SubExp, Option<SubExp>));

/// A differentiated body: its statements, primal results, and result tangents.
type DiffBody = (Vec<Stm>, Vec<SubExp>, Vec<Option<SubExp>>);

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
        f.body = e.body(body);
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

impl Elim<'_> {
    fn body(&mut self, b: Body) -> Body {
        let mut stms = Vec::with_capacity(b.stms.len());
        for mut s in b.stms {
            self.nested(&mut s.exp);
            if matches!(s.exp, Exp::Jvp { .. }) {
                match self.expand(s.clone()) {
                    Ok(new) => stms.extend(new),
                    Err(e) => {
                        self.errors.push(e);
                        stms.push(s);
                    }
                }
            } else {
                stms.push(s);
            }
        }
        Body {
            stms,
            result: b.result,
        }
    }

    fn lambda(&mut self, l: &mut Lambda) {
        l.body = self.body(std::mem::take(&mut l.body));
    }

    fn in_place(&mut self, b: &mut Body) {
        *b = self.body(std::mem::take(b));
    }

    /// Eliminate the Jvps inside the bodies and lambdas of `e`.
    fn nested(&mut self, e: &mut Exp) {
        match e {
            Exp::Basic(_) | Exp::Apply { .. } => {}
            Exp::If {
                then_body,
                else_body,
                ..
            } => {
                self.in_place(then_body);
                self.in_place(else_body);
            }
            Exp::Loop { body, .. } => self.in_place(body),
            Exp::Soac(s) => match s {
                Soac::Map { lam, .. } | Soac::Hist { lam, .. } => self.lambda(lam),
                Soac::Reduce { pre, lam, .. } | Soac::Scan { pre, lam, .. } => {
                    if let Some(p) = pre {
                        self.lambda(p);
                    }
                    self.lambda(lam);
                }
                Soac::Scatter { .. } => {}
            },
            Exp::WithAcc { inputs, lam } => {
                for i in inputs {
                    if let Some((l, _)) = &mut i.op {
                        self.lambda(l);
                    }
                }
                self.lambda(lam);
            }
            Exp::Jvp { lam, .. } | Exp::Vjp { lam, .. } => {
                self.depth += 1;
                self.lambda(lam);
                self.depth -= 1;
            }
            Exp::WithVjp { f, adj, .. } => {
                self.depth += 1;
                self.lambda(f);
                self.lambda(adj);
                self.depth -= 1;
            }
        }
    }

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
        b.src = s.src.clone();
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
    runic_ir::traverse::any_exp(body, |e| {
        matches!(
            e,
            Exp::Basic(BasicOp::Update(..))
                | Exp::Soac(Soac::Scatter { .. } | Soac::Hist { .. })
                | Exp::Loop { .. }
                | Exp::WithAcc { .. }
        )
    })
}

/// The tangent half of a pair operator (see [`Diff::pair_operator`]) when it reads no
/// primal operand — a linear operator such as `+`: parameters `dx₁..dxₘ, dy₁..dyₘ`, results
/// `dr₁..drₘ`, binders renamed. Then the tangents reduce separately with the same kind of
/// simple operator as the primal, which the executor runs at full speed.
fn tangent_only(names: &mut NameSource, pair: &Lambda, m: usize) -> Option<Lambda> {
    let ps = &pair.params;
    let primal: HashSet<VName> = ps[..m]
        .iter()
        .chain(&ps[2 * m..3 * m])
        .map(|p| p.name)
        .collect();
    let results = pair.body.result[m..].to_vec();
    let mut live = HashSet::new();
    mentions(&results, &mut live);
    let mut kept = Vec::new();
    for s in pair.body.stms.iter().rev() {
        if s.pat.iter().any(|p| live.contains(&p.name)) {
            mentions(&s.exp, &mut live);
            for p in &s.pat {
                mentions(&p.ty, &mut live);
            }
            kept.push(s.clone());
        }
    }
    if !live.is_disjoint(&primal) {
        return None;
    }
    kept.reverse();
    let mut lam = Lambda {
        id: runic_ir::LamId::fresh(),
        params: ps[m..2 * m].iter().chain(&ps[3 * m..]).cloned().collect(),
        body: Body {
            stms: kept,
            result: results,
        },
        ret: pair.ret[m..].to_vec(),
    };
    Renamer {
        names,
        map: HashMap::new(),
    }
    .lambda(&mut lam);
    Some(lam)
}

/// The array operands an expression updates in place (a loop may update the initial values
/// of its parameters).
fn consumed_mut(e: &mut Exp) -> Vec<&mut VName> {
    match e {
        Exp::Basic(BasicOp::Update(arr, _, _)) => vec![arr],
        Exp::Loop { params, .. } => params
            .iter_mut()
            .filter_map(|(_, init)| match init {
                SubExp::Var(v) => Some(v),
                SubExp::Const(_) => None,
            })
            .collect(),
        Exp::Soac(Soac::Scatter { dests, .. }) | Exp::Soac(Soac::Hist { dests, .. }) => {
            dests.iter_mut().collect()
        }
        _ => Vec::new(),
    }
}

/// Whether a body contains a loop (at any depth).
fn has_loop(b: &Body) -> bool {
    b.stms.iter().any(|s| exp_has_loop(&s.exp))
}

fn exp_has_loop(e: &Exp) -> bool {
    let lam = |l: &Lambda| has_loop(&l.body);
    match e {
        Exp::Loop { .. } => true,
        Exp::If {
            then_body,
            else_body,
            ..
        } => has_loop(then_body) || has_loop(else_body),
        Exp::Soac(Soac::Map { lam: l, .. }) | Exp::Soac(Soac::Hist { lam: l, .. }) => lam(l),
        Exp::Soac(Soac::Reduce { pre, lam: l, .. }) | Exp::Soac(Soac::Scan { pre, lam: l, .. }) => {
            lam(l) || pre.as_ref().is_some_and(lam)
        }
        Exp::Soac(Soac::Scatter { .. }) | Exp::Basic(_) | Exp::Apply { .. } => false,
        Exp::WithAcc { lam: l, .. } | Exp::Jvp { lam: l, .. } | Exp::Vjp { lam: l, .. } => lam(l),
        Exp::WithVjp { f, adj, .. } => lam(f) || lam(adj),
    }
}

/// `pᵢ = rᵢ` for a pattern and results (the primal results of a jvp).
fn bind_results(b: &mut Builder, pat: &[Param], res: &[SubExp], src: &SrcInfo) {
    for (p, r) in pat.iter().zip(res) {
        b.add(copy_stm(
            p.clone(),
            Exp::Basic(BasicOp::SubExp(r.clone())),
            src,
        ));
    }
}

fn copy_stm(pat: Param, exp: Exp, src: &SrcInfo) -> Stm {
    Stm {
        pat: vec![pat],
        exp,
        src: src.clone(),
    }
}

impl Diff {
    fn alg<'b, 'n>(&'b mut self, b: &'b mut Builder<'n>) -> IrAlg<'b, 'n> {
        IrAlg { b }
    }

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
        let ty = self.tan_ty(&p.ty);
        let dp = self.fresh_param(b, &hint, &ty);
        if self.seeds.is_some() && matches!(ty, Type::Acc { .. }) {
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

    /// Bind `exp` of type `ty` to a fresh variable.
    fn bind(&mut self, b: &mut Builder, hint: &str, exp: Exp, ty: Type) -> VName {
        b.bind1(hint, exp, ty)
    }

    fn fresh_param(&mut self, b: &mut Builder, hint: &str, ty: &Type) -> Param {
        b.param(hint, ty.clone())
    }

    /// The zero tangent of a value of type `ty`.
    fn zero(&mut self, b: &mut Builder, ty: &Type) -> R<SubExp> {
        let ty = self.tan_ty(ty);
        match &ty {
            Type::Prim(p) => Ok(SubExp::Const(Prim::zero(*p))),
            Type::Array { elem, shape } => {
                let z = SubExp::Const(Prim::zero(*elem));
                let exp = Exp::Basic(BasicOp::Replicate(shape.clone(), z));
                Ok(SubExp::Var(self.bind(b, "zeros", exp, ty.clone())))
            }
            Type::Acc { .. } => Err(AdError::unsupported("tangents of accumulators")),
        }
    }

    /// The tangent of `s`, materialised (zero when it has none).
    fn tan(&mut self, b: &mut Builder, s: &SubExp) -> R<SubExp> {
        match self.tan_opt(s) {
            Some(t) => Ok(t),
            None => {
                let ty = b.type_of(s)?;
                self.zero(b, &ty)
            }
        }
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
        self.bind_args(b, &lam.params, &args, &tangents, &lam.body, &src)?;
        let res = lam.body.result.clone();
        let tres = self.body(b, lam.body)?;
        let n = res.len();
        bind_results(b, &pat[..res.len()], &res, &src);
        for (i, (t, r)) in tres.into_iter().zip(&res).enumerate() {
            let t = self.materialise(b, t, r)?;
            b.add(copy_stm(
                pat[n + i].clone(),
                Exp::Basic(BasicOp::SubExp(t)),
                &src,
            ));
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
        src: &SrcInfo,
    ) -> R<()> {
        for (p, a) in params.iter().zip(args) {
            b.names.set_type(p.name, p.ty.clone());
            b.add(copy_stm(
                p.clone(),
                Exp::Basic(BasicOp::SubExp(a.clone())),
                src,
            ));
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
            let dp = self.bind(b, &hint, Exp::Basic(op), p.ty.clone());
            self.tans.insert(p.name, SubExp::Var(dp));
        }
        Ok(())
    }

    /// `jmp`: the body differentiated once with vector tangents (see [`Diff::seeds`]). The
    /// seeds arrive as `[k]..` rows and are transposed to put the seed dimension innermost;
    /// the result tangents are transposed back.
    fn vector_jvp(
        &mut self,
        b: &mut Builder,
        lam: Lambda,
        args: Vec<SubExp>,
        tangents: Vec<SubExp>,
        pat: &[Param],
    ) -> R<()> {
        let src = b.src.clone();
        let n = lam.ret.len();
        let seeds: Vec<VName> = tangents
            .iter()
            .map(|t| {
                t.as_var()
                    .ok_or_else(|| AdError::internal("jmp seeds must be arrays"))
            })
            .collect::<R<_>>()?;
        let Some(&first) = seeds.first() else {
            return Err(AdError::unsupported("jmp of a function without parameters"));
        };
        crate::scope::check_seed_shapes(b, &args, &tangents, 1)?;
        let k = self.bind(
            b,
            "seeds",
            Exp::Basic(BasicOp::ArraySize(first, 0)),
            Type::Prim(PrimType::I64),
        );
        self.seeds = Some(SubExp::Var(k));
        for (p, a) in lam.params.iter().zip(&args) {
            b.names.set_type(p.name, p.ty.clone());
            b.add(copy_stm(
                p.clone(),
                Exp::Basic(BasicOp::SubExp(a.clone())),
                &src,
            ));
        }
        let consumes = may_consume(&lam.body);
        for (p, s) in lam.params.iter().zip(seeds) {
            let rank = p.ty.rank();
            let ty = self.tan_ty(&p.ty);
            let mut t = s;
            if rank > 0 {
                let perm = (1..=rank).chain([0]).collect();
                t = self.bind(
                    b,
                    "dseed",
                    Exp::Basic(BasicOp::Rearrange(perm, t)),
                    ty.clone(),
                );
            }
            if consumes {
                t = self.bind(b, "dseed", Exp::Basic(BasicOp::Copy(t)), ty);
            }
            self.tans.insert(p.name, SubExp::Var(t));
        }
        let res = lam.body.result.clone();
        let tres = self.body(b, lam.body)?;
        bind_results(b, &pat[..res.len()], &res, &src);
        for (i, (t, r)) in tres.into_iter().zip(&res).enumerate() {
            let mut t = self.materialise(b, t, r)?;
            let rank = b.type_of(r)?.rank();
            if rank > 0 {
                let v = t
                    .as_var()
                    .ok_or_else(|| AdError::internal("an array tangent is a constant"))?;
                let perm = [rank].into_iter().chain(0..rank).collect();
                let out_ty = pat[n + i].ty.clone();
                let exp = Exp::Basic(BasicOp::Rearrange(perm, v));
                t = SubExp::Var(self.bind(b, "dres", exp, out_ty));
            }
            b.add(copy_stm(
                pat[n + i].clone(),
                Exp::Basic(BasicOp::SubExp(t)),
                &src,
            ));
        }
        self.seeds = None;
        Ok(())
    }

    /// Vector mode, a SOAC without loops inside: the primal SOAC once, and a `map` over the
    /// seeds of its scalar-mode derivative (a renamed copy). On the executor, that keeps
    /// every SOAC on its fast paths over plain columns, where per-element arrays of seeds
    /// would not be (bench/ad_fwd.fut, `jmp_*`); a SOAC with a loop inside keeps vector
    /// tangents so that the loop runs once. The tangents cross into the map with the seed
    /// dimension outermost. Seed-invariant code is hoisted out of it, and a map of
    /// straight-line code is linearised ([`Diff::split_map`]), so its primal runs once;
    /// other SOACs (folds on (value, tangent) pairs) re-run their operator's primal per seed.
    fn per_seed(&mut self, b: &mut Builder, s: Stm) -> R<()> {
        let Some(k) = self.seeds.clone() else {
            return Err(AdError::internal("per-seed rule outside vector mode"));
        };
        let mut used = HashSet::new();
        mentions(&s.exp, &mut used);
        let mut tracked: Vec<VName> = used
            .into_iter()
            .filter(|v| self.tans.contains_key(v))
            .collect();
        tracked.sort();
        if tracked.is_empty() {
            b.add(s);
            return Ok(());
        }
        // Each tracked value's tangents, seeds outermost, become an input of the map (no
        // accumulator gets here: see `uses_acc`).
        let mut params = Vec::new();
        let mut arrs = Vec::new();
        let mut inner_tans = HashMap::new();
        for v in tracked {
            let ty = b.type_of(&SubExp::Var(v))?;
            let t = self.tan_of_var(v).ok_or_else(|| {
                AdError::internal(format!("the vector tangent of {v} is a constant"))
            })?;
            let rank = ty.rank();
            let arr = if rank == 0 {
                t
            } else {
                let perm = [rank].into_iter().chain(0..rank).collect();
                let outer = ty.array_of(k.clone());
                self.bind(b, "dseeds", Exp::Basic(BasicOp::Rearrange(perm, t)), outer)
            };
            let hint = format!("d{}", b.names.hint(v));
            let row = self.fresh_param(b, &hint, &ty);
            inner_tans.insert(v, SubExp::Var(row.name));
            params.push(row);
            arrs.push(arr);
        }
        // The scalar-mode derivative of a renamed copy, one seed at a time.
        let mut copy = Body {
            stms: vec![s.clone()],
            result: Vec::new(),
        };
        Renamer {
            names: b.names,
            map: HashMap::new(),
        }
        .body(&mut copy);
        let mut inner = copy.stms.remove(0);
        let mut mb = Builder::new(b.names);
        mb.src = s.src.clone();
        let saved_tans = std::mem::replace(&mut self.tans, inner_tans);
        // The copy must not update the primal's arrays in place: it updates copies, which
        // have the same tangents.
        for v in consumed_mut(&mut inner.exp) {
            let Some(ty) = mb.names.type_of(*v).filter(|t| t.rank() > 0).cloned() else {
                continue;
            };
            let c = self.bind(&mut mb, "copy", Exp::Basic(BasicOp::Copy(*v)), ty);
            if let Some(t) = self.tans.get(v).cloned() {
                self.tans.insert(c, t);
            }
            *v = c;
        }
        let saved_seeds = self.seeds.take();
        let inner_pat = inner.pat.clone();
        let done = self.stm(&mut mb, inner);
        let mut result = Vec::new();
        let mut ret = Vec::new();
        let mut outs = Vec::new();
        if done.is_ok() {
            for (p, ip) in s.pat.iter().zip(&inner_pat) {
                if let Some(t) = self.tan_opt(&SubExp::Var(ip.name)) {
                    result.push(t);
                    ret.push(p.ty.clone());
                    outs.push(p.clone());
                }
            }
        }
        self.tans = saved_tans;
        self.seeds = saved_seeds;
        done?;
        let stms = mb.take_stms();
        drop(mb);
        let stms = self.hoist_seed_invariant(b, stms, &params);
        // A linearised map (see `split_map`) computed the primal results before the map over
        // the seeds: reuse them rather than running the primal again.
        let kept: HashSet<VName> = stms.iter().flat_map(|st| &st.pat).map(|p| p.name).collect();
        let reuse = matches!(s.exp, Exp::Soac(Soac::Map { .. }))
            && inner_pat.iter().all(|p| !kept.contains(&p.name));
        let lam = Lambda {
            id: runic_ir::LamId::fresh(),
            params,
            body: Body { stms, result },
            ret,
        };
        let map_pat: Vec<Param> = outs
            .iter()
            .map(|p| {
                let ty = p.ty.array_of(k.clone());
                let hint = format!("d{}", b.names.hint(p.name));
                self.fresh_param(b, &hint, &ty)
            })
            .collect();
        b.add(Stm {
            pat: map_pat.clone(),
            exp: Exp::Soac(Soac::Map { w: k, lam, arrs }),
            src: s.src.clone(),
        });
        // The primal after the map: it may update arrays the map reads.
        if reuse {
            for (p, ip) in s.pat.iter().zip(&inner_pat) {
                let exp = Exp::Basic(BasicOp::SubExp(SubExp::Var(ip.name)));
                b.add(copy_stm(p.clone(), exp, &s.src));
            }
        } else {
            b.add(s);
        }
        for (p, m) in outs.iter().zip(map_pat) {
            let rank = p.ty.rank();
            let t = if rank == 0 {
                m.name
            } else {
                let perm = (1..=rank).chain([0]).collect();
                let ty = self.tan_ty(&p.ty);
                self.bind(b, "d", Exp::Basic(BasicOp::Rearrange(perm, m.name)), ty)
            };
            self.tans.insert(p.name, SubExp::Var(t));
        }
        Ok(())
    }

    /// The statements of a per-seed lambda that do not depend on its parameters (such as
    /// the gradient of [`Diff::product_by_gradient`]) go before the map, once; the others
    /// stay. One that stays must not update a hoisted array in place (every seed would see
    /// the previous one's update): it updates a copy.
    fn hoist_seed_invariant(
        &mut self,
        b: &mut Builder,
        stms: Vec<Stm>,
        params: &[Param],
    ) -> Vec<Stm> {
        let mut inside: HashSet<VName> = params.iter().map(|p| p.name).collect();
        let mut kept = Vec::new();
        for s in stms {
            let mut used = HashSet::new();
            mentions(&s.exp, &mut used);
            for p in &s.pat {
                mentions(&p.ty, &mut used);
            }
            if used.is_disjoint(&inside) {
                b.add(s);
            } else if let Some((primal, tangent)) = self.split_map(b.names, &s, &inside) {
                b.add(primal);
                inside.extend(tangent.pat.iter().map(|p| p.name));
                kept.push(tangent);
            } else {
                inside.extend(s.pat.iter().map(|p| p.name));
                kept.push(s);
            }
        }
        let mut out = Vec::with_capacity(kept.len());
        for mut s in kept {
            for v in consumed_mut(&mut s.exp) {
                if inside.contains(v) {
                    continue;
                }
                let Some(ty) = b.names.type_of(*v).filter(|t| t.rank() > 0).cloned() else {
                    continue;
                };
                let c = b.names.fresh("copy");
                b.names.set_type(c, ty.clone());
                out.push(Stm {
                    pat: vec![Param { name: c, ty }],
                    exp: Exp::Basic(BasicOp::Copy(*v)),
                    src: s.src.clone(),
                });
                *v = c;
            }
            out.push(s);
        }
        out
    }

    /// Linearise a map of straight-line code that depends on the seed (`inside`): a map of
    /// the statements that do not (the primal, run once), which also returns the scalars
    /// the others read (residuals), and a map of the others (the tangent code, per seed)
    /// over those residuals. `None` when there is nothing to split, or a residual is not a
    /// scalar.
    fn split_map(
        &mut self,
        names: &mut NameSource,
        s: &Stm,
        inside: &HashSet<VName>,
    ) -> Option<(Stm, Stm)> {
        let Exp::Soac(Soac::Map { w, lam, arrs }) = &s.exp else {
            return None;
        };
        if !lam
            .body
            .stms
            .iter()
            .all(|st| matches!(st.exp, Exp::Basic(_)))
        {
            return None;
        }
        // What depends on the seed: rows of seed-dependent arrays, then what reads them.
        let mut dep: HashSet<VName> = inside.clone();
        for (p, a) in lam.params.iter().zip(arrs) {
            if inside.contains(a) {
                dep.insert(p.name);
            }
        }
        let reads_dep = |x: &Exp, dep: &HashSet<VName>| {
            let mut used = HashSet::new();
            mentions(x, &mut used);
            !used.is_disjoint(dep)
        };
        let (mut primal, mut tangent) = (Vec::new(), Vec::new());
        for st in &lam.body.stms {
            if reads_dep(&st.exp, &dep) {
                dep.extend(st.pat.iter().map(|p| p.name));
                tangent.push(st.clone());
            } else {
                primal.push(st.clone());
            }
        }
        if primal.is_empty() || tangent.is_empty() {
            return None;
        }
        let is_dep = |r: &SubExp| r.as_var().is_some_and(|v| dep.contains(&v));
        // Residuals: values of the primal part (statements or parameters) the tangent part
        // reads.
        let mut read = HashSet::new();
        for st in &tangent {
            mentions(&st.exp, &mut read);
        }
        for r in lam.body.result.iter().filter(|r| is_dep(r)) {
            mentions(r, &mut read);
        }
        let bound: Vec<&Param> = primal.iter().flat_map(|st| &st.pat).collect();
        let residuals: Vec<Param> = bound
            .iter()
            .filter(|p| read.contains(&p.name))
            .map(|p| (*p).clone())
            .collect();
        if residuals.iter().any(|p| !matches!(p.ty, Type::Prim(_))) {
            return None;
        }
        let (mut p_params, mut p_arrs, mut t_params, mut t_arrs) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (p, a) in lam.params.iter().zip(arrs) {
            if dep.contains(&p.name) {
                t_params.push(p.clone());
                t_arrs.push(*a);
            } else {
                p_params.push(p.clone());
                p_arrs.push(*a);
                if read.contains(&p.name) {
                    t_params.push(p.clone());
                    t_arrs.push(*a);
                }
            }
        }
        if t_arrs.is_empty() && residuals.is_empty() {
            // The tangent code reads nothing per element: not worth a map of no inputs.
            return None;
        }
        // The primal map: its own results, then the residuals (one array each).
        let (mut p_pat, mut p_res, mut p_ret) = (Vec::new(), Vec::new(), Vec::new());
        let (mut t_pat, mut t_res, mut t_ret) = (Vec::new(), Vec::new(), Vec::new());
        for ((r, pt), t) in lam.body.result.iter().zip(&s.pat).zip(&lam.ret) {
            let (pat, res, ret) = if is_dep(r) {
                (&mut t_pat, &mut t_res, &mut t_ret)
            } else {
                (&mut p_pat, &mut p_res, &mut p_ret)
            };
            pat.push(pt.clone());
            res.push(r.clone());
            ret.push(t.clone());
        }
        for r in &residuals {
            let ty = r.ty.array_of(w.clone());
            let arr = names.fresh(names.hint(r.name).to_string().as_str());
            names.set_type(arr, ty.clone());
            p_pat.push(Param { name: arr, ty });
            p_res.push(SubExp::Var(r.name));
            p_ret.push(r.ty.clone());
            t_params.push(r.clone());
            t_arrs.push(arr);
        }
        let primal_map = Stm {
            pat: p_pat,
            exp: Exp::Soac(Soac::Map {
                w: w.clone(),
                lam: Lambda {
                    id: runic_ir::LamId::fresh(),
                    params: p_params,
                    body: Body {
                        stms: primal,
                        result: p_res,
                    },
                    ret: p_ret,
                },
                arrs: p_arrs,
            }),
            src: s.src.clone(),
        };
        // The tangent map binds the residuals and primal parameters again: renamed.
        let mut t_lam = Lambda {
            id: runic_ir::LamId::fresh(),
            params: t_params,
            body: Body {
                stms: tangent,
                result: t_res,
            },
            ret: t_ret,
        };
        Renamer {
            names,
            map: HashMap::new(),
        }
        .lambda(&mut t_lam);
        names.record_types(&t_lam);
        let tangent_map = Stm {
            pat: t_pat,
            exp: Exp::Soac(Soac::Map {
                w: w.clone(),
                lam: t_lam,
                arrs: t_arrs,
            }),
            src: s.src.clone(),
        };
        Some((primal_map, tangent_map))
    }

    /// Emit the primal and tangent statements of a body; the tangents of its results.
    fn body(&mut self, b: &mut Builder, body: Body) -> R<Vec<Option<SubExp>>> {
        for s in body.stms {
            self.stm(b, s)?;
        }
        Ok(body.result.iter().map(|r| self.tan_opt(r)).collect())
    }

    fn stm(&mut self, b: &mut Builder, s: Stm) -> R<()> {
        for p in &s.pat {
            b.names.set_type(p.name, p.ty.clone());
        }
        b.src = s.src.clone();
        match s.exp {
            Exp::Basic(op) => {
                b.add(Stm {
                    pat: s.pat.clone(),
                    exp: Exp::Basic(op.clone()),
                    src: s.src.clone(),
                });
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
            } => self.if_(b, s.pat, s.src, cond, then_body, else_body, ret),
            Exp::Loop { params, form, body } => self.loop_(b, s.pat, s.src, params, form, body),
            Exp::Soac(_)
                if self.seeds.is_some()
                    && !exp_has_loop(&s.exp)
                    && !self.uses_acc(b.names, &s.exp) =>
            {
                self.per_seed(b, s)
            }
            Exp::Soac(soac) => self.soac(b, s.pat, s.src, soac),
            Exp::Apply { fun, .. } => Err(AdError::unsupported(format!(
                "jvp through a call of the function {fun}"
            ))),
            Exp::WithAcc { inputs, lam } => self.with_acc(b, s.pat, s.src, inputs, lam),
            Exp::Vjp { .. } | Exp::WithVjp { .. } => Err(AdError::unsupported(
                "forward mode over reverse mode (jvp of vjp or with_vjp)",
            )),
            Exp::Jvp { .. } => Err(AdError::internal("a nested jvp was not eliminated first")),
        }
    }

    /// The tangent of a basic operation binding `p` (its primal is already emitted).
    fn basic(&mut self, b: &mut Builder, p: &Param, op: BasicOp) -> R<Option<SubExp>> {
        let r = SubExp::Var(p.name);
        let ty = self.tan_ty(&p.ty);
        let same = |d: &mut Self, b: &mut Builder, op: BasicOp| {
            Some(SubExp::Var(d.bind(b, "d", Exp::Basic(op), ty.clone())))
        };
        Ok(match op {
            BasicOp::SubExp(a) => self.tan_opt(&a),
            BasicOp::BinOp(op, x, y) => {
                let (dx, dy) = (self.tan_opt(&x), self.tan_opt(&y));
                if dx.is_none() && dy.is_none() {
                    return Ok(None);
                }
                let t = prim_of(b.names, &x)?;
                let mut alg = self.alg(b);
                let ps = deriv::binop_partials(&mut alg, op, t, &x, &y, &r)?;
                let rt = ty.elem().unwrap_or(t);
                self.combine(b, rt, ps.into_iter().zip([(x, dx), (y, dy)]).collect())?
            }
            BasicOp::UnOp(op, x) => {
                let Some(dx) = self.tan_opt(&x) else {
                    return Ok(None);
                };
                let t = prim_of(b.names, &x)?;
                let mut alg = self.alg(b);
                let p = deriv::unop_partial(&mut alg, op, t, &x, &r)?;
                let rt = ty.elem().unwrap_or(t);
                self.combine(b, rt, vec![(p, (x, Some(dx)))])?
            }
            BasicOp::Convert(to, x) => {
                let Some(dx) = self.tan_opt(&x) else {
                    return Ok(None);
                };
                let from = prim_of(b.names, &x)?;
                let p = deriv::convert_partial(from, to);
                self.combine(b, to, vec![(p, (x, Some(dx)))])?
            }
            BasicOp::TernOp(op, x, y, z) => {
                let ds = [self.tan_opt(&x), self.tan_opt(&y), self.tan_opt(&z)];
                if ds.iter().all(Option::is_none) {
                    return Ok(None);
                }
                let t = prim_of(b.names, &x)?;
                let ps = match op {
                    TernOp::Fma | TernOp::Mad | TernOp::MadHi => {
                        deriv::fma_partials::<IrAlg>(&x, &y)
                    }
                    TernOp::Lerp => {
                        let mut alg = self.alg(b);
                        deriv::lerp_partials(&mut alg, t, &x, &y, &z)?
                    }
                    // set_bit: the reference treats it as constant.
                    TernOp::SetBit => return Ok(None),
                };
                let [d0, d1, d2] = ds;
                let ops = ps.into_iter().zip([(x, d0), (y, d1), (z, d2)]).collect();
                self.combine(b, ty.elem().unwrap_or(t), ops)?
            }
            BasicOp::Index(arr, idx) => match self.tan_of_var(arr) {
                Some(da) => same(self, b, BasicOp::Index(da, idx)),
                None => None,
            },
            BasicOp::Update(arr, idx, v) => {
                if self.tan_opt(&SubExp::Var(arr)).is_none() && self.tan_opt(&v).is_none() {
                    return Ok(None);
                }
                let da = self.tan_var(b, arr)?;
                let dv = self.tan(b, &v)?;
                same(self, b, BasicOp::Update(da, idx, dv))
            }
            BasicOp::Replicate(shape, v) => match self.tan_opt(&v) {
                Some(dv) => same(self, b, BasicOp::Replicate(shape, dv)),
                None => None,
            },
            // In vector mode the seed dimension stays innermost.
            BasicOp::Reshape { arr, mut shape } => match self.tan_of_var(arr) {
                Some(da) => {
                    shape.extend(self.seeds.clone());
                    same(self, b, BasicOp::Reshape { arr: da, shape })
                }
                None => None,
            },
            BasicOp::Rearrange(mut perm, arr) => match self.tan_of_var(arr) {
                Some(da) => {
                    if self.seeds.is_some() {
                        perm.push(perm.len());
                    }
                    same(self, b, BasicOp::Rearrange(perm, da))
                }
                None => None,
            },
            BasicOp::Copy(arr) => match self.tan_of_var(arr) {
                Some(da) => same(self, b, BasicOp::Copy(da)),
                None => None,
            },
            BasicOp::Concat(dim, arrs) => {
                if arrs.iter().all(|a| self.tan_of_var(*a).is_none()) {
                    return Ok(None);
                }
                let das = arrs
                    .iter()
                    .map(|a| self.tan_var(b, *a))
                    .collect::<R<Vec<_>>>()?;
                same(self, b, BasicOp::Concat(dim, das))
            }
            BasicOp::ArrayLit(es, ety) => {
                if es.iter().all(|e| self.tan_opt(e).is_none()) {
                    return Ok(None);
                }
                let des = es.iter().map(|e| self.tan(b, e)).collect::<R<Vec<_>>>()?;
                let dety = self.tan_ty(&ety);
                same(self, b, BasicOp::ArrayLit(des, dety))
            }
            // Sizes, index ranges, fresh storage and checks have zero tangents.
            BasicOp::Range { .. }
            | BasicOp::ArraySize(..)
            | BasicOp::Scratch(..)
            | BasicOp::Assert { .. }
            | BasicOp::ShapeCheck { .. } => None,
            // The tangent accumulator gets the tangents of the values (zeros included: an
            // accumulator without an operator overwrites).
            BasicOp::UpdateAcc { acc, is, vals } => match self.tan_of_var(acc) {
                Some(dacc) => {
                    let dvals: Vec<SubExp> =
                        vals.iter().map(|v| self.tan(b, v)).collect::<R<_>>()?;
                    if self.seeded_accs.contains(&dacc) {
                        return self.update_seeded_acc(b, dacc, is, dvals).map(Some);
                    }
                    let op = BasicOp::UpdateAcc {
                        acc: dacc,
                        is,
                        vals: dvals,
                    };
                    same(self, b, op)
                }
                None => None,
            },
        })
    }

    /// A write of tangents `dvals` at `is` to a tangent accumulator made in vector mode (its
    /// last index is the seed): one write per seed. Accumulators are references, so the
    /// result is the same accumulator.
    fn update_seeded_acc(
        &mut self,
        b: &mut Builder,
        dacc: VName,
        is: Vec<SubExp>,
        dvals: Vec<SubExp>,
    ) -> R<SubExp> {
        let acc_ty = b.type_of(&SubExp::Var(dacc))?;
        let Some(k) = self.seeds.clone() else {
            return Err(AdError::internal(
                "a seeded accumulator outside vector mode",
            ));
        };
        let i64t = PrimType::I64;
        let range = BasicOp::Range {
            start: SubExp::i64(0),
            second: None,
            end: k.clone(),
            kind: RangeKind::UpToExclusive,
            elem: i64t,
        };
        let iota = self.bind(
            b,
            "seed",
            Exp::Basic(range),
            Type::Prim(i64t).array_of(k.clone()),
        );
        // Seeds innermost → outermost, so that the map's rows are one seed's values.
        let mut arrs = vec![iota];
        for dv in &dvals {
            let v = dv
                .as_var()
                .ok_or_else(|| AdError::internal("a vector tangent is a constant"))?;
            let ty = b.type_of(dv)?;
            let rank = ty.rank();
            arrs.push(if rank <= 1 {
                v
            } else {
                let perm = [rank - 1].into_iter().chain(0..rank - 1).collect();
                let Type::Array { elem, shape } = &ty else {
                    return Err(AdError::internal("a vector tangent is not an array"));
                };
                let outer = Type::Array {
                    elem: *elem,
                    shape: [shape[rank - 1].clone()]
                        .into_iter()
                        .chain(shape[..rank - 1].iter().cloned())
                        .collect(),
                };
                self.bind(b, "dseeds", Exp::Basic(BasicOp::Rearrange(perm, v)), outer)
            });
        }
        let mut mb = Builder::new(b.names);
        mb.src = b.src.clone();
        let kk = self.fresh_param(&mut mb, "seed", &Type::Prim(i64t));
        let mut params = vec![kk.clone()];
        let mut vals = Vec::new();
        for arr in &arrs[1..] {
            let row_ty = mb.type_of(&SubExp::Var(*arr))?.row();
            let p = self.fresh_param(&mut mb, "dv", &row_ty);
            vals.push(SubExp::Var(p.name));
            params.push(p);
        }
        let op = BasicOp::UpdateAcc {
            acc: dacc,
            is: is.into_iter().chain([SubExp::Var(kk.name)]).collect(),
            vals,
        };
        self.bind(&mut mb, "dacc", Exp::Basic(op), acc_ty);
        let lam = Lambda {
            id: runic_ir::LamId::fresh(),
            params,
            body: Body {
                stms: mb.take_stms(),
                result: Vec::new(),
            },
            ret: Vec::new(),
        };
        drop(mb);
        b.add(Stm {
            pat: Vec::new(),
            exp: Exp::Soac(Soac::Map { w: k, lam, arrs }),
            src: b.src.clone(),
        });
        Ok(SubExp::Var(dacc))
    }

    /// Sum the contributions `∂ᵢ·dxᵢ` (tangent arithmetic of type `rt`). In vector mode the
    /// tangents are arrays of seeds: one `map` over the seeds applies the scalar rule to
    /// each, reading the partials (primal values, computed once) as free variables.
    fn combine(
        &mut self,
        b: &mut Builder,
        rt: PrimType,
        parts: Vec<Contribution>,
    ) -> R<Option<SubExp>> {
        let Some(k) = self.seeds.clone() else {
            return self.combine_scalar(b, rt, parts);
        };
        let mut mb = Builder::new(b.names);
        mb.src = b.src.clone();
        let mut params = Vec::new();
        let mut arrs = Vec::new();
        let mut per_seed = Vec::new();
        for (p, (x, dx)) in parts {
            let Some(dx) = dx else { continue };
            if matches!(p, Partial::Zero) {
                continue;
            }
            let dx = dx
                .as_var()
                .ok_or_else(|| AdError::internal("a vector tangent is a constant"))?;
            let in_t = prim_of(mb.names, &x)?;
            let e = self.fresh_param(&mut mb, "dx", &Type::Prim(in_t));
            per_seed.push((p, (x, Some(SubExp::Var(e.name)))));
            params.push(e);
            arrs.push(dx);
        }
        // A lone identity partial passes the tangent through.
        if let [(Partial::One, (x, _))] = per_seed.as_slice() {
            if prim_of(mb.names, x)? == rt {
                return Ok(Some(SubExp::Var(arrs[0])));
            }
        }
        let Some(t) = self.combine_scalar(&mut mb, rt, per_seed)? else {
            return Ok(None);
        };
        let lam = Lambda {
            id: runic_ir::LamId::fresh(),
            params,
            body: Body {
                stms: mb.take_stms(),
                result: vec![t],
            },
            ret: vec![Type::Prim(rt)],
        };
        drop(mb);
        let ty = self.tan_ty(&Type::Prim(rt));
        let map = Exp::Soac(Soac::Map { w: k, lam, arrs });
        Ok(Some(SubExp::Var(self.bind(b, "d", map, ty))))
    }

    /// [`Diff::combine`] on scalar tangents.
    fn combine_scalar(
        &mut self,
        b: &mut Builder,
        rt: PrimType,
        parts: Vec<Contribution>,
    ) -> R<Option<SubExp>> {
        let mut acc: Option<SubExp> = None;
        for (p, (x, dx)) in parts {
            let Some(dx) = dx else { continue };
            let in_t = prim_of(b.names, &x)?;
            let mut alg = self.alg(b);
            let Some(c) = deriv::push_forward(&mut alg, &p, in_t, &dx)? else {
                continue;
            };
            acc = Some(match acc {
                None => c,
                Some(a) => alg.tadd(rt, &a, &c)?,
            });
        }
        Ok(acc)
    }

    /// A body differentiated in a fresh builder: its statements and result tangents.
    fn sub_body(&mut self, b: &mut Builder, body: Body) -> R<DiffBody> {
        let mut sb = Builder::new(b.names);
        sb.src = b.src.clone();
        let res = body.result.clone();
        let t = self.body(&mut sb, body)?;
        Ok((sb.take_stms(), res, t))
    }

    /// Materialise tangents into a statement list (zeros where missing).
    fn finish_tangents(
        &mut self,
        b: &mut Builder,
        stms: &mut Vec<Stm>,
        res: &[SubExp],
        tans: &[Option<SubExp>],
        active: &[bool],
    ) -> R<Vec<SubExp>> {
        let mut sb = Builder::new(b.names);
        sb.src = b.src.clone();
        let mut out = Vec::new();
        for ((r, t), a) in res.iter().zip(tans).zip(active) {
            if *a {
                out.push(self.materialise(&mut sb, t.clone(), r)?);
            }
        }
        stms.extend(sb.take_stms());
        Ok(out)
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

    #[allow(clippy::too_many_arguments)]
    fn if_(
        &mut self,
        b: &mut Builder,
        pat: Vec<Param>,
        src: SrcInfo,
        cond: SubExp,
        then_body: Body,
        else_body: Body,
        ret: Vec<Type>,
    ) -> R<()> {
        let (mut ts, tres, tt) = self.sub_body(b, then_body)?;
        let (mut es, eres, et) = self.sub_body(b, else_body)?;
        let active: Vec<bool> = tt
            .iter()
            .zip(&et)
            .map(|(a, b)| a.is_some() || b.is_some())
            .collect();
        let t_extra = self.finish_tangents(b, &mut ts, &tres, &tt, &active)?;
        let e_extra = self.finish_tangents(b, &mut es, &eres, &et, &active)?;
        let mut ret2 = ret.clone();
        ret2.extend(
            ret.iter()
                .zip(&active)
                .filter(|(_, a)| **a)
                .map(|(t, _)| self.tan_ty(t)),
        );
        let mut pat2 = pat.clone();
        pat2.extend(self.tangent_pat(b, &pat, &active));
        b.add(Stm {
            pat: pat2,
            exp: Exp::If {
                cond,
                then_body: Body {
                    stms: ts,
                    result: tres.into_iter().chain(t_extra).collect(),
                },
                else_body: Body {
                    stms: es,
                    result: eres.into_iter().chain(e_extra).collect(),
                },
                ret: ret2,
            },
            src,
        });
        Ok(())
    }

    /// `with_acc`: each accumulator gets a tangent accumulator over the tangents of its
    /// arrays, combining with the tangent half of its operator, which must be linear (the
    /// `+` that reverse mode uses): then the tangent of a combination is the combination of
    /// the tangents. Results: the arrays, their tangents, the other results and theirs.
    fn with_acc(
        &mut self,
        b: &mut Builder,
        pat: Vec<Param>,
        src: SrcInfo,
        inputs: Vec<AccInput>,
        lam: Lambda,
    ) -> R<()> {
        let tracked =
            inputs.iter().any(|i| self.any_tracked(&i.arrays)) || self.reads_tracked(&lam);
        if !tracked {
            b.add(Stm {
                pat,
                exp: Exp::WithAcc { inputs, lam },
                src,
            });
            return Ok(());
        }
        let n_acc = inputs.len();
        let n_arrays: usize = inputs.iter().map(|i| i.arrays.len()).sum();
        // In vector mode, the tangent arrays end with the seed dimension, which becomes the
        // last index of the accumulator; its operator stays scalar.
        let mut dinputs = Vec::new();
        for inp in &inputs {
            let arrays = self.tans_of(b, &inp.arrays)?;
            let seeds = self.seeds.take();
            let op = match &inp.op {
                None => Ok(None),
                Some((l, ne)) => self.split_operator(b, l).and_then(|top| {
                    let top = top.ok_or_else(|| {
                        AdError::unsupported("jvp of an accumulator with a non-linear operator")
                    })?;
                    Ok(Some((top, self.zeros_of(b, ne)?)))
                }),
            };
            self.seeds = seeds;
            dinputs.push(AccInput {
                shape: inp
                    .shape
                    .iter()
                    .cloned()
                    .chain(self.seeds.clone())
                    .collect(),
                arrays,
                op: op?,
            });
        }
        let mut dparams = Vec::new();
        for p in &lam.params {
            b.names.set_type(p.name, p.ty.clone());
            let dp = self.tangent_param(b, p);
            self.tans.insert(p.name, SubExp::Var(dp.name));
            dparams.push(dp);
        }
        let (mut stms, res, tres) = self.sub_body(b, lam.body)?;
        let dacc_res = tres[..n_acc]
            .iter()
            .map(|t| {
                t.clone()
                    .ok_or_else(|| AdError::internal("an accumulator result lost its tangent"))
            })
            .collect::<R<Vec<_>>>()?;
        let active: Vec<bool> = tres[n_acc..].iter().map(Option::is_some).collect();
        let extra = self.finish_tangents(b, &mut stms, &res[n_acc..], &tres[n_acc..], &active)?;
        let (acc_ret, other_ret) = lam.ret.split_at(n_acc);
        let ret = acc_ret
            .iter()
            .cloned()
            .chain(acc_ret.iter().map(|t| self.tan_ty(t)))
            .chain(other_ret.iter().cloned())
            .chain(
                other_ret
                    .iter()
                    .zip(&active)
                    .filter(|(_, a)| **a)
                    .map(|(t, _)| self.tan_ty(t)),
            )
            .collect();
        let result = res[..n_acc]
            .iter()
            .cloned()
            .chain(dacc_res)
            .chain(res[n_acc..].iter().cloned())
            .chain(extra)
            .collect();
        let mut params = lam.params;
        params.extend(dparams);
        let (arr_pat, other_pat) = pat.split_at(n_arrays);
        let mut pat2 = arr_pat.to_vec();
        pat2.extend(self.tangent_pat(b, arr_pat, &vec![true; n_arrays]));
        pat2.extend(other_pat.iter().cloned());
        pat2.extend(self.tangent_pat(b, other_pat, &active));
        let mut inputs2 = inputs;
        inputs2.extend(dinputs);
        b.add(Stm {
            pat: pat2,
            exp: Exp::WithAcc {
                inputs: inputs2,
                lam: Lambda {
                    id: runic_ir::LamId::fresh(),
                    params,
                    body: Body { stms, result },
                    ret,
                },
            },
            src,
        });
        Ok(())
    }

    fn loop_(
        &mut self,
        b: &mut Builder,
        pat: Vec<Param>,
        src: SrcInfo,
        params: Vec<(Param, SubExp)>,
        form: LoopForm,
        body: Body,
    ) -> R<()> {
        for (p, _) in &params {
            b.names.set_type(p.name, p.ty.clone());
        }
        if let LoopForm::For { i, bound } = &form {
            let t = b.type_of(bound)?;
            b.names.set_type(*i, t);
            self.tans.remove(i);
        }
        // A parameter is active if its initial value or its next value has a tangent:
        // grow the active set until the body's result tangents agree with it.
        let mut active: Vec<bool> = params
            .iter()
            .map(|(_, init)| self.tan_opt(init).is_some())
            .collect();
        loop {
            let mut tparams = Vec::new();
            for ((p, _), a) in params.iter().zip(&active) {
                if *a {
                    let dp = self.tangent_param(b, p);
                    self.tans.insert(p.name, SubExp::Var(dp.name));
                    tparams.push(dp);
                } else {
                    self.tans.remove(&p.name);
                }
            }
            let (mut stms, res, tres) = self.sub_body(b, body.clone())?;
            let next: Vec<bool> = active
                .iter()
                .zip(&tres)
                .map(|(a, t)| *a || t.is_some())
                .collect();
            if next != active {
                active = next;
                continue;
            }
            let extra = self.finish_tangents(b, &mut stms, &res, &tres, &active)?;
            let mut params2 = params.clone();
            let mut tp = tparams.into_iter();
            for ((_, init), a) in params.iter().zip(&active) {
                if *a {
                    let dinit = self.tan(b, init)?;
                    if let Some(dp) = tp.next() {
                        params2.push((dp, dinit));
                    }
                }
            }
            let mut pat2 = pat.clone();
            pat2.extend(self.tangent_pat(b, &pat, &active));
            b.add(Stm {
                pat: pat2,
                exp: Exp::Loop {
                    params: params2,
                    form,
                    body: Body {
                        stms,
                        result: res.into_iter().chain(extra).collect(),
                    },
                },
                src,
            });
            return Ok(());
        }
    }

    /// Differentiate a lambda whose parameters marked in `active_in` get tangent parameters
    /// (appended after the original ones, in order). Results: the original results followed
    /// by the tangents of those marked active in the returned mask (`force_out` forces all).
    fn lambda(
        &mut self,
        b: &mut Builder,
        lam: Lambda,
        active_in: &[bool],
        force_out: bool,
    ) -> R<(Lambda, Vec<bool>)> {
        let mut tparams = Vec::new();
        for (p, a) in lam.params.iter().zip(active_in) {
            b.names.set_type(p.name, p.ty.clone());
            if *a {
                let dp = self.tangent_param(b, p);
                self.tans.insert(p.name, SubExp::Var(dp.name));
                tparams.push(dp);
            } else {
                self.tans.remove(&p.name);
            }
        }
        let (mut stms, res, tres) = self.sub_body(b, lam.body)?;
        let active: Vec<bool> = tres.iter().map(|t| force_out || t.is_some()).collect();
        let extra = self.finish_tangents(b, &mut stms, &res, &tres, &active)?;
        let mut ret = lam.ret.clone();
        ret.extend(
            lam.ret
                .iter()
                .zip(&active)
                .filter(|(_, a)| **a)
                .map(|(t, _)| self.tan_ty(t)),
        );
        let mut params = lam.params;
        params.extend(tparams);
        Ok((
            Lambda {
                id: runic_ir::LamId::fresh(),
                params,
                body: Body {
                    stms,
                    result: res.into_iter().chain(extra).collect(),
                },
                ret,
            },
            active,
        ))
    }

    /// An associative operator of `m` results on (value, tangent) pairs: parameters
    /// `x₁..xₘ, dx₁..dxₘ, y₁..yₘ, dy₁..dyₘ`, results `r₁..rₘ, dr₁..drₘ`.
    fn pair_operator(&mut self, b: &mut Builder, op: Lambda) -> R<Lambda> {
        let m = op.ret.len();
        if op.params.len() != 2 * m {
            return Err(AdError::internal("operator arity does not match"));
        }
        let (mut l, _) = self.lambda(b, op, &vec![true; 2 * m], true)?;
        let ps = std::mem::take(&mut l.params);
        let (orig, tans) = ps.split_at(2 * m);
        l.params = orig[..m]
            .iter()
            .chain(&tans[..m])
            .chain(&orig[m..])
            .chain(&tans[m..])
            .cloned()
            .collect();
        Ok(l)
    }

    /// The tangent-only operator of `op` when its tangent half is independent of the
    /// primal operands (see [`tangent_only`]); differentiates a copy, so `op` stays usable.
    fn split_operator(&mut self, b: &mut Builder, op: &Lambda) -> R<Option<Lambda>> {
        let m = op.ret.len();
        let pair = self.pair_operator(b, op.clone())?;
        Ok(tangent_only(b.names, &pair, m))
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

    fn emit_unchanged(&mut self, b: &mut Builder, pat: Vec<Param>, src: SrcInfo, soac: Soac) {
        b.add(Stm {
            pat,
            exp: Exp::Soac(soac),
            src,
        });
    }

    /// The forward rule shared by `reduce` and `scan` (`make` rebuilds the SOAC from its
    /// parts). Untracked: unchanged. A linear operator (`+`): the primal SOAC plus the same
    /// simple SOAC over the tangents. Otherwise: one SOAC of the operator differentiated on
    /// (value, tangent) pairs, with zero tangents for the neutral elements.
    fn reduce_or_scan(
        &mut self,
        b: &mut Builder,
        pat: Vec<Param>,
        src: SrcInfo,
        f: Fold,
        make: impl Fn(Fold) -> Soac,
    ) -> R<()> {
        let tracked = self.any_tracked(&f.arrs)
            || f.pre.as_ref().is_some_and(|p| self.reads_tracked(p))
            || self.reads_tracked(&f.lam);
        if !tracked {
            self.emit_unchanged(b, pat, src, make(f));
            return Ok(());
        }
        if f.pre.is_none() {
            if let Some(top) = self.split_operator(b, &f.lam)? {
                let dt = self.tans_of(b, &f.arrs)?;
                let dn = self.zeros_of(b, &f.neutral)?;
                let dpat = self.tangent_pat(b, &pat, &vec![true; pat.len()]);
                let w = f.w.clone();
                self.emit_unchanged(b, pat, src.clone(), make(f));
                let tangent = Fold {
                    w,
                    arrs: dt,
                    pre: None,
                    lam: top,
                    neutral: dn,
                };
                self.emit_unchanged(b, dpat, src, make(tangent));
                return Ok(());
            }
        }
        let (arrs, pre) = self.pre_inputs(b, f.arrs, f.pre)?;
        let lam = self.pair_operator(b, f.lam)?;
        let mut neutral = f.neutral.clone();
        neutral.extend(self.zeros_of(b, &f.neutral)?);
        let mut pat2 = pat.clone();
        pat2.extend(self.tangent_pat(b, &pat, &vec![true; pat.len()]));
        let paired = Fold {
            w: f.w,
            arrs,
            pre,
            lam,
            neutral,
        };
        b.add(Stm {
            pat: pat2,
            exp: Exp::Soac(make(paired)),
            src,
        });
        Ok(())
    }

    fn soac(&mut self, b: &mut Builder, pat: Vec<Param>, src: SrcInfo, soac: Soac) -> R<()> {
        match soac {
            Soac::Map { w, lam, arrs } => {
                let active: Vec<bool> = arrs.iter().map(|a| self.tans.contains_key(a)).collect();
                let mut arrs2 = arrs.clone();
                arrs2.extend(
                    arrs.iter()
                        .filter_map(|a| self.tan_of_var(*a))
                        .collect::<Vec<_>>(),
                );
                let (lam2, out) = self.lambda(b, lam, &active, false)?;
                let mut pat2 = pat.clone();
                pat2.extend(self.tangent_pat(b, &pat, &out));
                b.add(Stm {
                    pat: pat2,
                    exp: Exp::Soac(Soac::Map {
                        w,
                        lam: lam2,
                        arrs: arrs2,
                    }),
                    src,
                });
                Ok(())
            }
            Soac::Reduce {
                w,
                arrs,
                pre,
                lam,
                neutral,
                commutative,
            } => {
                if let (Some((BinOp::Mul, t)), None, [x], [ne], [p]) =
                    (simple_binop(&lam), &pre, &arrs[..], &neutral[..], &pat[..])
                {
                    if t.is_float() && !self.differentiated_again && self.tans.contains_key(x) {
                        let (x, ne, p) = (*x, ne.clone(), p.clone());
                        let primal = Soac::Reduce {
                            w: w.clone(),
                            arrs,
                            pre,
                            lam: lam.clone(),
                            neutral,
                            commutative,
                        };
                        self.emit_unchanged(b, pat, src.clone(), primal);
                        return self.product_by_gradient(b, p, src, w, x, lam, ne);
                    }
                }
                let fold = Fold {
                    w,
                    arrs,
                    pre,
                    lam,
                    neutral,
                };
                self.reduce_or_scan(b, pat, src, fold, |f| Soac::Reduce {
                    w: f.w,
                    arrs: f.arrs,
                    pre: f.pre,
                    lam: f.lam,
                    neutral: f.neutral,
                    commutative,
                })
            }
            Soac::Scan {
                w,
                arrs,
                pre,
                lam,
                neutral,
            } => {
                let fold = Fold {
                    w,
                    arrs,
                    pre,
                    lam,
                    neutral,
                };
                self.reduce_or_scan(b, pat, src, fold, |f| Soac::Scan {
                    w: f.w,
                    arrs: f.arrs,
                    pre: f.pre,
                    lam: f.lam,
                    neutral: f.neutral,
                })
            }
            Soac::Hist {
                w,
                dests,
                lam,
                neutral,
                is,
                vals,
            } => {
                let tracked =
                    self.any_tracked(&dests) || self.any_tracked(&vals) || self.reads_tracked(&lam);
                if !tracked {
                    let soac = Soac::Hist {
                        w,
                        dests,
                        lam,
                        neutral,
                        is,
                        vals,
                    };
                    self.emit_unchanged(b, pat, src, soac);
                    return Ok(());
                }
                if let Some(top) = self.split_operator(b, &lam)? {
                    let dd = self.tans_of(b, &dests)?;
                    let dv = self.tans_of(b, &vals)?;
                    let dn = self.zeros_of(b, &neutral)?;
                    let dpat = self.tangent_pat(b, &pat, &vec![true; pat.len()]);
                    let primal = Soac::Hist {
                        w: w.clone(),
                        dests,
                        lam,
                        neutral,
                        is: is.clone(),
                        vals,
                    };
                    self.emit_unchanged(b, pat, src.clone(), primal);
                    let tangent = Soac::Hist {
                        w,
                        dests: dd,
                        lam: top,
                        neutral: dn,
                        is,
                        vals: dv,
                    };
                    self.emit_unchanged(b, dpat, src, tangent);
                    return Ok(());
                }
                let mut dests2 = dests.clone();
                dests2.extend(self.tans_of(b, &dests)?);
                let mut vals2 = vals.clone();
                vals2.extend(self.tans_of(b, &vals)?);
                let lam2 = self.pair_operator(b, lam)?;
                let mut neutral2 = neutral.clone();
                neutral2.extend(self.zeros_of(b, &neutral)?);
                let mut pat2 = pat.clone();
                pat2.extend(self.tangent_pat(b, &pat, &vec![true; pat.len()]));
                b.add(Stm {
                    pat: pat2,
                    exp: Exp::Soac(Soac::Hist {
                        w,
                        dests: dests2,
                        lam: lam2,
                        neutral: neutral2,
                        is,
                        vals: vals2,
                    }),
                    src,
                });
                Ok(())
            }
            Soac::Scatter { w, dests, is, vals } => {
                if !self.any_tracked(&dests) && !self.any_tracked(&vals) {
                    let soac = Soac::Scatter { w, dests, is, vals };
                    self.emit_unchanged(b, pat, src, soac);
                    return Ok(());
                }
                let mut dests2 = dests.clone();
                dests2.extend(self.tans_of(b, &dests)?);
                let mut vals2 = vals.clone();
                vals2.extend(self.tans_of(b, &vals)?);
                let mut pat2 = pat.clone();
                pat2.extend(self.tangent_pat(b, &pat, &vec![true; pat.len()]));
                b.add(Stm {
                    pat: pat2,
                    exp: Exp::Soac(Soac::Scatter {
                        w,
                        dests: dests2,
                        is,
                        vals: vals2,
                    }),
                    src,
                });
                Ok(())
            }
        }
    }

    /// `p = reduce (*) ne xs` on floats: `dp = Σᵢ dxᵢ·∂p/∂xᵢ`, the gradient coming from a
    /// `vjp` of the same reduce, which reverse mode (run next) differentiates with its
    /// zero-counting rule (seed 001 §3). That costs a few passes of simple operators,
    /// where the rule on (value, tangent) pairs needs a reduce of a two-value operator.
    /// The gradient divides the product by each factor, which is wrong when the product
    /// under- or overflowed: when `p` is 0 or not finite, the pair rule runs instead.
    #[allow(clippy::too_many_arguments)]
    fn product_by_gradient(
        &mut self,
        b: &mut Builder,
        p: Param,
        src: SrcInfo,
        w: SubExp,
        x: VName,
        op: Lambda,
        ne: SubExp,
    ) -> R<()> {
        let t = prim_of(b.names, &ne)?;
        let dty = self.tan_ty(&p.ty);
        let py = SubExp::Var(p.name);
        let zero = SubExp::Const(Prim::zero(t));
        let mut alg = self.alg(b);
        let is_zero = alg.binop(BinOp::Eq, &py, &zero)?;
        let diff = alg.binop(BinOp::Sub, &py, &py)?;
        let not_finite = alg.binop(BinOp::Neq, &diff, &zero)?;
        let exact = alg.binop(BinOp::LogOr, &is_zero, &not_finite)?;
        // The gradient outside the branch: it does not depend on the tangents (so a jmp
        // computes it once), and computing it is harmless when it is not used.
        let grad = self.product_gradient(b, &src, &w, x, op.clone(), ne.clone(), t)?;
        let mut tb = Builder::new(b.names);
        tb.src = src.clone();
        let dt = self.product_by_pairs(&mut tb, &src, &w, x, &op, &ne, t)?;
        let then_body = tb.finish(vec![dt]);
        let mut eb = Builder::new(b.names);
        eb.src = src.clone();
        let dg = self.dot(&mut eb, &w, x, grad, t)?;
        let else_body = eb.finish(vec![dg]);
        let exp = Exp::If {
            cond: exact,
            then_body,
            else_body,
            ret: vec![dty.clone()],
        };
        let dp = self.bind(b, "d", exp, dty);
        self.tans.insert(p.name, SubExp::Var(dp));
        Ok(())
    }

    /// The tangent of `reduce (*) ne x` by the rule on (value, tangent) pairs.
    #[allow(clippy::too_many_arguments)]
    fn product_by_pairs(
        &mut self,
        b: &mut Builder,
        src: &SrcInfo,
        w: &SubExp,
        x: VName,
        op: &Lambda,
        ne: &SubExp,
        t: PrimType,
    ) -> R<SubExp> {
        let mut op = op.clone();
        Renamer {
            names: b.names,
            map: HashMap::new(),
        }
        .lambda(&mut op);
        b.names.record_types(&op);
        let r = self.fresh_param(b, "prod", &Type::Prim(t));
        let fold = Fold {
            w: w.clone(),
            arrs: vec![x],
            pre: None,
            lam: op,
            neutral: vec![ne.clone()],
        };
        self.reduce_or_scan(b, vec![r.clone()], src.clone(), fold, |f| Soac::Reduce {
            w: f.w,
            arrs: f.arrs,
            pre: f.pre,
            lam: f.lam,
            neutral: f.neutral,
            commutative: true,
        })?;
        self.tans
            .remove(&r.name)
            .ok_or_else(|| AdError::internal("the pair rule gave no tangent"))
    }

    /// The gradient of `reduce (*) ne x`, from a generated `vjp`.
    #[allow(clippy::too_many_arguments)]
    fn product_gradient(
        &mut self,
        b: &mut Builder,
        src: &SrcInfo,
        w: &SubExp,
        x: VName,
        op: Lambda,
        ne: SubExp,
        t: PrimType,
    ) -> R<VName> {
        let xt = b.type_of(&SubExp::Var(x))?;
        // vjp (\xs -> reduce (*) ne xs) x 1
        let mut op = op;
        Renamer {
            names: b.names,
            map: HashMap::new(),
        }
        .lambda(&mut op);
        b.names.record_types(&op);
        let xs = self.fresh_param(b, "xs", &xt);
        let r = self.fresh_param(b, "prod", &Type::Prim(t));
        let lam = Lambda {
            id: runic_ir::LamId::fresh(),
            params: vec![xs.clone()],
            body: Body {
                stms: vec![Stm {
                    pat: vec![r.clone()],
                    exp: Exp::Soac(Soac::Reduce {
                        w: w.clone(),
                        arrs: vec![xs.name],
                        pre: None,
                        lam: op,
                        neutral: vec![ne],
                        commutative: true,
                    }),
                    src: src.clone(),
                }],
                result: vec![SubExp::Var(r.name)],
            },
            ret: vec![Type::Prim(t)],
        };
        let y = self.fresh_param(b, "prod", &Type::Prim(t));
        let grad = self.fresh_param(b, "grad", &xt);
        b.add(Stm {
            pat: vec![y, grad.clone()],
            exp: Exp::Vjp {
                lam,
                args: vec![SubExp::Var(x)],
                cotangents: vec![SubExp::Const(Prim::one(t))],
                vector: false,
            },
            src: src.clone(),
        });
        Ok(grad.name)
    }

    /// `Σᵢ dxᵢ·gradᵢ`, the product fused into the reduce as its producer.
    fn dot(
        &mut self,
        b: &mut Builder,
        w: &SubExp,
        x: VName,
        grad: VName,
        t: PrimType,
    ) -> R<SubExp> {
        let dx = self.tan_var(b, x)?;
        let mul = runic_ir::builder::binop_lambda(b.names, BinOp::Mul, t);
        let add = runic_ir::builder::binop_lambda(b.names, BinOp::Add, t);
        b.names.record_types(&mul);
        b.names.record_types(&add);
        let dot = Exp::Soac(Soac::Reduce {
            w: w.clone(),
            arrs: vec![dx, grad],
            pre: Some(mul),
            lam: add,
            neutral: vec![SubExp::Const(Prim::zero(t))],
            commutative: true,
        });
        let ty = self.tan_ty(&Type::Prim(t));
        Ok(SubExp::Var(self.bind(b, "d", dot, ty)))
    }

    /// Inputs of a reduce/scan on (value, tangent) pairs: with a producer lambda, the
    /// tracked arrays' tangents are extra inputs and the lambda returns every result's
    /// tangent; without one, every input array comes with its (materialised) tangent.
    fn pre_inputs(
        &mut self,
        b: &mut Builder,
        arrs: Vec<VName>,
        pre: Option<Lambda>,
    ) -> R<(Vec<VName>, Option<Lambda>)> {
        match pre {
            Some(p) => {
                let active: Vec<bool> = arrs.iter().map(|a| self.tans.contains_key(a)).collect();
                let mut arrs2 = arrs.clone();
                arrs2.extend(
                    arrs.iter()
                        .filter_map(|a| self.tan_of_var(*a))
                        .collect::<Vec<_>>(),
                );
                let (p2, _) = self.lambda(b, p, &active, true)?;
                Ok((arrs2, Some(p2)))
            }
            None => {
                let mut arrs2 = arrs.clone();
                arrs2.extend(self.tans_of(b, &arrs)?);
                Ok((arrs2, None))
            }
        }
    }
}

/// The parts `reduce` and `scan` share.
struct Fold {
    w: SubExp,
    arrs: Vec<VName>,
    pre: Option<Lambda>,
    lam: Lambda,
    neutral: Vec<SubExp>,
}
