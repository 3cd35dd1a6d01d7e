//! Definitions: functions, value and type bindings, and the per-definition solving (Section 6.1).

use super::literal::check_literal;
use super::pat::simple_pat_name;
use super::{err, Anon, Checker, Scheme, Scope, TypeAbbr, R};
use crate::infer_ty::{map_sizes, show_prims, size_mentions, Cons, Sz, Tv, T};
use runic_syntax::ast::*;
use runic_syntax::{Diagnostic, Span};
use std::collections::HashSet;
use std::rc::Rc;

impl Checker {
    /// Infer a function (top-level or local) with explicit type/size parameters; returns its
    /// scheme (polymorphic in the explicit parameters only) and its parameter types.
    pub(super) fn infer_function(
        &mut self,
        type_params: &[TypeParam],
        params: &mut [Pat],
        ret: &mut Option<TypeExp>,
        body: &mut Exp,
        top: bool,
    ) -> R<(Scheme, Vec<T>)> {
        let mark = self.scope_mark();
        super::declarations::distinct_type_params(type_params)?;
        let (tparams, sparams) = self.push_type_params(type_params);
        let no_fun: Vec<Name> = type_params
            .iter()
            .filter_map(|tp| match tp {
                TypeParam::Type(n, lifted, _) if *lifted != Liftedness::Lifted => Some(n.clone()),
                _ => None,
            })
            .collect();
        let strict: Vec<Name> = type_params
            .iter()
            .filter_map(|tp| match tp {
                TypeParam::Type(n, Liftedness::Unlifted, _) => Some(n.clone()),
                _ => None,
            })
            .collect();
        self.size_lifted_params
            .extend(type_params.iter().filter_map(|tp| match tp {
                TypeParam::Type(n, Liftedness::SizeLifted, _) => Some(n.clone()),
                _ => None,
            }));
        check_distinct_params(params)?;
        let implicit_start = self.implicit.len();
        let deferred_start = self.s.deferred.len();
        let mut pts = Vec::new();
        let mut names: Vec<Option<Name>> = Vec::new();
        let mut bound = sparams.clone();
        // Names bound inside a tuple or record parameter pattern.
        let mut inner = Vec::new();
        for p in params.iter_mut() {
            let t = self.s.fresh_var();
            let vars = self.bind_pattern(p, &t, Anon::Implicit, false)?;
            names.push(simple_pat_name(p));
            if names.last().is_some_and(|n| n.is_none()) {
                inner.extend(vars.iter().cloned());
            }
            bound.extend(vars);
            pts.push(t);
        }
        let bt = self.infer(body)?;
        if !top {
            self.check_scope(&mark, &bound, &tparams, body.span)?;
        }
        self.check_anonymous_scope(implicit_start, deferred_start, params)?;
        let rt = match ret {
            Some(te) => {
                let rt = self.convert_type(te, Anon::Exist)?;
                if let Some(n) = inner
                    .iter()
                    .find(|n| crate::infer_ty::type_mentions_size_name(&rt, n))
                {
                    return err(te.span(), format!("The return type uses \"{n}\" as a size, but \"{n}\" is bound inside a tuple or record pattern of a parameter: only a parameter bound by a name of its own, such as \"({n}: i64)\", can be a size of the result."));
                }
                self.s.strict_params = true;
                let r = self.expect(
                    &rt,
                    &bt,
                    body.span,
                    "the body of the function (its declared return type)",
                );
                self.s.strict_params = false;
                r?;
                rt
            }
            None => bt,
        };
        let implicit: Vec<u32> = self.implicit[implicit_start..].to_vec();
        if !top {
            self.implicit.truncate(implicit_start);
        }
        // Name the parameters that later types mention (size-dependent arrows).
        let zp: Vec<T> = pts.iter().map(|t| self.s.zonk(t)).collect();
        let zr = self.s.zonk(&rt);
        let mut ty = zr.clone();
        for (i, pt) in zp.iter().enumerate().rev() {
            let mut name = None;
            if let Some(n) = &names[i] {
                let later = zp[i + 1..]
                    .iter()
                    .chain(std::iter::once(&zr))
                    .any(|t| type_mentions_size(t, n));
                if later {
                    name = Some(n.clone());
                }
            }
            ty = T::Arrow(name, Box::new(pt.clone()), Box::new(ty));
        }
        let poly = !tparams.is_empty() || !sparams.is_empty() || !implicit.is_empty() || top;
        Ok((
            Scheme {
                tparams,
                sparams,
                hidden: vec![],
                exist: vec![],
                implicit,
                no_fun,
                strict,
                poly,
                arity: Some(pts.len()),
                ty,
            },
            pts,
        ))
    }

    /// Bring a declaration's type and size parameters into scope (sizes as `i64` values);
    /// returns the type parameters' and the size parameters' names.
    pub(super) fn push_type_params(&mut self, params: &[TypeParam]) -> (Vec<Name>, Vec<Name>) {
        let (mut tparams, mut sparams) = (Vec::new(), Vec::new());
        for tp in params {
            match tp {
                TypeParam::Size(n, _) => {
                    self.scopes
                        .push(Scope::Val(n.clone(), Rc::new(Scheme::mono(T::i64()))));
                    sparams.push(n.clone());
                }
                TypeParam::Type(n, _, _) => {
                    self.scopes.push(Scope::TParam(n.clone()));
                    tparams.push(n.clone());
                }
            }
        }
        (tparams, sparams)
    }

    fn begin_def(&mut self, span: Span) {
        self.var_start = self.s.vars.len();
        self.exp_rec.clear();
        self.pat_rec.clear();
        self.occs.clear();
        self.lits.clear();
        self.eqs.clear();
        self.matches.clear();
        self.irrefutable.clear();
        self.origins.clear();
        self.implicit.clear();
        self.size_witnesses.clear();
        self.ascribed.clear();
        self.unlifted.clear();
        self.strict_unlifted.clear();
        self.lambda_params.clear();
        self.size_lifted_params.clear();
        self.no_fun_sites.clear();
        self.def_span = span;
        self.scopes.clear();
        self.s.flex_log.clear();
        self.s.var_log.clear();
        self.s.deferred.clear();
        self.s.escaped.clear();
    }

    /// Check a top-level value binding; records everything in `info` and returns its scheme.
    /// Errors are pushed to `self.errors` and a scheme that fits any use is returned, so
    /// that later uses do not cascade.
    pub fn check_valbind(&mut self, vb: &mut ValBind, main_file: bool, dec_index: usize) -> Scheme {
        self.begin_def(vb.span);
        let r = self.check_valbind_inner(vb, main_file, dec_index);
        self.scopes.clear();
        match r {
            Ok(sc) => sc,
            Err(d) => {
                self.errors.push(*d);
                Scheme {
                    tparams: vec!["a".into()],
                    poly: true,
                    ty: T::Param("a".into()),
                    ..Scheme::default()
                }
            }
        }
    }

    fn check_valbind_inner(
        &mut self,
        vb: &mut ValBind,
        main_file: bool,
        dec_index: usize,
    ) -> R<Scheme> {
        if vb.name == "&&" || vb.name == "||" || vb.name == "=" {
            return err(
                vb.name_span,
                format!("The operator \"{}\" cannot be redefined.", vb.name),
            );
        }
        super::declarations::function_uses_params(
            &vb.name,
            &vb.type_params,
            &vb.params,
            vb.ret.as_ref(),
        )?;
        let (mut sc, _pts) = self.infer_function(
            &vb.type_params,
            &mut vb.params,
            &mut vb.ret,
            &mut vb.body,
            true,
        )?;
        self.solve_def()?;
        // Generalise: remaining free type variables of the type become type parameters.
        let zty = self.s.zonk(&sc.ty);
        let mut free = Vec::new();
        free_vars(&zty, &mut free);
        let mut used: HashSet<Name> = sc.tparams.iter().cloned().collect();
        let mut letter = 0usize;
        let explicit = vb
            .type_params
            .iter()
            .any(|p| matches!(p, TypeParam::Type(..)));
        for v in free {
            if self.s.vars[v as usize].bound.is_some() {
                continue;
            }
            if explicit {
                return err(
                    vb.name_span,
                    format!(
                        "The type of \"{}\" is not closed over by its type parameters: \"{}\" has a part that none of them names. Annotate the parameters or add a type parameter.",
                        vb.name,
                        self.s.show(&zty)
                    ),
                );
            }
            let name = loop {
                let cand = if letter < 26 {
                    ((b'a' + letter as u8) as char).to_string()
                } else {
                    format!("t{letter}")
                };
                letter += 1;
                if !used.contains(&cand) {
                    break cand;
                }
            };
            used.insert(name.clone());
            self.s.vars[v as usize].bound = Some(T::Param(name.clone()));
            sc.tparams.push(name);
        }
        // A lambda's functional parameter whose type nothing fixes (`(\g -> 0) f` with `f`
        // polymorphic) would be instantiated arbitrarily.
        for (t, at) in std::mem::take(&mut self.lambda_params) {
            let z = self.s.zonk(&t);
            let mut open = Vec::new();
            free_vars(&z, &mut open);
            if matches!(z, T::Arrow(..)) && !open.is_empty() {
                return err(
                    at,
                    format!(
                        "Type is ambiguous: nothing fixes the type \"{}\" of this functional parameter. Add a type annotation.",
                        self.s.show(&z)
                    ),
                );
            }
        }
        // Everything else still free is unit.
        for v in self.var_start..self.s.vars.len() {
            if self.s.vars[v].bound.is_none() {
                self.s.vars[v].bound = Some(T::unit());
            }
        }
        sc.ty = self.s.zonk(&sc.ty);
        let written: Vec<Name> = vb
            .type_params
            .iter()
            .filter_map(|p| match p {
                TypeParam::Type(n, ..) => Some(n.clone()),
                TypeParam::Size(..) => None,
            })
            .collect();
        self.post_checks(&written)?;
        self.export_def();
        let is_entry = main_file && (vb.kind == ValKind::Entry || vb.name == "main");
        if is_entry {
            self.entry_point(vb, &sc, dec_index)?;
        }
        Ok(sc)
    }

    /// Defaulting (Section 6.4), literal range checks and ambiguity errors.
    fn solve_def(&mut self) -> R<()> {
        for v in self.var_start..self.s.vars.len() {
            if self.s.vars[v].bound.is_some() {
                continue;
            }
            if let Cons::Prims(ps) = &self.s.vars[v].cons {
                let pick = if ps.len() == 1 {
                    Some(ps[0])
                } else if ps.contains(&PrimType::I32) {
                    Some(PrimType::I32)
                } else if ps.contains(&PrimType::F64) {
                    Some(PrimType::F64)
                } else {
                    None
                };
                match pick {
                    Some(p) => {
                        self.s.vars[v].cons = Cons::Free;
                        self.s.vars[v].bound = Some(T::Prim(p));
                    }
                    None => {
                        let span = self.origin(v as Tv);
                        return err(
                            span,
                            format!("Type is ambiguous (could be one of {}).", show_prims(ps)),
                        );
                    }
                }
            }
        }
        for lc in std::mem::take(&mut self.lits) {
            if let T::Prim(p) = self.s.zonk(&lc.ty) {
                check_literal(&lc.lit, lc.negated, p, lc.span)?;
            }
        }
        for v in self.var_start..self.s.vars.len() {
            if self.s.vars[v].bound.is_some() {
                continue;
            }
            let msg = match &self.s.vars[v].cons {
                Cons::Fields(fs) => format!(
                    "Type is ambiguous: a record with field{} {} is used here, but its full type is not known. Add a type annotation.",
                    if fs.len() == 1 { "" } else { "s" },
                    fs.keys().map(|k| format!("\"{k}\"")).collect::<Vec<_>>().join(", ")
                ),
                Cons::Constrs(cs) => format!(
                    "Type is ambiguous: a sum type with constructor{} {} is used here, but its full type is not known. Add a type annotation.",
                    if cs.len() == 1 { "" } else { "s" },
                    cs.keys().map(|k| format!("\"#{k}\"")).collect::<Vec<_>>().join(", ")
                ),
                _ => continue,
            };
            let span = self.origin(v as Tv);
            return err(span, msg);
        }
        Ok(())
    }

    fn origin(&self, v: Tv) -> Span {
        // The variable may have been merged into another; find any origin bound to it.
        for (w, s) in &self.origins {
            if *w == v {
                return *s;
            }
        }
        for (w, s) in &self.origins {
            if let T::Var(x) = self.s.shallow(&T::Var(*w)) {
                if x == v {
                    return *s;
                }
            }
        }
        self.def_span
    }

    /// Checks once a definition's types are solved; `written` are its explicit type
    /// parameters (the only ones on which equality is an error: a generalised parameter
    /// stands for whatever the uses instantiate it with).
    fn post_checks(&mut self, written: &[Name]) -> R<()> {
        // Sizes accepted while still unsolved, compared again now that they are solved.
        if let Some((clash, at)) = self.s.deferred_clash() {
            return err(at.unwrap_or(self.def_span), clash.message);
        }
        for (t, span) in std::mem::take(&mut self.eqs) {
            let z = self.s.zonk(&t);
            if t_functional(&z) {
                return err(
                    span,
                    format!(
                        "Cannot compare functions: equality is not defined on the functional type \"{}\".",
                        self.s.show(&z)
                    ),
                );
            }
            if generalised_param_in(&z, written).is_some() {
                return err(
                    span,
                    "Type is ambiguous (must be equality type): the values compared here can be of any type. Add a type annotation to disambiguate the type.",
                );
            }
            if let Some(p) = type_param_in(&z, written) {
                return err(
                    span,
                    format!(
                        "Cannot compare values of type \"{}\": equality is not defined on the type parameter \"{p}\", which may stand for any type.",
                        self.s.show(&z)
                    ),
                );
            }
        }
        for (span, t) in std::mem::take(&mut self.irrefutable) {
            if let T::Sum(cs) = self.s.zonk(&t) {
                if cs.len() > 1 {
                    return err(span, "Refutable pattern not allowed here: the sum type has several constructors; use \"match\".");
                }
            }
        }
        for (span, t, pats) in std::mem::take(&mut self.matches) {
            let z = self.s.zonk(&t);
            let rows: Vec<Vec<&Pat>> = pats.iter().map(|p| vec![p]).collect();
            if !crate::exhaustive::covers(&rows, &[z]) {
                return err(span, "Unmatched cases in match expression.");
            }
        }
        let recs: Vec<(T, Span)> = self
            .exp_rec
            .iter()
            .map(|(_, t, s)| (t.clone(), *s))
            .collect();
        for (t, span) in recs {
            let z = self.s.zonk(&t);
            if let Some(bad) = array_of_functions(&z) {
                let shown = self.s.show(&bad);
                if matches!(&bad, T::Sum(cs) if abstract_marked(cs, '~')) {
                    return err(
                        span,
                        format!("Cannot create arrays of \"{shown}\": it is a size-lifted abstract type, whose values may differ in size."),
                    );
                }
                if matches!(&bad, T::Sum(cs) if lifted_abstract(cs)) {
                    return err(
                        span,
                        format!("Cannot create arrays of \"{shown}\": it is a lifted abstract type, whose values might contain functions."),
                    );
                }
                return err(
                    span,
                    format!("Arrays of functions are not allowed: the element type \"{shown}\" is functional."),
                );
            }
        }
        self.check_liftedness()?;
        self.check_sum_payload_sizes()?;
        // A size that is the size of a `let`-bound value in scope at the use has a run-time
        // name there.
        let subst = &self.s;
        for oc in &mut self.occs {
            for (_, sz, _) in &mut oc.sizes {
                *sz = name_unknowns(&subst.size(sz), &oc.named);
            }
        }
        for oc in &self.occs {
            for (n, sz, readable) in &oc.sizes {
                // A solution that is unsolved, or that names a size only known inside some
                // other expression (a rigid unknown), cannot be computed at the call.
                let sol = self.s.size(sz);
                if *readable || !unknowable(&sol) {
                    continue;
                }
                let msg = if matches!(sol, Sz::Flex(_)) {
                    format!(
                        "Ambiguous size: the size parameter \"{n}\" of \"{}\" cannot be inferred here. Add a type annotation such as \":> [k]t\".",
                        oc.name
                    )
                } else {
                    format!(
                        "Causality check: the size parameter \"{n}\" of \"{}\" is the size of a value that has no name here, so it is not known when \"{}\" runs. Bind that value with its size first (`let [k] ys = ...`) and pass `ys`.",
                        oc.name, oc.name
                    )
                };
                return err(oc.span, msg);
            }
        }
        Ok(())
    }

    /// Move the definition's node types into `info`.
    fn export_def(&mut self) {
        let exps = std::mem::take(&mut self.exp_rec);
        if exps.iter().any(|(id, _, _)| id.0 < self.id_guard) {
            self.id_collision = true;
        }
        for (id, t, _) in exps {
            let ty = self.export(&t);
            self.info.exp_types.insert(id, ty);
        }
        let pats = std::mem::take(&mut self.pat_rec);
        for (id, t) in pats {
            let ty = self.export(&t);
            self.info.pat_types.insert(id, ty);
        }
        let occs = std::mem::take(&mut self.occs);
        for oc in occs {
            let sizes = oc
                .sizes
                .iter()
                .map(|(n, s, _)| (n.clone(), self.export_size(s)))
                .collect();
            self.info.size_args.insert(oc.id, sizes);
        }
    }

    /// Check a type binding; returns the abbreviation it defines (the unit type after an
    /// error, which is pushed to `self.errors`).
    pub fn check_typebind(&mut self, tb: &mut TypeBind) -> Rc<TypeAbbr> {
        self.begin_def(tb.span);
        self.push_type_params(&tb.params);
        // The abbreviation stays usable after these errors, so that uses do not cascade.
        if let Err(d) = abbreviation_liftedness(tb)
            .and_then(|()| super::declarations::distinct_type_params(&tb.params))
            .and_then(|()| super::declarations::abbreviation_uses_sizes(tb))
        {
            self.errors.push(*d);
        }
        let r = self.convert_type(&mut tb.def, Anon::Exist);
        self.scopes.clear();
        let body = match r {
            Ok(t) => {
                let t = self.s.zonk(&t);
                self.export_def();
                if let Err(d) = abstract_liftedness(tb, &t) {
                    self.errors.push(*d);
                }
                t
            }
            Err(d) => {
                self.errors.push(*d);
                T::unit()
            }
        };
        Rc::new(TypeAbbr {
            params: tb.params.clone(),
            body,
            lifted: tb.lifted,
        })
    }
}

/// A name may be bound only once by all the parameters of one function together.
pub(super) fn check_distinct_params(params: &[Pat]) -> R<()> {
    let mut seen: Vec<(Name, Span)> = Vec::new();
    for (i, p) in params.iter().enumerate() {
        let mut here = Vec::new();
        binders(p, &mut here);
        for (n, s) in here {
            if let Some((_, first)) = seen.iter().find(|(m, _)| *m == n) {
                if seen
                    .iter()
                    .any(|(m, sp)| *m == n && sp.start >= params[i].span.start)
                {
                    // Bound twice inside this one pattern: the pattern check reports it.
                    continue;
                }
                let d = Diagnostic::error(
                    s,
                    format!("Variable \"{n}\" is bound twice in the parameters of this function."),
                )
                .with_related(*first, "first bound here");
                return Err(Box::new(d));
            }
            seen.push((n, s));
        }
    }
    Ok(())
}

/// The names a pattern binds, with where.
fn binders(p: &Pat, out: &mut Vec<(Name, Span)>) {
    match &p.kind {
        PatKind::Var(n) => out.push((n.clone(), p.span)),
        PatKind::Tuple(ps) | PatKind::Constr(_, ps) => ps.iter().for_each(|q| binders(q, out)),
        PatKind::Record(fs) => fs.iter().for_each(|(_, q)| binders(q, out)),
        PatKind::Ascribe(q, _) | PatKind::Attr(_, q) => binders(q, out),
        PatKind::Wildcard | PatKind::Literal { .. } => {}
    }
}

fn type_mentions_size(t: &T, n: &str) -> bool {
    let mut found = false;
    map_sizes(t, &mut |s| {
        if size_mentions(s, n) {
            found = true;
        }
        s.clone()
    });
    found
}

fn free_vars(t: &T, out: &mut Vec<Tv>) {
    match t {
        T::Var(v) if !out.contains(v) => out.push(*v),
        T::Var(_) => {}
        T::Array(_, e) => free_vars(e, out),
        T::Record(fs) => fs.values().for_each(|t| free_vars(t, out)),
        T::Sum(cs) => cs.values().flatten().for_each(|t| free_vars(t, out)),
        T::Arrow(_, a, b) => {
            free_vars(a, out);
            free_vars(b, out)
        }
        _ => {}
    }
}

/// An abstract type declared lifted (`type^`): it may stand for a function type.
fn lifted_abstract(cs: &std::collections::BTreeMap<Name, Vec<T>>) -> bool {
    abstract_marked(cs, '^')
}

/// An abstract type whose unique name ends with `mark` (see `fresh_abstract`).
fn abstract_marked(cs: &std::collections::BTreeMap<Name, Vec<T>>, mark: char) -> bool {
    cs.len() == 1
        && cs
            .keys()
            .all(|c| c.starts_with(super::modules::ABSTRACT) && c.ends_with(mark))
}

/// A `type` abbreviation may contain neither functions nor anonymous or existential sizes,
/// and a `type~` no functions (language.md §6, the type-parameter table).
fn abbreviation_liftedness(tb: &TypeBind) -> R<()> {
    if let Some(span) = find_anonymous_parameter_size(&tb.def) {
        return err(span, format!("Type abbreviation \"{}\" uses an anonymous size in the parameter type of a function type; the size would be hidden. Add a size parameter to \"{}\" and use it there.", tb.name, tb.name));
    }
    if tb.lifted == Liftedness::Lifted {
        return Ok(());
    }
    // A lifted type parameter may stand for a function type, a size-lifted one for an
    // array of any size: used in the definition, they are what the abbreviation holds.
    let lifted_param = |level: Liftedness| {
        tb.params.iter().find_map(|p| match p {
            TypeParam::Type(n, l, span)
                if *l == level && super::declarations::type_exp_mentions(&tb.def, n) =>
            {
                Some(*span)
            }
            _ => None,
        })
    };
    if let Some(span) = find_arrow(&tb.def).or_else(|| lifted_param(Liftedness::Lifted)) {
        let kind = if tb.lifted == Liftedness::Unlifted {
            "Non-lifted"
        } else {
            "Size-lifted"
        };
        return err(span, format!("{kind} type abbreviations may not contain functions; declare \"{}\" with \"type^\".", tb.name));
    }
    if tb.lifted == Liftedness::Unlifted {
        if let Some(span) =
            find_anonymous_size(&tb.def).or_else(|| lifted_param(Liftedness::SizeLifted))
        {
            return err(span, format!("Non-lifted type abbreviations may not use anonymous sizes in their definition; add a size parameter or declare \"{}\" with \"type~\".", tb.name));
        }
    }
    Ok(())
}

/// An abstract type from a module keeps its liftedness inside an abbreviation: a `type` may
/// not hold a `type~` or `type^` one, a `type~` no `type^` one.
fn abstract_liftedness(tb: &TypeBind, t: &T) -> R<()> {
    let holds = |mark| any_abstract(t, mark);
    let what = match tb.lifted {
        Liftedness::Lifted => None,
        _ if holds('^') => Some("lifted types (they may be functions)"),
        Liftedness::Unlifted if holds('~') => Some("size-lifted types"),
        _ => None,
    };
    match what {
        Some(what) => {
            let kind = if tb.lifted == Liftedness::Unlifted {
                "Non-lifted"
            } else {
                "Size-lifted"
            };
            err(
                tb.def.span(),
                format!(
                    "{kind} type abbreviations may not contain {what}; \"{}\" holds one.",
                    tb.name
                ),
            )
        }
        None => Ok(()),
    }
}

fn any_abstract(t: &T, mark: char) -> bool {
    match t {
        T::Sum(cs) if abstract_marked(cs, mark) => true,
        T::Sum(cs) => cs.values().flatten().any(|x| any_abstract(x, mark)),
        T::Array(_, e) => any_abstract(e, mark),
        T::Record(fs) => fs.values().any(|x| any_abstract(x, mark)),
        // Function types are lifted anyway (reported by `abbreviation_liftedness`).
        T::Arrow(..) | T::Var(_) | T::Param(_) | T::Prim(_) => false,
    }
}

fn find_arrow(t: &TypeExp) -> Option<Span> {
    match t {
        TypeExp::Arrow(_, _, _, s) => Some(*s),
        TypeExp::Apply(f, _, _) => find_arrow(f),
        TypeExp::Tuple(ts, _) => ts.iter().find_map(find_arrow),
        TypeExp::Record(fs, _) => fs.iter().find_map(|(_, t)| find_arrow(t)),
        TypeExp::Array(_, e, _) | TypeExp::Unique(e, _) | TypeExp::Exists(_, e, _) => find_arrow(e),
        TypeExp::Sum(cs, _) => cs.iter().flat_map(|(_, ts)| ts).find_map(find_arrow),
        TypeExp::Var(..) => None,
    }
}

/// An anonymous size `[]` in the parameter type of a function type (`[]bool -> bool`).
fn find_anonymous_parameter_size(t: &TypeExp) -> Option<Span> {
    match t {
        TypeExp::Arrow(_, p, r, _) => {
            find_anonymous_anywhere(p).or_else(|| find_anonymous_parameter_size(r))
        }
        TypeExp::Apply(f, _, _) => find_anonymous_parameter_size(f),
        TypeExp::Tuple(ts, _) => ts.iter().find_map(find_anonymous_parameter_size),
        TypeExp::Record(fs, _) => fs
            .iter()
            .find_map(|(_, t)| find_anonymous_parameter_size(t)),
        TypeExp::Array(_, e, _) | TypeExp::Unique(e, _) | TypeExp::Exists(_, e, _) => {
            find_anonymous_parameter_size(e)
        }
        TypeExp::Sum(cs, _) => cs
            .iter()
            .flat_map(|(_, ts)| ts)
            .find_map(find_anonymous_parameter_size),
        TypeExp::Var(..) => None,
    }
}

/// An anonymous size `[]` anywhere in `t`, function types included.
fn find_anonymous_anywhere(t: &TypeExp) -> Option<Span> {
    match t {
        TypeExp::Array(SizeExp::Anon(s), _, _) => Some(*s),
        TypeExp::Array(_, e, _) | TypeExp::Unique(e, _) | TypeExp::Exists(_, e, _) => {
            find_anonymous_anywhere(e)
        }
        TypeExp::Arrow(_, p, r, _) => {
            find_anonymous_anywhere(p).or_else(|| find_anonymous_anywhere(r))
        }
        TypeExp::Apply(f, arg, s) => match arg.as_ref() {
            TypeArg::Size(SizeExp::Anon(_)) => Some(*s),
            TypeArg::Type(a) => find_anonymous_anywhere(a),
            TypeArg::Size(_) => None,
        }
        .or_else(|| find_anonymous_anywhere(f)),
        TypeExp::Tuple(ts, _) => ts.iter().find_map(find_anonymous_anywhere),
        TypeExp::Record(fs, _) => fs.iter().find_map(|(_, t)| find_anonymous_anywhere(t)),
        TypeExp::Sum(cs, _) => cs
            .iter()
            .flat_map(|(_, ts)| ts)
            .find_map(find_anonymous_anywhere),
        TypeExp::Var(..) => None,
    }
}

/// An anonymous size `[]` or an existential `?[n].` outside function types.
fn find_anonymous_size(t: &TypeExp) -> Option<Span> {
    match t {
        TypeExp::Array(SizeExp::Anon(s), _, _) => Some(*s),
        TypeExp::Exists(_, _, s) => Some(*s),
        TypeExp::Array(_, e, _) | TypeExp::Unique(e, _) => find_anonymous_size(e),
        TypeExp::Apply(f, _, _) => find_anonymous_size(f),
        TypeExp::Tuple(ts, _) => ts.iter().find_map(find_anonymous_size),
        TypeExp::Record(fs, _) => fs.iter().find_map(|(_, t)| find_anonymous_size(t)),
        TypeExp::Sum(cs, _) => cs
            .iter()
            .flat_map(|(_, ts)| ts)
            .find_map(find_anonymous_size),
        TypeExp::Arrow(..) | TypeExp::Var(..) => None,
    }
}

impl Checker {
    /// Functions may not be the result of `if`/`match`, a loop parameter, or an instance of
    /// an unlifted type parameter (language.md §6, the type-parameter table).
    fn check_liftedness(&mut self) -> R<()> {
        for (t, span, what) in std::mem::take(&mut self.no_fun_sites) {
            let z = self.s.zonk(&t);
            if t_functional(&z) {
                let shown = self.s.show(&z);
                return err(
                    span,
                    format!("{what} (its type \"{shown}\" is a function type)."),
                );
            }
        }
        for (t, name, span) in std::mem::take(&mut self.unlifted) {
            let z = self.s.zonk(&t);
            if t_functional(&z) {
                let shown = self.s.show(&z);
                let at = if span == Span::default() {
                    self.def_span
                } else {
                    span
                };
                return err(at, format!("Cannot instantiate the unlifted type parameter \"'{name}\" with the functional type \"{shown}\" (declare it \"'^{name}\" to allow functions)."));
            }
        }
        for (t, name, span) in std::mem::take(&mut self.strict_unlifted) {
            let z = self.s.zonk(&t);
            if let Some(what) = size_lifted_in(&z, &self.size_lifted_params) {
                let shown = self.s.show(&z);
                let what = self.s.show(&what);
                let at = if span == Span::default() {
                    self.def_span
                } else {
                    span
                };
                let with = if shown == what {
                    format!("the size-lifted type \"{what}\"")
                } else {
                    format!("\"{shown}\", which holds the size-lifted type \"{what}\"")
                };
                return err(at, format!("Cannot instantiate the unlifted type parameter \"'{name}\" with {with}: a value of \"'{name}\" may be an array element, and values of a size-lifted type may differ in size (declare it \"'~{name}\")."));
            }
        }
        Ok(())
    }
}

/// A size-lifted type inside `t` outside function types: one of the definition's `'~b`
/// parameters, or an abstract `type~`.
fn size_lifted_in(t: &T, params: &[Name]) -> Option<T> {
    let inner = |t: &T| size_lifted_in(t, params);
    match t {
        T::Param(p) if params.contains(p) => Some(t.clone()),
        T::Sum(cs) if abstract_marked(cs, '~') => Some(t.clone()),
        T::Array(_, e) => inner(e),
        T::Record(fs) => fs.values().find_map(inner),
        T::Sum(cs) => cs.values().flatten().find_map(inner),
        _ => None,
    }
}

fn t_functional(t: &T) -> bool {
    match t {
        T::Arrow(..) => true,
        T::Sum(cs) if lifted_abstract(cs) => true,
        T::Array(_, e) => t_functional(e),
        T::Record(fs) => fs.values().any(t_functional),
        T::Sum(cs) => cs.values().flatten().any(t_functional),
        _ => false,
    }
}

/// One of the type parameters `written` inside `t`: a type with no equality (its
/// instances may be functions or abstract types).
fn type_param_in(t: &T, written: &[Name]) -> Option<Name> {
    let inner = |t: &T| type_param_in(t, written);
    match t {
        T::Param(p) if written.contains(p) => Some(p.clone()),
        T::Array(_, e) => inner(e),
        T::Record(fs) => fs.values().find_map(inner),
        T::Sum(cs) => cs.values().flatten().find_map(inner),
        _ => None,
    }
}

/// A type parameter inside `t` that generalising this top-level definition made (one not
/// `written`, and not a local function's `'N`): a type its uses never fixed.
fn generalised_param_in(t: &T, written: &[Name]) -> Option<Name> {
    let inner = |t: &T| generalised_param_in(t, written);
    match t {
        T::Param(p) if !written.contains(p) && !p.starts_with('\'') => Some(p.clone()),
        T::Array(_, e) => inner(e),
        T::Record(fs) => fs.values().find_map(inner),
        T::Sum(cs) => cs.values().flatten().find_map(inner),
        _ => None,
    }
}

fn array_of_functions(t: &T) -> Option<T> {
    match t {
        T::Array(_, e) if t_functional(e) => Some((**e).clone()),
        T::Array(_, e) if matches!(&**e, T::Sum(cs) if abstract_marked(cs, '~')) => {
            Some((**e).clone())
        }
        T::Array(_, e) => array_of_functions(e),
        T::Record(fs) => fs.values().find_map(array_of_functions),
        T::Sum(cs) => cs.values().flatten().find_map(array_of_functions),
        T::Arrow(_, a, b) => array_of_functions(a).or_else(|| array_of_functions(b)),
        _ => None,
    }
}

/// A size term that cannot be evaluated where it is used: unsolved, or built from a rigid
/// unknown (a size that exists only as the dimension of some value).
impl Checker {
    /// `let v : t = #foo xs` where `t` has another constructor with an anonymous size in
    /// its payload: nothing says what that size is.
    fn check_sum_payload_sizes(&mut self) -> R<()> {
        let ascribed = std::mem::take(&mut self.ascribed);
        for (span, t, before) in ascribed {
            // An anonymous size the ascription made that no equation ever mentioned.
            let settled = |s: &Sz| match s {
                Sz::Flex(_) => false,
                Sz::Unknown(u) if *u >= before => {
                    let it = Sz::Unknown(*u);
                    self.s
                        .deferred
                        .iter()
                        .any(|(a, b, _)| [a, b].iter().any(|x| self.s.size(x) == it))
                        || self.s.flex.iter().any(|f| f.as_ref() == Some(&it))
                }
                _ => true,
            };
            if let Some(c) = unsolved_payload_size(&self.s.zonk(&t), &settled) {
                return err(
                    span,
                    format!("The size of an array in the payload of constructor \"#{c}\" of the ascribed type is ambiguous: nothing here determines it. Name it with a size parameter of the type."),
                );
            }
        }
        Ok(())
    }
}

/// A constructor of a sum type in `t` whose payload has a size that is not `settled`.
fn unsolved_payload_size(t: &T, settled: &dyn Fn(&Sz) -> bool) -> Option<Name> {
    match t {
        T::Sum(cs) => cs.iter().find_map(|(c, ts)| {
            ts.iter().find_map(|p| {
                let mut open = false;
                map_sizes(p, &mut |s| {
                    open |= !settled(s);
                    s.clone()
                });
                open.then(|| c.clone())
                    .or_else(|| unsolved_payload_size(p, settled))
            })
        }),
        T::Array(_, e) => unsolved_payload_size(e, settled),
        T::Record(fs) => fs.values().find_map(|f| unsolved_payload_size(f, settled)),
        T::Arrow(..) | T::Var(_) | T::Prim(_) | T::Param(_) => None,
    }
}

/// `s` with each rigid unknown that `named` gives a name replaced by that name.
fn name_unknowns(s: &Sz, named: &[(u32, Name)]) -> Sz {
    match s {
        Sz::Unknown(u) => match named.iter().rev().find(|(v, _)| v == u) {
            Some((_, n)) => Sz::Name(n.clone()),
            None => s.clone(),
        },
        Sz::Op(o, a, b) => Sz::Op(
            o,
            Box::new(name_unknowns(a, named)),
            Box::new(name_unknowns(b, named)),
        ),
        _ => s.clone(),
    }
}

fn unknowable(s: &Sz) -> bool {
    match s {
        Sz::Flex(_) | Sz::Unknown(_) => true,
        Sz::Op(_, a, b) => unknowable(a) || unknowable(b),
        Sz::Name(_) | Sz::Const(_) | Sz::Exp(_) => false,
    }
}
