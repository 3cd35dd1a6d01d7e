//! Lambdas and loops, and the sizes where branches meet (join) or names go out of scope (escape).

use super::pat::pattern_names;
use super::{count_sizes, Anon, Checker, Denot, Scheme, Scope, R};
use crate::infer_ty::{map_sizes, size_mentions, Sz, INTS, T};
use runic_syntax::ast::*;
use runic_syntax::{Diagnostic, Span};
use std::rc::Rc;

impl Checker {
    /// Where two branches have different sizes, the result has a rigid unknown.
    pub(super) fn join(&mut self, a: &T, b: &T) -> T {
        let a = self.s.zonk(a);
        let b = self.s.zonk(b);
        self.join_z(&a, &b)
    }

    fn join_z(&mut self, a: &T, b: &T) -> T {
        match (a, b) {
            (T::Array(s1, e1), T::Array(s2, e2)) => {
                let s = if s1 == s2 {
                    s1.clone()
                } else {
                    self.s.fresh_unknown()
                };
                T::Array(s, Box::new(self.join_z(e1, e2)))
            }
            (T::Record(f1), T::Record(f2)) => T::Record(
                f1.iter()
                    .map(|(k, t)| {
                        (
                            k.clone(),
                            match f2.get(k) {
                                Some(u) => self.join_z(t, u),
                                None => t.clone(),
                            },
                        )
                    })
                    .collect(),
            ),
            _ => a.clone(),
        }
    }

    /// Sizes that mention names going out of scope become rigid unknowns.
    pub(super) fn escape(&mut self, t: &T, names: &[Name]) -> T {
        if names.is_empty() {
            return t.clone();
        }
        let z = self.s.zonk(t);
        let mut needs = false;
        map_sizes(&z, &mut |s| {
            if names.iter().any(|n| size_mentions(s, n)) {
                needs = true;
            }
            s.clone()
        });
        if !needs {
            return t.clone();
        }
        let mut fresh: Vec<Sz> = Vec::new();
        count_sizes(&z, &mut fresh);
        let mut replacement: Vec<Sz> = Vec::new();
        let scope = self.s.unknowns;
        for s in &fresh {
            if names.iter().any(|n| size_mentions(s, n)) {
                let u = self.s.fresh_unknown();
                if let Sz::Unknown(k) = u {
                    self.s.escaped.insert(k, (s.clone(), scope));
                }
                replacement.push(u);
            } else {
                replacement.push(s.clone());
            }
        }
        let mut it = replacement.into_iter();
        map_sizes(&z, &mut |s| it.next().unwrap_or_else(|| s.clone()))
    }

    pub(super) fn infer_lambda(
        &mut self,
        params: &mut [Pat],
        ret: &mut Option<TypeExp>,
        body: &mut Exp,
    ) -> R<T> {
        super::def::check_distinct_params(params)?;
        let mark = self.scope_mark();
        let mut pts = Vec::new();
        let mut names = Vec::new();
        for p in params.iter_mut() {
            let t = self.s.fresh_var();
            names.extend(self.bind_pattern(p, &t, Anon::Flex, false)?);
            self.lambda_params.push((t.clone(), p.span));
            pts.push(t);
        }
        let before = self.s.unknowns;
        let bt = self.infer(body)?;
        self.check_scope(&mark, &names, &[], body.span)?;
        self.check_param_causality(params, &pts, before)?;
        let rt = match ret {
            Some(te) => {
                let rt = self.convert_type(te, Anon::Flex)?;
                self.expect(
                    &rt,
                    &bt,
                    body.span,
                    "the body of the lambda (its declared return type)",
                )?;
                rt
            }
            None => bt,
        };
        let rt = self.escape(&rt, &names);
        Ok(pts.into_iter().rev().fold(rt, |acc, p| T::arrow(p, acc)))
    }

    pub(super) fn infer_loop(
        &mut self,
        pat: &mut Pat,
        init: &mut Option<Box<Exp>>,
        form: &mut LoopForm,
        body: &mut Exp,
        span: Span,
    ) -> R<T> {
        let pt = self.infer_loop_init(pat, init)?;
        self.no_fun_sites.push((
            pt.clone(),
            pat.span,
            "A function cannot be a loop parameter",
        ));
        self.infer_loop_rest(pat, form, body, span, pt)
    }

    fn infer_loop_init(&mut self, pat: &mut Pat, init: &mut Option<Box<Exp>>) -> R<T> {
        let pt = match init {
            Some(x) => self.infer(x)?,
            None => {
                // The initial values come from the variables of the same names.
                let t = self.s.fresh_var();
                let mut names = Vec::new();
                pattern_names(pat, &mut names);
                let depth = self.scopes.len();
                self.bind_pattern(pat, &t, Anon::Flex, false)?;
                let bound: Vec<(Name, T)> = self.scopes[depth..]
                    .iter()
                    .filter_map(|s| match s {
                        Scope::Val(n, sc) => Some((n.clone(), sc.ty.clone())),
                        _ => None,
                    })
                    .collect();
                self.scopes.truncate(depth);
                for (n, bt) in bound {
                    let outer = match self.lookup(&n) {
                        Some(Denot::Value(sc, _)) => self.instantiate(&sc).0,
                        _ => return Err(self.unknown_name(&n, pat.span)),
                    };
                    self.expect(
                        &bt,
                        &outer,
                        pat.span,
                        &format!("the initial value of loop variable \"{n}\""),
                    )?;
                }
                self.pat_rec.retain(|_| true);
                t
            }
        };
        Ok(pt)
    }

    fn infer_loop_rest(
        &mut self,
        pat: &mut Pat,
        form: &mut LoopForm,
        body: &mut Exp,
        span: Span,
        pt: T,
    ) -> R<T> {
        let depth = self.scopes.len();
        let mark = self.scope_mark();
        // The loop parameter: the type of the initial value, or the annotation.
        let param_t = self.s.fresh_var();
        self.s
            .unify(&param_t, &pt)
            .map_err(|c| Box::new(Diagnostic::error(span, c.message)))?;
        let names = self.bind_pattern(pat, &param_t, Anon::Flex, false)?;
        let mut bound = names.clone();
        match form {
            LoopForm::For {
                var,
                var_span: _,
                bound: b,
            } => {
                let bt = self.infer(b)?;
                let a = self.fresh_prims(INTS.to_vec(), b.span);
                self.expect(&a, &bt, b.span, "the bound of a \"for\" loop")?;
                self.scopes
                    .push(Scope::Val(var.clone(), Rc::new(Scheme::mono(a))));
                bound.push(var.clone());
            }
            LoopForm::ForIn { pat: ip, array } => {
                let at = self.infer(array)?;
                let elem = self.s.fresh_var();
                let d = self.s.fresh_flex();
                let want = T::Array(d, Box::new(elem.clone()));
                self.expect(&want, &at, array.span, "the array of a \"for ... in\" loop")?;
                bound.extend(self.bind_pattern(ip, &elem, Anon::Flex, false)?);
            }
            LoopForm::While(c) => {
                let ct = self.infer(c)?;
                self.expect(&T::bool(), &ct, c.span, "the condition of a \"while\" loop")?;
            }
        }
        let bt = self.infer(body)?;
        self.check_scope(&mark, &bound, &[], body.span)?;
        self.expect_joinable(
            &param_t,
            &bt,
            body.span,
            "the body of the loop (it must have the type of the loop parameter)",
        )?;
        self.scopes.truncate(depth);
        let joined = self.join(&param_t, &bt);
        Ok(self.escape(&joined, &bound))
    }
}
