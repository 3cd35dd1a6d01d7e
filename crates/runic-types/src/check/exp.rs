//! Expressions: inference of every expression form and of (possibly dotted) variable names.

use super::modules::ModVal;
use super::{count_sizes, err, ordinal, Anon, Checker, Denot, LitCheck, Scheme, Scope, R};
use crate::infer_ty::{map_sizes, numeric, Cons, Sz, INTS, T};
use runic_syntax::ast::*;
use runic_syntax::{Diagnostic, Span};
use std::collections::BTreeMap;
use std::rc::Rc;

impl Checker {
    pub fn infer(&mut self, e: &mut Exp) -> R<T> {
        let t = self.infer_kind(e)?;
        self.exp_rec.push((e.id, t.clone(), e.span));
        Ok(t)
    }

    fn infer_kind(&mut self, e: &mut Exp) -> R<T> {
        if let Some(t) = self.infer_pipe(e)? {
            return Ok(t);
        }
        if self.hoist_let_argument(e) {
            return self.infer_kind(e);
        }
        let span = e.span;
        let id = e.id;
        match &mut e.kind {
            ExpKind::Literal(lit) => {
                let t = self.literal_type(lit, span);
                self.lits.push(LitCheck {
                    ty: t.clone(),
                    lit: lit.clone(),
                    negated: false,
                    span,
                });
                Ok(t)
            }
            ExpKind::Var(q) => {
                let q = q.clone();
                self.infer_var(e, q)
            }
            ExpKind::Tuple(es) => {
                let mut ts = Vec::new();
                for x in es {
                    ts.push(self.infer(x)?);
                }
                Ok(T::tuple(ts))
            }
            ExpKind::Record(fields) => {
                let mut out = BTreeMap::new();
                for f in fields {
                    let (name, t, fspan) = match f {
                        RecordField::Explicit(n, x) => {
                            let t = self.infer(x)?;
                            (n.clone(), t, x.span)
                        }
                        RecordField::Punned(n, s) => {
                            let (n, s) = (n.clone(), *s);
                            let t = match self.lookup(&n) {
                                Some(Denot::Value(sc, flat)) => {
                                    let t = self.instantiate(&sc).0;
                                    if let Some(flat) = flat.filter(|f| *f != n) {
                                        // `{x}` with `x` known by another name in the flat
                                        // program: spell the field out.
                                        let x = Exp {
                                            id: self.fresh_id(),
                                            span: s,
                                            kind: ExpKind::Var(QualName::unqual(flat)),
                                        };
                                        self.exp_rec.push((x.id, t.clone(), s));
                                        *f = RecordField::Explicit(n.clone(), x);
                                    }
                                    t
                                }
                                Some(Denot::Member(m, x)) => self.member_type(m, &x, id, s)?,
                                _ => return Err(self.unknown_name(&n, s)),
                            };
                            (n, t, s)
                        }
                    };
                    if out.insert(name.clone(), t).is_some() {
                        return err(
                            fspan,
                            format!("Field \"{name}\" is given more than once in the record."),
                        );
                    }
                }
                Ok(T::Record(out))
            }
            ExpKind::ArrayLit(es) => {
                let elem = self.s.fresh_var();
                let n = es.len();
                for (i, x) in es.iter_mut().enumerate() {
                    let t = self.infer(x)?;
                    let what = format!("the {} element of the array literal", ordinal(i + 1));
                    self.expect(&elem, &t, x.span, &what)?;
                }
                Ok(T::Array(Sz::Const(n as i64), Box::new(elem)))
            }
            ExpKind::Range {
                start,
                second,
                end,
                kind,
            } => {
                let a = self.fresh_prims(INTS.to_vec(), span);
                let t = self.infer(start)?;
                self.expect(&a, &t, start.span, "the start of the range")?;
                if let Some(s2) = second {
                    let t = self.infer(s2)?;
                    self.expect(&a, &t, s2.span, "the second element of the range")?;
                }
                let t = self.infer(end)?;
                self.expect(&a, &t, end.span, "the end of the range")?;
                let size = self.range_size(start, second.as_deref(), end, kind);
                Ok(T::Array(size, Box::new(a)))
            }
            ExpKind::Project(x, f) => {
                let f = f.clone();
                let t = self.infer(x)?;
                self.field_of(&t, &f, span)
            }
            ExpKind::Index(x, idxs) => {
                let t = self.infer(x)?;
                self.index_type(&t, idxs, span)
            }
            ExpKind::Apply(f, args) => {
                self.old_spelling(f, args.len(), span)?;
                let fname = callee_name(f);
                let ft = self.infer(f)?;
                self.apply_args(ft, args, &fname, f.span)
            }
            ExpKind::Negate(x) => {
                let t = self.infer(x)?;
                if matches!(
                    x.kind,
                    ExpKind::Literal(Literal::Int { .. } | Literal::Float { .. })
                ) {
                    if let Some(l) = self.lits.last_mut() {
                        l.negated = true;
                        l.span = span;
                    }
                }
                let a = self.fresh_prims(numeric(), span);
                self.expect(&a, &t, x.span, "the operand of prefix \"-\"")?;
                Ok(a)
            }
            ExpKind::Not(x) => {
                let t = self.infer(x)?;
                let mut ps = INTS.to_vec();
                ps.push(PrimType::Bool);
                let a = self.fresh_prims(ps, span);
                self.expect(&a, &t, x.span, "the operand of \"!\"")?;
                Ok(a)
            }
            ExpKind::BinOp { op, lhs, rhs } => {
                let opt = self.op_type(op, id)?;
                let name = format!("\"{}\"", op.name);
                let lt = self.infer(lhs)?;
                let rt = self.infer(rhs)?;
                let r1 = self.apply_one(opt, lt, lhs, 1, &name, op.span)?;
                self.apply_one(r1, rt, rhs, 2, &name, op.span)
            }
            ExpKind::OpSection(op) => self.op_type(op, id),
            ExpKind::LeftSection { op, lhs } => {
                let opt = self.op_type(op, id)?;
                let name = format!("\"{}\"", op.name);
                let lt = self.infer(lhs)?;
                self.apply_one(opt, lt, lhs, 1, &name, op.span)
            }
            ExpKind::RightSection { op, rhs } => {
                let opt = self.op_type(op, id)?;
                let name = format!("\"{}\"", op.name);
                let rt = self.infer(rhs)?;
                let a = self.s.fresh_var();
                let b = self.s.fresh_var();
                let r = self.s.fresh_var();
                let shape = T::arrow(a.clone(), T::arrow(b.clone(), r.clone()));
                self.expect(&shape, &opt, op.span, &format!("the operator {name}"))?;
                self.expect(&b, &rt, rhs.span, &format!("the second operand of {name}"))?;
                Ok(T::arrow(a, r))
            }
            ExpKind::ProjSection(steps) => {
                let arg = self.s.fresh_var();
                let mut t = arg.clone();
                for st in steps {
                    t = match st {
                        ProjStep::Field(f) => self.field_of(&t, f, span)?,
                        ProjStep::Index(idxs) => self.index_type(&t, idxs, span)?,
                    };
                }
                Ok(T::arrow(arg, t))
            }
            ExpKind::Lambda { params, ret, body } => {
                let depth = self.scopes.len();
                let r = self.infer_lambda(params, ret, body);
                self.scopes.truncate(depth);
                r
            }
            ExpKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                let ct = self.infer(cond)?;
                self.expect(&T::bool(), &ct, cond.span, "the condition of \"if\"")?;
                let t1 = self.infer(then_branch)?;
                let t2 = self.infer(else_branch)?;
                self.no_fun_sites.push((
                    t1.clone(),
                    span,
                    "Function returned from branch: an \"if\" cannot return a function",
                ));
                self.expect_joinable(
                    &t1,
                    &t2,
                    else_branch.span,
                    "the \"else\" branch (it must have the type of the \"then\" branch)",
                )?;
                Ok(self.join(&t1, &t2))
            }
            ExpKind::LetPat {
                sizes,
                pat,
                rhs,
                body,
            } => {
                // Names that stand for the size of a value (`let [n] ys = xs`,
                // `let n = length xs`) may be equated with an anonymous parameter size.
                self.size_witnesses
                    .extend(sizes.iter().map(|(n, _)| n.clone()));
                if let (PatKind::Var(n), true) = (&pat.kind, is_length_call(rhs)) {
                    self.size_witnesses.push(n.clone());
                }
                let rt = self.infer(rhs)?;
                let depth = self.scopes.len();
                let mark = self.scope_mark();
                let r: R<T> = (|| {
                    let mut bound_names = Vec::new();
                    for (n, _) in sizes.iter() {
                        self.scopes
                            .push(Scope::Val(n.clone(), Rc::new(Scheme::mono(T::i64()))));
                        bound_names.push(n.clone());
                    }
                    // `let [n] xs = e`: the sizes name the outer dimensions of `xs`.
                    let rt = match &pat.kind {
                        PatKind::Var(_) => name_outer_sizes(&self.s.zonk(&rt), sizes),
                        _ => rt,
                    };
                    let unsettled = match &pat.kind {
                        PatKind::Var(n) => Some(self.unsettled(n, &rt, pat.span)),
                        _ => None,
                    };
                    let hidden = self.name_let_sizes(sizes, pat, &rt);
                    let vars = self.bind_pattern(pat, &rt, Anon::Flex, false)?;
                    bound_names.extend(vars.iter().cloned());
                    if let Some((named, _)) = &hidden {
                        self.pat_rec.push((pat.id, named.clone()));
                    }
                    let outer = self.named_unknowns.len();
                    if let Some((_, ns)) = hidden {
                        self.named_unknowns.extend(ns);
                    }
                    let bt = self.infer(body);
                    self.named_unknowns.truncate(outer);
                    let bt = bt?;
                    self.check_scope(&mark, &bound_names, &[], span)?;
                    if let Some(u) = &unsettled {
                        self.check_causality(u)?;
                    }
                    Ok(self.escape(&bt, &bound_names))
                })();
                self.scopes.truncate(depth);
                r
            }
            ExpKind::LetFun {
                name,
                name_span,
                type_params,
                params,
                ret,
                rhs,
                body,
            } => {
                let depth = self.scopes.len();
                self.defining.push((name.clone(), *name_span));
                let mark = self.scope_mark();
                let sc = self.infer_function(type_params, params, ret, rhs, false);
                self.defining.pop();
                self.scopes.truncate(depth);
                let (sc, _) = sc?;
                let sc = self.generalise_local(sc, &mark);
                self.scopes.push(Scope::Val(name.clone(), Rc::new(sc)));
                let r = self.infer(body);
                self.scopes.truncate(depth);
                let bt = r?;
                Ok(bt)
            }
            ExpKind::LetUpdate {
                name,
                name_span,
                steps,
                rhs,
                body,
            } => {
                let vt = match self.lookup_local(name) {
                    Some(Denot::Value(sc, _)) => sc.ty.clone(),
                    _ => {
                        return match self.lookup(name) {
                            Some(_) => err(*name_span, format!("\"{name}\" is not a local variable; only local variables can be updated in place.")),
                            None => Err(self.unknown_name(name, *name_span)),
                        }
                    }
                };
                let target = self.update_path(&vt, steps)?;
                let rt = self.infer(rhs)?;
                self.expect(
                    &target,
                    &rt,
                    rhs.span,
                    "the value written by the in-place update",
                )?;
                let depth = self.scopes.len();
                self.scopes
                    .push(Scope::Val(name.clone(), Rc::new(Scheme::mono(vt))));
                let r = self.infer(body);
                self.scopes.truncate(depth);
                r
            }
            ExpKind::Update {
                target,
                steps,
                value,
            } => {
                let tt = self.infer(target)?;
                let slot = self.update_path(&tt, steps)?;
                let vt = self.infer(value)?;
                self.expect(
                    &slot,
                    &vt,
                    value.span,
                    "the new value of the \"with\" update",
                )?;
                Ok(tt)
            }
            ExpKind::Loop {
                pat,
                init,
                form,
                body,
            } => {
                let depth = self.scopes.len();
                let r = self.infer_loop(pat, init, form, body, span);
                self.scopes.truncate(depth);
                r
            }
            ExpKind::Match { scrutinee, cases } => {
                let st = self.infer(scrutinee)?;
                let mut result: Option<T> = None;
                for case in cases.iter_mut() {
                    let depth = self.scopes.len();
                    let mark = self.scope_mark();
                    let r: R<T> = (|| {
                        let vars = self.bind_pattern(&mut case.pat, &st, Anon::Flex, true)?;
                        let bt = self.infer(&mut case.body)?;
                        self.check_scope(&mark, &vars, &[], case.body.span)?;
                        Ok(self.escape(&bt, &vars))
                    })();
                    self.scopes.truncate(depth);
                    let bt = r?;
                    result = Some(match result {
                        None => bt,
                        Some(prev) => {
                            self.expect_joinable(
                                &prev,
                                &bt,
                                case.body.span,
                                "this case (all cases must have the same type)",
                            )?;
                            self.join(&prev, &bt)
                        }
                    });
                }
                let pats = cases.iter().map(|c| c.pat.clone()).collect();
                self.matches.push((span, st, pats));
                if let Some(t) = &result {
                    self.no_fun_sites.push((
                        t.clone(),
                        span,
                        "Function returned from branch: a \"match\" cannot return a function",
                    ));
                }
                match result {
                    Some(t) => Ok(t),
                    None => err(span, "A match needs at least one case."),
                }
            }
            ExpKind::Ascribe(x, te) => {
                let t = self.infer(x)?;
                let before = self.s.unknowns;
                let at = self.convert_type(te, Anon::Flex)?;
                self.ascribed.push((te.span(), at.clone(), before));
                self.expect(&at, &t, x.span, "the expression with a type ascription")?;
                Ok(at)
            }
            ExpKind::Coerce(x, te) => {
                let t = self.infer(x)?;
                let at = self.convert_type(te, Anon::Flex)?;
                // Only the shape of the types must agree; sizes are checked at run time.
                let loose = map_sizes(&at, &mut |_| Sz::Unknown(u32::MAX));
                let loose = self.refresh_sizes(&loose);
                self.expect(&loose, &t, x.span, "the expression being coerced")?;
                // The coerced type's anonymous sizes (`[]`) take the expression's; its
                // named ones stay apart, even from a size not yet inferred (an unannotated
                // lambda parameter's), which unifying them would bind.
                let solver = &mut self.s;
                let probe = map_sizes(&at, &mut |s| match s {
                    Sz::Flex(_) => s.clone(),
                    _ => solver.fresh_flex(),
                });
                let _ = self.s.unify(&probe, &t);
                Ok(at)
            }
            ExpKind::Assert { cond, body } => {
                let ct = self.infer(cond)?;
                self.expect(&T::bool(), &ct, cond.span, "the condition of \"assert\"")?;
                self.infer(body)
            }
            ExpKind::Attr(_, x) => self.infer(x),
            ExpKind::Constr(c, args) => {
                let mut ts = Vec::new();
                for a in args {
                    ts.push(self.infer(a)?);
                }
                let mut cs = BTreeMap::new();
                cs.insert(c.clone(), ts);
                let t = self.s.fresh(Cons::Constrs(cs));
                if let T::Var(v) = t {
                    self.origins.push((v, span));
                }
                Ok(t)
            }
            ExpKind::LocalOpen(q, inner) => {
                let mut path = q.quals.clone();
                path.push(q.name.clone());
                let shadowed = !q.is_qualified() && self.lookup_local(&q.name).is_some();
                let scope = match self.module_path(&path) {
                    Ok(ModVal::Prim(m)) if !shadowed => Scope::Open(m),
                    Ok(ModVal::Struct(env)) if !shadowed => Scope::OpenEnv(env),
                    _ => return err(span, format!("\"{q}\" is not a module.")),
                };
                self.scopes.push(scope);
                let r = self.infer(inner);
                self.scopes.pop();
                let t = r?;
                // Replace the local open by its body, whose names are now qualified.
                let inner = std::mem::replace(
                    &mut **inner,
                    Exp {
                        id,
                        span,
                        kind: ExpKind::Hole,
                    },
                );
                *e = inner;
                Ok(t)
            }
            ExpKind::Hole => {
                self.warnings.push(Diagnostic::warning(
                    span,
                    "Typed hole \"???\" will fail if evaluated.",
                ));
                Ok(self.s.fresh_var())
            }
        }
    }

    fn refresh_sizes(&mut self, t: &T) -> T {
        let mut out = t.clone();
        out = map_sizes(&out, &mut |s| s.clone());
        let mut fresh = Vec::new();
        count_sizes(&out, &mut fresh);
        let mut it = fresh
            .into_iter()
            .map(|_| self.s.fresh_flex())
            .collect::<Vec<_>>()
            .into_iter();
        map_sizes(&out, &mut |_| it.next().unwrap_or(Sz::Const(0)))
    }

    fn infer_var(&mut self, e: &mut Exp, q: QualName) -> R<T> {
        let span = e.span;
        let id = e.id;
        if q.quals.is_empty() {
            return match self.lookup(&q.name) {
                Some(denot) => self.use_denot(e, denot, &q.name),
                None => Err(self.unknown_name(&q.name, span)),
            };
        }
        // A dotted name: module access or projection (Section 7.7).
        let mut parts: Vec<Name> = q.quals.clone();
        parts.push(q.name.clone());
        let head = &parts[0];
        let head_is_value = matches!(
            self.lookup(head),
            Some(Denot::Value(..)) | Some(Denot::Member(..))
        ) && !self.module_hides_value(head);
        let consumed = if head_is_value {
            1
        } else if self.find_module(head).is_some() {
            // The longest prefix that names a module; the next part is its member.
            let mut k = 1;
            while k + 1 < parts.len() && self.module_path(&parts[..k + 1]).is_ok() {
                k += 1;
            }
            k + 1
        } else {
            return Err(self.unknown_name(
                head,
                Span {
                    end: span.start + head.len() as u32,
                    ..span
                },
            ));
        };
        let prefix_len = |k: usize| parts[..k].iter().map(|p| p.len()).sum::<usize>() + k - 1;
        let base_span = Span {
            end: span.start + prefix_len(consumed) as u32,
            ..span
        };
        let base_kind = if head_is_value {
            ExpKind::Var(QualName::unqual(head.clone()))
        } else {
            let path = &parts[..consumed - 1];
            let member = &parts[consumed - 1];
            let Some(d) = self.qualified_member(path, member, base_span)? else {
                return Err(self.unknown_name(head, span));
            };
            if consumed == parts.len() {
                let shown = parts.join(".");
                return self.use_denot(e, d, &shown);
            }
            match d {
                Denot::Value(_, Some(f)) => ExpKind::Var(QualName::unqual(f)),
                Denot::Member(m, n) => ExpKind::Var(QualName {
                    quals: vec![m.name().to_string()],
                    name: n,
                }),
                _ => ExpKind::Var(QualName::unqual(member.clone())),
            }
        };
        // Build the projection chain; the outermost node keeps the original id.
        let mut cur = Exp {
            id: self.fresh_id(),
            span: base_span,
            kind: base_kind,
        };
        for k in consumed..parts.len() {
            let last = k + 1 == parts.len();
            let pspan = Span {
                end: (span.start + prefix_len(k + 1) as u32).min(span.end),
                ..span
            };
            cur = Exp {
                id: if last { id } else { self.fresh_id() },
                span: if last { span } else { pspan },
                kind: ExpKind::Project(Box::new(cur), parts[k].clone()),
            };
        }
        // Infer the inner parts (records their types); the outer node's type is recorded by
        // the caller.
        let ExpKind::Project(inner, f) = &mut cur.kind else {
            unreachable!()
        };
        let it = self.infer(inner)?;
        let f = f.clone();
        let t = self.field_of(&it, &f, span)?;
        *e = cur;
        Ok(t)
    }

    /// Calls written in a form the language has since changed get an error that shows the
    /// current form (`unflatten n m xs` is now `unflatten xs`).
    fn old_spelling(&self, f: &Exp, nargs: usize, span: Span) -> R<()> {
        let ExpKind::Var(q) = &f.kind else {
            return Ok(());
        };
        if q.is_qualified()
            || self.lookup_local(&q.name).is_some()
            || self.find_val(&q.name).is_some()
        {
            return Ok(());
        }
        let msg = match (q.name.as_str(), nargs) {
            ("unflatten", 3) => "\"unflatten n m xs\" is the old form: unflatten now takes only the array and reads both sizes from its type. Write \"unflatten xs\", with \"xs :> [n*m]t\" if the sizes are not known.",
            ("unflatten_3d", 4) => "\"unflatten_3d n m l xs\" is the old form: write \"unflatten_3d xs\", with \"xs :> [n*m*l]t\" if the sizes are not known.",
            ("flatten_to", 2) => "\"flatten_to n xs\" is the old form: write \"flatten xs :> [n]t\".",
            _ => return Ok(()),
        };
        err(span, msg)
    }

    /// The type of a use of a name that denotes `denot`, rewriting the use to the name the
    /// flat program knows it by.
    fn use_denot(&mut self, e: &mut Exp, denot: Denot, shown: &str) -> R<T> {
        let (id, span) = (e.id, e.span);
        match denot {
            Denot::Value(sc, flat) => {
                if let Some(f) = flat {
                    e.kind = ExpKind::Var(QualName::unqual(f));
                }
                let (t, sizes) = self.instantiate(&sc);
                self.record_occurrence(id, span, shown, sizes);
                Ok(t)
            }
            Denot::Member(m, n) => {
                e.kind = ExpKind::Var(QualName {
                    quals: vec![m.name().to_string()],
                    name: n.clone(),
                });
                self.member_type(m, &n, id, span)
            }
            Denot::Builtin(n) => Ok(self.builtin_op_type(&n, span)),
        }
    }
}

fn callee_name(f: &Exp) -> String {
    match &f.kind {
        ExpKind::Var(q) => format!("\"{q}\""),
        _ => "the function".to_string(),
    }
}

/// `t` with its outer dimensions, one per size, renamed to those sizes.
impl Checker {
    /// `let xs = e` where the outer sizes of `e` are rigid unknowns (the result of `filter`,
    /// say): the `let` binds hidden size names for them (added to `sizes`, bound at run time
    /// from the value's shape), so that a use in the body that needs such a size can compute
    /// it. The variable's type for checking keeps the unknowns (two such sizes still meet at
    /// run time); returns the type the backends see and the names of the unknowns.
    pub(super) fn name_let_sizes(
        &mut self,
        sizes: &mut Vec<(Name, Span)>,
        pat: &Pat,
        rt: &T,
    ) -> Option<(T, Vec<(u32, Name)>)> {
        let PatKind::Var(var) = &pat.kind else {
            return None;
        };
        if !sizes.is_empty() {
            return None;
        }
        let mut t = self.s.zonk(rt);
        let mut named = Vec::new();
        while let T::Array(Sz::Unknown(u), elem) = &t {
            named.push((*u, format!("{var}%{}_{}", pat.id.0, named.len())));
            t = (**elem).clone();
        }
        if named.is_empty() {
            return None;
        }
        sizes.extend(named.iter().map(|(_, n)| (n.clone(), pat.span)));
        let shown = name_outer_sizes(&self.s.zonk(rt), sizes);
        Some((shown, named))
    }
}

/// `length e`: its value is the outer size of `e`.
fn is_length_call(e: &Exp) -> bool {
    match &e.kind {
        ExpKind::Apply(f, args) => {
            args.len() == 1
                && matches!(&f.kind, ExpKind::Var(q) if q.quals.is_empty() && q.name == "length")
        }
        _ => false,
    }
}

fn name_outer_sizes<S>(t: &T, sizes: &[(Name, S)]) -> T {
    match (t, sizes.split_first()) {
        (T::Array(_, e), Some(((n, _), rest))) => {
            T::Array(Sz::Name(n.clone()), Box::new(name_outer_sizes(e, rest)))
        }
        _ => t.clone(),
    }
}
