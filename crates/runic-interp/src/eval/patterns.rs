//! Patterns and shapes: binding values to patterns and checking shapes against types.

use super::values::project;
use super::{Eval, R};
use crate::env::Env;
use crate::error::RuntimeError;
use crate::prim::{self, UnOp};
use crate::value::{shape_string, values_equal, Data, Value};
use runic_syntax::ast::*;
use runic_syntax::Span;
use runic_types::{Size, Type};
use std::rc::Rc;

impl<'a> Eval<'a> {
    pub fn bind_irrefutable(
        &self,
        p: &'a Pat,
        v: Value<'a>,
        env: &mut Env<'a>,
        pending: &mut Vec<&'a str>,
    ) -> R<()> {
        if self.bind_pat(p, v, env, pending)? {
            Ok(())
        } else {
            Err(RuntimeError::at(
                "internal error: refutable pattern did not match",
                p.span,
            ))
        }
    }

    /// Match `v` against `p`, binding variables into `env`; size names in `pending` are bound
    /// from the shapes of ascribed sub-patterns. `Ok(false)` if a refutable part fails.
    pub fn bind_pat(
        &self,
        p: &'a Pat,
        v: Value<'a>,
        env: &mut Env<'a>,
        pending: &mut Vec<&'a str>,
    ) -> R<bool> {
        match &p.kind {
            PatKind::Var(n) => {
                // `let [k] xs = e`: the checker names the sizes in the variable's type.
                if !pending.is_empty() {
                    if let Some(t) = self.checked.info.pat_types.get(&p.id) {
                        self.match_shape(&v, t, env, pending);
                    }
                }
                env.bind(n, v);
                Ok(true)
            }
            PatKind::Wildcard => Ok(true),
            PatKind::Tuple(ps) => {
                let items: Vec<Value<'a>> = match v {
                    Value::Tuple(rc) => Rc::try_unwrap(rc).unwrap_or_else(|rc| (*rc).clone()),
                    Value::Record(rc) => rc.iter().map(|(_, v)| v.clone()).collect(),
                    _ => {
                        return Err(RuntimeError::at(
                            "internal error: tuple pattern on a non-tuple",
                            p.span,
                        ))
                    }
                };
                if items.len() != ps.len() {
                    return Err(RuntimeError::at(
                        "internal error: tuple pattern arity",
                        p.span,
                    ));
                }
                for (sp, x) in ps.iter().zip(items) {
                    if !self.bind_pat(sp, x, env, pending)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            PatKind::Record(fields) => {
                for (f, sp) in fields {
                    let x = project(&v, f).map_err(|er| er.locate(p.span))?;
                    if !self.bind_pat(sp, x, env, pending)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            PatKind::Ascribe(inner, _) => {
                // The declared type is recorded on the inner pattern.
                let info = &self.checked.info.pat_types;
                if let Some(t) = info.get(&inner.id).or_else(|| info.get(&p.id)) {
                    if !self.match_shape(&v, t, env, pending) {
                        return Err(RuntimeError::at(self.shape_error(&v, t, env), p.span));
                    }
                }
                self.bind_pat(inner, v, env, pending)
            }
            PatKind::Literal { lit, negated } => {
                let mut lv = self.literal(lit, self.checked.info.pat_types.get(&p.id));
                if *negated {
                    if let Value::Prim(x) = lv {
                        lv = Value::Prim(prim::unop(UnOp::Neg, x));
                    }
                }
                Ok(values_equal(&lv, &v))
            }
            PatKind::Constr(name, ps) => match &v {
                Value::Sum(s) if s.0 == name.as_str() => {
                    for (sp, x) in ps.iter().zip(s.1.iter()) {
                        if !self.bind_pat(sp, x.clone(), env, pending)? {
                            return Ok(false);
                        }
                    }
                    Ok(true)
                }
                Value::Sum(_) => Ok(false),
                _ => Err(RuntimeError::at(
                    "internal error: constructor pattern on a non-sum",
                    p.span,
                )),
            },
            PatKind::Attr(_, inner) => self.bind_pat(inner, v, env, pending),
        }
    }

    // ------------------------------------------------------------------ shapes

    /// Check `v`'s shape against the sizes in `t`, binding pending size names on the way.
    /// Sizes that cannot be evaluated are not checked.
    pub fn match_shape(
        &self,
        v: &Value<'a>,
        t: &'a Type,
        env: &mut Env<'a>,
        pending: &mut Vec<&'a str>,
    ) -> bool {
        match t {
            Type::Array { shape, elem } => {
                let vs = v.shape();
                if !matches!(v, Value::Array(_)) {
                    return true;
                }
                if vs.len() < shape.len() {
                    return false;
                }
                for (k, s) in shape.iter().enumerate() {
                    let d = vs[k] as i64;
                    match s {
                        Size::Var(n) => {
                            if let Some(i) = pending.iter().position(|m| *m == n.as_str()) {
                                pending.remove(i);
                                env.bind(n, Value::i64(d));
                            } else if let Some(x) = self.size_var(n, env) {
                                if x != d {
                                    return false;
                                }
                            }
                        }
                        Size::Const(c) => {
                            if *c != d {
                                return false;
                            }
                        }
                        Size::Exp(_) => {
                            if let Some(x) = self.eval_size(s, env) {
                                if x != d {
                                    return false;
                                }
                            }
                        }
                        Size::Unknown(_) => {}
                    }
                }
                if let (Type::Record(_), Value::Array(a)) = (&**elem, v) {
                    if let Data::Boxed(items) = &a.data {
                        if let Some(first) = items.first() {
                            return self.match_shape(first, elem, env, pending);
                        }
                    }
                }
                true
            }
            Type::Record(fields) => match v {
                Value::Tuple(items) => fields
                    .iter()
                    .zip(items.iter())
                    .all(|((_, ft), x)| self.match_shape(x, ft, env, pending)),
                Value::Record(items) => fields.iter().all(|(n, ft)| {
                    match items.iter().find(|(m, _)| *m == n.as_str()) {
                        Some((_, x)) => self.match_shape(x, ft, env, pending),
                        None => true,
                    }
                }),
                _ => true,
            },
            _ => true,
        }
    }

    /// `t` with every evaluable size replaced by its value, for messages.
    pub fn subst_sizes(&self, t: &'a Type, env: &Env<'a>) -> Type {
        match t {
            Type::Array { elem, shape } => Type::Array {
                elem: Box::new(self.subst_sizes(elem, env)),
                shape: shape
                    .iter()
                    .map(|s| match self.eval_size(s, env) {
                        Some(v) => Size::Const(v),
                        None => s.clone(),
                    })
                    .collect(),
            },
            Type::Record(fs) => Type::Record(
                fs.iter()
                    .map(|(n, ft)| (n.clone(), self.subst_sizes(ft, env)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    pub fn shape_error(&self, v: &Value<'a>, t: &'a Type, env: &Env<'a>) -> String {
        format!(
            "Value of (desugared) shape {} cannot match shape of type \"{}\".",
            shape_string(v.shape()),
            self.subst_sizes(t, env)
        )
    }

    /// Check a function result against a declared return type (sizes written as expressions).
    pub(super) fn check_ret(
        &self,
        v: &Value<'a>,
        t: &'a TypeExp,
        env: &Env<'a>,
        span: Span,
    ) -> R<()> {
        if !self.texp_ok(v.shape(), v, t, env) {
            return Err(RuntimeError::at(
                format!(
                    "Value of (desugared) shape {} cannot match shape of type \"{}\".",
                    shape_string(v.shape()),
                    self.texp_string(t, env)
                ),
                span,
            ));
        }
        Ok(())
    }

    fn texp_ok(&self, shape: &[usize], v: &Value<'a>, t: &'a TypeExp, env: &Env<'a>) -> bool {
        match t {
            TypeExp::Array(size, elem, _) => {
                let Some((&d, rest)) = shape.split_first() else {
                    return !matches!(v, Value::Array(_));
                };
                if let SizeExp::Exp(x) = size {
                    if let Some(n) = self.eval_size_exp(x, env) {
                        if n != d as i64 {
                            return false;
                        }
                    }
                }
                self.texp_ok(rest, v, elem, env)
            }
            TypeExp::Unique(inner, _) => self.texp_ok(shape, v, inner, env),
            TypeExp::Tuple(ts, _) if shape.is_empty() => match v {
                Value::Tuple(items) if items.len() == ts.len() => ts
                    .iter()
                    .zip(items.iter())
                    .all(|(t, x)| self.texp_ok(x.shape(), x, t, env)),
                _ => true,
            },
            TypeExp::Record(fs, _) if shape.is_empty() => match v {
                Value::Record(items) => {
                    fs.iter().all(
                        |(n, t)| match items.iter().find(|(m, _)| *m == n.as_str()) {
                            Some((_, x)) => self.texp_ok(x.shape(), x, t, env),
                            None => true,
                        },
                    )
                }
                _ => true,
            },
            _ => true,
        }
    }

    fn eval_size_exp(&self, x: &'a Exp, env: &Env<'a>) -> Option<i64> {
        match &x.kind {
            ExpKind::Literal(Literal::Int { value, .. }) => Some(*value as i64),
            ExpKind::Var(q) if !q.is_qualified() => self.size_var(&q.name, env),
            _ => self.eval(x, env).ok()?.as_prim()?.to_i64(),
        }
    }

    fn texp_string(&self, t: &'a TypeExp, env: &Env<'a>) -> String {
        match t {
            TypeExp::Var(q, _) => q.to_string(),
            TypeExp::Array(size, elem, _) => {
                let d = match size {
                    SizeExp::Anon(_) => String::new(),
                    SizeExp::Exp(x) => match self.eval_size_exp(x, env) {
                        Some(n) => n.to_string(),
                        None => self.sources.slice(x.span).to_string(),
                    },
                };
                format!("[{d}]{}", self.texp_string(elem, env))
            }
            TypeExp::Unique(inner, _) => self.texp_string(inner, env),
            TypeExp::Tuple(ts, _) => {
                format!(
                    "({})",
                    ts.iter()
                        .map(|t| self.texp_string(t, env))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
            TypeExp::Record(fs, _) => format!(
                "{{{}}}",
                fs.iter()
                    .map(|(n, t)| format!("{n}: {}", self.texp_string(t, env)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            other => self.sources.slice(other.span()).to_string(),
        }
    }
}
