//! Scope violations (language.md §6.6, the reference's levels): a type variable or flexible
//! size that existed before a binding construct may not be solved, inside it, to a type or
//! size that mentions what the construct binds — a size variable, or a local function's
//! type parameter — since that name means nothing outside. Example: in
//! `def f (xs: []i32) = let n = 5 in zip (iota n) xs` nothing is wrong, but in
//! `def f x = let g 'b (y: b) = if true then y else x in g` the type of the outer `x` would
//! have to be the local `b`.
//!
//! The same module holds the causality check for `let`: an array bound with a size not yet
//! known (`let a = [] : [][]i32`) may not get that size, later, from a value computed after
//! it (`a[0] == (filter p xs)`): the size is a property of `a`'s value, fixed when `a` was
//! computed.
//!
//! Solutions are logged as unification makes them ([`crate::infer_ty::Subst`]'s `flex_log`
//! and `var_log`); when a scope closes, only the solutions made inside it, of variables older
//! than it, are looked at.

use super::{Checker, Scheme, R};
use crate::infer_ty::{map_sizes, size_mentions, Cons, Sz, T};
use runic_syntax::ast::Name;
use runic_syntax::{Diagnostic, Span};

/// Flexible sizes of a `let`-bound value's array type, unsolved when it was bound, with the
/// number of rigid unknowns that existed then.
pub(super) struct Unsettled {
    var: Name,
    span: Span,
    flexes: Vec<u32>,
    unknowns: u32,
}

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

    /// An anonymous parameter size of the function just checked (one of
    /// `implicit[implicit_start..]`) that its body equated with a size naming something bound
    /// inside the body (`let n = 5 in zip (iota n) xs`): the caller chooses that size, so it
    /// cannot depend on the body's names. Looks at the equations deferred since
    /// `deferred_start`; a name that no longer resolves, now that the body's scopes are
    /// closed, was bound inside it.
    pub(super) fn check_anonymous_scope(
        &self,
        implicit_start: usize,
        deferred_start: usize,
        params: &[runic_syntax::ast::Pat],
    ) -> R<()> {
        let implicit = &self.implicit[implicit_start..];
        for (a, b, at) in &self.s.deferred[deferred_start..] {
            let (a, b) = (self.s.size(a), self.s.size(b));
            let (u, other) = match (&a, &b) {
                (Sz::Unknown(u), o) | (o, Sz::Unknown(u)) if implicit.contains(u) => (*u, o),
                _ => continue,
            };
            let mut names = Vec::new();
            size_names(other, &mut names);
            let Some(local) = names
                .into_iter()
                .find(|n| self.lookup(n).is_none() && !self.size_witnesses.contains(n))
            else {
                continue;
            };
            let param = params
                .iter()
                .find_map(|p| anonymous_param_name(self, p, u))
                .map(|n| format!(" of parameter \"{n}\""))
                .unwrap_or_default();
            let span = at.unwrap_or(self.def_span);
            return Err(Box::new(
                Diagnostic::error(
                    span,
                    format!(
                        "The anonymous size{param} would have to be \"{local}\", which is bound inside the function: a scope violation."
                    ),
                )
                .with_note(
                    "The caller chooses the sizes of the parameters; give the parameter a size parameter (`[n]`) and use that, instead of a size computed inside (see docs/TYPE-CHECKS.md#scope-violation).",
                ),
            ));
        }
        Ok(())
    }

    /// A lambda parameter whose type, settled by the body, has a size of a value the body
    /// computes (`\f -> f (filter p xs)`: `f`'s parameter has the filtered size): the
    /// argument is there before that value, so its size cannot depend on it.
    pub(super) fn check_param_causality(
        &self,
        params: &[runic_syntax::ast::Pat],
        pts: &[T],
        before: u32,
    ) -> R<()> {
        for (p, t) in params.iter().zip(pts) {
            // Only a functional parameter: an array parameter's size may still be settled
            // by a join inside the body (a loop that filters it) without harm.
            if !late_size_in_function(&self.s.zonk(t), before) {
                continue;
            }
            {
                let shown = self.s.show(t);
                return Err(Box::new(Diagnostic::error(
                    p.span,
                    format!("Causality check: the type \"{shown}\" of this parameter has a size that is only known once the lambda's body computes a value, after the parameter is bound, which breaks causality."),
                )));
            }
        }
        Ok(())
    }

    /// A section passed as an argument whose result type has a size of a value the section's
    /// operand computes (`map (filter p xs ++) rows`): the function it is passed to would need
    /// that size (for its own result type) before the argument exists. `before`: the number of
    /// rigid unknowns before the argument was checked.
    pub(super) fn check_section_causality(&self, t: &T, before: u32, span: Span) -> R<()> {
        let T::Arrow(_, _, r) = self.s.zonk(t) else {
            return Ok(());
        };
        let mut late = false;
        map_sizes(&r, &mut |s| {
            late |= mentions_unknown_from(&self.s.size(s), before);
            s.clone()
        });
        if !late {
            return Ok(());
        }
        Err(Box::new(Diagnostic::error(
            span,
            "Causality check: the result of this section has the size of a value its operand computes, which the function it is passed to needs before the argument exists. Bind the operand with \"let\" first.",
        )))
    }

    /// The flexible sizes of the array parts of `t` (outside functions), as `var` is bound.
    pub(super) fn unsettled(&self, var: &Name, t: &T, span: Span) -> Unsettled {
        let mut flexes = Vec::new();
        array_flexes(&self.s.zonk(t), &mut flexes);
        Unsettled {
            var: var.clone(),
            span,
            flexes,
            unknowns: self.s.unknowns,
        }
    }

    /// Report a size of a `let`-bound value that was settled by a value computed after it.
    pub(super) fn check_causality(&self, u: &Unsettled) -> R<()> {
        for &f in &u.flexes {
            let z = self.s.size(&Sz::Flex(f));
            if mentions_unknown_from(&z, u.unknowns) {
                return Err(Box::new(Diagnostic::error(
                    u.span,
                    format!(
                        "Causality check: a size of \"{}\" is not known when it is bound and is only determined later, by a value computed after it. Give \"{}\" a type with known sizes.",
                        u.var, u.var
                    ),
                )));
            }
        }
        Ok(())
    }

    /// Let-polymorphism for a local function: the type variables created while checking it
    /// that are still free, unconstrained, and not reachable from anything outside (no
    /// older variable was solved to mention them) become type parameters, so that each use
    /// instantiates them afresh (`let swap x y = (y, x) in (swap 1 true, swap true 1)`).
    pub(super) fn generalise_local(&mut self, mut sc: Scheme, m: &ScopeMark) -> Scheme {
        let zty = self.s.zonk(&sc.ty);
        let mut free = Vec::new();
        free_type_vars(&zty, &mut free);
        let mut outer = Vec::new();
        let logged: Vec<u32> = self.s.var_log[m.var_log..].to_vec();
        for v in logged.into_iter().filter(|&v| (v as usize) < m.vars) {
            for t in self.solution_parts(v) {
                free_type_vars(&t, &mut outer);
            }
        }
        // A variable inside the constraint of one that stays (a record with field `0` of
        // type `b`) must stay too: the constraint is not instantiated per use.
        for &v in &free {
            if !matches!(self.s.vars[v as usize].cons, Cons::Free) {
                for t in self.solution_parts(v) {
                    free_type_vars(&t, &mut outer);
                }
            }
        }
        for v in free {
            let fresh = v as usize >= m.vars
                && !outer.contains(&v)
                && matches!(self.s.vars[v as usize].cons, Cons::Free)
                && self.s.vars[v as usize].bound.is_none();
            if fresh {
                // A name no program can write, so it never meets a user's type parameter.
                let name = format!("'{v}");
                self.s.vars[v as usize].bound = Some(T::Param(name.clone()));
                sc.tparams.push(name);
                sc.poly = true;
            }
        }
        sc.ty = self.s.zonk(&sc.ty);
        sc
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

fn array_flexes(t: &T, out: &mut Vec<u32>) {
    match t {
        T::Array(s, e) => {
            if let Sz::Flex(f) = s {
                out.push(*f);
            }
            array_flexes(e, out);
        }
        T::Record(fs) => fs.values().for_each(|t| array_flexes(t, out)),
        T::Sum(cs) => cs.values().flatten().for_each(|t| array_flexes(t, out)),
        T::Arrow(..) | T::Var(_) | T::Prim(_) | T::Param(_) => {}
    }
}

/// Whether a size mentions a rigid unknown numbered `from` or later.
fn mentions_unknown_from(s: &Sz, from: u32) -> bool {
    match s {
        Sz::Unknown(k) => *k >= from,
        Sz::Op(_, a, b) => mentions_unknown_from(a, from) || mentions_unknown_from(b, from),
        Sz::Flex(_) | Sz::Name(_) | Sz::Const(_) | Sz::Exp(_) => false,
    }
}

fn free_type_vars(t: &T, out: &mut Vec<u32>) {
    match t {
        T::Var(v) => {
            if !out.contains(v) {
                out.push(*v);
            }
        }
        T::Array(_, e) => free_type_vars(e, out),
        T::Record(fs) => fs.values().for_each(|t| free_type_vars(t, out)),
        T::Sum(cs) => cs.values().flatten().for_each(|t| free_type_vars(t, out)),
        T::Arrow(_, a, b) => {
            free_type_vars(a, out);
            free_type_vars(b, out);
        }
        T::Prim(_) | T::Param(_) => {}
    }
}

/// The names a size term mentions.
fn size_names(s: &Sz, out: &mut Vec<Name>) {
    match s {
        Sz::Name(n) => out.push(n.clone()),
        Sz::Op(_, a, b) => {
            size_names(a, out);
            size_names(b, out);
        }
        Sz::Flex(_) | Sz::Const(_) | Sz::Exp(_) | Sz::Unknown(_) => {}
    }
}

/// The name of a plain parameter `(xs: t)` whose type has the rigid unknown `u` as a size.
fn anonymous_param_name(ck: &Checker, p: &runic_syntax::ast::Pat, u: u32) -> Option<Name> {
    use runic_syntax::ast::PatKind;
    let inner = match &p.kind {
        PatKind::Ascribe(q, _) => q,
        _ => p,
    };
    let PatKind::Var(n) = &inner.kind else {
        return None;
    };
    let ty = ck
        .pat_rec
        .iter()
        .rev()
        .find(|(id, _)| *id == p.id)?
        .1
        .clone();
    let mut found = false;
    map_sizes(&ck.s.zonk(&ty), &mut |s| {
        found |= *s == Sz::Unknown(u);
        s.clone()
    });
    found.then(|| n.clone())
}

/// Whether a function type inside `t` has a size that is a rigid unknown numbered `from` or
/// later.
fn late_size_in_function(t: &T, from: u32) -> bool {
    match t {
        T::Arrow(..) => {
            let mut late = false;
            map_sizes(t, &mut |s| {
                late |= mentions_unknown_from(s, from);
                s.clone()
            });
            late
        }
        T::Array(_, e) => late_size_in_function(e, from),
        T::Record(fs) => fs.values().any(|t| late_size_in_function(t, from)),
        T::Sum(cs) => cs
            .values()
            .flatten()
            .any(|t| late_size_in_function(t, from)),
        T::Var(_) | T::Prim(_) | T::Param(_) => false,
    }
}
