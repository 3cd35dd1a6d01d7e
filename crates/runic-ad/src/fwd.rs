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
//! `jmp` (`vector: true`) is a `map` over the seeds of the differentiated body, with every
//! statement that does not depend on a seed hoisted out of it, so that straight-line primal
//! code runs once. A loop, branch or SOAC that carries tangents stays inside the map as one
//! statement, so its primal part runs once per seed (and once more outside, from a renamed
//! copy of the lambda, when the primal result comes from such a statement).
//!
//! Reduce, scan and histogram operators are differentiated on (value, tangent) pairs with a
//! zero tangent for the neutral element; when the tangent half of that operator reads no
//! primal operand (a linear operator such as `+`), the tangents get a SOAC of their own.

use crate::alg::{prim_of, IrAlg};
use crate::error::AdError;
use crate::scope::{fun_types, mentions, Renamer, Types};
use runic_ir::*;
use runic_prim::deriv::{self, Algebra, Partial};
use std::collections::{HashMap, HashSet};

type R<T> = Result<T, AdError>;

/// One operand's partial, the operand, and its tangent (if nonzero).
type Contribution = (Partial<SubExp>, (SubExp, Option<SubExp>));

/// A differentiated body: its statements, primal results, and result tangents.
type DiffBody = (Vec<Stm>, Vec<SubExp>, Vec<Option<SubExp>>);

/// Eliminate every `Jvp` of the program (innermost first). `Vjp`/`WithVjp` outside any
/// `Jvp` are left for reverse mode.
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
    let mut types = Types::new();
    for f in &prog.funs {
        fun_types(f, &mut types);
    }
    let mut e = Elim {
        names: &mut prog.names,
        types,
        errors: Vec::new(),
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
    types: Types,
    /// Why Jvps left in place could not be differentiated.
    errors: Vec<AdError>,
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
            Exp::Jvp { lam, .. } | Exp::Vjp { lam, .. } => self.lambda(lam),
            Exp::WithVjp { f, adj, .. } => {
                self.lambda(f);
                self.lambda(adj);
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
            return Err(AdError::new(format!(
                "internal: jvp with {} parameters, {} arguments and {} tangents",
                lam.params.len(),
                args.len(),
                tangents.len()
            )));
        }
        if s.pat.len() != 2 * lam.ret.len() {
            return Err(AdError::new(
                "internal: jvp pattern does not match its lambda",
            ));
        }
        let mut b = Builder::new(self.names);
        b.src = s.src.clone();
        let mut d = Diff {
            types: &mut self.types,
            tans: HashMap::new(),
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
struct Diff<'t> {
    types: &'t mut Types,
    /// Tangent of each variable that has a nonzero one.
    tans: HashMap<VName, SubExp>,
}

/// Whether a body may update an array in place (then a seed that is also an argument must
/// be copied). Conservative: any in-place operation or loop anywhere inside counts.
fn may_consume(body: &Body) -> bool {
    let text = format!("{body:?}");
    ["Update(", "Scatter {", "Hist {", "Loop {", "WithAcc {"]
        .iter()
        .any(|k| text.contains(k))
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

fn copy_stm(pat: Param, exp: Exp, src: &SrcInfo) -> Stm {
    Stm {
        pat: vec![pat],
        exp,
        src: src.clone(),
    }
}

impl Diff<'_> {
    fn alg<'b, 'n>(&'b mut self, b: &'b mut Builder<'n>) -> IrAlg<'b, 'n> {
        IrAlg {
            b,
            types: self.types,
        }
    }

    fn type_of(&self, s: &SubExp) -> R<Type> {
        match s {
            SubExp::Const(c) => Ok(Type::Prim(c.ty())),
            SubExp::Var(v) => self
                .types
                .get(v)
                .cloned()
                .ok_or_else(|| AdError::new(format!("internal: unknown type of {v}"))),
        }
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

    /// Bind `exp` of type `ty` to a fresh variable and remember its type.
    fn bind(&mut self, b: &mut Builder, hint: &str, exp: Exp, ty: Type) -> VName {
        let v = b.bind1(hint, exp, ty.clone());
        self.types.insert(v, ty);
        v
    }

    fn fresh_param(&mut self, b: &mut Builder, hint: &str, ty: &Type) -> Param {
        let p = b.param(hint, ty.clone());
        self.types.insert(p.name, ty.clone());
        p
    }

    /// The zero tangent of type `ty`.
    fn zero(&mut self, b: &mut Builder, ty: &Type) -> R<SubExp> {
        match ty {
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
                let ty = self.type_of(s)?;
                self.zero(b, &ty)
            }
        }
    }

    /// `tan` for an array variable.
    fn tan_var(&mut self, b: &mut Builder, v: VName) -> R<VName> {
        let t = self.tan(b, &SubExp::Var(v))?;
        t.as_var()
            .ok_or_else(|| AdError::new(format!("internal: the tangent of array {v} is a scalar")))
    }

    /// Materialise an optional tangent of the value `of`.
    fn materialise(&mut self, b: &mut Builder, t: Option<SubExp>, of: &SubExp) -> R<SubExp> {
        match t {
            Some(t) => Ok(t),
            None => {
                let ty = self.type_of(of)?;
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
        for (i, r) in res.iter().enumerate() {
            b.add(copy_stm(
                pat[i].clone(),
                Exp::Basic(BasicOp::SubExp(r.clone())),
                &src,
            ));
        }
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
            self.types.insert(p.name, p.ty.clone());
            b.add(copy_stm(
                p.clone(),
                Exp::Basic(BasicOp::SubExp(a.clone())),
                src,
            ));
        }
        crate::scope::check_seed_shapes(b, self.types, args, tangents, 0)?;
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
                    .ok_or_else(|| AdError::new("internal: jmp seeds must be arrays"))
            })
            .collect::<R<_>>()?;
        let Some(&first) = seeds.first() else {
            return Err(AdError::unsupported("jmp of a function without parameters"));
        };
        crate::scope::check_seed_shapes(b, self.types, &args, &tangents, 1)?;
        let original = lam.clone();
        // The differentiated body for one seed row.
        let mut mb = Builder::new(b.names);
        mb.src = src.clone();
        let rows: Vec<Param> = lam
            .params
            .iter()
            .map(|p| {
                let hint = format!("d{}", mb.names.hint(p.name));
                self.fresh_param(&mut mb, &hint, &p.ty)
            })
            .collect();
        for (p, a) in lam.params.iter().zip(&args) {
            self.types.insert(p.name, p.ty.clone());
            mb.add(copy_stm(
                p.clone(),
                Exp::Basic(BasicOp::SubExp(a.clone())),
                &src,
            ));
        }
        for (p, r) in lam.params.iter().zip(&rows) {
            self.tans.insert(p.name, SubExp::Var(r.name));
        }
        let res = lam.body.result.clone();
        let tres = self.body(&mut mb, lam.body)?;
        let mut tan_res = Vec::new();
        for (t, r) in tres.into_iter().zip(&res) {
            tan_res.push(self.materialise(&mut mb, t, r)?);
        }
        let stms = mb.take_stms();
        drop(mb);
        // Hoist every statement that does not depend on the seed row.
        let mut inside: HashSet<VName> = rows.iter().map(|p| p.name).collect();
        let mut kept = Vec::new();
        for s in stms {
            let mut used = HashSet::new();
            mentions(&s.exp, &mut used);
            for p in &s.pat {
                mentions(&p.ty, &mut used);
            }
            if used.is_disjoint(&inside) {
                b.add(s);
            } else {
                inside.extend(s.pat.iter().map(|p| p.name));
                kept.push(s);
            }
        }
        // A statement left inside the map must not update a hoisted array in place (every
        // seed would see the previous one's update): it updates a copy instead.
        let mut fixed = Vec::with_capacity(kept.len());
        for mut s in kept {
            for v in consumed_mut(&mut s.exp) {
                let key = *v;
                let Some(ty) = self.types.get(&key).filter(|t| t.rank() > 0).cloned() else {
                    continue;
                };
                if inside.contains(&key) {
                    continue;
                }
                let c = b.names.fresh("copy");
                self.types.insert(c, ty.clone());
                fixed.push(Stm {
                    pat: vec![Param { name: c, ty }],
                    exp: Exp::Basic(BasicOp::Copy(key)),
                    src: src.clone(),
                });
                *v = c;
            }
            fixed.push(s);
        }
        let kept = fixed;
        // The primal results: hoisted, or else from a renamed copy of the function.
        let computed_inside = |r: &SubExp| r.as_var().is_some_and(|v| inside.contains(&v));
        let primal: Vec<SubExp> = if res.iter().any(computed_inside) {
            let mut copy = original;
            let mut rn = Renamer {
                names: b.names,
                map: HashMap::new(),
            };
            rn.lambda(&mut copy);
            crate::scope::lambda_types(&copy, self.types);
            for (p, a) in copy.params.iter().zip(&args) {
                b.add(copy_stm(
                    p.clone(),
                    Exp::Basic(BasicOp::SubExp(a.clone())),
                    &src,
                ));
            }
            for s in copy.body.stms {
                b.add(s);
            }
            copy.body.result
        } else {
            res
        };
        let k = self.bind(
            b,
            "seeds",
            Exp::Basic(BasicOp::ArraySize(first, 0)),
            Type::Prim(PrimType::I64),
        );
        let ret: Vec<Type> = pat[n..].iter().map(|p| p.ty.row()).collect();
        let map = Soac::Map {
            w: SubExp::Var(k),
            lam: Lambda {
                params: rows,
                body: Body {
                    stms: kept,
                    result: tan_res,
                },
                ret,
            },
            arrs: seeds,
        };
        for (i, r) in primal.into_iter().enumerate() {
            b.add(copy_stm(
                pat[i].clone(),
                Exp::Basic(BasicOp::SubExp(r)),
                &src,
            ));
        }
        b.add(Stm {
            pat: pat[n..].to_vec(),
            exp: Exp::Soac(map),
            src,
        });
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
        for p in &s.pat {
            self.types.insert(p.name, p.ty.clone());
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
            Exp::Soac(soac) => self.soac(b, s.pat, s.src, soac),
            Exp::Apply { fun, .. } => Err(AdError::unsupported(format!(
                "jvp through a call of the function {fun}"
            ))),
            Exp::WithAcc { .. } => Err(AdError::unsupported("jvp of with_acc (accumulators)")),
            Exp::Vjp { .. } | Exp::WithVjp { .. } => Err(AdError::unsupported(
                "forward mode over reverse mode (jvp of vjp or with_vjp)",
            )),
            Exp::Jvp { .. } => Err(AdError::new(
                "internal: a nested jvp was not eliminated first",
            )),
        }
    }

    /// The tangent of a basic operation binding `p` (its primal is already emitted).
    fn basic(&mut self, b: &mut Builder, p: &Param, op: BasicOp) -> R<Option<SubExp>> {
        let r = SubExp::Var(p.name);
        let ty = p.ty.clone();
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
                let t = prim_of(self.types, &x)?;
                let mut alg = self.alg(b);
                let ps = deriv::binop_partials(&mut alg, op, t, &x, &y, &r)?;
                let rt = ty.elem().unwrap_or(t);
                self.combine(b, rt, ps.into_iter().zip([(x, dx), (y, dy)]).collect())?
            }
            BasicOp::UnOp(op, x) => {
                let Some(dx) = self.tan_opt(&x) else {
                    return Ok(None);
                };
                let t = prim_of(self.types, &x)?;
                let mut alg = self.alg(b);
                let p = deriv::unop_partial(&mut alg, op, t, &x, &r)?;
                let rt = ty.elem().unwrap_or(t);
                self.combine(b, rt, vec![(p, (x, Some(dx)))])?
            }
            BasicOp::Convert(to, x) => {
                let Some(dx) = self.tan_opt(&x) else {
                    return Ok(None);
                };
                let from = prim_of(self.types, &x)?;
                let p = deriv::convert_partial(from, to);
                self.combine(b, to, vec![(p, (x, Some(dx)))])?
            }
            BasicOp::TernOp(op, x, y, z) => {
                let ds = [self.tan_opt(&x), self.tan_opt(&y), self.tan_opt(&z)];
                if ds.iter().all(Option::is_none) {
                    return Ok(None);
                }
                let t = prim_of(self.types, &x)?;
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
            BasicOp::Reshape { arr, shape } => match self.tan_of_var(arr) {
                Some(da) => same(self, b, BasicOp::Reshape { arr: da, shape }),
                None => None,
            },
            BasicOp::Rearrange(perm, arr) => match self.tan_of_var(arr) {
                Some(da) => same(self, b, BasicOp::Rearrange(perm, da)),
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
                same(self, b, BasicOp::ArrayLit(des, ety))
            }
            // Sizes, index ranges, fresh storage and checks have zero tangents.
            BasicOp::Range { .. }
            | BasicOp::ArraySize(..)
            | BasicOp::Scratch(..)
            | BasicOp::Assert { .. }
            | BasicOp::ShapeCheck { .. } => None,
            BasicOp::UpdateAcc { .. } => {
                return Err(AdError::unsupported("jvp of accumulator updates"))
            }
        })
    }

    /// Sum the contributions `∂ᵢ·dxᵢ` (tangent arithmetic of type `rt`).
    fn combine(
        &mut self,
        b: &mut Builder,
        rt: PrimType,
        parts: Vec<Contribution>,
    ) -> R<Option<SubExp>> {
        let mut acc: Option<SubExp> = None;
        for (p, (x, dx)) in parts {
            let Some(dx) = dx else { continue };
            let in_t = prim_of(self.types, &x)?;
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
                let hint = format!("d{}", b.names.hint(p.name));
                let dp = self.fresh_param(b, &hint, &p.ty);
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
                .map(|(t, _)| t.clone()),
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
            self.types.insert(p.name, p.ty.clone());
        }
        if let LoopForm::For { i, bound } = &form {
            let t = self.type_of(bound)?;
            self.types.insert(*i, t);
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
                    let hint = format!("d{}", b.names.hint(p.name));
                    let dp = self.fresh_param(b, &hint, &p.ty);
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
            self.types.insert(p.name, p.ty.clone());
            if *a {
                let hint = format!("d{}", b.names.hint(p.name));
                let dp = self.fresh_param(b, &hint, &p.ty);
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
                .map(|(t, _)| t.clone()),
        );
        let mut params = lam.params;
        params.extend(tparams);
        Ok((
            Lambda {
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
            return Err(AdError::new("internal: operator arity does not match"));
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
            let t = self.type_of(v)?;
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
