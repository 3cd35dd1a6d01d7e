//! Name resolution: top-level definitions and their sizes, lexical lookup, names bound anywhere.

use super::{Eval, R};
use crate::builtins::{self, Builtin, Member};
use crate::env::Env;
use crate::error::RuntimeError;
use crate::value::{BuiltinFn, Closure, Fun, Value};
use runic_syntax::ast::*;
use runic_syntax::Span;
use runic_types::Size;
use std::collections::HashSet;
use std::rc::Rc;

impl<'a> Eval<'a> {
    /// The latest top-level definition of `name` visible from declaration `pos`: only those
    /// strictly before it (a definition does not see itself, as in the type checker).
    pub fn global(&self, name: &str, pos: usize) -> Option<usize> {
        let v = self.globals.get(name)?;
        v.iter().rev().find(|&&i| i < pos).copied()
    }

    fn valbind(&self, idx: usize) -> Option<&'a ValBind> {
        match &self.checked.program.decs[idx] {
            Dec::Val(vb) => Some(vb),
            _ => None,
        }
    }

    /// The value of a top-level definition; functions become closures carrying the sizes
    /// recorded at the occurrence `occ`.
    pub fn global_value(&self, idx: usize, occ: Option<NodeId>, env: &Env<'a>) -> R<Value<'a>> {
        let vb = self
            .valbind(idx)
            .ok_or_else(|| RuntimeError::new("internal error: not a value"))?;
        let has_size_params = vb
            .type_params
            .iter()
            .any(|t| matches!(t, TypeParam::Size(..)));
        if vb.params.is_empty() && has_size_params {
            // A size-polymorphic constant (`def zeros [n] : [n]f32 = rep 0`): evaluate per
            // occurrence, with the sizes recorded there.
            let mut env0 = Env::top(idx);
            if let Some(id) = occ {
                for (n, v) in self.occurrence_sizes(id, env) {
                    if let Some(v) = v {
                        env0.bind(n, Value::i64(v));
                    }
                }
            }
            let v = self.eval(&vb.body, &env0)?;
            if let Some(rt) = &vb.ret {
                self.check_ret(&v, rt, &env0, vb.body.span)?;
            }
            return Ok(v);
        }
        if vb.params.is_empty() {
            if let Some(v) = self.consts.borrow().get(&idx) {
                return Ok(v.clone());
            }
            let env0 = Env::top(idx);
            let v = self.eval(&vb.body, &env0)?;
            if let Some(rt) = &vb.ret {
                self.check_ret(&v, rt, &env0, vb.body.span)?;
            }
            self.consts.borrow_mut().insert(idx, v.clone());
            return Ok(v);
        }
        let sizes = match occ {
            Some(id) => self
                .occurrence_sizes(id, env)
                .into_iter()
                .filter_map(|(n, v)| v.map(|v| (n, v)))
                .collect(),
            None => Vec::new(),
        };
        Ok(Value::Fun(Rc::new(Fun::Closure(Closure {
            params: &vb.params,
            body: &vb.body,
            ret: vb.ret.as_ref(),
            type_params: &vb.type_params,
            env: Env::top(idx),
            sizes,
            args: Vec::new(),
        }))))
    }

    /// Size arguments recorded at an occurrence, evaluated in the occurrence's scope.
    pub fn occurrence_sizes(&self, id: NodeId, env: &Env<'a>) -> Vec<(&'a str, Option<i64>)> {
        let Some(list) = self.checked.info.size_args.get(&id) else {
            return Vec::new();
        };
        if !self.sizing.borrow_mut().insert(id) {
            return list.iter().map(|(n, _)| (n.as_str(), None)).collect();
        }
        let sizes = list
            .iter()
            .map(|(n, s)| (n.as_str(), self.eval_size(s, env)))
            .collect();
        self.sizing.borrow_mut().remove(&id);
        sizes
    }

    pub fn eval_size(&self, s: &'a Size, env: &Env<'a>) -> Option<i64> {
        match s {
            Size::Const(c) => Some(*c),
            Size::Var(n) => self.size_var(n, env),
            Size::Exp(e) => self.eval(e, env).ok()?.as_prim()?.to_i64(),
            Size::Unknown(_) => None,
        }
    }

    pub(super) fn size_var(&self, n: &str, env: &Env<'a>) -> Option<i64> {
        if let Some(v) = env.lookup(n) {
            return v.as_prim()?.to_i64();
        }
        let idx = self.global(n, env.pos)?;
        let vb = self.valbind(idx)?;
        if !vb.params.is_empty() {
            return None;
        }
        self.global_value(idx, None, env).ok()?.as_prim()?.to_i64()
    }

    /// Resolve an unqualified name: locals, then top-level definitions, then built-ins.
    pub fn lookup_unqual(
        &self,
        name: &'a str,
        occ: NodeId,
        span: Span,
        env: &Env<'a>,
    ) -> R<Value<'a>> {
        if let Some(v) = env.lookup(name) {
            return Ok(v);
        }
        if let Some(idx) = self.global(name, env.pos) {
            return self
                .global_value(idx, Some(occ), env)
                .map_err(|e| e.through_call(span));
        }
        if let Some((b, arity)) = builtins::lookup_unqualified(name) {
            return Ok(self.builtin_value(b, arity, occ, env));
        }
        Err(RuntimeError::at(
            format!("internal error: unknown name {name}"),
            span,
        ))
    }

    /// Resolve a (possibly qualified) name to its value.
    pub fn lookup_name(
        &self,
        q: &'a QualName,
        occ: NodeId,
        span: Span,
        env: &Env<'a>,
    ) -> R<Value<'a>> {
        if q.quals.is_empty() {
            return self.lookup_unqual(&q.name, occ, span, env);
        } else if q.quals.len() == 1 {
            if let Some(t) = PrimType::from_name(&q.quals[0]) {
                match builtins::lookup_member(t, &q.name) {
                    Some(Member::Fun(b, arity)) => {
                        return Ok(self.builtin_value(b, arity, occ, env))
                    }
                    Some(Member::Const(p)) => return Ok(Value::Prim(p)),
                    None => {}
                }
            }
        }
        Err(RuntimeError::at(
            format!("internal error: unknown name {q}"),
            span,
        ))
    }

    fn builtin_value(&self, op: Builtin, arity: usize, occ: NodeId, env: &Env<'a>) -> Value<'a> {
        let sizes = self.occurrence_sizes(occ, env);
        let sizes = sizes
            .into_iter()
            .map(|(n, v)| (n, v.unwrap_or(-1)))
            .collect();
        Value::Fun(Rc::new(Fun::Builtin(BuiltinFn {
            op,
            arity,
            args: Vec::new(),
            sizes,
        })))
    }

    pub(super) fn name_is_rebound(&self, name: &str, env: &Env<'a>) -> bool {
        self.bound_names.contains(name)
            && (env.contains(name) || self.global(name, env.pos).is_some())
    }
}

pub(super) fn collect_pat_names<'a>(p: &'a Pat, out: &mut HashSet<&'a str>) {
    match &p.kind {
        PatKind::Var(n) => {
            out.insert(n);
        }
        PatKind::Tuple(ps) | PatKind::Constr(_, ps) => {
            ps.iter().for_each(|q| collect_pat_names(q, out))
        }
        PatKind::Record(fs) => fs.iter().for_each(|(_, q)| collect_pat_names(q, out)),
        PatKind::Ascribe(q, _) | PatKind::Attr(_, q) => collect_pat_names(q, out),
        PatKind::Wildcard | PatKind::Literal { .. } => {}
    }
}

/// Names bound by local functions and patterns inside an expression.
pub(super) fn collect_exp_names<'a>(e: &'a Exp, out: &mut HashSet<&'a str>) {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        match &e.kind {
            ExpKind::Lambda { params, body, .. } => {
                params.iter().for_each(|p| collect_pat_names(p, out));
                stack.push(body);
            }
            ExpKind::LetPat {
                sizes,
                pat,
                rhs,
                body,
            } => {
                sizes.iter().for_each(|(n, _)| {
                    out.insert(n);
                });
                collect_pat_names(pat, out);
                stack.push(rhs);
                stack.push(body);
            }
            ExpKind::LetFun {
                name,
                params,
                rhs,
                body,
                ..
            } => {
                out.insert(name);
                params.iter().for_each(|p| collect_pat_names(p, out));
                stack.push(rhs);
                stack.push(body);
            }
            ExpKind::Loop {
                pat,
                init,
                form,
                body,
            } => {
                collect_pat_names(pat, out);
                if let Some(i) = init {
                    stack.push(i);
                }
                match form {
                    LoopForm::For { var, bound, .. } => {
                        out.insert(var);
                        stack.push(bound);
                    }
                    LoopForm::ForIn { pat, array } => {
                        collect_pat_names(pat, out);
                        stack.push(array);
                    }
                    LoopForm::While(c) => stack.push(c),
                }
                stack.push(body);
            }
            ExpKind::Match { scrutinee, cases } => {
                stack.push(scrutinee);
                for c in cases {
                    collect_pat_names(&c.pat, out);
                    stack.push(&c.body);
                }
            }
            ExpKind::Tuple(es) | ExpKind::ArrayLit(es) | ExpKind::Constr(_, es) => {
                stack.extend(es.iter())
            }
            ExpKind::Record(fs) => {
                for f in fs {
                    if let RecordField::Explicit(_, x) = f {
                        stack.push(x);
                    }
                }
            }
            ExpKind::Range {
                start, second, end, ..
            } => {
                stack.push(start);
                if let Some(s) = second {
                    stack.push(s);
                }
                stack.push(end);
            }
            ExpKind::Project(x, _)
            | ExpKind::Negate(x)
            | ExpKind::Not(x)
            | ExpKind::Ascribe(x, _)
            | ExpKind::Coerce(x, _)
            | ExpKind::Attr(_, x)
            | ExpKind::LocalOpen(_, x)
            | ExpKind::LeftSection { lhs: x, .. }
            | ExpKind::RightSection { rhs: x, .. } => stack.push(x),
            ExpKind::Index(x, dims) => {
                stack.push(x);
                push_dims(dims, &mut stack);
            }
            ExpKind::Apply(f, args) => {
                stack.push(f);
                stack.extend(args.iter());
            }
            ExpKind::BinOp { lhs, rhs, .. } => {
                stack.push(lhs);
                stack.push(rhs);
            }
            ExpKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                stack.push(cond);
                stack.push(then_branch);
                stack.push(else_branch);
            }
            ExpKind::LetUpdate { rhs, body, .. } => {
                stack.push(rhs);
                stack.push(body);
            }
            ExpKind::Update { target, value, .. } => {
                stack.push(target);
                stack.push(value);
            }
            ExpKind::Assert { cond, body } => {
                stack.push(cond);
                stack.push(body);
            }
            ExpKind::Literal(_)
            | ExpKind::Var(_)
            | ExpKind::OpSection(_)
            | ExpKind::ProjSection(_)
            | ExpKind::Hole => {}
        }
    }
}

fn push_dims<'a>(dims: &'a [DimIndex], stack: &mut Vec<&'a Exp>) {
    for d in dims {
        match d {
            DimIndex::Index(x) => stack.push(x),
            DimIndex::Slice { start, end, stride } => {
                for x in [start, end, stride].into_iter().flatten() {
                    stack.push(x);
                }
            }
        }
    }
}
