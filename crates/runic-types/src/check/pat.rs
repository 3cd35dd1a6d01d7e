//! Patterns: binding a pattern to a type, and reading the names a pattern binds.

use super::{err, Anon, Checker, LitCheck, Scheme, Scope, R};
use crate::infer_ty::{numeric, Cons, T};
use runic_syntax::ast::*;
use runic_syntax::Span;
use std::collections::BTreeMap;
use std::rc::Rc;

impl Checker {
    /// Bind a pattern to type `t`, pushing its variables into scope; returns their names.
    pub(super) fn bind_pattern(
        &mut self,
        p: &mut Pat,
        t: &T,
        mode: Anon,
        refutable: bool,
    ) -> R<Vec<Name>> {
        let mut vars: Vec<(Name, T, Span)> = Vec::new();
        self.pattern(p, t, mode, refutable, &mut vars)?;
        let names = vars.iter().map(|(n, _, _)| n.clone()).collect();
        for (n, ty, _) in vars {
            self.scopes.push(Scope::Val(n, Rc::new(Scheme::mono(ty))));
        }
        Ok(names)
    }

    fn pattern(
        &mut self,
        p: &mut Pat,
        t: &T,
        mode: Anon,
        refutable: bool,
        vars: &mut Vec<(Name, T, Span)>,
    ) -> R<()> {
        self.pat_rec.push((p.id, t.clone()));
        let span = p.span;
        match &mut p.kind {
            PatKind::Var(n) => {
                if let Some((_, _, first)) = vars.iter().find(|(m, _, _)| m == n) {
                    let d = runic_syntax::Diagnostic::error(
                        span,
                        format!("Variable \"{n}\" is bound twice in the same pattern."),
                    )
                    .with_related(*first, "first bound here");
                    return Err(Box::new(d));
                }
                vars.push((n.clone(), t.clone(), span));
                Ok(())
            }
            PatKind::Wildcard => Ok(()),
            PatKind::Tuple(ps) => {
                let comps: Vec<T> = ps.iter().map(|_| self.s.fresh_var()).collect();
                let want = T::tuple(comps.clone());
                self.expect(&want, t, span, "a tuple pattern")?;
                for (sub, ct) in ps.iter_mut().zip(comps) {
                    self.pattern(sub, &ct, mode, refutable, vars)?;
                }
                Ok(())
            }
            PatKind::Record(fs) => {
                let mut want = BTreeMap::new();
                for (n, _) in fs.iter() {
                    let v = self.s.fresh_var();
                    if want.insert(n.clone(), v).is_some() {
                        return err(
                            span,
                            format!("Field \"{n}\" occurs more than once in the record pattern."),
                        );
                    }
                }
                let want_t = T::Record(want.clone());
                self.expect(&want_t, t, span, "a record pattern")?;
                for (n, sub) in fs.iter_mut() {
                    let ft = want[n].clone();
                    self.pattern(sub, &ft, mode, refutable, vars)?;
                }
                Ok(())
            }
            PatKind::Ascribe(sub, te) => {
                let before = self.s.unknowns;
                let at = self.convert_type(te, mode)?;
                if mode == Anon::Flex {
                    self.ascribed.push((te.span(), at.clone(), before));
                }
                self.expect(&at, t, span, "a pattern with a type annotation")?;
                self.pattern(sub, &at, mode, refutable, vars)
            }
            PatKind::Literal { lit, negated } => {
                if !refutable {
                    return err(span, "Refutable pattern not allowed here: a literal pattern can only be used in a \"case\".");
                }
                let lt = self.literal_type(lit, span);
                if *negated {
                    let a = self.fresh_prims(numeric(), span);
                    self.expect(&a, &lt, span, "a negated literal pattern")?;
                }
                self.lits.push(LitCheck {
                    ty: lt.clone(),
                    lit: lit.clone(),
                    negated: *negated,
                    span,
                });
                self.eqs.push((lt.clone(), span));
                self.expect(t, &lt, span, "a literal pattern")
            }
            PatKind::Constr(c, ps) => {
                let payload: Vec<T> = ps.iter().map(|_| self.s.fresh_var()).collect();
                let mut cs = BTreeMap::new();
                cs.insert(c.clone(), payload.clone());
                let w = self.s.fresh(Cons::Constrs(cs));
                if let T::Var(v) = w {
                    self.origins.push((v, span));
                }
                self.expect(t, &w, span, "a constructor pattern")?;
                if !refutable {
                    self.irrefutable.push((span, t.clone()));
                }
                for (sub, pt) in ps.iter_mut().zip(payload) {
                    self.pattern(sub, &pt, mode, refutable, vars)?;
                }
                Ok(())
            }
            PatKind::Attr(_, sub) => self.pattern(sub, t, mode, refutable, vars),
        }
    }
}

pub(super) fn simple_pat_name(p: &Pat) -> Option<Name> {
    match &p.kind {
        PatKind::Var(n) => Some(n.clone()),
        PatKind::Ascribe(q, _) | PatKind::Attr(_, q) => simple_pat_name(q),
        _ => None,
    }
}

pub(super) fn pattern_names(p: &Pat, out: &mut Vec<Name>) {
    match &p.kind {
        PatKind::Var(n) => out.push(n.clone()),
        PatKind::Tuple(ps) | PatKind::Constr(_, ps) => {
            ps.iter().for_each(|p| pattern_names(p, out))
        }
        PatKind::Record(fs) => fs.iter().for_each(|(_, p)| pattern_names(p, out)),
        PatKind::Ascribe(q, _) | PatKind::Attr(_, q) => pattern_names(q, out),
        PatKind::Wildcard | PatKind::Literal { .. } => {}
    }
}
