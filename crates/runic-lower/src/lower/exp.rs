//! Expressions: the rule for each kind of source expression, literals and array literals.

use super::*;
use crate::val::{Env, Fun, Val};
use runic_ir::*;
use runic_syntax::ast::{self, ExpKind, Literal};
use std::rc::Rc;

impl<'a> Lower<'a> {
    pub fn exp(&mut self, e: &'a ast::Exp, env: &Env<'a>) -> R<Val<'a>> {
        let saved = self.loc;
        self.loc = Some(loc_of(e.span));
        let r = self.exp_kind(e, env);
        self.loc = saved;
        r
    }

    fn exp_kind(&mut self, e: &'a ast::Exp, env: &Env<'a>) -> R<Val<'a>> {
        match &e.kind {
            ExpKind::Literal(lit) => self.literal(lit, e),
            ExpKind::Var(q) => self.lookup(q, e.id, e.span, env),
            ExpKind::Tuple(es) => {
                let mut fs = Vec::new();
                for (i, x) in es.iter().enumerate() {
                    fs.push((i.to_string(), self.exp(x, env)?));
                }
                Ok(Val::Rec(fs))
            }
            ExpKind::Record(fields) => {
                let mut fs = Vec::new();
                for f in fields {
                    match f {
                        ast::RecordField::Explicit(n, x) => fs.push((n.clone(), self.exp(x, env)?)),
                        ast::RecordField::Punned(n, sp) => {
                            let q = ast::QualName::unqual(n.clone());
                            let v = match env.lookup(n) {
                                Some(v) => v.clone(),
                                None => self.lookup(Box::leak(Box::new(q)), e.id, *sp, env)?,
                            };
                            fs.push((n.clone(), v));
                        }
                    }
                }
                fs.sort_by(|a, b| runic_types::ty::canonical_field_order(&a.0, &b.0));
                Ok(Val::Rec(fs))
            }
            ExpKind::ArrayLit(es) => self.array_lit(e, es, env),
            ExpKind::Range {
                start,
                second,
                end,
                kind,
            } => {
                let (s, p) = {
                    let v = self.exp(start, env)?;
                    self.prim_leaf(&v, start.span)?
                };
                let sec = match second {
                    Some(x) => {
                        let v = self.exp(x, env)?;
                        Some(self.prim_leaf(&v, x.span)?.0)
                    }
                    None => None,
                };
                let en = {
                    let v = self.exp(end, env)?;
                    self.prim_leaf(&v, end.span)?.0
                };
                let kind = match kind {
                    ast::RangeEnd::UpToExclusive => RangeKind::UpToExclusive,
                    ast::RangeEnd::DownToExclusive => RangeKind::DownToExclusive,
                    ast::RangeEnd::Inclusive => RangeKind::Inclusive,
                };
                self.range(s, sec, en, kind, p)
            }
            ExpKind::Project(x, f) => {
                let v = self.exp(x, env)?;
                match v.field(f) {
                    Some(v) => Ok(v.clone()),
                    None => unsupported(&format!("projection of field {f}"), Some(e.span)),
                }
            }
            ExpKind::Index(a, dims) => {
                let av = self.exp(a, env)?;
                let idx = self.dim_indices(dims, env)?;
                self.loc = Some(loc_of(e.span));
                self.index_val(&av, &idx, e.span)
            }
            ExpKind::Apply(f, args) => {
                let fv = self.exp(f, env)?;
                let mut vs = Vec::new();
                for a in args {
                    vs.push(self.exp(a, env)?);
                }
                self.calls.push(loc_of(e.span));
                let r = self.apply_many(fv, vs, e.span);
                self.calls.pop();
                r
            }
            ExpKind::Negate(x) => {
                let v = self.exp(x, env)?;
                let (s, p) = self.prim_leaf(&v, x.span)?;
                let r = if p.is_float() {
                    self.b().op1(UnOp::Neg, s)?
                } else {
                    self.b().op2(BinOp::Sub, SubExp::Const(Prim::zero(p)), s)?
                };
                self.leaf_of(r)
            }
            ExpKind::Not(x) => {
                let v = self.exp(x, env)?;
                let (s, _) = self.prim_leaf(&v, x.span)?;
                let r = self.b().op1(UnOp::Not, s)?;
                self.leaf_of(r)
            }
            ExpKind::BinOp { op, lhs, rhs } => self.binop_exp(e, op, lhs, rhs, env),
            ExpKind::OpSection(op) => self.op_value(op, e.id, env),
            ExpKind::LeftSection { op, lhs } => {
                let f = self.op_value(op, e.id, env)?;
                let l = self.exp(lhs, env)?;
                self.apply_many(f, vec![l], e.span)
            }
            ExpKind::RightSection { op, rhs } => {
                let f = self.op_value(op, e.id, env)?;
                let r = self.exp(rhs, env)?;
                Ok(Val::Fun(Rc::new(Fun::RightSection { op: f, rhs: r })))
            }
            ExpKind::ProjSection(steps) => Ok(Val::Fun(Rc::new(Fun::Proj {
                steps,
                env: env.clone(),
            }))),
            ExpKind::Lambda { params, ret, body } => Ok(Val::Fun(Rc::new(Fun::Closure {
                params,
                body,
                env: env.clone(),
                args: Vec::new(),
                type_params: &[],
                sizes: Vec::new(),
                ret: ret.as_ref(),
                scope: self.pos,
            }))),
            ExpKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                let c = self.exp(cond, env)?;
                let (c, _) = self.prim_leaf(&c, cond.span)?;
                self.if_val(
                    c,
                    e.span,
                    |l| l.exp(then_branch, env),
                    |l| l.exp(else_branch, env),
                )
            }
            ExpKind::LetPat {
                sizes: _,
                pat,
                rhs,
                body,
            } => {
                let v = self.exp(rhs, env)?;
                let env2 = self.bind_pat(pat, v, env)?;
                self.exp(body, &env2)
            }
            ExpKind::LetFun {
                name,
                type_params,
                params,
                ret,
                rhs,
                body,
                ..
            } => {
                let f = if params.is_empty() {
                    self.exp(rhs, env)?
                } else {
                    Val::Fun(Rc::new(Fun::Closure {
                        params,
                        body: rhs,
                        env: env.clone(),
                        args: Vec::new(),
                        type_params,
                        sizes: Vec::new(),
                        ret: ret.as_ref(),
                        scope: self.pos,
                    }))
                };
                let env2 = env.bind(name, f);
                self.exp(body, &env2)
            }
            ExpKind::LetUpdate {
                name,
                name_span,
                steps,
                rhs,
                body,
            } => {
                let target = match env.lookup(name) {
                    Some(v) => v.clone(),
                    None => return unsupported("in-place update of a non-local", Some(*name_span)),
                };
                let nv = self.exp(rhs, env)?;
                let updated = self.update_steps(target, steps, nv, env, e.span)?;
                let env2 = env.bind(name, updated);
                self.exp(body, &env2)
            }
            ExpKind::Update {
                target,
                steps,
                value,
            } => {
                let t = self.exp(target, env)?;
                let nv = self.exp(value, env)?;
                self.update_steps(t, steps, nv, env, e.span)
            }
            ExpKind::Loop {
                pat,
                init,
                form,
                body,
            } => self.loop_exp(e, pat, init.as_deref(), form, body, env),
            ExpKind::Match { scrutinee, cases } => {
                let v = self.exp(scrutinee, env)?;
                self.match_cases(&v, cases, env, e.span)
            }
            ExpKind::Ascribe(x, _) => self.exp(x, env),
            ExpKind::Coerce(x, t) => {
                let v = self.exp(x, env)?;
                self.loc = Some(loc_of(e.span));
                if t.is_array() {
                    self.check_shape(&v, t, env, e.span)?;
                } else {
                    // `e :> ints [3]`: the sizes are those of the resolved abbreviation.
                    let ty = self.exp_type(e)?;
                    self.check_resolved_shape(&v, ty, env, e.span)?;
                }
                Ok(v)
            }
            ExpKind::Assert { cond, body } => {
                let c = self.exp(cond, env)?;
                let (c, _) = self.prim_leaf(&c, cond.span)?;
                let text = match self.sources {
                    Some(sm) => sm.slice(cond.span).to_string(),
                    None => runic_syntax::pretty::print_exp(cond),
                };
                self.loc = Some(loc_of(e.span));
                self.assert(c, &format!("Assertion is false: {text}"))?;
                self.exp(body, env)
            }
            ExpKind::Attr(attr, x) => {
                let v = self.exp(x, env)?;
                // `#[stripmine(k)] loop …`: a checkpointing hint for reverse-mode AD, kept on
                // the loop statement (the last loop of this body, which `x` just emitted).
                if let (ast::Attr::Call(name, args), ExpKind::Loop { .. }) = (attr, &x.kind) {
                    if let ([ast::Attr::Int(k)], "stripmine") = (args.as_slice(), name.as_str()) {
                        let frame = self.frames.last_mut();
                        if let Some(s) = frame.and_then(|f| {
                            f.iter_mut()
                                .rev()
                                .find(|s| matches!(s.exp, Exp::Loop { .. }))
                        }) {
                            s.src.stripmine = Some((*k).clamp(0, 8) as u32);
                        }
                    }
                }
                Ok(v)
            }
            ExpKind::LocalOpen(_, x) => self.exp(x, env),
            ExpKind::Constr(name, args) => {
                let t = self.exp_type(e)?;
                let mut vs = Vec::new();
                for a in args {
                    vs.push(self.exp(a, env)?);
                }
                self.constr(t, name, vs, env, e.span)
            }
            ExpKind::Hole => {
                // Fails when reached; the blank value only gives later code its shape.
                let t = self.exp_type(e)?;
                self.assert(
                    SubExp::Const(Prim::Bool(false)),
                    &format!("Reached hole of type: {t}"),
                )?;
                self.blank(t, &[], env, e.span)
            }
        }
    }

    fn literal(&mut self, lit: &Literal, e: &'a ast::Exp) -> R<Val<'a>> {
        let ty = match self.ck.info.exp_types.get(&e.id) {
            Some(runic_types::Type::Prim(p)) => Some(*p),
            _ => None,
        };
        let p = match lit {
            Literal::Int { value, suffix } => {
                let t = suffix.or(ty).unwrap_or(PrimType::I32);
                if t.is_float() {
                    Prim::float(t, *value as f64)
                } else {
                    Prim::int(t, *value as i128)
                }
            }
            Literal::Float { text, suffix } => {
                runic_prim::float_literal(text, suffix.or(ty).unwrap_or(PrimType::F64))
            }
            Literal::Bool(b) => Prim::Bool(*b),
            Literal::Char(c) => Prim::int(ty.unwrap_or(PrimType::I32), *c as i128),
            Literal::String(bytes) => {
                let rows: Vec<SubExp> = bytes.iter().map(|b| SubExp::Const(Prim::U8(*b))).collect();
                let lit = BasicOp::ArrayLit(rows, Type::Prim(PrimType::U8));
                let s = self.b().let_basic("str", lit)?;
                return self.leaf_of(s);
            }
        };
        Ok(Val::Leaf(SubExp::Const(p), Type::Prim(p.ty())))
    }

    fn array_lit(&mut self, e: &'a ast::Exp, es: &'a [ast::Exp], env: &Env<'a>) -> R<Val<'a>> {
        if es.is_empty() {
            let t = self.exp_type(e)?;
            return self.ir_type_of(t, env, e.span);
        }
        let mut vals = Vec::new();
        for x in es {
            vals.push(self.exp(x, env)?);
        }
        let rows: Vec<Vec<(SubExp, Type)>> = vals
            .iter()
            .map(|v| self.leaves(v, e.span))
            .collect::<R<_>>()?;
        let mut out = Vec::new();
        for k in 0..rows[0].len() {
            let row_ty = rows[0][k].1.clone();
            let col: Vec<SubExp> = rows.iter().map(|r| r[k].0.clone()).collect();
            // The executor checks that rows have the first row's shape (with the
            // interpreter's "Irregular array literal" message).
            let s = self.b().let_basic("arr", BasicOp::ArrayLit(col, row_ty))?;
            out.push(self.typed(s)?);
        }
        let v = vals[0].rebuild(&mut out.into_iter());
        self.with_unit_dims(v, &[SubExp::i64(es.len() as i64)])
    }
}
