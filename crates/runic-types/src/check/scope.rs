//! Scope violations (language.md §6.6, the reference's levels): a type variable or flexible
//! size that existed before a binding construct may not be solved, inside it, to a type or
//! size that mentions what the construct binds — a size variable, or a local function's
//! type parameter — since that name means nothing outside. Example: in
//! `def f (xs: []i32) = let n = 5 in zip (iota n) xs` nothing is wrong, but in
//! `def f x = let g 'b (y: b) = if true then y else x in g` the type of the outer `x` would
//! have to be the local `b`.
//!
//! Solutions are logged as unification makes them ([`crate::infer_ty::Subst`]'s `flex_log`
//! and `var_log`); when a scope closes, only the solutions made inside it, of variables older
//! than it, are looked at.

use super::{Checker, R};
use crate::infer_ty::{map_sizes, size_mentions, Cons, Sz, T};
use runic_syntax::ast::Name;
use runic_syntax::{Diagnostic, Span};

/// The state of the substitution when a scope opened.
pub(super) struct ScopeMark {
    flex: usize,
    vars: usize,
    flex_log: usize,
    var_log: usize,
}

impl Checker {
    pub(super) fn scope_mark(&self) -> ScopeMark {
        ScopeMark {
            flex: self.s.flex.len(),
            vars: self.s.vars.len(),
            flex_log: self.s.flex_log.len(),
            var_log: self.s.var_log.len(),
        }
    }

    /// Report an older size or type variable solved to mention `names` (sizes and values
    /// bound by the scope) or `tparams` (its type parameters), as the scope closes.
    pub(super) fn check_scope(
        &mut self,
        m: &ScopeMark,
        names: &[Name],
        tparams: &[Name],
        span: Span,
    ) -> R<()> {
        let flexes: Vec<u32> = self.s.flex_log[m.flex_log..]
            .iter()
            .copied()
            .filter(|&f| (f as usize) < m.flex)
            .collect();
        for f in flexes {
            let z = self.s.size(&Sz::Flex(f));
            if let Some(n) = names.iter().find(|n| size_mentions(&z, n)) {
                return Err(violation(n, "size", span));
            }
        }
        let vars: Vec<u32> = self.s.var_log[m.var_log..]
            .iter()
            .copied()
            .filter(|&v| (v as usize) < m.vars)
            .collect();
        for v in vars {
            for t in self.solution_parts(v) {
                if let Some(n) = names.iter().find(|n| type_mentions_size(&t, n)) {
                    return Err(violation(n, "size", span));
                }
                if let Some(n) = tparams.iter().find(|n| type_mentions_param(&t, n)) {
                    return Err(violation(n, "type", span));
                }
            }
        }
        Ok(())
    }

    /// What a type variable is known to be: its solution, or the types in its constraint.
    fn solution_parts(&self, v: u32) -> Vec<T> {
        let z = self.s.zonk(&T::Var(v));
        match &z {
            T::Var(w) => match &self.s.vars[*w as usize].cons {
                Cons::Fields(fs) => fs.values().map(|t| self.s.zonk(t)).collect(),
                Cons::Constrs(cs) => cs.values().flatten().map(|t| self.s.zonk(t)).collect(),
                Cons::Free | Cons::Prims(_) => Vec::new(),
            },
            _ => vec![z],
        }
    }
}

fn violation(name: &str, what: &str, span: Span) -> Box<Diagnostic> {
    Box::new(
        Diagnostic::error(
            span,
            format!(
                "Scope violation: here the {what} \"{name}\" would have to appear in the type of something from outside its scope."
            ),
        )
        .with_note(format!(
            "\"{name}\" means nothing outside the expression that binds it; give the outer value a type that does not depend on it (see docs/TYPE-CHECKS.md#scope-violation)."
        )),
    )
}

fn type_mentions_size(t: &T, n: &str) -> bool {
    let mut found = false;
    map_sizes(t, &mut |s| {
        found |= size_mentions(s, n);
        s.clone()
    });
    found
}

fn type_mentions_param(t: &T, n: &str) -> bool {
    match t {
        T::Param(p) => p == n,
        T::Array(_, e) => type_mentions_param(e, n),
        T::Record(fs) => fs.values().any(|t| type_mentions_param(t, n)),
        T::Sum(cs) => cs.values().flatten().any(|t| type_mentions_param(t, n)),
        T::Arrow(_, a, b) => type_mentions_param(a, n) || type_mentions_param(b, n),
        T::Var(_) | T::Prim(_) => false,
    }
}
