//! Expressions: the main `eval` dispatch, literals, indices and operators.

use super::values::{binop_values, make_record, project, unop_value};
use super::{Eval, Step, R};
use crate::env::Env;
use crate::error::RuntimeError;
use crate::index::{self, DimVal};
use crate::prim::{self, BinOp, Prim, UnOp};
use crate::value::{array_from_rows, shape_string, Array, Closure, Data, Fun, Value};
use runic_syntax::ast::*;
use runic_types::Type;
use std::rc::Rc;

impl<'a> Eval<'a> {
    pub fn eval(&self, e: &'a Exp, env: &Env<'a>) -> R<Value<'a>> {
        match &e.kind {
            ExpKind::Literal(lit) => Ok(self.literal(lit, self.checked.info.exp_types.get(&e.id))),
            ExpKind::Var(q) => self.lookup_name(q, e.id, e.span, env),
            ExpKind::Tuple(es) => {
                let mut vs = Vec::with_capacity(es.len());
                for x in es {
                    vs.push(self.eval(x, env)?);
                }
                Ok(Value::Tuple(Rc::new(vs)))
            }
            ExpKind::Record(fields) => {
                let mut vs: Vec<(&'a str, Value<'a>)> = Vec::with_capacity(fields.len());
                for f in fields {
                    match f {
                        RecordField::Explicit(n, x) => vs.push((n, self.eval(x, env)?)),
                        RecordField::Punned(n, sp) => {
                            let v = self.lookup_unqual(n, e.id, *sp, env)?;
                            vs.push((n, v));
                        }
                    }
                }
                Ok(make_record(vs))
            }
            ExpKind::ArrayLit(es) => {
                let mut vs = Vec::with_capacity(es.len());
                for x in es {
                    vs.push(self.eval(x, env)?);
                }
                if vs.is_empty() {
                    return Ok(self.empty_array(self.checked.info.exp_types.get(&e.id), env));
                }
                array_from_rows(vs, None).map_err(|(a, b)| {
                    RuntimeError::at(
                        format!(
                            "Irregular array literal: elements have shapes {} and {}.",
                            shape_string(&a),
                            shape_string(&b)
                        ),
                        e.span,
                    )
                })
            }
            ExpKind::Range {
                start,
                second,
                end,
                kind,
            } => {
                let a = self.eval_prim(start, env)?;
                let b = match second {
                    Some(s) => Some(self.eval_prim(s, env)?),
                    None => None,
                };
                let c = self.eval_prim(end, env)?;
                index::range(a, b, c, kind).map_err(|m| RuntimeError::at(m, e.span))
            }
            ExpKind::Project(x, f) => {
                let v = self.eval(x, env)?;
                project(&v, f).map_err(|er| er.locate(e.span))
            }
            ExpKind::Index(a, dims) => {
                let av = self.eval(a, env)?;
                let d = self.eval_dims(dims, env)?;
                index::index_value(&av, &d).map_err(|m| RuntimeError::at(m, e.span))
            }
            ExpKind::Apply(f, args) => {
                let fv = self.eval(f, env)?;
                let mut vs = Vec::with_capacity(args.len());
                for a in args {
                    vs.push(self.eval(a, env)?);
                }
                let v = self
                    .apply_many(fv, vs)
                    .map_err(|er| er.through_call(e.span))?;
                Ok(self.shape_empty_result(v, e, env))
            }
            ExpKind::Negate(x) => {
                let v = self.eval(x, env)?;
                match v {
                    Value::Prim(p) => Ok(Value::Prim(prim::unop(UnOp::Neg, p))),
                    Value::Active(_) => unop_value(UnOp::Neg, &v).map_err(|er| er.locate(e.span)),
                    _ => Err(RuntimeError::at(
                        "internal error: negation of a non-number",
                        e.span,
                    )),
                }
            }
            ExpKind::Not(x) => {
                let v = self.eval(x, env)?;
                match v {
                    Value::Prim(p) => Ok(Value::Prim(prim::unop(UnOp::Not, p))),
                    Value::Active(_) => unop_value(UnOp::Not, &v).map_err(|er| er.locate(e.span)),
                    _ => Err(RuntimeError::at(
                        "internal error: `!` of a non-primitive",
                        e.span,
                    )),
                }
            }
            ExpKind::BinOp { op, lhs, rhs } => self.eval_binop(e, op, lhs, rhs, env),
            ExpKind::OpSection(op) => self.op_value(op, e.id, env),
            ExpKind::LeftSection { op, lhs } => {
                let f = self.op_value(op, e.id, env)?;
                let x = self.eval(lhs, env)?;
                let v = self
                    .apply_many(f, vec![x])
                    .map_err(|er| er.through_call(e.span))?;
                Ok(self.shape_empty_result(v, e, env))
            }
            ExpKind::RightSection { op, rhs } => {
                let f = self.op_value(op, e.id, env)?;
                let y = self.eval(rhs, env)?;
                Ok(Value::Fun(Rc::new(Fun::RightSection { op: f, rhs: y })))
            }
            ExpKind::ProjSection(steps) => Ok(Value::Fun(Rc::new(Fun::Proj {
                steps,
                env: env.clone(),
            }))),
            ExpKind::Lambda { params, ret, body } => {
                Ok(Value::Fun(Rc::new(Fun::Closure(Closure {
                    params,
                    body,
                    ret: ret.as_ref(),
                    type_params: &[],
                    env: env.clone(),
                    sizes: Vec::new(),
                    args: Vec::new(),
                }))))
            }
            ExpKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                if self.eval_bool(cond, env)? {
                    self.eval(then_branch, env)
                } else {
                    self.eval(else_branch, env)
                }
            }
            ExpKind::LetPat {
                sizes,
                pat,
                rhs,
                body,
            } => {
                let v = self.eval(rhs, env)?;
                let mut env2 = env.clone();
                let mut pending: Vec<&'a str> = sizes.iter().map(|(n, _)| n.as_str()).collect();
                self.bind_irrefutable(pat, v, &mut env2, &mut pending)?;
                self.eval(body, &env2)
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
                let mut env2 = env.clone();
                let f = if params.is_empty() {
                    self.eval(rhs, env)?
                } else {
                    Value::Fun(Rc::new(Fun::Closure(Closure {
                        params,
                        body: rhs,
                        ret: ret.as_ref(),
                        type_params,
                        env: env.clone(),
                        sizes: Vec::new(),
                        args: Vec::new(),
                    })))
                };
                env2.bind(name, f);
                self.eval(body, &env2)
            }
            ExpKind::LetUpdate {
                name,
                name_span,
                steps,
                rhs,
                body,
            } => {
                let v = self.eval(rhs, env)?;
                let st = self.eval_steps(steps, env)?;
                let taken = if self.safe_updates.contains(&e.id) {
                    env.take(name)
                } else {
                    None
                };
                let target = match taken {
                    Some(t) => t,
                    None => self.lookup_unqual(name, e.id, *name_span, env)?,
                };
                let nv = self.update_at(target, &st, v)?;
                let mut env2 = env.clone();
                env2.bind(name, nv);
                self.eval(body, &env2)
            }
            ExpKind::Update {
                target,
                steps,
                value,
            } => {
                let st = self.eval_steps(steps, env)?;
                let v = self.eval(value, env)?;
                let t = match &target.kind {
                    ExpKind::Var(q)
                        if !q.is_qualified()
                            && self.safe_updates.contains(&e.id)
                            && env.contains(&q.name) =>
                    {
                        env.take(&q.name).unwrap_or_else(Value::unit)
                    }
                    _ => self.eval(target, env)?,
                };
                self.update_at(t, &st, v)
            }
            ExpKind::Loop {
                pat,
                init,
                form,
                body,
            } => self.eval_loop(pat, init.as_deref(), form, body, env),
            ExpKind::Match { scrutinee, cases } => {
                let v = self.eval(scrutinee, env)?;
                for c in cases {
                    let mut env2 = env.clone();
                    if self.bind_pat(&c.pat, v.clone(), &mut env2, &mut Vec::new())? {
                        return self.eval(&c.body, &env2);
                    }
                }
                Err(RuntimeError::at("unmatched cases", e.span))
            }
            ExpKind::Ascribe(x, _) | ExpKind::Coerce(x, _) => {
                let v = self.eval(x, env)?;
                if let Some(t) = self.checked.info.exp_types.get(&e.id) {
                    let mut env2 = env.clone();
                    if !self.match_shape(&v, t, &mut env2, &mut Vec::new()) {
                        return Err(RuntimeError::at(self.shape_error(&v, t, &env2), e.span));
                    }
                }
                Ok(v)
            }
            ExpKind::Assert { cond, body } => {
                if !self.eval_bool(cond, env)? {
                    let text = self.sources.slice(cond.span).to_string();
                    return Err(RuntimeError::at(
                        format!("Assertion is false: {text}"),
                        e.span,
                    ));
                }
                self.eval(body, env)
            }
            ExpKind::Attr(attr, x) => {
                let v = self.eval(x, env)?;
                if let Some(tag) = trace_tag(attr) {
                    let shown = crate::convert::show(&v);
                    let loc = self.sources.location(e.span);
                    match tag {
                        Some(t) => eprintln!("{loc}: {t}: {shown}"),
                        None => eprintln!("{loc}: {shown}"),
                    }
                }
                Ok(v)
            }
            ExpKind::Constr(name, args) => {
                let mut vs = Vec::with_capacity(args.len());
                for a in args {
                    vs.push(self.eval(a, env)?);
                }
                Ok(Value::Sum(Rc::new((name.as_str(), vs))))
            }
            ExpKind::LocalOpen(_, x) => self.eval(x, env),
            ExpKind::Hole => {
                let t = self
                    .checked
                    .info
                    .exp_types
                    .get(&e.id)
                    .map(|t| t.to_string())
                    .unwrap_or_else(|| "?".into());
                Err(RuntimeError::at(
                    format!("Reached hole of type: {t}"),
                    e.span,
                ))
            }
        }
    }

    pub(super) fn eval_prim(&self, e: &'a Exp, env: &Env<'a>) -> R<Prim> {
        match self.eval(e, env)?.as_prim() {
            Some(p) => Ok(p),
            None => Err(RuntimeError::at(
                "internal error: expected a primitive value",
                e.span,
            )),
        }
    }

    pub(super) fn eval_bool(&self, e: &'a Exp, env: &Env<'a>) -> R<bool> {
        match self.eval_prim(e, env)? {
            Prim::Bool(b) => Ok(b),
            _ => Err(RuntimeError::at(
                "internal error: expected a boolean",
                e.span,
            )),
        }
    }

    fn eval_i64(&self, e: &'a Exp, env: &Env<'a>) -> R<i64> {
        self.eval_prim(e, env)?
            .to_i64()
            .ok_or_else(|| RuntimeError::at("internal error: expected an integer", e.span))
    }

    pub fn eval_dims(&self, dims: &'a [DimIndex], env: &Env<'a>) -> R<Vec<DimVal>> {
        let mut out = Vec::with_capacity(dims.len());
        for d in dims {
            out.push(match d {
                DimIndex::Index(x) => DimVal::Idx(self.eval_i64(x, env)?),
                DimIndex::Slice { start, end, stride } => {
                    let f = |o: &'a Option<Exp>| -> R<Option<i64>> {
                        match o {
                            Some(x) => Ok(Some(self.eval_i64(x, env)?)),
                            None => Ok(None),
                        }
                    };
                    DimVal::Slice {
                        start: f(start)?,
                        end: f(end)?,
                        stride: f(stride)?,
                    }
                }
            });
        }
        Ok(out)
    }

    fn eval_steps(&self, steps: &'a [UpdateStep], env: &Env<'a>) -> R<Vec<Step<'a>>> {
        let mut out = Vec::with_capacity(steps.len());
        for s in steps {
            out.push(match s {
                UpdateStep::Field(f, _) => Step::Field(f),
                UpdateStep::Index(d, sp) => Step::Index(self.eval_dims(d, env)?, *sp),
            });
        }
        Ok(out)
    }

    pub(super) fn literal(&self, lit: &Literal, ty: Option<&Type>) -> Value<'a> {
        let t = match ty {
            Some(Type::Prim(p)) => Some(*p),
            _ => None,
        };
        match lit {
            Literal::Int { value, suffix } => {
                let t = suffix.or(t).unwrap_or(PrimType::I32);
                if t.is_float() {
                    Value::Prim(Prim::float(t, *value as f64))
                } else {
                    Value::Prim(Prim::int(t, *value as i128))
                }
            }
            Literal::Char(c) => {
                let t = t.unwrap_or(PrimType::I32);
                Value::Prim(if t.is_float() {
                    Prim::float(t, *c as f64)
                } else {
                    Prim::int(t, *c as i128)
                })
            }
            Literal::Float { text, suffix } => Value::Prim(prim::float_literal(
                text,
                suffix.or(t).unwrap_or(PrimType::F64),
            )),
            Literal::Bool(b) => Value::bool(*b),
            Literal::String(bytes) => {
                let data = Data::Flat(runic_data::Buffer::U8(bytes.clone().into()));
                Value::Array(Rc::new(Array::new(vec![bytes.len()], data)))
            }
        }
    }

    /// A `map` (or any function building an array from its rows) over no rows cannot see
    /// the rows' shape and returns a typeless `[0]`; the call's static type gives the rest
    /// of the shape, as it does for an empty literal, so that `flatten`, `transpose` or a
    /// derivative of the result see the array the program describes.
    fn shape_empty_result(&self, v: Value<'a>, e: &'a Exp, env: &Env<'a>) -> Value<'a> {
        match self.checked.info.exp_types.get(&e.id) {
            Some(ty) => self.typed_empty(v, ty, env),
            None => v,
        }
    }

    fn typed_empty(&self, v: Value<'a>, ty: &'a Type, env: &Env<'a>) -> Value<'a> {
        match (&v, ty) {
            // Only where every inner size is known here: a guessed size would fail a later
            // shape check that the typeless array passes.
            (Value::Array(a), Type::Array { shape, .. })
                if is_typeless_empty(a)
                    && shape[1..].iter().all(|s| self.eval_size(s, env).is_some()) =>
            {
                self.empty_array(Some(ty), env)
            }
            (Value::Tuple(items), Type::Record(fields))
                if items.len() == fields.len()
                    && items
                        .iter()
                        .any(|x| matches!(x, Value::Array(a) if is_typeless_empty(a))) =>
            {
                let items = items
                    .iter()
                    .zip(fields)
                    .map(|(x, (_, t))| self.typed_empty(x.clone(), t, env))
                    .collect();
                Value::Tuple(Rc::new(items))
            }
            _ => v,
        }
    }

    /// An empty array of a known type: `[0]` followed by the inner sizes that can be evaluated.
    fn empty_array(&self, ty: Option<&'a Type>, env: &Env<'a>) -> Value<'a> {
        if let Some(Type::Array { elem, shape }) = ty {
            let mut dims = vec![0usize];
            for s in shape.iter().skip(1) {
                dims.push(self.eval_size(s, env).unwrap_or(0).max(0) as usize);
            }
            let data = match &**elem {
                Type::Prim(p) => Data::Flat(runic_data::Buffer::with_capacity(*p, 0)),
                _ => Data::Boxed(Vec::new()),
            };
            return Value::Array(Rc::new(Array::new(dims, data)));
        }
        Value::Array(Rc::new(Array::new(vec![0], Data::Boxed(Vec::new()))))
    }

    // ------------------------------------------------------------------ operators

    fn op_value(&self, op: &'a BinOpName, occ: NodeId, env: &Env<'a>) -> R<Value<'a>> {
        self.lookup_name(&op.name, occ, op.span, env)
    }

    fn is_builtin_op(&self, op: &'a BinOpName, env: &Env<'a>) -> Option<BinOp> {
        if op.backtick {
            return None;
        }
        let q = &op.name;
        let ok = if q.quals.is_empty() {
            !self.name_is_rebound(&q.name, env)
        } else {
            q.quals.len() == 1 && PrimType::from_name(&q.quals[0]).is_some()
        };
        if ok {
            BinOp::from_symbol(&q.name)
        } else {
            None
        }
    }

    fn eval_binop(
        &self,
        e: &'a Exp,
        op: &'a BinOpName,
        lhs: &'a Exp,
        rhs: &'a Exp,
        env: &Env<'a>,
    ) -> R<Value<'a>> {
        if let Some(bop) = self.is_builtin_op(op, env) {
            match bop {
                BinOp::LogAnd => {
                    return Ok(Value::bool(
                        self.eval_bool(lhs, env)? && self.eval_bool(rhs, env)?,
                    ));
                }
                BinOp::LogOr => {
                    return Ok(Value::bool(
                        self.eval_bool(lhs, env)? || self.eval_bool(rhs, env)?,
                    ));
                }
                _ => {}
            }
            let a = self.eval(lhs, env)?;
            let b = self.eval(rhs, env)?;
            return binop_values(bop, &a, &b).map_err(|er| er.locate(e.span));
        }
        let f = self.op_value(op, e.id, env)?;
        let a = self.eval(lhs, env)?;
        let b = self.eval(rhs, env)?;
        let v = self
            .apply_many(f, vec![a, b])
            .map_err(|er| er.through_call(e.span))?;
        Ok(self.shape_empty_result(v, e, env))
    }
}

fn trace_tag(a: &Attr) -> Option<Option<String>> {
    match a {
        Attr::Name(n) if n == "trace" => Some(None),
        Attr::Call(n, args) if n == "trace" => Some(args.first().map(|x| match x {
            Attr::Name(s) => s.clone(),
            Attr::Int(i) => i.to_string(),
            Attr::Call(s, _) => s.clone(),
        })),
        _ => None,
    }
}

/// `[0]` with boxed storage: an empty array whose element type and row shape are unknown.
fn is_typeless_empty(a: &Array) -> bool {
    a.shape == [0] && matches!(&a.data, Data::Boxed(b) if b.is_empty())
}
