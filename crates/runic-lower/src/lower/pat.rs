//! Patterns: binding values (and the sizes in their types), match conditions, constructors.

use super::types::bind_type_param;
use super::*;
use crate::val::{Env, Val};
use runic_ir::*;
use runic_syntax::ast::{self, Literal, PatKind};
use runic_syntax::Span;
use runic_types::Size;

impl<'a> Lower<'a> {
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
                        acc = self.b().op2(BinOp::LogAnd, acc, c)?;
                    }
                }
                acc
            }
            PatKind::Record(fs) => {
                let mut acc = t;
                for (n, q) in fs {
                    if let Some(f) = v.field(n) {
                        let c = self.pat_cond(q, &f.clone())?;
                        acc = self.b().op2(BinOp::LogAnd, acc, c)?;
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
                self.b().op2(BinOp::Eq, s, SubExp::Const(c))?
            }
            PatKind::Constr(c, ps) => {
                let (tag, cs) = match v {
                    Val::Sum(tag, cs) => (tag, cs),
                    _ => return unsupported("constructor pattern on a non-sum", Some(p.span)),
                };
                let k = cs.iter().position(|(n, _)| n == c).unwrap_or(0);
                let (ts, _) = self.prim_leaf(tag, p.span)?;
                let mut acc = self
                    .b()
                    .op2(BinOp::Eq, ts, SubExp::Const(Prim::I8(k as i8)))?;
                let payload = cs[k].1.clone();
                for (q, x) in ps.iter().zip(payload) {
                    let c = self.pat_cond(q, &x)?;
                    acc = self.b().op2(BinOp::LogAnd, acc, c)?;
                }
                acc
            }
        })
    }

    pub(super) fn match_cases(
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
}
