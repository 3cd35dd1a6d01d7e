//! The evaluator: expressions, patterns, function application and name resolution.

use crate::builtins::{self, Builtin, Member};
use crate::env::Env;
use crate::error::RuntimeError;
use crate::index::{self, DimVal};
use crate::prim::{self, BinOp, Prim, UnOp};
use crate::value::{
    array_from_rows, shape_string, values_equal, Array, BuiltinFn, Closure, Data, Fun, Value,
};
use runic_syntax::ast::*;
use runic_syntax::{SourceMap, Span};
use runic_types::{Checked, Size, Type};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};

pub type R<T> = Result<T, RuntimeError>;

/// Evaluation state for one entry-point call (lives on the evaluation thread).
pub struct Eval<'a> {
    pub checked: &'a Checked,
    pub sources: &'a SourceMap,
    /// Top-level value definitions by name: declaration indices, ascending.
    globals: HashMap<&'a str, Vec<usize>>,
    consts: RefCell<HashMap<usize, Value<'a>>>,
    /// Every name bound anywhere by a pattern, a local function or a top-level definition;
    /// an operator symbol outside this set is certainly the built-in one.
    bound_names: HashSet<&'a str>,
    interrupt: Option<&'a AtomicBool>,
    /// `x with ...` updates that may take `x` out of its binding (see `consume`).
    safe_updates: HashSet<NodeId>,
    /// Current depth of nested closure calls, bounded by [`MAX_CALL_DEPTH`].
    depth: std::cell::Cell<usize>,
    /// Occurrences whose size arguments are being evaluated right now. A size term may
    /// mention the very occurrence it belongs to (`zip xs (iota (length xs))` makes `xs`'s
    /// size the term `length xs`); such a size is then read from the arguments instead.
    sizing: RefCell<HashSet<NodeId>>,
    /// Automatic-differentiation state (active tapes and perturbation levels).
    pub ad: crate::ad::AdState<'a>,
}

/// Nested closure calls allowed before reporting runaway recursion (each call uses a few
/// evaluator frames on the 1 GiB evaluation stack).
const MAX_CALL_DEPTH: usize = 10_000;

/// A pre-evaluated step of an update path.
enum Step<'a> {
    Field(&'a str),
    Index(Vec<DimVal>, Span),
}

impl<'a> Eval<'a> {
    pub fn new(
        checked: &'a Checked,
        sources: &'a SourceMap,
        interrupt: Option<&'a AtomicBool>,
    ) -> Eval<'a> {
        let mut globals: HashMap<&'a str, Vec<usize>> = HashMap::new();
        let mut bound_names = HashSet::new();
        for (i, d) in checked.program.decs.iter().enumerate() {
            if let Dec::Val(vb) = d {
                globals.entry(vb.name.as_str()).or_default().push(i);
                bound_names.insert(vb.name.as_str());
                for p in &vb.params {
                    collect_pat_names(p, &mut bound_names);
                }
                collect_exp_names(&vb.body, &mut bound_names);
            }
        }
        Eval {
            checked,
            sources,
            globals,
            consts: RefCell::new(HashMap::new()),
            bound_names,
            interrupt,
            safe_updates: crate::consume::safe_updates(&checked.program.decs),
            depth: std::cell::Cell::new(0),
            sizing: RefCell::new(HashSet::new()),
            ad: Default::default(),
        }
    }

    fn check_interrupt(&self) -> R<()> {
        if let Some(flag) = self.interrupt {
            if flag.load(Ordering::Relaxed) {
                return Err(RuntimeError::new("interrupted"));
            }
        }
        Ok(())
    }

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

    fn size_var(&self, n: &str, env: &Env<'a>) -> Option<i64> {
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

    fn name_is_rebound(&self, name: &str, env: &Env<'a>) -> bool {
        self.bound_names.contains(name)
            && (env.contains(name) || self.global(name, env.pos).is_some())
    }

    // ------------------------------------------------------------------ application

    /// Apply a function value to arguments, one at a time (curried).
    pub fn apply_many(&self, f: Value<'a>, args: Vec<Value<'a>>) -> R<Value<'a>> {
        let mut f = f;
        let mut it = args.into_iter();
        let mut next = it.next();
        while let Some(arg) = next.take() {
            let fun = match &f {
                Value::Fun(rc) => rc.clone(),
                _ => {
                    return Err(RuntimeError::new(
                        "internal error: application of a non-function",
                    ))
                }
            };
            match &*fun {
                Fun::Closure(c) => {
                    let mut all = c.args.clone();
                    all.push(arg);
                    while all.len() < c.params.len() {
                        match it.next() {
                            Some(v) => all.push(v),
                            None => break,
                        }
                    }
                    if all.len() < c.params.len() {
                        f = Value::Fun(Rc::new(Fun::Closure(Closure {
                            args: all,
                            ..c.clone()
                        })));
                    } else {
                        f = self.call_closure(c, all)?;
                    }
                }
                Fun::Builtin(b) => {
                    let mut all = b.args.clone();
                    all.push(arg);
                    while all.len() < b.arity {
                        match it.next() {
                            Some(v) => all.push(v),
                            None => break,
                        }
                    }
                    if all.len() < b.arity {
                        f = Value::Fun(Rc::new(Fun::Builtin(BuiltinFn {
                            args: all,
                            ..b.clone()
                        })));
                    } else {
                        f = self.call_builtin(b.op, all, &b.sizes)?;
                    }
                }
                Fun::RightSection { op, rhs } => {
                    f = self.apply_many(op.clone(), vec![arg, rhs.clone()])?;
                }
                Fun::Proj { steps, env } => {
                    f = self.project_steps(arg, steps, env)?;
                }
            }
            next = it.next();
        }
        Ok(f)
    }

    pub fn apply1(&self, f: &Value<'a>, x: Value<'a>) -> R<Value<'a>> {
        self.apply_many(f.clone(), vec![x])
    }

    pub fn apply2(&self, f: &Value<'a>, x: Value<'a>, y: Value<'a>) -> R<Value<'a>> {
        self.apply_many(f.clone(), vec![x, y])
    }

    fn call_closure(&self, c: &Closure<'a>, args: Vec<Value<'a>>) -> R<Value<'a>> {
        self.check_interrupt()?;
        let depth = self.depth.get();
        if depth >= MAX_CALL_DEPTH {
            return Err(RuntimeError::new("stack overflow: recursion too deep"));
        }
        self.depth.set(depth + 1);
        let r = self.call_closure_body(c, args);
        self.depth.set(depth);
        r
    }

    fn call_closure_body(&self, c: &Closure<'a>, args: Vec<Value<'a>>) -> R<Value<'a>> {
        let mut env = c.env.clone();
        let mut pending: Vec<&'a str> = Vec::new();
        for tp in c.type_params {
            if let TypeParam::Size(n, _) = tp {
                match c.sizes.iter().find(|(m, _)| *m == n.as_str()) {
                    Some((_, v)) => env.bind(n, Value::i64(*v)),
                    None => pending.push(n),
                }
            }
        }
        for (p, a) in c.params.iter().zip(args) {
            self.bind_irrefutable(p, a, &mut env, &mut pending)?;
        }
        let v = self.eval(c.body, &env)?;
        if let Some(rt) = c.ret {
            self.check_ret(&v, rt, &env, c.body.span)?;
        }
        Ok(v)
    }

    fn project_steps(
        &self,
        mut v: Value<'a>,
        steps: &'a [ProjStep],
        env: &Env<'a>,
    ) -> R<Value<'a>> {
        for s in steps {
            v = match s {
                ProjStep::Field(f) => project(&v, f)?,
                ProjStep::Index(dims) => {
                    let d = self.eval_dims(dims, env)?;
                    index::index_value(&v, &d).map_err(RuntimeError::new)?
                }
            };
        }
        Ok(v)
    }

    // ------------------------------------------------------------------ expressions

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
                self.apply_many(fv, vs)
                    .map_err(|er| er.through_call(e.span))
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
                self.apply_many(f, vec![x])
                    .map_err(|er| er.through_call(e.span))
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

    fn eval_prim(&self, e: &'a Exp, env: &Env<'a>) -> R<Prim> {
        match self.eval(e, env)?.as_prim() {
            Some(p) => Ok(p),
            None => Err(RuntimeError::at(
                "internal error: expected a primitive value",
                e.span,
            )),
        }
    }

    fn eval_bool(&self, e: &'a Exp, env: &Env<'a>) -> R<bool> {
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

    fn literal(&self, lit: &Literal, ty: Option<&Type>) -> Value<'a> {
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
                let data = Data::Flat(runic_data::Buffer::U8(bytes.clone()));
                Value::Array(Rc::new(Array::new(vec![bytes.len()], data)))
            }
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
        self.apply_many(f, vec![a, b])
            .map_err(|er| er.through_call(e.span))
    }

    // ------------------------------------------------------------------ patterns

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
    fn check_ret(&self, v: &Value<'a>, t: &'a TypeExp, env: &Env<'a>, span: Span) -> R<()> {
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

    // ------------------------------------------------------------------ updates

    fn update_at(&self, target: Value<'a>, steps: &[Step<'a>], new: Value<'a>) -> R<Value<'a>> {
        let Some((step, rest)) = steps.split_first() else {
            return Ok(new);
        };
        match step {
            Step::Field(f) => match target {
                Value::Tuple(mut rc) => {
                    let i: usize = f
                        .parse()
                        .map_err(|_| RuntimeError::new("internal error: bad tuple field"))?;
                    let items = Rc::make_mut(&mut rc);
                    let old = std::mem::replace(&mut items[i], Value::unit());
                    items[i] = self.update_at(old, rest, new)?;
                    Ok(Value::Tuple(rc))
                }
                Value::Record(mut rc) => {
                    let items = Rc::make_mut(&mut rc);
                    let slot = items
                        .iter_mut()
                        .find(|(n, _)| n == f)
                        .ok_or_else(|| RuntimeError::new("internal error: missing field"))?;
                    let old = std::mem::replace(&mut slot.1, Value::unit());
                    slot.1 = self.update_at(old, rest, new)?;
                    Ok(Value::Record(rc))
                }
                _ => Err(RuntimeError::new(
                    "internal error: field update of a non-record",
                )),
            },
            Step::Index(dims, span) => {
                let Value::Array(mut rc) = target else {
                    return Err(RuntimeError::at(
                        "internal error: index update of a non-array",
                        *span,
                    ));
                };
                let sel = index::select(&rc.shape, dims).map_err(|m| RuntimeError::at(m, *span))?;
                let arr = Rc::make_mut(&mut rc);
                let new = if rest.is_empty() {
                    new
                } else {
                    let cur = index::extract(arr, &sel);
                    self.update_at(cur, rest, new)?
                };
                index::write(arr, &sel, new).map_err(|m| RuntimeError::at(m, *span))?;
                Ok(Value::Array(rc))
            }
        }
    }

    // ------------------------------------------------------------------ loops

    fn loop_init(&self, p: &'a Pat, env: &Env<'a>) -> R<Value<'a>> {
        match &p.kind {
            PatKind::Var(n) => self.lookup_unqual(n, p.id, p.span, env),
            PatKind::Tuple(ps) => {
                let mut vs = Vec::new();
                for sp in ps {
                    vs.push(self.loop_init(sp, env)?);
                }
                Ok(Value::Tuple(Rc::new(vs)))
            }
            PatKind::Record(fs) => {
                let mut vs = Vec::new();
                for (n, sp) in fs {
                    vs.push((n.as_str(), self.loop_init(sp, env)?));
                }
                Ok(make_record(vs))
            }
            PatKind::Ascribe(inner, _) | PatKind::Attr(_, inner) => self.loop_init(inner, env),
            _ => Ok(Value::unit()),
        }
    }

    fn bind_loop_param(&self, pat: &'a Pat, v: Value<'a>, env: &mut Env<'a>, first: bool) -> R<()> {
        self.bind_irrefutable(pat, v, env, &mut Vec::new())
            .map_err(|mut er| {
                if !first && er.message.starts_with("Value of (desugared) shape") {
                    er.message =
                        "shape of loop result does not match shapes in loop parameter".into();
                }
                er
            })
    }

    fn eval_loop(
        &self,
        pat: &'a Pat,
        init: Option<&'a Exp>,
        form: &'a LoopForm,
        body: &'a Exp,
        env: &Env<'a>,
    ) -> R<Value<'a>> {
        let mut cur = match init {
            Some(x) => self.eval(x, env)?,
            None => self.loop_init(pat, env)?,
        };
        let mut first = true;
        match form {
            LoopForm::For { var, bound, .. } => {
                let n = self.eval_prim(bound, env)?;
                let t = n.ty();
                let count = n.as_int().unwrap_or(0);
                let mut i: i128 = 0;
                while i < count {
                    if i & 0xfff == 0 {
                        self.check_interrupt()?;
                    }
                    let mut env2 = env.clone();
                    self.bind_loop_param(pat, cur, &mut env2, first)?;
                    first = false;
                    env2.bind(var, Value::Prim(Prim::int(t, i)));
                    cur = self.eval(body, &env2)?;
                    i += 1;
                }
            }
            LoopForm::ForIn { pat: xp, array } => {
                let av = self.eval(array, env)?;
                let Value::Array(arr) = av else {
                    return Err(RuntimeError::at(
                        "internal error: for-in over a non-array",
                        array.span,
                    ));
                };
                for k in 0..arr.len() {
                    if k & 0xfff == 0 {
                        self.check_interrupt()?;
                    }
                    let mut env2 = env.clone();
                    self.bind_loop_param(pat, cur, &mut env2, first)?;
                    first = false;
                    self.bind_irrefutable(xp, arr.row(k), &mut env2, &mut Vec::new())?;
                    cur = self.eval(body, &env2)?;
                }
            }
            LoopForm::While(cond) => {
                let mut k: u64 = 0;
                loop {
                    if k & 0xfff == 0 {
                        self.check_interrupt()?;
                    }
                    k += 1;
                    let mut env2 = env.clone();
                    self.bind_loop_param(pat, cur.clone(), &mut env2, first)?;
                    first = false;
                    if !self.eval_bool(cond, &env2)? {
                        break;
                    }
                    // Release the copy held by `cur` so the body may update in place.
                    drop(std::mem::replace(&mut cur, Value::unit()));
                    cur = self.eval(body, &env2)?;
                }
            }
        }
        // A final check of an annotated parameter against the last result.
        if !first {
            let mut env2 = env.clone();
            self.bind_loop_param(pat, cur.clone(), &mut env2, false)?;
        }
        Ok(cur)
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

/// Build a record value; fields named `0..n-1` make a tuple.
pub fn make_record<'a>(mut vs: Vec<(&'a str, Value<'a>)>) -> Value<'a> {
    vs.sort_by(|a, b| runic_types::ty::canonical_field_order(a.0, b.0));
    let is_tuple = !vs.is_empty()
        && vs
            .iter()
            .enumerate()
            .all(|(i, (n, _))| n.parse::<usize>() == Ok(i));
    if is_tuple || vs.is_empty() {
        Value::Tuple(Rc::new(vs.into_iter().map(|(_, v)| v).collect()))
    } else {
        Value::Record(Rc::new(vs))
    }
}

/// `v.f`
pub fn project<'a>(v: &Value<'a>, f: &str) -> R<Value<'a>> {
    match v {
        Value::Tuple(items) => f
            .parse::<usize>()
            .ok()
            .and_then(|i| items.get(i).cloned())
            .ok_or_else(|| RuntimeError::new(format!("internal error: no field {f}"))),
        Value::Record(items) => items
            .iter()
            .find(|(n, _)| *n == f)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| RuntimeError::new(format!("internal error: no field {f}"))),
        _ => Err(RuntimeError::new(format!(
            "internal error: projection of field {f} from a non-record"
        ))),
    }
}

/// A unary operation on a (possibly active) scalar value.
pub fn unop_value<'a>(op: UnOp, v: &Value<'a>) -> R<Value<'a>> {
    match crate::ad::to_s(v) {
        Some(s) => crate::ad::unop(op, &s).map(crate::ad::from_s),
        None => Err(RuntimeError::new(
            "internal error: unary operation on a non-scalar",
        )),
    }
}

/// Conversion of a (possibly active) scalar value.
pub fn convert_value<'a>(v: &Value<'a>, t: PrimType) -> R<Value<'a>> {
    match crate::ad::to_s(v) {
        Some(s) => crate::ad::convert(&s, t).map(crate::ad::from_s),
        None => Err(RuntimeError::new(
            "internal error: conversion of a non-scalar",
        )),
    }
}

/// A built-in binary operator on two values (structural for `==`/`!=`).
pub fn binop_values<'a>(op: BinOp, a: &Value<'a>, b: &Value<'a>) -> R<Value<'a>> {
    match (a, b) {
        (Value::Prim(x), Value::Prim(y)) => match prim::binop(op, *x, *y) {
            Ok(p) => Ok(Value::Prim(p)),
            Err(er) => Err(RuntimeError::new(er.message())),
        },
        (Value::Prim(_) | Value::Active(_), Value::Prim(_) | Value::Active(_)) => {
            match (crate::ad::to_s(a), crate::ad::to_s(b)) {
                (Some(x), Some(y)) => crate::ad::binop(op, &x, &y).map(crate::ad::from_s),
                _ => Err(RuntimeError::new("internal error: operator on non-scalars")),
            }
        }
        _ => match op {
            BinOp::Eq => Ok(Value::bool(values_equal(a, b))),
            BinOp::Neq => Ok(Value::bool(!values_equal(a, b))),
            _ => Err(RuntimeError::new(
                "internal error: operator on non-primitive values",
            )),
        },
    }
}

fn collect_pat_names<'a>(p: &'a Pat, out: &mut HashSet<&'a str>) {
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
fn collect_exp_names<'a>(e: &'a Exp, out: &mut HashSet<&'a str>) {
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
