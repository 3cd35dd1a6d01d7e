//! Sizes and types: blank values of source types, size expressions, shape checks.

use super::*;
use crate::val::{Env, Val};
use runic_ir::*;
use runic_syntax::ast::{self, Dec};
use runic_syntax::Span;
use runic_types::Size;

impl<'a> Lower<'a> {
    pub fn size(&mut self, s: &'a Size, env: &Env<'a>) -> R<Option<SubExp>> {
        Ok(match s {
            Size::Const(k) => Some(SubExp::i64(*k)),
            Size::Var(n) => self.lookup_size(n, env)?,
            Size::Exp(e) if !self.size_operands_are_sizes(e, env) => None,
            Size::Exp(e) => {
                let v = self.exp(e, env)?;
                let (s, _) = self.prim_leaf(&v, e.span)?;
                Some(self.b().convert_to(PrimType::I64, s)?)
            }
            Size::Unknown(_) => None,
        })
    }

    /// Do the names a size expression's arithmetic reads still denote sizes (`i64` scalars)?
    /// Types name sizes by their source names, so a later binding of the same name (an LSTM's
    /// state `h` in a function with a size parameter `[h]`) hides the size; the size is
    /// then read from the values instead. Arguments of applications (`length xs`) are
    /// arrays and are not looked at.
    fn size_operands_are_sizes(&self, e: &ast::Exp, env: &Env<'a>) -> bool {
        use ast::ExpKind as K;
        match &e.kind {
            K::Var(q) if q.quals.is_empty() => match env.lookup(&q.name) {
                Some(v) => is_size_value(v),
                None => true,
            },
            K::BinOp { lhs, rhs, .. } => {
                self.size_operands_are_sizes(lhs, env) && self.size_operands_are_sizes(rhs, env)
            }
            K::Negate(x) => self.size_operands_are_sizes(x, env),
            _ => true,
        }
    }

    fn lookup_size(&mut self, n: &str, env: &Env<'a>) -> R<Option<SubExp>> {
        if let Some(v) = env.lookup(n) {
            return Ok(match v {
                Val::Leaf(s, _) if is_size_value(v) => Some(s.clone()),
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
                    let s = self
                        .b()
                        .let_basic("blank", BasicOp::Scratch(*p, outer.to_vec()))?;
                    self.leaf_of(s)?
                }
            }
            T::Array { elem, shape } => {
                let mut dims = outer.to_vec();
                for s in shape {
                    dims.push(self.size(s, env)?.unwrap_or(SubExp::i64(0)));
                }
                self.blank(elem, &dims, env, span)?
            }
            T::Record(fs) if fs.is_empty() => self.with_unit_dims(Val::unit(), outer)?,
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
                        let s = self.b().let_basic("blank", BasicOp::Scratch(elem, dims))?;
                        (s.clone(), self.type_of(&s)?)
                    });
                }
                let v = template.rebuild(&mut out.into_iter());
                self.with_unit_dims(v, outer)?
            }
        })
    }

    /// `v`, an element of an array with outer dimensions `dims` whose other leaves already
    /// have them, with each empty record in it made an array of them ([`Val::Units`]).
    pub fn with_unit_dims(&mut self, v: Val<'a>, dims: &[SubExp]) -> R<Val<'a>> {
        if dims.is_empty() {
            return Ok(v);
        }
        Ok(match v {
            Val::Rec(fs) if fs.is_empty() => {
                let mut shape = dims.to_vec();
                shape.push(SubExp::i64(0));
                let s = self
                    .b()
                    .let_basic("units", BasicOp::Scratch(PrimType::Bool, shape))?;
                let (s, t) = self.typed(s)?;
                Val::Units(s, t)
            }
            Val::Rec(fs) => {
                let mut out = Vec::new();
                for (n, f) in fs {
                    out.push((n, self.with_unit_dims(f, dims)?));
                }
                Val::Rec(out)
            }
            Val::Sum(tag, cs) => {
                let mut out = Vec::new();
                for (n, vs) in cs {
                    let mut ps = Vec::new();
                    for p in vs {
                        ps.push(self.with_unit_dims(p, dims)?);
                    }
                    out.push((n, ps));
                }
                Val::Sum(tag, out)
            }
            other => other,
        })
    }

    pub fn exp_type(&self, e: &'a ast::Exp) -> R<&'a runic_types::Type> {
        self.ck.info.exp_types.get(&e.id).map_or_else(
            || unsupported("an expression without a recorded type", Some(e.span)),
            Ok,
        )
    }

    /// A check that an array value has the shape of a type written in the source.
    pub(super) fn check_shape(
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
                    let (sz, _) = self.prim_leaf(&sv, x.span)?;
                    let sz = self.b().convert_to(PrimType::I64, sz)?;
                    // The interpreter prints the evaluated size.
                    text.push_str(&format!("[{{{k}}}]"));
                    want.push(sz);
                }
            }
        }
        // A type parameter instantiated with arrays (`[n]t` with `t = [m]i32`) leaves
        // inner dimensions the written type does not name: they are not checked.
        if want.len() < have.len() {
            want.extend(have[want.len()..].iter().cloned());
        }
        text.push_str(&runic_syntax::pretty::print_type(cur));
        self.shape_check(&s, &have, want, text, span)
    }

    /// A check that an argument has the sizes its parameter's type gives it where they are
    /// already known: constants, and size names bound by the size arguments or by earlier
    /// parameters (`same [n] (a: [n]i32) (b: [n]i32)` given arrays of two sizes). Sizes not
    /// yet known are bound from the argument afterwards.
    pub(super) fn check_param_sizes(
        &mut self,
        v: &Val<'a>,
        t: &'a runic_types::Type,
        env: &Env<'a>,
        span: Span,
    ) -> R<()> {
        let (
            runic_types::Type::Array { shape: sizes, elem },
            Val::Leaf(s, Type::Array { shape: have, .. }),
        ) = (t, v)
        else {
            return Ok(());
        };
        let (mut want, mut text) = wanted_shape(sizes, have, |sz| {
            Ok(match sz {
                Size::Const(c) => Some(SubExp::i64(*c)),
                Size::Var(n) => match env.lookup(n) {
                    Some(Val::Leaf(d, Type::Prim(_))) => Some(d.clone()),
                    _ => None,
                },
                _ => None,
            })
        })?;
        want.extend(have[want.len()..].iter().cloned());
        text.push_str(&elem.to_string());
        let saved = self.loc;
        self.loc = Some(loc_of(span));
        let r = self.shape_check(s, have, want, text, span);
        self.loc = saved;
        r
    }

    /// Check `arr` (of shape `have`) against `want` at run time, unless they are the same
    /// terms already. `type_text` is the type as the message prints it.
    pub(super) fn shape_check(
        &mut self,
        arr: &SubExp,
        have: &[SubExp],
        want: Vec<SubExp>,
        type_text: String,
        span: Span,
    ) -> R<()> {
        if want.iter().zip(have).all(|(a, b)| a == b) {
            return Ok(());
        }
        let arr = self.arr_var(arr, span)?;
        let check = BasicOp::ShapeCheck {
            arr,
            shape: want,
            type_text,
        };
        self.b().let_basic("ok", check)?;
        Ok(())
    }

    /// A check that an array value has the shape of a resolved source type (sizes the
    /// checker could not name are not checked).
    pub(super) fn check_resolved_shape(
        &mut self,
        v: &Val<'a>,
        t: &'a runic_types::Type,
        env: &Env<'a>,
        span: Span,
    ) -> R<()> {
        let (
            runic_types::Type::Array { shape: sizes, elem },
            Val::Leaf(s, Type::Array { shape: have, .. }),
        ) = (t, v)
        else {
            return Ok(());
        };
        let (want, mut text) = wanted_shape(sizes, have, |sz| self.size(sz, env))?;
        text.push_str(&elem.to_string());
        self.shape_check(s, have, want, text, span)
    }
}

/// A value that can be a size: an `i64` scalar (a name of another type that a size
/// mentions is a later binding hiding the size).
fn is_size_value(v: &Val<'_>) -> bool {
    matches!(v, Val::Leaf(_, Type::Prim(PrimType::I64)))
}

/// The environment key under which a type parameter's instance is recorded (a quote cannot
/// start a value name, so it never shadows one).
fn type_param_key(n: &str) -> String {
    format!("'{n}")
}

/// Record what type parameter `n` stands for at an application: the structure of `v` with
/// `depth` outer dimensions removed (a value of that type, used as a template by `blank`).
pub(super) fn bind_type_param<'a>(env: Env<'a>, n: &str, v: &Val<'a>, depth: usize) -> Env<'a> {
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

/// The shape to check an array of shape `have` against, and its type text for the message:
/// each of `sizes` that `known` gives is checked (`[{k}]`, the run-time size `k`), the
/// others are the array's own (`[]`).
fn wanted_shape<'s>(
    sizes: &'s [Size],
    have: &[SubExp],
    mut known: impl FnMut(&'s Size) -> R<Option<SubExp>>,
) -> R<(Vec<SubExp>, String)> {
    let mut want = Vec::new();
    let mut text = String::new();
    for (k, (sz, h)) in sizes.iter().zip(have).enumerate() {
        match known(sz)? {
            Some(d) => {
                text.push_str(&format!("[{{{k}}}]"));
                want.push(d);
            }
            None => {
                text.push_str("[]");
                want.push(h.clone());
            }
        }
    }
    Ok((want, text))
}
