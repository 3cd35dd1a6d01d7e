//! The lowering context: statement frames, locations, names, and the expression rules.

use crate::val::{Builtin, Env, Fun, Val};
use crate::LowerError;
use runic_ir::builder::{binop_type, unop_type};
use runic_ir::*;
use runic_syntax::ast::{self, Dec, ExpKind, Literal, PatKind, ValBind};
use runic_syntax::{SourceMap, Span};
use runic_types::{Checked, Size};
use std::collections::HashMap;
use std::rc::Rc;

pub type R<T> = Result<T, LowerError>;

pub fn unsupported<T>(what: &str, span: Option<Span>) -> R<T> {
    Err(LowerError {
        message: format!("not yet supported by the ir backend: {what}"),
        span,
    })
}

pub fn loc_of(s: Span) -> Loc {
    Loc {
        file: s.file.0,
        start: s.start,
        end: s.end,
    }
}

pub struct Lower<'a> {
    pub ck: &'a Checked,
    pub sources: Option<&'a SourceMap>,
    pub names: NameSource,
    /// Statements being collected: the innermost body last.
    pub frames: Vec<Vec<Stm>>,
    /// Enclosing call sites, innermost last.
    pub calls: Vec<Loc>,
    pub loc: Option<Loc>,
    globals: HashMap<&'a str, Vec<usize>>,
    /// Top-level constants already lowered in the current function.
    consts: HashMap<usize, Val<'a>>,
    /// Statements computing top-level constants, put before the function body.
    pub prefix: Vec<Stm>,
    /// Position of the declaration being lowered (names resolve to earlier declarations).
    pub pos: usize,
    /// The type of every variable bound so far.
    pub var_types: HashMap<VName, Type>,
    /// Occurrences whose size arguments are being lowered right now: a size term may
    /// mention its own occurrence (`zip xs (iota (length xs))`), and is then unknown here
    /// (read from the arguments) instead of recursing forever.
    sizing: std::collections::HashSet<ast::NodeId>,
}

impl<'a> Lower<'a> {
    pub fn new(ck: &'a Checked, sources: Option<&'a SourceMap>) -> Self {
        let mut globals: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, d) in ck.program.decs.iter().enumerate() {
            if let Dec::Val(vb) = d {
                globals.entry(vb.name.as_str()).or_default().push(i);
            }
        }
        Lower {
            ck,
            sources,
            names: NameSource::default(),
            frames: vec![Vec::new()],
            calls: Vec::new(),
            loc: None,
            globals,
            consts: HashMap::new(),
            prefix: Vec::new(),
            pos: 0,
            var_types: HashMap::new(),
            sizing: std::collections::HashSet::new(),
        }
    }

    pub fn reset_function(&mut self) {
        self.frames = vec![Vec::new()];
        self.consts.clear();
        self.prefix.clear();
        self.calls.clear();
        self.loc = None;
    }

    // ---- emitting statements ----

    pub fn src(&self) -> SrcInfo {
        let mut inl: Vec<Loc> = Vec::new();
        for l in self.calls.iter().rev() {
            if Some(*l) != self.loc && inl.last() != Some(l) {
                inl.push(*l);
            }
        }
        SrcInfo {
            loc: self.loc,
            inlined_from: inl,
            stripmine: None,
        }
    }

    pub fn emit(&mut self, hints: &[&str], exp: Exp, types: Vec<Type>) -> Vec<VName> {
        let pat: Vec<Param> = types
            .into_iter()
            .enumerate()
            .map(|(i, ty)| Param {
                name: self
                    .names
                    .fresh(hints.get(i).or(hints.last()).copied().unwrap_or("t")),
                ty,
            })
            .collect();
        let vs = pat.iter().map(|p| p.name).collect();
        for p in &pat {
            self.var_types.insert(p.name, p.ty.clone());
        }
        let src = self.src();
        self.frames
            .last_mut()
            .expect("a frame")
            .push(Stm { pat, exp, src });
        vs
    }

    pub fn emit1(&mut self, hint: &str, exp: Exp, ty: Type) -> SubExp {
        SubExp::Var(self.emit(&[hint], exp, vec![ty])[0])
    }

    pub fn basic(&mut self, hint: &str, op: BasicOp, ty: Type) -> SubExp {
        self.emit1(hint, Exp::Basic(op), ty)
    }

    pub fn binop(&mut self, op: BinOp, a: SubExp, b: SubExp, t: PrimType) -> SubExp {
        if let (SubExp::Const(x), SubExp::Const(y)) = (&a, &b) {
            if let Ok(r) = runic_prim::binop(op, *x, *y) {
                return SubExp::Const(r);
            }
        }
        self.basic("b", BasicOp::BinOp(op, a, b), Type::Prim(binop_type(op, t)))
    }

    pub fn unop(&mut self, op: UnOp, a: SubExp, t: PrimType) -> SubExp {
        self.basic("u", BasicOp::UnOp(op, a), Type::Prim(unop_type(op, t)))
    }

    pub fn convert(&mut self, to: PrimType, a: SubExp) -> SubExp {
        if let SubExp::Const(x) = &a {
            return SubExp::Const(runic_prim::convert(*x, to));
        }
        if self.var_type_prim(&a) == Some(to) {
            return a;
        }
        self.basic("c", BasicOp::Convert(to, a), Type::Prim(to))
    }

    pub fn assert(&mut self, cond: SubExp, message: &str) {
        self.emit(
            &["ok"],
            Exp::Basic(BasicOp::Assert {
                cond,
                message: message.to_string(),
            }),
            vec![Type::Prim(PrimType::Bool)],
        );
    }

    /// The primitive type of a scalar operand.
    pub fn var_type_prim(&self, s: &SubExp) -> Option<PrimType> {
        match s {
            SubExp::Const(p) => Some(p.ty()),
            SubExp::Var(v) => match self.var_types.get(v) {
                Some(Type::Prim(p)) => Some(*p),
                _ => None,
            },
        }
    }

    /// Collect the statements of a nested body.
    pub fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> R<T>) -> R<(Vec<Stm>, T)> {
        self.frames.push(Vec::new());
        let r = f(self);
        let stms = self.frames.pop().unwrap_or_default();
        Ok((stms, r?))
    }

    pub fn max0(&mut self, x: SubExp) -> SubExp {
        self.binop(BinOp::Max, x, SubExp::i64(0), PrimType::I64)
    }

    // ---- leaves ----

    pub fn prim_leaf(&self, v: &Val<'a>, span: Span) -> R<(SubExp, PrimType)> {
        match v {
            Val::Leaf(s, Type::Prim(p)) => Ok((s.clone(), *p)),
            _ => unsupported("a non-scalar where a scalar was expected", Some(span)),
        }
    }

    pub fn leaves(&self, v: &Val<'a>, span: Span) -> R<Vec<(SubExp, Type)>> {
        v.leaves().map_or_else(
            || {
                unsupported(
                    "a function value inside data (array, loop or branch)",
                    Some(span),
                )
            },
            Ok,
        )
    }

    /// An array leaf as a variable (constants cannot be arrays).
    pub fn arr_var(&self, s: &SubExp, span: Span) -> R<VName> {
        s.as_var()
            .map_or_else(|| unsupported("a constant array operand", Some(span)), Ok)
    }

    // ---- sizes and types ----

    pub fn size(&mut self, s: &'a Size, env: &Env<'a>) -> R<Option<SubExp>> {
        Ok(match s {
            Size::Const(k) => Some(SubExp::i64(*k)),
            Size::Var(n) => self.lookup_size(n, env)?,
            Size::Exp(e) => {
                let v = self.exp(e, env)?;
                let (s, p) = self.prim_leaf(&v, e.span)?;
                Some(self.convert_from(p, PrimType::I64, s))
            }
            Size::Unknown(_) => None,
        })
    }

    fn convert_from(&mut self, from: PrimType, to: PrimType, s: SubExp) -> SubExp {
        if from == to {
            s
        } else {
            self.convert(to, s)
        }
    }

    fn lookup_size(&mut self, n: &str, env: &Env<'a>) -> R<Option<SubExp>> {
        if let Some(v) = env.lookup(n) {
            return Ok(match v {
                Val::Leaf(s, Type::Prim(_)) => Some(s.clone()),
                _ => None,
            });
        }
        if let Some(idx) = self.global(n) {
            if let Some(Dec::Val(vb)) = self.ck.program.decs.get(idx) {
                if vb.params.is_empty() {
                    let v = self.constant(idx, None, env)?;
                    if let Val::Leaf(s, _) = v {
                        return Ok(Some(s));
                    }
                }
            }
        }
        Ok(None)
    }

    /// Leaves' IR types of a source type, with all sizes known (else `None`).
    pub fn ir_type_of(
        &mut self,
        t: &'a runic_types::Type,
        env: &Env<'a>,
        span: Span,
    ) -> R<Val<'a>> {
        self.blank(t, &[], env, span)
    }

    /// A value of type `t` (with outer dimensions `outer`) with unspecified contents: used for
    /// empty arrays and for the payloads of the constructors a sum value does not hold.
    pub fn blank(
        &mut self,
        t: &'a runic_types::Type,
        outer: &[SubExp],
        env: &Env<'a>,
        span: Span,
    ) -> R<Val<'a>> {
        use runic_types::Type as T;
        Ok(match t {
            T::Prim(p) => {
                if outer.is_empty() {
                    Val::Leaf(SubExp::Const(Prim::zero(*p)), Type::Prim(*p))
                } else {
                    let ty = Type::Array {
                        elem: *p,
                        shape: outer.to_vec(),
                    };
                    let s = self.basic("blank", BasicOp::Scratch(*p, outer.to_vec()), ty.clone());
                    Val::Leaf(s, ty)
                }
            }
            T::Array { elem, shape } => {
                let mut dims = outer.to_vec();
                for s in shape {
                    dims.push(self.size(s, env)?.unwrap_or(SubExp::i64(0)));
                }
                self.blank(elem, &dims, env, span)?
            }
            T::Record(fs) => {
                let mut out = Vec::new();
                for (n, ft) in fs {
                    out.push((n.clone(), self.blank(ft, outer, env, span)?));
                }
                Val::Rec(out)
            }
            T::Sum(cs) => {
                let tag = self.blank(&INT8, outer, env, span)?;
                let mut out = Vec::new();
                for (n, ts) in cs {
                    let mut vs = Vec::new();
                    for t in ts {
                        vs.push(self.blank(t, outer, env, span)?);
                    }
                    out.push((n.clone(), vs));
                }
                Val::Sum(Box::new(tag), out)
            }
            T::Arrow { .. } => return unsupported("a function-typed blank value", Some(span)),
            T::Param(n) => {
                let template = match env.lookup(&type_param_key(n)) {
                    Some(v) => v.clone(),
                    None => {
                        return unsupported(
                            &format!("a value of polymorphic type '{n}' built from its type"),
                            Some(span),
                        )
                    }
                };
                let mut out = Vec::new();
                for (_, ty) in self.leaves(&template, span)? {
                    let (elem, inner) = match ty {
                        Type::Prim(p) => (p, Vec::new()),
                        Type::Array { elem, shape } => (elem, shape),
                        Type::Acc { .. } => {
                            return unsupported("a blank accumulator", Some(span));
                        }
                    };
                    let mut dims = outer.to_vec();
                    dims.extend(inner);
                    out.push(if dims.is_empty() {
                        (SubExp::Const(Prim::zero(elem)), Type::Prim(elem))
                    } else {
                        let ty = Type::Array { elem, shape: dims };
                        let s =
                            self.basic("blank", BasicOp::Scratch(elem, ty_shape(&ty)), ty.clone());
                        (s, ty)
                    });
                }
                template.rebuild(&mut out.into_iter())
            }
        })
    }

    pub fn exp_type(&self, e: &'a ast::Exp) -> R<&'a runic_types::Type> {
        self.ck.info.exp_types.get(&e.id).map_or_else(
            || unsupported("an expression without a recorded type", Some(e.span)),
            Ok,
        )
    }

    // ---- names ----

    pub fn global(&self, name: &str) -> Option<usize> {
        self.globals
            .get(name)?
            .iter()
            .rev()
            .find(|&&i| i < self.pos)
            .copied()
    }

    fn valbind(&self, idx: usize) -> Option<&'a ValBind> {
        match self.ck.program.decs.get(idx) {
            Some(Dec::Val(vb)) => Some(vb),
            _ => None,
        }
    }

    /// Evaluate the size arguments recorded at an occurrence.
    pub fn occ_sizes(
        &mut self,
        id: ast::NodeId,
        env: &Env<'a>,
    ) -> R<Vec<(String, Option<SubExp>)>> {
        let list = match self.ck.info.size_args.get(&id) {
            Some(l) => l,
            None => return Ok(Vec::new()),
        };
        if !self.sizing.insert(id) {
            return Ok(list.iter().map(|(n, _)| (n.clone(), None)).collect());
        }
        let mut out = Vec::new();
        for (n, s) in list {
            match self.size(s, env) {
                Ok(v) => out.push((n.clone(), v)),
                Err(e) => {
                    self.sizing.remove(&id);
                    return Err(e);
                }
            }
        }
        self.sizing.remove(&id);
        Ok(out)
    }

    /// A top-level constant, lowered once per function into the prefix.
    pub fn constant(&mut self, idx: usize, occ: Option<ast::NodeId>, env: &Env<'a>) -> R<Val<'a>> {
        let vb = match self.valbind(idx) {
            Some(vb) => vb,
            None => return unsupported("a reference to a non-value declaration", None),
        };
        let sized = vb
            .type_params
            .iter()
            .any(|t| matches!(t, ast::TypeParam::Size(..)));
        if !sized {
            if let Some(v) = self.consts.get(&idx) {
                return Ok(v.clone());
            }
        }
        let mut cenv = Env::default();
        if let (true, Some(id)) = (sized, occ) {
            for (n, s) in self.occ_sizes(id, env)? {
                if let Some(s) = s {
                    cenv = cenv.bind(&n, Val::Leaf(s, Type::Prim(PrimType::I64)));
                }
            }
        }
        let saved_pos = self.pos;
        self.pos = idx;
        let saved_calls = self.calls.clone();
        let saved_loc = self.loc;
        // A constant computed where it is used reports that use as a call site (as the
        // interpreter does when it computes the constant there).
        match (occ, saved_loc) {
            (Some(_), Some(l)) if !sized => self.calls.push(l),
            _ => self.calls.clear(),
        }
        let mut hoisted = false;
        let r = if sized {
            self.exp(&vb.body, &cenv)
        } else {
            // Constants do not depend on locals: one that cannot fail is computed once,
            // before the function body; one that can fail is computed where it is used, as
            // the interpreter computes constants on first use.
            let frames = std::mem::replace(&mut self.frames, vec![Vec::new()]);
            let r = self.exp(&vb.body, &cenv);
            let inner: Vec<Stm> = std::mem::replace(&mut self.frames, frames)
                .into_iter()
                .flatten()
                .collect();
            if crate::fallible::can_fail(&inner) {
                self.frames.last_mut().expect("a frame").extend(inner);
            } else {
                hoisted = true;
                self.prefix.extend(inner);
            }
            r
        };
        self.pos = saved_pos;
        self.calls = saved_calls;
        self.loc = saved_loc;
        let v = r?;
        if hoisted {
            self.consts.insert(idx, v.clone());
        }
        Ok(v)
    }

    fn lookup(
        &mut self,
        q: &'a ast::QualName,
        id: ast::NodeId,
        span: Span,
        env: &Env<'a>,
    ) -> R<Val<'a>> {
        if q.quals.is_empty() {
            if let Some(v) = env.lookup(&q.name) {
                return Ok(v.clone());
            }
            if let Some(idx) = self.global(&q.name) {
                let vb = self.valbind(idx).expect("a value declaration");
                if vb.params.is_empty() {
                    return self.constant(idx, Some(id), env);
                }
                let mut sizes = Vec::new();
                for (n, s) in self.occ_sizes(id, env)? {
                    if let Some(s) = s {
                        sizes.push((n, Val::Leaf(s, Type::Prim(PrimType::I64))));
                    }
                }
                return Ok(Val::Fun(Rc::new(Fun::Closure {
                    params: &vb.params,
                    body: &vb.body,
                    env: Env::default(),
                    args: Vec::new(),
                    type_params: &vb.type_params,
                    sizes,
                    ret: vb.ret.as_ref(),
                    scope: idx,
                })));
            }
            if let Some(arity) = crate::intrinsics::arity(&q.name) {
                let sizes = self.occ_sizes(id, env)?;
                return Ok(Val::Fun(Rc::new(Fun::Builtin {
                    b: Builtin::Named(q.name.clone()),
                    arity,
                    args: Vec::new(),
                    sizes,
                    loc: Some(loc_of(span)),
                })));
            }
        } else if q.quals.len() == 1 {
            if let Some(t) = PrimType::from_name(&q.quals[0]) {
                if let Some(p) = crate::intrinsics::member_const(t, &q.name) {
                    return Ok(Val::Leaf(SubExp::Const(p), Type::Prim(p.ty())));
                }
                if let Some(arity) = crate::intrinsics::member_arity(t, &q.name) {
                    let sizes = self.occ_sizes(id, env)?;
                    return Ok(Val::Fun(Rc::new(Fun::Builtin {
                        b: Builtin::Member(t, q.name.clone()),
                        arity,
                        args: Vec::new(),
                        sizes,
                        loc: Some(loc_of(span)),
                    })));
                }
            }
        }
        unsupported(&format!("the name {q}"), Some(span))
    }

    // ---- expressions ----

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
                Ok(self.range(s, sec, en, kind, p))
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
                    self.unop(UnOp::Neg, s, p)
                } else {
                    self.binop(BinOp::Sub, SubExp::Const(Prim::zero(p)), s, p)
                };
                Ok(Val::Leaf(r, Type::Prim(p)))
            }
            ExpKind::Not(x) => {
                let v = self.exp(x, env)?;
                let (s, p) = self.prim_leaf(&v, x.span)?;
                let r = self.unop(UnOp::Not, s, p);
                Ok(Val::Leaf(r, Type::Prim(p)))
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
                self.check_shape(&v, t, env, e.span)?;
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
                self.assert(c, &format!("Assertion is false: {text}"));
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
                );
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
                let ty = Type::Array {
                    elem: PrimType::U8,
                    shape: vec![SubExp::i64(rows.len() as i64)],
                };
                let s = self.basic(
                    "str",
                    BasicOp::ArrayLit(rows, Type::Prim(PrimType::U8)),
                    ty.clone(),
                );
                return Ok(Val::Leaf(s, ty));
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
        let n = SubExp::i64(es.len() as i64);
        let mut out = Vec::new();
        for k in 0..rows[0].len() {
            let row_ty = rows[0][k].1.clone();
            let col: Vec<SubExp> = rows.iter().map(|r| r[k].0.clone()).collect();
            // The executor checks that rows have the first row's shape (with the
            // interpreter's "Irregular array literal" message).
            let ty = row_ty.array_of(n.clone());
            let s = self.basic("arr", BasicOp::ArrayLit(col, row_ty), ty.clone());
            out.push((s, ty));
        }
        Ok(vals[0].rebuild(&mut out.into_iter()))
    }

    /// The length of a range, computed as the executor will (invalid ranges fail there).
    pub fn range(
        &mut self,
        s: SubExp,
        sec: Option<SubExp>,
        en: SubExp,
        kind: RangeKind,
        p: PrimType,
    ) -> Val<'a> {
        let s64 = self.convert(PrimType::I64, s.clone());
        let e64 = self.convert(PrimType::I64, en.clone());
        let step = match &sec {
            Some(x) => {
                let x64 = self.convert(PrimType::I64, x.clone());
                self.sub64(x64, s64.clone())
            }
            None => SubExp::i64(if kind == RangeKind::DownToExclusive {
                -1
            } else {
                1
            }),
        };
        let is0 = self.binop(BinOp::Eq, step.clone(), SubExp::i64(0), PrimType::I64);
        let is0 = self.convert(PrimType::I64, is0);
        let step = self.binop(BinOp::Add, step, is0, PrimType::I64);
        let diff = self.sub64(e64, s64);
        let num = match kind {
            RangeKind::Inclusive => self.binop(BinOp::Add, diff, step.clone(), PrimType::I64),
            _ => {
                // Exclusive: ceil(diff / step) for the step's sign.
                let sg = self.binop(BinOp::Lt, step.clone(), SubExp::i64(0), PrimType::I64);
                let sg = self.convert(PrimType::I64, sg);
                let two = self.binop(BinOp::Mul, sg, SubExp::i64(2), PrimType::I64);
                let sign = self.sub64(SubExp::i64(1), two);
                let adj = self.sub64(step.clone(), sign);
                self.binop(BinOp::Add, diff, adj, PrimType::I64)
            }
        };
        let q = self.binop(BinOp::Quot, num, step, PrimType::I64);
        let n = self.max0(q);
        let ty = Type::Array {
            elem: p,
            shape: vec![n],
        };
        let r = self.basic(
            "range",
            BasicOp::Range {
                start: s,
                second: sec,
                end: en,
                kind,
                elem: p,
            },
            ty.clone(),
        );
        Val::Leaf(r, ty)
    }

    pub fn sub64(&mut self, a: SubExp, b: SubExp) -> SubExp {
        self.binop(BinOp::Sub, a, b, PrimType::I64)
    }

    fn dim_indices(&mut self, dims: &'a [ast::DimIndex], env: &Env<'a>) -> R<Vec<DimIndex>> {
        let mut out = Vec::new();
        for d in dims {
            out.push(match d {
                ast::DimIndex::Index(x) => {
                    let v = self.exp(x, env)?;
                    DimIndex::Fix(self.prim_leaf(&v, x.span)?.0)
                }
                ast::DimIndex::Slice { start, end, stride } => {
                    let part = |l: &mut Self, x: &'a Option<ast::Exp>| -> R<Option<SubExp>> {
                        match x {
                            Some(x) => {
                                let v = l.exp(x, env)?;
                                let (s, p) = l.prim_leaf(&v, x.span)?;
                                Ok(Some(l.convert_from(p, PrimType::I64, s)))
                            }
                            None => Ok(None),
                        }
                    };
                    DimIndex::Slice {
                        start: part(self, start)?,
                        end: part(self, end)?,
                        stride: part(self, stride)?,
                    }
                }
            });
        }
        Ok(out)
    }

    /// The type after indexing, computing slice lengths.
    fn index_type(&mut self, t: &Type, idx: &[DimIndex]) -> Type {
        let (elem, shape) = match t {
            Type::Array { elem, shape } => (*elem, shape.clone()),
            t => return t.clone(),
        };
        let mut out = Vec::new();
        for (k, d) in shape.iter().enumerate() {
            match idx.get(k) {
                None => out.push(d.clone()),
                Some(DimIndex::Fix(_)) => {}
                Some(DimIndex::Slice { start, end, stride }) => {
                    out.push(self.slice_len(d.clone(), start, end, stride));
                }
            }
        }
        if out.is_empty() {
            Type::Prim(elem)
        } else {
            Type::Array { elem, shape: out }
        }
    }

    pub fn slice_len(
        &mut self,
        n: SubExp,
        start: &Option<SubExp>,
        end: &Option<SubExp>,
        stride: &Option<SubExp>,
    ) -> SubExp {
        match (start, end, stride) {
            (None, None, None) => n,
            (s, e, None) => {
                let s = s.clone().unwrap_or(SubExp::i64(0));
                let e = e.clone().unwrap_or(n);
                let d = self.sub64(e, s);
                self.max0(d)
            }
            (s, e, Some(st)) => {
                // Defaults depend on the stride's sign: 0..n forward, n-1..-1 backward.
                let neg = self.binop(BinOp::Lt, st.clone(), SubExp::i64(0), PrimType::I64);
                let negi = self.convert(PrimType::I64, neg);
                let s = match s {
                    Some(s) => s.clone(),
                    None => {
                        let last = self.sub64(n.clone(), SubExp::i64(1));
                        self.binop(BinOp::Mul, negi.clone(), last, PrimType::I64)
                    }
                };
                let e = match e {
                    Some(e) => e.clone(),
                    None => {
                        // forward: n; backward: -1
                        let np1 = self.binop(BinOp::Add, n.clone(), SubExp::i64(1), PrimType::I64);
                        let t = self.binop(BinOp::Mul, negi.clone(), np1, PrimType::I64);
                        self.sub64(n, t)
                    }
                };
                let two = self.binop(BinOp::Mul, negi, SubExp::i64(2), PrimType::I64);
                let sign = self.sub64(SubExp::i64(1), two);
                let is0 = self.binop(BinOp::Eq, st.clone(), SubExp::i64(0), PrimType::I64);
                let is0 = self.convert(PrimType::I64, is0);
                let st = self.binop(BinOp::Add, st.clone(), is0, PrimType::I64);
                let diff = self.sub64(e, s);
                let adj = self.sub64(st.clone(), sign);
                let num = self.binop(BinOp::Add, diff, adj, PrimType::I64);
                let q = self.binop(BinOp::Quot, num, st, PrimType::I64);
                self.max0(q)
            }
        }
    }

    pub fn index_val(&mut self, av: &Val<'a>, idx: &[DimIndex], span: Span) -> R<Val<'a>> {
        let leaves = self.leaves(av, span)?;
        let mut out = Vec::new();
        for (s, t) in leaves {
            let v = self.arr_var(&s, span)?;
            let rt = self.index_type(&t, idx);
            let r = self.basic("idx", BasicOp::Index(v, idx.to_vec()), rt.clone());
            out.push((r, rt));
        }
        Ok(av.rebuild(&mut out.into_iter()))
    }

    fn binop_exp(
        &mut self,
        e: &'a ast::Exp,
        op: &'a ast::BinOpName,
        lhs: &'a ast::Exp,
        rhs: &'a ast::Exp,
        env: &Env<'a>,
    ) -> R<Val<'a>> {
        let builtin = self.builtin_op(op, env);
        if let Some(bop @ (BinOp::LogAnd | BinOp::LogOr)) = builtin {
            let l = self.exp(lhs, env)?;
            let (l, _) = self.prim_leaf(&l, lhs.span)?;
            let r = if bop == BinOp::LogAnd {
                self.if_val(
                    l,
                    e.span,
                    |lw| lw.exp(rhs, env),
                    |_| {
                        Ok(Val::Leaf(
                            SubExp::Const(Prim::Bool(false)),
                            Type::Prim(PrimType::Bool),
                        ))
                    },
                )?
            } else {
                self.if_val(
                    l,
                    e.span,
                    |_| {
                        Ok(Val::Leaf(
                            SubExp::Const(Prim::Bool(true)),
                            Type::Prim(PrimType::Bool),
                        ))
                    },
                    |lw| lw.exp(rhs, env),
                )?
            };
            return Ok(r);
        }
        let l = self.exp(lhs, env)?;
        let r = self.exp(rhs, env)?;
        self.loc = Some(loc_of(e.span));
        if let Some(bop) = builtin {
            return self.prim_binop(bop, &l, &r, e.span);
        }
        let f = self.op_value(op, e.id, env)?;
        self.calls.push(loc_of(e.span));
        let res = self.apply_many(f, vec![l, r], e.span);
        self.calls.pop();
        res
    }

    /// The built-in operator an operator name denotes, unless the user rebound it.
    fn builtin_op(&self, op: &ast::BinOpName, env: &Env<'a>) -> Option<BinOp> {
        if op.backtick {
            return None;
        }
        let q = &op.name;
        if q.quals.is_empty() {
            if env.lookup(&q.name).is_some() || self.global(&q.name).is_some() {
                return None;
            }
            BinOp::from_symbol(&q.name)
        } else if q.quals.len() == 1 && PrimType::from_name(&q.quals[0]).is_some() {
            BinOp::from_symbol(&q.name)
        } else {
            None
        }
    }

    fn op_value(&mut self, op: &'a ast::BinOpName, id: ast::NodeId, env: &Env<'a>) -> R<Val<'a>> {
        self.lookup(&op.name, id, op.span, env)
    }

    /// A built-in binary operator on values (scalars, or records of them for `==`/`!=`).
    pub fn prim_binop(&mut self, op: BinOp, l: &Val<'a>, r: &Val<'a>, span: Span) -> R<Val<'a>> {
        match (l, r) {
            (Val::Leaf(a, Type::Prim(p)), Val::Leaf(b, Type::Prim(_))) => {
                let s = self.binop(op, a.clone(), b.clone(), *p);
                Ok(Val::Leaf(s, Type::Prim(binop_type(op, *p))))
            }
            _ if matches!(op, BinOp::Eq | BinOp::Neq) => {
                let ls = self.leaves(l, span)?;
                let rs = self.leaves(r, span)?;
                let mut acc = SubExp::Const(Prim::Bool(true));
                for ((a, ta), (b, tb)) in ls.into_iter().zip(rs) {
                    let eq = match ta {
                        Type::Prim(p) => self.binop(BinOp::Eq, a, b, p),
                        _ => self.array_eq(a, &ta, b, &tb, span)?,
                    };
                    acc = self.binop(BinOp::LogAnd, acc, eq, PrimType::Bool);
                }
                if op == BinOp::Neq {
                    acc = self.unop(UnOp::Not, acc, PrimType::Bool);
                }
                Ok(Val::Leaf(acc, Type::Prim(PrimType::Bool)))
            }
            _ => unsupported("an operator on non-scalar values", Some(span)),
        }
    }

    /// Equality of two arrays of the same rank: equal shapes and equal elements.
    fn array_eq(&mut self, a: SubExp, ta: &Type, b: SubExp, tb: &Type, span: Span) -> R<SubExp> {
        let (elem, sa, sb) = match (ta, tb) {
            (Type::Array { elem, shape: sa }, Type::Array { shape: sb, .. }) => {
                (*elem, sa.clone(), sb.clone())
            }
            _ => return unsupported("equality of an array and a non-array", Some(span)),
        };
        let (av, bv) = (self.arr_var(&a, span)?, self.arr_var(&b, span)?);
        let mut same = SubExp::Const(Prim::Bool(true));
        let mut total = SubExp::i64(1);
        for (x, y) in sa.iter().zip(&sb) {
            let e = self.binop(BinOp::Eq, x.clone(), y.clone(), PrimType::I64);
            same = self.binop(BinOp::LogAnd, same, e, PrimType::Bool);
            total = self.binop(BinOp::Mul, total, x.clone(), PrimType::I64);
        }
        let flat_ty = Type::Array {
            elem,
            shape: vec![total.clone()],
        };
        let r = self.if_val(
            same,
            span,
            |l| {
                // Both have `total` elements here: compare them row-major.
                let fa = l.basic(
                    "fa",
                    BasicOp::Reshape {
                        arr: av,
                        shape: vec![total.clone()],
                    },
                    flat_ty.clone(),
                );
                let fb = l.basic(
                    "fb",
                    BasicOp::Reshape {
                        arr: bv,
                        shape: vec![total.clone()],
                    },
                    flat_ty.clone(),
                );
                let pa = Param {
                    name: l.names.fresh("x"),
                    ty: Type::Prim(elem),
                };
                let pb = Param {
                    name: l.names.fresh("y"),
                    ty: Type::Prim(elem),
                };
                l.var_types.insert(pa.name, pa.ty.clone());
                l.var_types.insert(pb.name, pb.ty.clone());
                let (x, y) = (SubExp::Var(pa.name), SubExp::Var(pb.name));
                let (stms, e) = l.nested(|l| Ok(l.binop(BinOp::Eq, x, y, elem)))?;
                let lam = Lambda {
                    id: runic_ir::LamId::fresh(),
                    params: vec![pa, pb],
                    body: Body {
                        stms,
                        result: vec![e],
                    },
                    ret: vec![Type::Prim(PrimType::Bool)],
                };
                let and =
                    runic_ir::builder::binop_lambda(&mut l.names, BinOp::LogAnd, PrimType::Bool);
                for p in &and.params {
                    l.var_types.insert(p.name, p.ty.clone());
                }
                let arrs = vec![l.arr_var(&fa, span)?, l.arr_var(&fb, span)?];
                let r = l.emit1(
                    "aeq",
                    Exp::Soac(Soac::Reduce {
                        w: total.clone(),
                        arrs,
                        pre: Some(lam),
                        lam: and,
                        neutral: vec![SubExp::Const(Prim::Bool(true))],
                        commutative: true,
                    }),
                    Type::Prim(PrimType::Bool),
                );
                Ok(Val::Leaf(r, Type::Prim(PrimType::Bool)))
            },
            |_| {
                Ok(Val::Leaf(
                    SubExp::Const(Prim::Bool(false)),
                    Type::Prim(PrimType::Bool),
                ))
            },
        )?;
        Ok(self.prim_leaf(&r, span)?.0)
    }

    // ---- application ----

    pub fn apply_many(&mut self, f: Val<'a>, args: Vec<Val<'a>>, span: Span) -> R<Val<'a>> {
        let mut f = f;
        let mut it = args.into_iter().peekable();
        while let Some(arg) = it.next() {
            let fun = match &f {
                Val::Fun(rc) => rc.clone(),
                _ => return unsupported("application of a non-function", Some(span)),
            };
            f = match &*fun {
                Fun::Closure {
                    params,
                    body,
                    env,
                    args: have,
                    type_params,
                    sizes,
                    ret,
                    scope,
                } => {
                    let mut all = have.clone();
                    all.push(arg);
                    while all.len() < params.len() {
                        match it.next() {
                            Some(v) => all.push(v),
                            None => break,
                        }
                    }
                    if all.len() < params.len() {
                        Val::Fun(Rc::new(Fun::Closure {
                            params,
                            body,
                            env: env.clone(),
                            args: all,
                            type_params,
                            sizes: sizes.clone(),
                            ret: *ret,
                            scope: *scope,
                        }))
                    } else {
                        let mut cenv = env.clone();
                        for (n, v) in sizes {
                            cenv = cenv.bind(n, v.clone());
                        }
                        for (p, a) in params.iter().zip(all) {
                            cenv = self.bind_pat(p, a, &cenv)?;
                        }
                        let outer_scope = std::mem::replace(&mut self.pos, *scope);
                        let v = self.exp(body, &cenv);
                        self.pos = outer_scope;
                        let v = v?;
                        if let Some(rt) = ret {
                            self.loc = Some(loc_of(body.span));
                            self.check_shape(&v, rt, &cenv, body.span)?;
                        }
                        v
                    }
                }
                Fun::Builtin {
                    b,
                    arity,
                    args: have,
                    sizes,
                    loc,
                } => {
                    let mut all = have.clone();
                    all.push(arg);
                    while all.len() < *arity {
                        match it.next() {
                            Some(v) => all.push(v),
                            None => break,
                        }
                    }
                    if all.len() < *arity {
                        Val::Fun(Rc::new(Fun::Builtin {
                            b: b.clone(),
                            arity: *arity,
                            args: all,
                            sizes: sizes.clone(),
                            loc: *loc,
                        }))
                    } else {
                        let saved = self.loc;
                        // Errors inside an intrinsic are reported at the call.
                        self.loc = self.calls.last().copied().or(self.loc);
                        let r = crate::intrinsics::call(self, b, all, sizes, span);
                        self.loc = saved;
                        r?
                    }
                }
                Fun::RightSection { op, rhs } => {
                    self.apply_many(op.clone(), vec![arg, rhs.clone()], span)?
                }
                Fun::Proj { steps, env } => {
                    let mut v = arg;
                    for s in steps.iter() {
                        v = match s {
                            ast::ProjStep::Field(n) => match v.field(n) {
                                Some(x) => x.clone(),
                                None => return unsupported("projection section", Some(span)),
                            },
                            ast::ProjStep::Index(dims) => {
                                let idx = self.dim_indices(dims, env)?;
                                self.index_val(&v, &idx, span)?
                            }
                        };
                    }
                    v
                }
            };
        }
        Ok(f)
    }

    // ---- patterns ----

    /// Bind a pattern to a value; sizes named in the pattern's type that are not yet in
    /// scope are bound from the value's shape.
    pub fn bind_pat(&mut self, p: &'a ast::Pat, v: Val<'a>, env: &Env<'a>) -> R<Env<'a>> {
        let mut env = env.clone();
        if let Some(t) = self.ck.info.pat_types.get(&p.id) {
            env = self.bind_sizes(t, &v, env);
        }
        match &p.kind {
            PatKind::Var(n) => Ok(env.bind(n, v)),
            PatKind::Wildcard | PatKind::Literal { .. } => Ok(env),
            PatKind::Tuple(ps) => {
                for (i, q) in ps.iter().enumerate() {
                    let fv = match v.field(&i.to_string()) {
                        Some(f) => f.clone(),
                        None => return unsupported("tuple pattern", Some(p.span)),
                    };
                    env = self.bind_pat(q, fv, &env)?;
                }
                Ok(env)
            }
            PatKind::Record(fs) => {
                for (n, q) in fs {
                    let fv = match v.field(n) {
                        Some(f) => f.clone(),
                        None => return unsupported("record pattern", Some(p.span)),
                    };
                    env = self.bind_pat(q, fv, &env)?;
                }
                Ok(env)
            }
            PatKind::Ascribe(q, _) | PatKind::Attr(_, q) => self.bind_pat(q, v, &env),
            PatKind::Constr(c, ps) => {
                let payload = match &v {
                    Val::Sum(_, cs) => cs.iter().find(|(n, _)| n == c).map(|(_, vs)| vs.clone()),
                    _ => None,
                };
                let payload = match payload {
                    Some(p) => p,
                    None => return unsupported("constructor pattern", Some(p.span)),
                };
                for (q, x) in ps.iter().zip(payload) {
                    env = self.bind_pat(q, x, &env)?;
                }
                Ok(env)
            }
        }
    }

    fn bind_sizes(&self, t: &runic_types::Type, v: &Val<'a>, mut env: Env<'a>) -> Env<'a> {
        use runic_types::Type as T;
        match (t, v) {
            (T::Param(n), _) => bind_type_param(env, n, v, 0),
            (T::Array { elem, shape }, _) => {
                if let T::Param(n) = &**elem {
                    env = bind_type_param(env, n, v, shape.len());
                }
                if let Some((_, Type::Array { shape: dims, .. })) = v.first_leaf() {
                    for (s, d) in shape.iter().zip(&dims) {
                        if let Size::Var(n) = s {
                            if env.lookup(n).is_none() && self.global(n).is_none() {
                                env = env.bind(n, Val::Leaf(d.clone(), Type::Prim(PrimType::I64)));
                            }
                        }
                    }
                }
                if let (T::Record(fs), Val::Rec(_)) = (&**elem, v) {
                    for (n, ft) in fs {
                        if let Some(fv) = v.field(n) {
                            let at = ft.clone().array_of(shape.clone());
                            env = self.bind_sizes_owned(at, fv, env);
                        }
                    }
                }
                env
            }
            (T::Record(fs), Val::Rec(_)) => {
                for (n, ft) in fs {
                    if let Some(fv) = v.field(n) {
                        env = self.bind_sizes(ft, fv, env);
                    }
                }
                env
            }
            _ => env,
        }
    }

    fn bind_sizes_owned(&self, t: runic_types::Type, v: &Val<'a>, env: Env<'a>) -> Env<'a> {
        self.bind_sizes(&t, v, env)
    }

    /// The condition under which `v` matches pattern `p`.
    fn pat_cond(&mut self, p: &'a ast::Pat, v: &Val<'a>) -> R<SubExp> {
        let t = SubExp::Const(Prim::Bool(true));
        Ok(match &p.kind {
            PatKind::Var(_) | PatKind::Wildcard => t,
            PatKind::Ascribe(q, _) | PatKind::Attr(_, q) => self.pat_cond(q, v)?,
            PatKind::Tuple(ps) => {
                let mut acc = t;
                for (i, q) in ps.iter().enumerate() {
                    if let Some(f) = v.field(&i.to_string()) {
                        let c = self.pat_cond(q, &f.clone())?;
                        acc = self.binop(BinOp::LogAnd, acc, c, PrimType::Bool);
                    }
                }
                acc
            }
            PatKind::Record(fs) => {
                let mut acc = t;
                for (n, q) in fs {
                    if let Some(f) = v.field(n) {
                        let c = self.pat_cond(q, &f.clone())?;
                        acc = self.binop(BinOp::LogAnd, acc, c, PrimType::Bool);
                    }
                }
                acc
            }
            PatKind::Literal { lit, negated } => {
                let (s, pt) = self.prim_leaf(v, p.span)?;
                let mut c = match lit {
                    Literal::Int { value, .. } => {
                        if pt.is_float() {
                            Prim::float(pt, *value as f64)
                        } else {
                            Prim::int(pt, *value as i128)
                        }
                    }
                    Literal::Float { text, .. } => runic_prim::float_literal(text, pt),
                    Literal::Bool(b) => Prim::Bool(*b),
                    Literal::Char(ch) => Prim::int(pt, *ch as i128),
                    Literal::String(_) => return unsupported("string patterns", Some(p.span)),
                };
                if *negated {
                    c = runic_prim::binop(BinOp::Sub, Prim::zero(pt), c).unwrap_or(c);
                    if pt.is_float() {
                        c = runic_prim::unop(UnOp::Neg, runic_prim::float_literal(&c.plain(), pt));
                        c = runic_prim::unop(UnOp::Neg, c);
                    }
                }
                self.binop(BinOp::Eq, s, SubExp::Const(c), pt)
            }
            PatKind::Constr(c, ps) => {
                let (tag, cs) = match v {
                    Val::Sum(tag, cs) => (tag, cs),
                    _ => return unsupported("constructor pattern on a non-sum", Some(p.span)),
                };
                let k = cs.iter().position(|(n, _)| n == c).unwrap_or(0);
                let (ts, _) = self.prim_leaf(tag, p.span)?;
                let mut acc = self.binop(
                    BinOp::Eq,
                    ts,
                    SubExp::Const(Prim::I8(k as i8)),
                    PrimType::I8,
                );
                let payload = cs[k].1.clone();
                for (q, x) in ps.iter().zip(payload) {
                    let c = self.pat_cond(q, &x)?;
                    acc = self.binop(BinOp::LogAnd, acc, c, PrimType::Bool);
                }
                acc
            }
        })
    }

    fn match_cases(
        &mut self,
        v: &Val<'a>,
        cases: &'a [ast::MatchCase],
        env: &Env<'a>,
        span: Span,
    ) -> R<Val<'a>> {
        let (first, rest) = match cases.split_first() {
            Some(x) => x,
            None => return unsupported("an empty match", Some(span)),
        };
        if rest.is_empty() {
            let env2 = self.bind_pat(&first.pat, v.clone(), env)?;
            return self.exp(&first.body, &env2);
        }
        let c = self.pat_cond(&first.pat, v)?;
        self.if_val(
            c,
            span,
            |l| {
                let env2 = l.bind_pat(&first.pat, v.clone(), env)?;
                l.exp(&first.body, &env2)
            },
            |l| l.match_cases(v, rest, env, span),
        )
    }

    pub fn constr(
        &mut self,
        t: &'a runic_types::Type,
        name: &str,
        vs: Vec<Val<'a>>,
        env: &Env<'a>,
        span: Span,
    ) -> R<Val<'a>> {
        let cs = match t {
            runic_types::Type::Sum(cs) => cs,
            _ => return unsupported("a constructor of a non-sum type", Some(span)),
        };
        let k = cs.iter().position(|(n, _)| n == name).unwrap_or(0);
        let mut out = Vec::new();
        let mut vs = Some(vs);
        for (i, (n, ts)) in cs.iter().enumerate() {
            if i == k {
                out.push((n.clone(), vs.take().unwrap_or_default()));
            } else {
                let mut b = Vec::new();
                for t in ts {
                    b.push(self.blank(t, &[], env, span)?);
                }
                out.push((n.clone(), b));
            }
        }
        let tag = Val::Leaf(SubExp::Const(Prim::I8(k as i8)), Type::Prim(PrimType::I8));
        Ok(Val::Sum(Box::new(tag), out))
    }

    // ---- control flow ----

    /// `if c then … else …` on values: branch results are flattened; array sizes that
    /// differ between the branches (or are computed inside them) become extra results.
    pub fn if_val(
        &mut self,
        c: SubExp,
        span: Span,
        then_f: impl FnOnce(&mut Self) -> R<Val<'a>>,
        else_f: impl FnOnce(&mut Self) -> R<Val<'a>>,
    ) -> R<Val<'a>> {
        if let SubExp::Const(Prim::Bool(b)) = c {
            return if b { then_f(self) } else { else_f(self) };
        }
        let loc = self.loc;
        let (ts, tv) = self.nested(then_f)?;
        self.loc = loc;
        let (es, ev) = self.nested(else_f)?;
        self.loc = loc;
        let tl = self.leaves(&tv, span)?;
        let el = self.leaves(&ev, span)?;
        if tl.len() != el.len() {
            return unsupported("branches of different structure", Some(span));
        }
        let bound_t = bound_in(&ts);
        let bound_e = bound_in(&es);
        // Existential sizes: one extra i64 result per differing or local dimension.
        let mut ext_t = Vec::new();
        let mut ext_e = Vec::new();
        let mut ret = Vec::new();
        let mut ext_slots: Vec<Vec<Option<usize>>> = Vec::new();
        for ((_, tt), (_, et)) in tl.iter().zip(&el) {
            let mut slots = Vec::new();
            if let (Type::Array { shape: s1, .. }, Type::Array { shape: s2, .. }) = (tt, et) {
                for (d1, d2) in s1.iter().zip(s2) {
                    let local = |d: &SubExp, b: &std::collections::HashSet<VName>| {
                        d.as_var().is_some_and(|v| b.contains(&v))
                    };
                    if d1 != d2 || local(d1, &bound_t) || local(d2, &bound_e) {
                        slots.push(Some(ext_t.len()));
                        ext_t.push(d1.clone());
                        ext_e.push(d2.clone());
                    } else {
                        slots.push(None);
                    }
                }
            }
            ext_slots.push(slots);
        }
        let nexts = ext_t.len();
        let ext_names: Vec<VName> = (0..nexts).map(|_| self.names.fresh("d")).collect();
        for _ in 0..nexts {
            ret.push(Type::Prim(PrimType::I64));
        }
        for ((_, tt), slots) in tl.iter().zip(&ext_slots) {
            ret.push(match tt {
                Type::Array { elem, shape } => Type::Array {
                    elem: *elem,
                    shape: shape
                        .iter()
                        .zip(slots)
                        .map(|(d, s)| match s {
                            Some(k) => SubExp::Var(ext_names[*k]),
                            None => d.clone(),
                        })
                        .collect(),
                },
                t => t.clone(),
            });
        }
        let mut tres = ext_t;
        tres.extend(tl.iter().map(|(s, _)| s.clone()));
        let mut eres = ext_e;
        eres.extend(el.iter().map(|(s, _)| s.clone()));
        // The branch result types as the If sees them (sizes named by the pattern).
        let exp = Exp::If {
            cond: c,
            then_body: Body {
                stms: ts,
                result: tres,
            },
            else_body: Body {
                stms: es,
                result: eres,
            },
            ret: ret.clone(),
        };
        let mut pat: Vec<Param> = ext_names
            .iter()
            .map(|v| Param {
                name: *v,
                ty: Type::Prim(PrimType::I64),
            })
            .collect();
        for t in ret.iter().skip(nexts) {
            pat.push(Param {
                name: self.names.fresh("r"),
                ty: t.clone(),
            });
        }
        let outs: Vec<(SubExp, Type)> = pat
            .iter()
            .skip(nexts)
            .map(|p| (SubExp::Var(p.name), p.ty.clone()))
            .collect();
        for p in &pat {
            self.var_types.insert(p.name, p.ty.clone());
        }
        let src = self.src();
        self.frames
            .last_mut()
            .expect("a frame")
            .push(Stm { pat, exp, src });
        Ok(tv.rebuild(&mut outs.into_iter()))
    }

    fn update_steps(
        &mut self,
        target: Val<'a>,
        steps: &'a [ast::UpdateStep],
        nv: Val<'a>,
        env: &Env<'a>,
        span: Span,
    ) -> R<Val<'a>> {
        let (first, rest) = match steps.split_first() {
            Some(x) => x,
            None => return Ok(nv),
        };
        match first {
            ast::UpdateStep::Field(n, _) => {
                let fs = match &target {
                    Val::Rec(fs) => fs.clone(),
                    _ => return unsupported("field update of a non-record", Some(span)),
                };
                let mut out = Vec::new();
                for (fname, fv) in fs {
                    if &fname == n {
                        let u = self.update_steps(fv, rest, nv.clone(), env, span)?;
                        out.push((fname, u));
                    } else {
                        out.push((fname, fv));
                    }
                }
                Ok(Val::Rec(out))
            }
            ast::UpdateStep::Index(dims, step_span) => {
                let idx = self.dim_indices(dims, env)?;
                let nv = if rest.is_empty() {
                    nv
                } else {
                    let cur = self.index_val(&target, &idx, span)?;
                    self.update_steps(cur, rest, nv, env, span)?
                };
                // Bounds and shape errors point at the index, as in the interpreter.
                self.loc = Some(loc_of(*step_span));
                let tl = self.leaves(&target, span)?;
                let vl = self.leaves(&nv, span)?;
                let mut out = Vec::new();
                for ((s, t), (v, _)) in tl.into_iter().zip(vl) {
                    // `Update` consumes its array while the source keeps the old value
                    // alive: update a copy (runic-opt drops it when the old value is dead).
                    let a = self.arr_var(&s, span)?;
                    let c = self.basic("cp", BasicOp::Copy(a), t.clone());
                    let c = self.arr_var(&c, span)?;
                    let r = self.basic("upd", BasicOp::Update(c, idx.clone(), v), t.clone());
                    out.push((r, t));
                }
                Ok(target.rebuild(&mut out.into_iter()))
            }
        }
    }

    /// A check that an array value has the shape of a type written in the source.
    fn check_shape(
        &mut self,
        v: &Val<'a>,
        t: &'a ast::TypeExp,
        env: &Env<'a>,
        span: Span,
    ) -> R<()> {
        let (mut dims, mut cur) = (Vec::new(), t);
        loop {
            match cur {
                ast::TypeExp::Array(s, inner, _) => {
                    dims.push(s);
                    cur = inner;
                }
                ast::TypeExp::Unique(inner, _) => cur = inner,
                _ => break,
            }
        }
        if dims.is_empty() {
            return Ok(());
        }
        let (s, ty) = match v {
            Val::Leaf(s, ty @ Type::Array { .. }) => (s.clone(), ty.clone()),
            _ => return Ok(()),
        };
        let have = match &ty {
            Type::Array { shape, .. } => shape.clone(),
            _ => return Ok(()),
        };
        let mut want = Vec::new();
        let mut text = String::new();
        for (k, d) in dims.iter().enumerate() {
            match d {
                ast::SizeExp::Anon(_) => {
                    want.push(have.get(k).cloned().unwrap_or(SubExp::i64(0)));
                    text.push_str("[]");
                }
                ast::SizeExp::Exp(x) => {
                    let sv = self.exp(x, env)?;
                    let (sz, p) = self.prim_leaf(&sv, x.span)?;
                    let sz = self.convert_from(p, PrimType::I64, sz);
                    // The interpreter prints the evaluated size.
                    text.push_str(&format!("[{{{k}}}]"));
                    want.push(sz);
                }
            }
        }
        if want.iter().zip(&have).all(|(a, b)| a == b) {
            return Ok(());
        }
        text.push_str(&runic_syntax::pretty::print_type(cur));
        let arr = self.arr_var(&s, span)?;
        self.emit(
            &["ok"],
            Exp::Basic(BasicOp::ShapeCheck {
                arr,
                shape: want,
                type_text: text,
            }),
            vec![Type::Prim(PrimType::Bool)],
        );
        Ok(())
    }

    fn loop_exp(
        &mut self,
        e: &'a ast::Exp,
        pat: &'a ast::Pat,
        init: Option<&'a ast::Exp>,
        form: &'a ast::LoopForm,
        body: &'a ast::Exp,
        env: &Env<'a>,
    ) -> R<Val<'a>> {
        let initv = match init {
            Some(x) => self.exp(x, env)?,
            None => match &pat.kind {
                PatKind::Var(n) => match env.lookup(n) {
                    Some(v) => v.clone(),
                    None => return unsupported("loop without initial value", Some(e.span)),
                },
                _ => return unsupported("loop without initial value", Some(e.span)),
            },
        };
        let init_leaves = self.leaves(&initv, e.span)?;
        // First try with the initial shapes; if the body changes them, carry sizes as
        // loop parameters.
        let names_before = self.names.clone();
        match self.loop_attempt(e, pat, &initv, &init_leaves, form, body, env, false)? {
            Some(v) => Ok(v),
            None => {
                let _ = names_before;
                match self.loop_attempt(e, pat, &initv, &init_leaves, form, body, env, true)? {
                    Some(v) => Ok(v),
                    None => unsupported("a loop whose parameters change rank", Some(e.span)),
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn loop_attempt(
        &mut self,
        e: &'a ast::Exp,
        pat: &'a ast::Pat,
        initv: &Val<'a>,
        init_leaves: &[(SubExp, Type)],
        form: &'a ast::LoopForm,
        body: &'a ast::Exp,
        env: &Env<'a>,
        generalise: bool,
    ) -> R<Option<Val<'a>>> {
        let mut params: Vec<(Param, SubExp)> = Vec::new();
        // Size parameters (generalised loops only).
        let mut size_of: Vec<Vec<Option<usize>>> = Vec::new();
        if generalise {
            for (_, t) in init_leaves {
                let mut slots = Vec::new();
                if let Type::Array { shape, .. } = t {
                    for d in shape {
                        if matches!(d, SubExp::Const(_)) {
                            slots.push(None);
                        } else {
                            slots.push(Some(params.len()));
                            params.push((
                                Param {
                                    name: self.names.fresh("sz"),
                                    ty: Type::Prim(PrimType::I64),
                                },
                                d.clone(),
                            ));
                        }
                    }
                }
                size_of.push(slots);
            }
        }
        let nsizes = params.len();
        let mut leaf_params = Vec::new();
        for (k, (s, t)) in init_leaves.iter().enumerate() {
            let ty = match (t, size_of.get(k)) {
                (Type::Array { elem, shape }, Some(slots)) => Type::Array {
                    elem: *elem,
                    shape: shape
                        .iter()
                        .zip(slots)
                        .map(|(d, sl)| match sl {
                            Some(i) => SubExp::Var(params[*i].0.name),
                            None => d.clone(),
                        })
                        .collect(),
                },
                _ => t.clone(),
            };
            let p = Param {
                name: self.names.fresh("acc"),
                ty,
            };
            self.var_types.insert(p.name, p.ty.clone());
            leaf_params.push((SubExp::Var(p.name), p.ty.clone()));
            params.push((p, s.clone()));
        }
        let pval = initv.rebuild(&mut leaf_params.clone().into_iter());
        let loc = self.loc;
        let (lform, cond_param, extra) = match form {
            ast::LoopForm::For { bound, .. } => {
                let bv = self.exp(bound, env)?;
                let (b, _) = self.prim_leaf(&bv, bound.span)?;
                (Some((self.names.fresh("i"), b)), None, None)
            }
            ast::LoopForm::ForIn { array, .. } => {
                let av = self.exp(array, env)?;
                let n = match av.first_leaf() {
                    Some((_, Type::Array { shape, .. })) => shape[0].clone(),
                    _ => return unsupported("for-in over a non-array", Some(array.span)),
                };
                (Some((self.names.fresh("i"), n)), None, Some(av))
            }
            ast::LoopForm::While(c) => {
                // The condition on the initial values decides the first iteration.
                let env0 = self.bind_pat(pat, initv.clone(), env)?;
                let cv = self.exp(c, &env0)?;
                let (c0, _) = self.prim_leaf(&cv, c.span)?;
                let cp = Param {
                    name: self.names.fresh("cond"),
                    ty: Type::Prim(PrimType::Bool),
                };
                (None, Some((cp, c0)), None)
            }
        };
        self.loc = loc;
        let (stms, res) = self.nested(|l| {
            let mut benv = env.clone();
            if let (ast::LoopForm::For { var, .. }, Some((i, b))) = (form, &lform) {
                let it = match b {
                    SubExp::Const(p) => p.ty(),
                    _ => PrimType::I64,
                };
                let it = l.bound_type(b).unwrap_or(it);
                benv = benv.bind(var, Val::Leaf(SubExp::Var(*i), Type::Prim(it)));
            }
            if let (ast::LoopForm::ForIn { pat: ip, .. }, Some((i, _)), Some(av)) =
                (form, &lform, &extra)
            {
                let x = l.index_val(av, &[DimIndex::Fix(SubExp::Var(*i))], e.span)?;
                benv = l.bind_pat(ip, x, &benv)?;
            }
            benv = l.bind_pat(pat, pval.clone(), &benv)?;
            let nv = l.exp(body, &benv)?;
            let mut res = Vec::new();
            if let ast::LoopForm::While(c) = form {
                let env1 = l.bind_pat(pat, nv.clone(), env)?;
                let cv = l.exp(c, &env1)?;
                res.push(l.prim_leaf(&cv, c.span)?.0);
            }
            Ok((nv, res))
        })?;
        self.loc = loc;
        let (nv, cres) = res;
        let nl = self.leaves(&nv, e.span)?;
        if nl.len() != leaf_params.len() {
            return Ok(None);
        }
        let mut size_res = Vec::new();
        for (k, ((_, nt), (_, pt))) in nl.iter().zip(&leaf_params).enumerate() {
            if nt.rank() != pt.rank() {
                return Ok(None);
            }
            if let (Type::Array { shape: ns, .. }, Type::Array { shape: ps, .. }) = (nt, pt) {
                if !generalise && ns != ps {
                    return Ok(None);
                }
                if generalise {
                    for (d, slot) in ns.iter().zip(&size_of[k]) {
                        if slot.is_some() {
                            size_res.push(d.clone());
                        }
                    }
                }
            }
        }
        let mut result = size_res;
        result.extend(nl.iter().map(|(s, _)| s.clone()));
        let mut all_params = params;
        let lform = match (lform, cond_param) {
            (Some((i, b)), _) => LoopForm::For { i, bound: b },
            (None, Some((cp, c0))) => {
                let cv = cp.name;
                all_params.insert(0, (cp, c0));
                let mut r = cres;
                r.extend(result);
                result = r;
                LoopForm::While { cond: cv }
            }
            _ => return Ok(None),
        };
        let types: Vec<Type> = all_params.iter().map(|(p, _)| p.ty.clone()).collect();
        let outs = self.emit(
            &["loop"],
            Exp::Loop {
                params: all_params.clone(),
                form: lform,
                body: Body { stms, result },
            },
            types.clone(),
        );
        // Rename the size parameters in the result types to the statement's results.
        let skip = all_params.len() - leaf_params.len();
        let mut subst: HashMap<VName, VName> = HashMap::new();
        for (k, (p, _)) in all_params.iter().enumerate().take(skip) {
            subst.insert(p.name, outs[k]);
        }
        let out_leaves: Vec<(SubExp, Type)> = outs
            .iter()
            .zip(&types)
            .skip(skip)
            .map(|(v, t)| (SubExp::Var(*v), rename_dims(t, &subst)))
            .collect();
        // Fix the pattern's types too.
        if let Some(stm) = self.frames.last_mut().and_then(|f| f.last_mut()) {
            for p in stm.pat.iter_mut() {
                p.ty = rename_dims(&p.ty, &subst);
                self.var_types.insert(p.name, p.ty.clone());
            }
        }
        let _ = nsizes;
        Ok(Some(initv.rebuild(&mut out_leaves.into_iter())))
    }

    fn bound_type(&self, b: &SubExp) -> Option<PrimType> {
        match b {
            SubExp::Const(p) => Some(p.ty()),
            SubExp::Var(v) => self.var_type(*v).and_then(|t| t.elem()),
        }
    }

    /// The type of a variable bound so far.
    pub fn var_type(&self, v: VName) -> Option<Type> {
        self.var_types.get(&v).cloned()
    }
}

/// The environment key under which a type parameter's instance is recorded (a quote cannot
/// start a value name, so it never shadows one).
fn type_param_key(n: &str) -> String {
    format!("'{n}")
}

/// Record what type parameter `n` stands for at an application: the structure of `v` with
/// `depth` outer dimensions removed (a value of that type, used as a template by `blank`).
fn bind_type_param<'a>(env: Env<'a>, n: &str, v: &Val<'a>, depth: usize) -> Env<'a> {
    let Some(leaves) = v.leaves() else {
        return env;
    };
    let mut stripped = Vec::new();
    for (s, t) in leaves {
        let t = match t {
            Type::Array { elem, shape } if shape.len() > depth => Type::Array {
                elem,
                shape: shape[depth..].to_vec(),
            },
            Type::Array { elem, shape } if shape.len() == depth => Type::Prim(elem),
            Type::Prim(p) if depth == 0 => Type::Prim(p),
            _ => return env,
        };
        stripped.push((s, t));
    }
    env.bind(&type_param_key(n), v.rebuild(&mut stripped.into_iter()))
}

fn ty_shape(t: &Type) -> Vec<SubExp> {
    match t {
        Type::Array { shape, .. } => shape.clone(),
        _ => Vec::new(),
    }
}

/// Variables bound by the top level of these statements.
fn bound_in(stms: &[Stm]) -> std::collections::HashSet<VName> {
    stms.iter()
        .flat_map(|s| s.pat.iter().map(|p| p.name))
        .collect()
}

fn rename_dims(t: &Type, subst: &HashMap<VName, VName>) -> Type {
    match t {
        Type::Array { elem, shape } => Type::Array {
            elem: *elem,
            shape: shape
                .iter()
                .map(|d| match d {
                    SubExp::Var(v) => SubExp::Var(*subst.get(v).unwrap_or(v)),
                    c => c.clone(),
                })
                .collect(),
        },
        t => t.clone(),
    }
}

pub static INT8: runic_types::Type = runic_types::Type::Prim(PrimType::I8);

/// `[2][3]` for a shape of constants; a variable at position `k` prints as the placeholder
/// `[{k}]` that `ShapeCheck` fills with its run-time value.
pub struct ShapeText<'s>(pub &'s [SubExp]);

impl std::fmt::Display for ShapeText<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (k, d) in self.0.iter().enumerate() {
            match d {
                SubExp::Const(c) => write!(f, "[{}]", c.plain())?,
                SubExp::Var(_) => write!(f, "[{{{k}}}]")?,
            }
        }
        Ok(())
    }
}
