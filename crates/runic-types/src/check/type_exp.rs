//! Types as written: type and size expressions to inference types; size terms of expressions.

use super::modules::ModVal;
use super::{err, Anon, Checker, Scheme, Scope, TypeAbbr, R};
use crate::infer_ty::{map_sizes, Sz, T};
use crate::intrinsics::module_type_member;
use runic_syntax::ast::*;
use runic_syntax::Span;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

impl Checker {
    pub fn convert_type(&mut self, te: &mut TypeExp, mode: Anon) -> R<T> {
        match te {
            TypeExp::Var(q, span) => self.type_name(q, &[], *span),
            TypeExp::Apply(..) => {
                let span = te.span();
                let mut args: Vec<&mut TypeArg> = Vec::new();
                let mut head = te;
                while let TypeExp::Apply(f, a, _) = head {
                    args.push(a);
                    head = f;
                }
                args.reverse();
                let q = match head {
                    TypeExp::Var(q, _) => q.clone(),
                    _ => return err(span, "Only type abbreviations can be applied to arguments."),
                };
                let mut targs: Vec<Result<T, Sz>> = Vec::new();
                for a in args {
                    match a {
                        TypeArg::Type(t) => targs.push(Ok(self.convert_type(t, mode)?)),
                        TypeArg::Size(s) => targs.push(Err(self.convert_size(s, mode)?)),
                    }
                }
                self.type_name(&q, &targs, span)
            }
            TypeExp::Tuple(ts, _) => {
                let mut out = Vec::new();
                for t in ts {
                    out.push(self.convert_type(t, mode)?);
                }
                Ok(T::tuple(out))
            }
            TypeExp::Record(fs, span) => {
                let mut out = BTreeMap::new();
                for (n, t) in fs {
                    let ct = self.convert_type(t, mode)?;
                    if out.insert(n.clone(), ct).is_some() {
                        return err(
                            *span,
                            format!("Field \"{n}\" is given more than once in the record type."),
                        );
                    }
                }
                Ok(T::Record(out))
            }
            TypeExp::Array(size, elem, span) => {
                if let TypeExp::Var(q, _) = &**elem {
                    let lifted = !q.is_qualified()
                        && !self.is_type_param(&q.name)
                        && self
                            .find_type(&q.name)
                            .is_some_and(|a| a.lifted == Liftedness::Lifted);
                    if lifted {
                        return err(
                            *span,
                            format!("Cannot create arrays of \"{q}\": it is declared lifted (\"type^\"), so its values may be functions."),
                        );
                    }
                }
                let sz = self.convert_size(size, mode)?;
                let et = self.convert_type(elem, mode)?;
                Ok(T::Array(sz, Box::new(et)))
            }
            TypeExp::Unique(t, span) => {
                let span = *span;
                let ct = self.convert_type(t, mode)?;
                if let T::Prim(p) = self.s.zonk(&ct) {
                    return Err(super::declarations::unique_non_array(&p.to_string(), span));
                }
                Ok(ct)
            }
            TypeExp::Arrow(name, a, b, _) => {
                let at = self.convert_type(a, mode)?;
                let bt = match name {
                    Some(n) => {
                        self.scopes
                            .push(Scope::Val(n.clone(), Rc::new(Scheme::mono(at.clone()))));
                        let r = self.convert_type(b, mode);
                        self.scopes.pop();
                        r?
                    }
                    None => self.convert_type(b, mode)?,
                };
                Ok(T::Arrow(name.clone(), Box::new(at), Box::new(bt)))
            }
            TypeExp::Sum(cs, span) => {
                let mut out = BTreeMap::new();
                for (c, ts) in cs {
                    let mut v = Vec::new();
                    for t in ts {
                        v.push(self.convert_type(t, mode)?);
                    }
                    if out.insert(c.clone(), v).is_some() {
                        return err(
                            *span,
                            format!("Constructor \"#{c}\" occurs more than once in the sum type."),
                        );
                    }
                }
                Ok(T::Sum(out))
            }
            TypeExp::Exists(names, t, span) => {
                for n in names.iter() {
                    self.scopes
                        .push(Scope::Val(n.clone(), Rc::new(Scheme::mono(T::i64()))));
                }
                let r = self.convert_type(t, mode);
                for _ in names.iter() {
                    self.scopes.pop();
                }
                let t = r?;
                // An existential size no value of the type shows (only inside a function
                // type: `?[n].bool -> [n]bool`) could never be known.
                let hidden = names.iter().find(|n| {
                    crate::infer_ty::type_mentions_size_name(&t, n)
                        && !crate::infer_ty::outside_arrows(&t, n)
                });
                if let Some(n) = hidden {
                    return err(
                        *span,
                        format!("Existential size \"{n}\" is used only inside a function type, so no value of this type shows it; return an array of that size beside the function, or leave the size to the function's result."),
                    );
                }
                let mut map: HashMap<Name, Sz> = HashMap::new();
                for n in names.iter() {
                    map.insert(n.clone(), self.s.fresh_unknown());
                }
                Ok(map_sizes(&t, &mut |s| rename_sizes(s, &map)))
            }
        }
    }

    fn convert_size(&mut self, s: &mut SizeExp, mode: Anon) -> R<Sz> {
        match s {
            SizeExp::Anon(_) => Ok(match mode {
                Anon::Flex => self.s.fresh_flex(),
                Anon::Implicit => {
                    let u = self.s.fresh_unknown();
                    if let Sz::Unknown(k) = u {
                        self.implicit.push(k);
                        self.s.param_unknowns.insert(k);
                    }
                    u
                }
                Anon::Exist => self.s.fresh_unknown(),
            }),
            SizeExp::Exp(e) => {
                let t = self.infer(e)?;
                self.expect(&T::i64(), &t, e.span, "a size")?;
                Ok(self.size_term(e))
            }
        }
    }

    /// Whether `name` is a type parameter in scope.
    fn is_type_param(&self, name: &str) -> bool {
        self.scopes
            .iter()
            .any(|s| matches!(s, Scope::TParam(n) if n == name))
    }

    fn type_name(&mut self, q: &QualName, args: &[Result<T, Sz>], span: Span) -> R<T> {
        if q.is_qualified() {
            match self.module_path(&q.quals) {
                Ok(ModVal::Prim(m)) => {
                    if let Some(p) = module_type_member(m, &q.name) {
                        if !args.is_empty() {
                            return err(span, format!("Type \"{q}\" takes no arguments."));
                        }
                        return Ok(T::Prim(p));
                    }
                }
                Ok(ModVal::Broken) => return Ok(self.s.fresh_var()),
                Ok(ModVal::Struct(env)) => {
                    if let Some(abbr) = env.types.get(&q.name).cloned() {
                        return self.apply_abbr(&q.to_string(), &abbr, args, span);
                    }
                }
                _ => {}
            }
            return err(span, format!("Unknown type \"{q}\"."));
        }
        let name = &q.name;
        for sc in self.scopes.iter().rev() {
            if let Scope::TParam(n) = sc {
                if n == name {
                    if !args.is_empty() {
                        return err(
                            span,
                            format!("Type parameter \"{name}\" cannot be applied to arguments."),
                        );
                    }
                    return Ok(T::Param(name.clone()));
                }
            }
        }
        if let Some(abbr) = self.find_type(name) {
            return self.apply_abbr(name, &abbr, args, span);
        }
        if let Some(p) = PrimType::from_name(name) {
            if !args.is_empty() {
                return err(span, format!("Type \"{name}\" takes no arguments."));
            }
            return Ok(T::Prim(p));
        }
        err(span, format!("Unknown type \"{name}\"."))
    }

    /// The size term denoted by an `i64` expression (Section 6.6 rule 4).
    /// A type abbreviation applied to its arguments.
    pub(super) fn apply_abbr(
        &mut self,
        name: &str,
        abbr: &TypeAbbr,
        args: &[Result<T, Sz>],
        span: Span,
    ) -> R<T> {
        if abbr.params.len() != args.len() {
            return err(
                span,
                format!(
                    "Type \"{name}\" takes {} argument{} but is given {}.",
                    abbr.params.len(),
                    if abbr.params.len() == 1 { "" } else { "s" },
                    args.len()
                ),
            );
        }
        let mut tmap = HashMap::new();
        let mut smap = HashMap::new();
        for (p, a) in abbr.params.iter().zip(args) {
            match (p, a) {
                (TypeParam::Type(n, _, _), Ok(t)) => {
                    tmap.insert(n.clone(), t.clone());
                }
                (TypeParam::Size(n, _), Err(s)) => {
                    smap.insert(n.clone(), s.clone());
                }
                (TypeParam::Type(n, _, _), Err(_)) => {
                    return err(
                        span,
                        format!("Parameter \"{n}\" of type \"{name}\" expects a type, not a size."),
                    )
                }
                (TypeParam::Size(n, _), Ok(_)) => {
                    return err(
                        span,
                        format!(
                        "Parameter \"{n}\" of type \"{name}\" expects a size like [n], not a type."
                    ),
                    )
                }
            }
        }
        let mut umap = HashMap::new();
        let mut fmap = HashMap::new();
        Ok(self.inst_type(&abbr.body, &tmap, &smap, &[], &mut umap, &mut fmap))
    }

    pub(super) fn size_term(&mut self, e: &Exp) -> Sz {
        match &e.kind {
            ExpKind::Var(q) if q.quals.is_empty() => Sz::Name(q.name.clone()),
            ExpKind::Literal(Literal::Int { value, .. }) if *value <= i64::MAX as u128 => {
                Sz::Const(*value as i64)
            }
            ExpKind::BinOp { op, lhs, rhs }
                if matches!(op.name.name.as_str(), "+" | "-" | "*")
                    && (op.name.quals.is_empty() || op.name.quals == ["i64"]) =>
            {
                let o: &'static str = match op.name.name.as_str() {
                    "+" => "+",
                    "-" => "-",
                    _ => "*",
                };
                Sz::Op(
                    o,
                    Box::new(self.size_term(lhs)),
                    Box::new(self.size_term(rhs)),
                )
            }
            ExpKind::Attr(_, x) => self.size_term(x),
            _ if simple_exp(e) => Sz::Exp(Box::new(e.clone())),
            _ => self.s.fresh_unknown(),
        }
    }
}

fn rename_sizes(s: &Sz, map: &HashMap<Name, Sz>) -> Sz {
    match s {
        Sz::Name(n) => map.get(n).cloned().unwrap_or_else(|| s.clone()),
        Sz::Op(o, a, b) => Sz::Op(
            o,
            Box::new(rename_sizes(a, map)),
            Box::new(rename_sizes(b, map)),
        ),
        _ => s.clone(),
    }
}

/// The size expression `e` (simple, see [`simple_exp`]) with the variable `name` replaced
/// by the expression `by`: a parameter's name in a result size, at an application.
pub(super) fn subst_exp_var(e: &Exp, name: &str, by: &Exp) -> Exp {
    let sub = |x: &Exp| Box::new(subst_exp_var(x, name, by));
    let kind = match &e.kind {
        ExpKind::Var(q) if q.quals.is_empty() && q.name == name => return by.clone(),
        // `s.f` read as a qualified name: a projection of the argument.
        ExpKind::Var(q) if q.quals.first().is_some_and(|h| h == name) => {
            let mut x = by.clone();
            for f in q.quals[1..].iter().chain(std::iter::once(&q.name)) {
                x = Exp {
                    id: e.id,
                    span: e.span,
                    kind: ExpKind::Project(Box::new(x), f.clone()),
                };
            }
            return x;
        }
        ExpKind::BinOp { op, lhs, rhs } => ExpKind::BinOp {
            op: op.clone(),
            lhs: sub(lhs),
            rhs: sub(rhs),
        },
        ExpKind::Apply(f, args) => ExpKind::Apply(
            sub(f),
            args.iter().map(|a| subst_exp_var(a, name, by)).collect(),
        ),
        ExpKind::Negate(x) => ExpKind::Negate(sub(x)),
        ExpKind::Not(x) => ExpKind::Not(sub(x)),
        ExpKind::Project(x, f) => ExpKind::Project(sub(x), f.clone()),
        ExpKind::Attr(a, x) => ExpKind::Attr(a.clone(), sub(x)),
        ExpKind::Index(x, idx) => ExpKind::Index(
            sub(x),
            idx.iter()
                .map(|i| match i {
                    DimIndex::Index(j) => DimIndex::Index(subst_exp_var(j, name, by)),
                    other => other.clone(),
                })
                .collect(),
        ),
        other => other.clone(),
    };
    Exp {
        id: e.id,
        span: e.span,
        kind,
    }
}

/// An expression simple enough to stand in a size (no binding constructs).
pub(super) fn simple_exp(e: &Exp) -> bool {
    match &e.kind {
        ExpKind::Var(_) | ExpKind::Literal(_) => true,
        ExpKind::BinOp { lhs, rhs, .. } => simple_exp(lhs) && simple_exp(rhs),
        ExpKind::Apply(f, args) => simple_exp(f) && args.iter().all(simple_exp),
        ExpKind::Negate(x) | ExpKind::Project(x, _) | ExpKind::Attr(_, x) => simple_exp(x),
        ExpKind::Index(x, idx) => {
            simple_exp(x)
                && idx.iter().all(|i| match i {
                    DimIndex::Index(e) => simple_exp(e),
                    DimIndex::Slice { .. } => false,
                })
        }
        _ => false,
    }
}
