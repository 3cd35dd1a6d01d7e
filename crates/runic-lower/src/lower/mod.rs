//! The lowering context: statement frames, locations, names and top-level constants. Each
//! submodule adds the `Lower` methods of one part of the language.

mod apply;
mod branch;
mod exp;
mod index;
mod loops;
mod ops;
mod pat;
mod types;

pub use types::ShapeText;

use crate::val::{Builtin, Env, Fun, Val};
use crate::LowerError;
use runic_ir::builder::{binop_type, unop_type};
use runic_ir::*;
use runic_syntax::ast::{self, Dec, ValBind};
use runic_syntax::{SourceMap, Span};
use runic_types::Checked;
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
}
