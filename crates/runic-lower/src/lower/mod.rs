//! The lowering context (frames, locations, names, constants); each submodule adds one part.
//!
//! Statements are built with `runic_ir`'s [`Builder`] ([`Lower::b`]), which types what it
//! binds from the operands and records the types in `names`; only results whose shapes are
//! computed at run time (ranges, slices, concatenations, branches and loops whose sizes
//! vary) are given types explicitly.

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
    /// Fresh variables, and the type of every variable bound so far (what [`Lower::b`]'s
    /// builders infer result types from).
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

    /// A builder for the innermost body: what it binds is appended there (when the builder
    /// is dropped, at the end of the statement that made it) with the current source
    /// information, and its variables' types are recorded in `names`.
    pub fn b(&mut self) -> Emit<'_> {
        let src = self.src();
        let mut b = Builder::new(&mut self.names);
        b.src = src;
        Emit {
            b,
            frame: self.frames.last_mut().expect("a frame"),
        }
    }

    pub fn assert(&mut self, cond: SubExp, message: &str) -> R<()> {
        let message = message.to_string();
        self.b()
            .let_basic("ok", BasicOp::Assert { cond, message })?;
        Ok(())
    }

    /// The type of an operand.
    pub fn type_of(&self, s: &SubExp) -> R<Type> {
        Ok(typing::subexp_type(&self.names, s)?)
    }

    /// An operand with its type.
    pub fn typed(&self, s: SubExp) -> R<(SubExp, Type)> {
        let t = self.type_of(&s)?;
        Ok((s, t))
    }

    /// An operand as a value (of its type).
    pub fn leaf_of(&self, s: SubExp) -> R<Val<'a>> {
        let (s, t) = self.typed(s)?;
        Ok(Val::Leaf(s, t))
    }

    /// Bind `exp` (results typed from its operands) and return its results in the shape of
    /// `template`.
    pub fn let_val(&mut self, hint: &str, exp: Exp, template: &Val<'a>) -> R<Val<'a>> {
        let types = typing::exp_types(&self.names, &exp)?;
        let vs = self.b().bind_named(&[hint], exp, types.clone());
        let mut leaves = vs.into_iter().map(SubExp::Var).zip(types);
        Ok(template.rebuild(&mut leaves))
    }

    /// Collect the statements of a nested body.
    pub fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> R<T>) -> R<(Vec<Stm>, T)> {
        self.frames.push(Vec::new());
        let r = f(self);
        let stms = self.frames.pop().unwrap_or_default();
        Ok((stms, r?))
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

/// A [`Builder`] for the innermost body of a [`Lower`] (see [`Lower::b`]).
pub struct Emit<'l> {
    b: Builder<'l>,
    frame: &'l mut Vec<Stm>,
}

impl<'l> std::ops::Deref for Emit<'l> {
    type Target = Builder<'l>;
    fn deref(&self) -> &Builder<'l> {
        &self.b
    }
}

impl std::ops::DerefMut for Emit<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.b
    }
}

impl Drop for Emit<'_> {
    fn drop(&mut self) {
        self.frame.extend(self.b.take_stms());
    }
}
