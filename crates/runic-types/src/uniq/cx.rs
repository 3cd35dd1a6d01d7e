//! The state of the alias analysis of one definition: variables with their aliases, what has
//! been consumed (and when), and the rules checked at each use and consumption.

use super::{may_alias, type_mentions_unique, type_unique, Set, UniqSig};
use crate::ty::Type;
use crate::TypeInfo;
use runic_syntax::ast::*;
use runic_syntax::{Diagnostic, SourceMap, Span};
use std::collections::HashMap;

/// The aliases of a value, per component when it is a tuple.
#[derive(Clone, Debug, Default)]
pub(super) struct Al {
    pub all: Set,
    pub parts: Option<Vec<Al>>,
    /// Per field, for a record built in place.
    pub fields: Option<Vec<(Name, Al)>>,
}

impl Al {
    pub fn of(all: Set) -> Al {
        Al {
            all,
            parts: None,
            fields: None,
        }
    }

    /// The aliases with every id renamed by `f`.
    pub fn rename(&self, f: &impl Fn(usize) -> usize) -> Al {
        Al {
            all: self.all.iter().map(|v| f(*v)).collect(),
            parts: self
                .parts
                .as_ref()
                .map(|ps| ps.iter().map(|p| p.rename(f)).collect()),
            fields: self
                .fields
                .as_ref()
                .map(|fs| fs.iter().map(|(n, p)| (n.clone(), p.rename(f))).collect()),
        }
    }

    /// Component `k` of `n`, or everything when the components are not known.
    pub fn part(&self, k: usize, n: usize) -> Al {
        match &self.parts {
            Some(ps) if ps.len() == n => ps[k].clone(),
            _ => Al::of(self.all.clone()),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Kind {
    /// A variable of the program, or a component of a tuple-typed one.
    Local,
    /// A top-level definition used by the function (a free variable of it).
    Global,
    /// A fresh name for the value of an expression, described as "the result of ...".
    Result(String),
}

pub(super) struct Var {
    pub name: Name,
    pub span: Span,
    pub consumable: bool,
    /// Everything this variable's value may share memory with (its own id included, or
    /// the ids of its components).
    pub aliases: Set,
    pub parts: Option<Vec<Set>>,
    pub kind: Kind,
    /// Why the value is not consumable, when that is not that it lacks a `*`.
    pub why_not: Option<String>,
    /// A local function: its signature and closure.
    pub sig: Option<(UniqSig, Closure)>,
    /// May be (part of) a top-level definition: a result aliasing it is not fresh.
    pub global_like: bool,
    /// A parameter (or local) of function type whose results may alias anything.
    pub opaque_fn: bool,
    /// Per field, for a variable bound to a record built in place.
    pub fields: Option<Vec<(Name, Al)>>,
}

impl Var {
    /// Can this value be a top-level definition (so that a result aliasing it is not fresh)?
    pub fn is_global_like(&self) -> bool {
        self.kind == Kind::Global || self.global_like
    }
}

/// What a function value captures: what its result aliases besides its arguments, and the
/// outer variables its body uses.
#[derive(Clone, Debug, Default)]
pub(super) struct Closure {
    pub ret: Set,
    pub free: Set,
}

/// The analysis state of one definition.
pub(super) struct Cx<'a> {
    pub info: &'a TypeInfo,
    pub sigs: &'a HashMap<Name, UniqSig>,
    pub sm: &'a SourceMap,
    pub vars: Vec<Var>,
    pub scope: Vec<(Name, usize)>,
    /// The pseudo-variable standing for each top-level definition used.
    globals: HashMap<Name, usize>,
    /// Consumed ids: where, and the tick of the consumption.
    pub consumed: HashMap<usize, (Span, u64)>,
    pub tick: u64,
    pub n_consumptions: usize,
    /// Every use of a variable: the variable and the ids it may alias.
    pub uses: Vec<(usize, Set)>,
    /// The closure of the last function value evaluated (a lambda or local function).
    pub last_fn: Option<(UniqSig, Closure)>,
    /// Variables with ids below this are bound outside the innermost loop body, while
    /// condition or function, and what that boundary is.
    pub boundary: Vec<(usize, &'static str)>,
    /// Binding loop parameters: an ascription without `*` makes them not consumable.
    pub binding_loop_params: bool,
    pub errors: Vec<Diagnostic>,
}

impl<'a> Cx<'a> {
    pub fn new(info: &'a TypeInfo, sigs: &'a HashMap<Name, UniqSig>, sm: &'a SourceMap) -> Self {
        Cx {
            info,
            sigs,
            sm,
            vars: Vec::new(),
            scope: Vec::new(),
            globals: HashMap::new(),
            consumed: HashMap::new(),
            tick: 0,
            n_consumptions: 0,
            uses: Vec::new(),
            last_fn: None,
            boundary: Vec::new(),
            binding_loop_params: false,
            errors: Vec::new(),
        }
    }

    pub fn lookup(&self, name: &str) -> Option<usize> {
        self.scope
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }

    fn push_var(&mut self, name: &Name, span: Span, consumable: bool, kind: Kind) -> usize {
        let id = self.vars.len();
        self.vars.push(Var {
            name: name.clone(),
            span,
            consumable,
            aliases: Set::from([id]),
            parts: None,
            kind,
            why_not: None,
            sig: None,
            global_like: false,
            opaque_fn: false,
            fields: None,
        });
        id
    }

    /// A fresh name for an expression's value (not in scope).
    pub fn fresh(&mut self, what: String, span: Span, consumable: bool) -> usize {
        self.push_var(&what.clone(), span, consumable, Kind::Result(what))
    }

    /// Binds `name` to a value with aliases `al` and type `ty`; a tuple-typed variable gets
    /// one id per component, so that its components can be consumed separately.
    pub fn new_var(
        &mut self,
        name: &Name,
        span: Span,
        consumable: bool,
        al: &Al,
        ty: Option<&Type>,
    ) -> usize {
        let id = self.push_var(name, span, consumable, Kind::Local);
        let comps = ty.and_then(|t| t.as_tuple()).map(|ts| {
            ts.into_iter()
                .map(|t| may_alias(Some(t)))
                .collect::<Vec<_>>()
        });
        match comps {
            Some(comps) => {
                let n = comps.len();
                let mut parts = Vec::new();
                let mut all = Set::new();
                for (k, aliasing) in comps.into_iter().enumerate() {
                    if !aliasing {
                        parts.push(Set::new());
                        continue;
                    }
                    let mut s = al.part(k, n).all;
                    let c = self.push_var(name, span, consumable, Kind::Local);
                    s.insert(c);
                    self.vars[c].aliases = s.clone();
                    all.extend(s.iter().copied());
                    parts.push(s);
                }
                self.vars[id].aliases = all;
                self.vars[id].parts = Some(parts);
            }
            None => {
                self.vars[id].aliases.extend(al.all.iter().copied());
            }
        }
        self.scope.push((name.clone(), id));
        id
    }

    /// The aliases of a use of variable `v`.
    pub fn var_al(&self, v: usize) -> Al {
        let var = &self.vars[v];
        Al {
            all: var.aliases.clone(),
            parts: var
                .parts
                .as_ref()
                .map(|ps| ps.iter().map(|p| Al::of(p.clone())).collect()),
            fields: var.fields.clone(),
        }
    }

    /// The pseudo-variable of the top-level definition `name`: it aliases only itself and
    /// cannot be consumed.
    pub fn global(&mut self, name: &Name, span: Span) -> usize {
        if let Some(v) = self.globals.get(name) {
            return *v;
        }
        let shown = super::display_name(name).to_string();
        let id = self.push_var(&shown, span, false, Kind::Global);
        self.globals.insert(name.clone(), id);
        id
    }

    /// Binds the variables of `p` to a value with aliases `al`; their ids go to `out`.
    pub fn bind_pat(&mut self, p: &Pat, al: &Al, consumable: bool, out: &mut Vec<usize>) {
        let ty = self.info.pat_types.get(&p.id);
        let aliasing = may_alias(ty);
        match &p.kind {
            PatKind::Var(n) => {
                let al = if aliasing { al.clone() } else { Al::default() };
                let first = self.vars.len();
                self.new_var(n, p.span, consumable, &al, ty);
                if matches!(ty, Some(Type::Arrow { .. })) {
                    self.vars[first].opaque_fn = true;
                }
                self.vars[first].fields = al.fields.clone();
                out.extend(first..self.vars.len());
            }
            PatKind::Tuple(ps) => {
                for (k, q) in ps.iter().enumerate() {
                    let part = al.part(k, ps.len());
                    self.bind_pat(q, &part, consumable, out);
                }
            }
            PatKind::Record(fs) => {
                for (_, q) in fs {
                    self.bind_pat(q, &Al::of(al.all.clone()), consumable, out);
                }
            }
            PatKind::Constr(_, ps) => {
                for q in ps {
                    self.bind_pat(q, &Al::of(al.all.clone()), consumable, out);
                }
            }
            PatKind::Ascribe(q, t) => {
                let c = if self.binding_loop_params {
                    type_mentions_unique(t)
                } else {
                    consumable || type_mentions_unique(t)
                };
                self.bind_pat(q, al, c, out)
            }
            PatKind::Attr(_, q) => self.bind_pat(q, al, consumable, out),
            PatKind::Wildcard | PatKind::Literal { .. } => {}
        }
    }

    pub fn loc(&self, span: Span) -> String {
        let lc = self.sm.get(span.file).line_col(span.start as usize);
        format!("{}:{}", lc.line, lc.col)
    }

    /// The source text of a span (for types in messages).
    pub fn text(&self, span: Span) -> String {
        let t = &self.sm.get(span.file).text;
        t.get(span.start as usize..span.end as usize)
            .unwrap_or("")
            .to_string()
    }

    /// A use of variable `v` at `span`: an error if it or an alias was consumed.
    pub fn use_var(&mut self, v: usize, span: Span) {
        let mut ids = self.vars[v].aliases.clone();
        ids.insert(v);
        // A function value uses what it captures.
        if let Some((_, c)) = &self.vars[v].sig {
            ids.extend(c.free.iter().copied());
        }
        self.uses.push((v, ids.clone()));
        self.report_consumed(&ids, Some(v), 0, span);
    }

    /// Reports the ids of `ids` consumed after tick `since`, as a use at `span` (of
    /// variable `used`, if it is one); one diagnostic naming each consumed variable.
    pub fn report_consumed(&mut self, ids: &Set, used: Option<usize>, since: u64, span: Span) {
        let mut hits: Vec<usize> = ids
            .iter()
            .copied()
            .filter(|a| self.consumed.get(a).is_some_and(|(_, t)| *t > since))
            .collect();
        if hits.is_empty() {
            return;
        }
        // The variable used first, then the others in binding order.
        if let Some(u) = used {
            if let Some(k) = hits.iter().position(|h| *h == u) {
                hits.remove(k);
                hits.insert(0, u);
            }
        }
        // Variables the user wrote before fresh names of results.
        hits.sort_by_key(|h| matches!(self.vars[*h].kind, Kind::Result(_)));
        let mut lines: Vec<String> = Vec::new();
        for h in &hits {
            let at = self.loc(self.consumed[h].0);
            let line = match &self.vars[*h].kind {
                Kind::Result(what) => match used {
                    Some(u) => format!(
                        "Using variable \"{}\", which aliases the {what}, but this was consumed at {at}.",
                        self.vars[u].name
                    ),
                    None => format!("Using the {what}, but this was consumed at {at}."),
                },
                _ => format!(
                    "Using variable \"{}\", but this was consumed at {at}.  (Possibly through aliasing.)",
                    self.vars[*h].name
                ),
            };
            if !lines.contains(&line) {
                lines.push(line);
            }
        }
        let mut d = Diagnostic::error(span, lines.remove(0));
        for l in lines.into_iter().take(2) {
            d = d.with_note(l);
        }
        self.errors.push(d);
        // One report per consumption is enough.
        for a in ids.iter().chain(hits.iter()) {
            self.consumed.remove(a);
        }
    }

    /// The tick to pass to `check_held` for a value held from now on.
    pub fn hold(&self) -> u64 {
        self.tick
    }

    /// A value with aliases `ids`, held since `since` while other parts of an expression
    /// were evaluated, is used at `span`: an error if those parts consumed it.
    pub fn check_held(&mut self, ids: &Set, since: u64, span: Span) {
        if self.tick > since {
            self.report_consumed(ids, None, since, span);
        }
    }

    /// Why `v` may not be consumed here, if it may not.
    fn not_consumable(&self, v: usize) -> Option<String> {
        let var = &self.vars[v];
        let name = &var.name;
        if var.kind == Kind::Global {
            return Some(format!(
                "Consuming \"{name}\", which is not consumable: it is a top-level definition (a free variable of this function)."
            ));
        }
        if !var.consumable {
            return Some(match &var.why_not {
                Some(why) => format!("Consuming \"{name}\", which is not consumable: {why}."),
                None => format!("Consuming \"{name}\", which is not consumable."),
            });
        }
        let (start, what) = self.boundary.last()?;
        if v >= *start {
            return None;
        }
        Some(match *what {
            "a loop body" | "a while-loop condition" | "a size expression" => format!(
                "Consuming \"{name}\", which is not consumable inside {what}: it is bound outside it."
            ),
            _ => format!(
                "Consuming variable \"{name}\" inside {what}, but it is bound outside it: a free variable is non-unique there and cannot be consumed."
            ),
        })
    }

    /// Consumes a value with aliases `set` at `span`; `note` explains a declared type.
    pub fn consume_with(&mut self, set: &Set, span: Span, note: Option<String>) {
        self.n_consumptions += 1;
        for &v in set {
            if let Some(mut msg) = self.not_consumable(v) {
                if let Some(n) = &note {
                    msg = format!("{msg} ({n})");
                }
                let var = &self.vars[v];
                let mut d = Diagnostic::error(span, msg);
                if var.kind == Kind::Local {
                    let what = if var.consumable {
                        format!("\"{}\" is bound here", var.name)
                    } else {
                        let n = &var.name;
                        format!("\"{n}\" is bound here, not unique: to consume \"{n}\", declare it unique (*)")
                    };
                    d = d.with_related(var.span, what);
                }
                self.errors.push(d);
                return;
            }
        }
        self.tick += 1;
        // Everything that may share memory with a consumed value is consumed with it.
        let marked: Vec<usize> = (0..self.vars.len())
            .filter(|u| set.contains(u) || !self.vars[*u].aliases.is_disjoint(set))
            .collect();
        for v in marked {
            self.consumed.entry(v).or_insert((span, self.tick));
        }
    }

    pub fn consume(&mut self, set: &Set, span: Span) {
        self.consume_with(set, span, None)
    }

    /// A unique result of a type that holds several arrays (a tuple, record or abstract
    /// type) may not come from a function that does not declare its result unique: for all
    /// we know, its arrays are one. Reports it; true if so.
    fn internal_aliases(&mut self, r: &Al, body: &Exp, what: &str) -> bool {
        if !holds_several_arrays(self.info.exp_types.get(&body.id)) || r.parts.is_some() {
            return false;
        }
        let call = r.all.iter().find_map(|v| match &self.vars[*v].kind {
            Kind::Result(w) if w.starts_with("result of applying") => Some(w.clone()),
            _ => None,
        });
        let Some(call) = call else {
            return false;
        };
        self.errors.push(Diagnostic::error(
            body.span,
            format!("Fresh-declared return value of {what} may have internal aliases: it is the {call}, whose return type is not unique."),
        ));
        true
    }

    /// Is `v` consumable by a function whose own bindings start at `start`?
    fn consumable_from(&self, v: usize, start: usize) -> bool {
        let var = &self.vars[v];
        var.consumable && var.kind != Kind::Global && v >= start
    }

    /// A result declared `ret` (with `*` where it is unique) of `what`, bound from `start`
    /// on: its unique parts alias nothing that is not consumable, nor each other.
    pub fn check_unique_return(
        &mut self,
        ret: &TypeExp,
        r: &Al,
        start: usize,
        body: &Exp,
        what: &str,
    ) {
        let span = body.span;
        let named = !matches!(ret, TypeExp::Tuple(..));
        if named && type_unique(ret) && self.internal_aliases(r, body, what) {
            return;
        }
        // Tuple components and record fields are checked one by one: a unique field may
        // not alias, while its non-unique siblings may.
        let (comps, parts): (Vec<&TypeExp>, Vec<Al>) = match (ret, &r.fields) {
            (TypeExp::Tuple(ts, _), _) if ts.len() >= 2 => ts
                .iter()
                .enumerate()
                .map(|(k, t)| (t, r.part(k, ts.len())))
                .unzip(),
            (TypeExp::Record(fs, _), Some(vals)) if fs.len() >= 2 => fs
                .iter()
                .map(|(name, t)| {
                    let al = vals.iter().find(|(m, _)| m == name).map(|(_, a)| a.clone());
                    (t, al.unwrap_or_else(|| Al::of(r.all.clone())))
                })
                .unzip(),
            (t, _) => (vec![t], vec![r.clone()]),
        };
        let n = comps.len();
        for (k, t) in comps.iter().enumerate() {
            if !type_mentions_unique(t) {
                continue;
            }
            if let Some(v) = parts[k]
                .all
                .iter()
                .copied()
                .find(|v| !self.consumable_from(*v, start))
            {
                let var = &self.vars[v];
                let d = Diagnostic::error(
                    span,
                    format!(
                        "Fresh-declared return value of {what} is aliased to \"{}\", which is not consumable.",
                        var.name
                    ),
                )
                .with_related(var.span, format!("\"{}\" is bound here", var.name));
                self.errors.push(d);
                return;
            }
        }
        if n < 2 {
            // A unique value built of components (a constructor's payload) that alias
            // each other is not unique either.
            if let (true, Some(ps)) = (type_mentions_unique(comps[0]), &r.parts) {
                let overlap = (0..ps.len())
                    .any(|i| (i + 1..ps.len()).any(|j| !ps[i].all.is_disjoint(&ps[j].all)));
                if overlap {
                    self.errors.push(Diagnostic::error(
                        span,
                        format!(
                            "A unique return value of {what} is aliased to some other component."
                        ),
                    ));
                }
            }
            return;
        }
        // Without known components, only a call's fresh result makes them alias each other.
        let known = r.parts.as_ref().is_some_and(|p| p.len() == n)
            || r.all
                .iter()
                .any(|v| matches!(self.vars[*v].kind, Kind::Result(_)));
        if !known {
            return;
        }
        for i in 0..n {
            for j in i + 1..n {
                if type_mentions_unique(comps[i])
                    && type_mentions_unique(comps[j])
                    && !parts[i].all.is_disjoint(&parts[j].all)
                {
                    let other = if r.parts.is_some() {
                        "component"
                    } else {
                        "tuple component"
                    };
                    self.errors.push(Diagnostic::error(
                        span,
                        format!("A unique tuple element of the return value of {what} is aliased to some other {other}."),
                    ));
                    return;
                }
            }
        }
    }
}

/// Can a value of this type hold more than one array (so that they may be the same)?
fn holds_several_arrays(t: Option<&Type>) -> bool {
    match t {
        Some(Type::Param(_)) => true,
        Some(Type::Record(fs)) => fs.iter().filter(|(_, t)| may_alias(Some(t))).count() >= 2,
        Some(Type::Sum(cs)) => {
            cs.iter()
                .flat_map(|(_, ts)| ts)
                .filter(|t| may_alias(Some(t)))
                .count()
                >= 2
        }
        _ => false,
    }
}
