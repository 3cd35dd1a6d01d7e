//! Uniqueness and consumption (language.md §5.6): an alias analysis of one checked value
//! definition, run after its types are known, that rejects
//! - using a value after it (or something it may alias) was consumed;
//! - consuming a value that is not consumable: a parameter not declared unique (`*`), or a
//!   top-level definition;
//! - consuming, inside a loop body or an anonymous/local function, a variable bound outside it;
//! - a result declared unique that aliases a parameter which is not unique.
//!
//! Consumption happens at in-place updates (`let a[i] = v`, `a with [i] = v`), at arguments
//! for unique parameters (user functions with `*` parameters, `scatter`, `reduce_by_index`),
//! and at the initial value of a loop parameter that the loop body consumes.
//!
//! Aliasing is tracked per variable binding as the set of bindings whose memory it may share
//! (itself included); only values whose type holds arrays (or an unknown type parameter) can
//! alias. A function call's result aliases its arguments unless its return type is unique.

use crate::ty::Type;
use crate::TypeInfo;
use runic_syntax::ast::*;
use runic_syntax::{Diagnostic, SourceMap, Span};
use std::collections::{BTreeSet, HashMap};

/// Which curried parameters of a function consume their argument, and whether its result is
/// unique (aliases nothing).
#[derive(Clone, Debug, Default)]
pub(crate) struct UniqSig {
    pub params: Vec<bool>,
    pub ret_unique: bool,
}

/// The signature of a definition as written.
pub(crate) fn sig_of(vb: &ValBind) -> UniqSig {
    UniqSig {
        params: vb.params.iter().map(pat_unique).collect(),
        ret_unique: vb.ret.as_ref().is_some_and(type_unique),
    }
}

/// The signature of an intrinsic from its type text, where `*` marks unique types.
pub(crate) fn sig_of_text(ty: &str) -> UniqSig {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    let b = ty.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'-' if depth == 0 && b.get(i + 1) == Some(&b'>') => {
                parts.push(ty[start..i].trim());
                start = i + 2;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    parts.push(ty[start..].trim());
    let unique = |p: &str| p.starts_with('*');
    let ret = parts.pop().unwrap_or("");
    UniqSig {
        params: parts.into_iter().map(unique).collect(),
        ret_unique: unique(ret),
    }
}

fn type_unique(t: &TypeExp) -> bool {
    match t {
        TypeExp::Unique(..) => true,
        TypeExp::Tuple(ts, _) => !ts.is_empty() && ts.iter().all(type_unique),
        _ => false,
    }
}

fn type_mentions_unique(t: &TypeExp) -> bool {
    match t {
        TypeExp::Unique(..) => true,
        TypeExp::Tuple(ts, _) => ts.iter().any(type_mentions_unique),
        TypeExp::Record(fs, _) => fs.iter().any(|(_, t)| type_mentions_unique(t)),
        _ => false,
    }
}

/// Does the pattern declare (part of) its value unique?
fn pat_unique(p: &Pat) -> bool {
    match &p.kind {
        PatKind::Ascribe(inner, t) => type_mentions_unique(t) || pat_unique(inner),
        PatKind::Tuple(ps) => ps.iter().any(pat_unique),
        PatKind::Record(fs) => fs.iter().any(|(_, p)| pat_unique(p)),
        PatKind::Attr(_, p) => pat_unique(p),
        _ => false,
    }
}

/// Can a value of this type share memory with another?
fn may_alias(t: Option<&Type>) -> bool {
    match t {
        None => true,
        Some(Type::Prim(_)) | Some(Type::Arrow { .. }) => false,
        Some(Type::Array { .. }) | Some(Type::Param(_)) => true,
        Some(Type::Record(fs)) => fs.iter().any(|(_, t)| may_alias(Some(t))),
        Some(Type::Sum(cs)) => cs.iter().flat_map(|(_, ts)| ts).any(|t| may_alias(Some(t))),
    }
}

type Set = BTreeSet<usize>;

/// The aliases of a value, per component when it is a tuple built in place.
#[derive(Clone, Debug, Default)]
struct Al {
    all: Set,
    parts: Option<Vec<Al>>,
}

impl Al {
    fn of(all: Set) -> Al {
        Al { all, parts: None }
    }
}

struct Var {
    name: Name,
    span: Span,
    consumable: bool,
    aliases: Set,
    /// A top-level definition used by the function (a free variable of it).
    global: bool,
}

/// The analysis state of one definition.
struct Cx<'a> {
    info: &'a TypeInfo,
    sigs: &'a HashMap<Name, UniqSig>,
    sm: &'a SourceMap,
    vars: Vec<Var>,
    scope: Vec<(Name, usize)>,
    /// The pseudo-variable standing for each top-level definition used.
    globals: HashMap<Name, usize>,
    consumed: HashMap<usize, Span>,
    /// Variables with ids below this are bound outside the innermost loop body or function,
    /// and what that boundary is.
    boundary: Vec<(usize, &'static str)>,
    errors: Vec<Diagnostic>,
}

/// The uniqueness errors of the user's definitions in a checked program.
pub(crate) fn check_program(c: &crate::Checked, sm: &SourceMap) -> Vec<Diagnostic> {
    let mut sigs: HashMap<Name, UniqSig> = crate::intrinsics::INTRINSICS
        .iter()
        .map(|(n, _, t)| (n.to_string(), sig_of_text(t)))
        .collect();
    let mut errors = Vec::new();
    for (k, d) in c.program.decs.iter().enumerate() {
        if let Dec::Val(vb) = d {
            if k >= c.prelude_decs && !sm.is_prelude(vb.span.file) {
                errors.extend(check_def(vb, &c.info, &sigs, sm));
            }
            sigs.insert(vb.name.clone(), sig_of(vb));
        }
    }
    errors
}

/// Checks one definition; its errors, located.
fn check_def(
    vb: &ValBind,
    info: &TypeInfo,
    sigs: &HashMap<Name, UniqSig>,
    sm: &SourceMap,
) -> Vec<Diagnostic> {
    let mut cx = Cx {
        info,
        sigs,
        sm,
        vars: Vec::new(),
        scope: Vec::new(),
        globals: HashMap::new(),
        consumed: HashMap::new(),
        boundary: Vec::new(),
        errors: Vec::new(),
    };
    let mut params = Vec::new();
    for p in &vb.params {
        let unique = pat_unique(p);
        cx.bind_pat(p, &Al::default(), unique, &mut params);
    }
    let r = cx.exp(&vb.body);
    if vb.ret.as_ref().is_some_and(type_unique) {
        for v in &r.all {
            let var = &cx.vars[*v];
            if params.contains(v) && !var.consumable {
                cx.errors.push(
                    Diagnostic::error(
                        vb.body.span,
                        format!(
                            "Unique-typed return value of \"{}\" is aliased to \"{}\", which is not consumable.",
                            vb.name, var.name
                        ),
                    )
                    .with_related(var.span, format!("\"{}\" is a parameter without `*`", var.name)),
                );
            }
        }
    }
    cx.errors
}

impl Cx<'_> {
    fn lookup(&self, name: &str) -> Option<usize> {
        self.scope
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }

    fn new_var(&mut self, name: &Name, span: Span, consumable: bool, aliases: &Set) -> usize {
        let id = self.vars.len();
        let mut aliases = aliases.clone();
        aliases.insert(id);
        self.vars.push(Var {
            name: name.clone(),
            span,
            consumable,
            aliases,
            global: false,
        });
        self.scope.push((name.clone(), id));
        id
    }

    /// The pseudo-variable of the top-level definition `name`: it aliases only itself and
    /// cannot be consumed.
    fn global(&mut self, name: &Name, span: Span) -> usize {
        if let Some(v) = self.globals.get(name) {
            return *v;
        }
        let id = self.vars.len();
        self.vars.push(Var {
            name: name.clone(),
            span,
            consumable: false,
            aliases: Set::from([id]),
            global: true,
        });
        self.globals.insert(name.clone(), id);
        id
    }

    /// Binds the variables of `p` to a value with aliases `al`.
    fn bind_pat(&mut self, p: &Pat, al: &Al, consumable: bool, out: &mut Vec<usize>) {
        let aliasing = may_alias(self.info.pat_types.get(&p.id));
        match &p.kind {
            PatKind::Var(n) => {
                let set = if aliasing { al.all.clone() } else { Set::new() };
                out.push(self.new_var(n, p.span, consumable, &set));
            }
            PatKind::Tuple(ps) => {
                for (k, q) in ps.iter().enumerate() {
                    let part = match &al.parts {
                        Some(parts) if parts.len() == ps.len() => parts[k].clone(),
                        _ => Al::of(al.all.clone()),
                    };
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
                let c = consumable || type_mentions_unique(t);
                self.bind_pat(q, al, c, out)
            }
            PatKind::Attr(_, q) => self.bind_pat(q, al, consumable, out),
            PatKind::Wildcard | PatKind::Literal { .. } => {}
        }
    }

    fn loc(&self, span: Span) -> String {
        let lc = self.sm.get(span.file).line_col(span.start as usize);
        format!("{}:{}", lc.line, lc.col)
    }

    /// A use of variable `v` at `span`: an error if it or an alias was consumed.
    fn use_var(&mut self, v: usize, span: Span) {
        let hit = self.vars[v]
            .aliases
            .iter()
            .find_map(|a| self.consumed.get(a).map(|s| (*a, *s)));
        if let Some((_, at)) = hit {
            let msg = format!(
                "Using variable \"{}\", but this was consumed at {}.  (Possibly through aliasing.)",
                self.vars[v].name,
                self.loc(at)
            );
            self.errors.push(Diagnostic::error(span, msg));
            // One report per consumption is enough.
            for a in self.vars[v].aliases.clone() {
                self.consumed.remove(&a);
            }
        }
    }

    /// Consumes a value with aliases `set` at `span`.
    fn consume(&mut self, set: &Set, span: Span) {
        for &v in set {
            let var = &self.vars[v];
            if var.global {
                let msg = format!(
                    "Consuming \"{}\", which is not consumable: it is a top-level definition (a free variable of this function).",
                    var.name
                );
                self.errors.push(Diagnostic::error(span, msg));
                return;
            }
            if !var.consumable {
                let msg = format!("Consuming \"{}\", which is not consumable.", var.name);
                let d = Diagnostic::error(span, msg).with_related(
                    var.span,
                    format!("\"{}\" is bound here, not unique", var.name),
                );
                self.errors.push(d);
                return;
            }
            if let Some((start, what)) = self.boundary.last() {
                if v < *start {
                    let msg = format!(
                        "Consuming \"{}\" inside {what}, but it is bound outside it.",
                        var.name
                    );
                    let d = Diagnostic::error(span, msg)
                        .with_related(var.span, format!("\"{}\" is bound here", var.name));
                    self.errors.push(d);
                    return;
                }
            }
        }
        for &v in set {
            self.consumed.entry(v).or_insert(span);
        }
    }

    /// The aliases of `e`'s value, after checking its uses and consumptions.
    fn exp(&mut self, e: &Exp) -> Al {
        let al = self.exp_inner(e);
        if may_alias(self.info.exp_types.get(&e.id)) {
            al
        } else {
            Al::default()
        }
    }

    fn union(&mut self, es: &[&Exp]) -> Set {
        let mut s = Set::new();
        for e in es {
            s.extend(self.exp(e).all);
        }
        s
    }

    fn exp_inner(&mut self, e: &Exp) -> Al {
        match &e.kind {
            ExpKind::Var(q) if q.quals.is_empty() => match self.lookup(&q.name) {
                Some(v) => {
                    self.use_var(v, e.span);
                    Al::of(self.vars[v].aliases.clone())
                }
                None => Al::of(Set::from([self.global(&q.name, e.span)])),
            },
            ExpKind::Literal(_)
            | ExpKind::Var(_)
            | ExpKind::OpSection(_)
            | ExpKind::ProjSection(_)
            | ExpKind::Hole => Al::default(),
            ExpKind::Tuple(es) => {
                let parts: Vec<Al> = es.iter().map(|x| self.exp(x)).collect();
                let all = parts.iter().flat_map(|p| p.all.iter().copied()).collect();
                Al {
                    all,
                    parts: Some(parts),
                }
            }
            ExpKind::Record(fs) => {
                let mut s = Set::new();
                for f in fs {
                    match f {
                        RecordField::Explicit(_, x) => s.extend(self.exp(x).all),
                        RecordField::Punned(n, span) => {
                            if let Some(v) = self.lookup(n) {
                                self.use_var(v, *span);
                                s.extend(self.vars[v].aliases.clone());
                            }
                        }
                    }
                }
                Al::of(s)
            }
            // A fresh array: its elements are copied in.
            ExpKind::ArrayLit(es) => {
                self.union(&es.iter().collect::<Vec<_>>());
                Al::default()
            }
            ExpKind::Range {
                start, second, end, ..
            } => {
                self.exp(start);
                if let Some(s) = second {
                    self.exp(s);
                }
                self.exp(end);
                Al::default()
            }
            ExpKind::Project(x, _) | ExpKind::Attr(_, x) | ExpKind::LocalOpen(_, x) => {
                Al::of(self.exp(x).all)
            }
            ExpKind::Ascribe(x, _) | ExpKind::Coerce(x, _) => self.exp(x),
            ExpKind::Index(x, idx) => {
                let s = self.exp(x).all;
                self.dims(idx);
                Al::of(s)
            }
            ExpKind::Negate(x) | ExpKind::Not(x) => {
                self.exp(x);
                Al::default()
            }
            ExpKind::Apply(f, args) => {
                let mut all: Vec<&Exp> = args.iter().collect();
                let mut head: &Exp = f;
                while let ExpKind::Apply(g, more) = &head.kind {
                    let mut v: Vec<&Exp> = more.iter().collect();
                    v.extend(all);
                    all = v;
                    head = g;
                }
                self.call(head, &all, e.span)
            }
            ExpKind::BinOp { op, lhs, rhs } => match op.name.name.as_str() {
                "|>" if op.name.quals.is_empty() => self.pipe(rhs, lhs, e.span),
                "<|" if op.name.quals.is_empty() => self.pipe(lhs, rhs, e.span),
                _ => {
                    let name = op.name.name.clone();
                    self.call_named(&name, &[lhs, rhs], e.span)
                }
            },
            ExpKind::LeftSection { lhs: x, .. } | ExpKind::RightSection { rhs: x, .. } => {
                Al::of(self.exp(x).all)
            }
            ExpKind::Lambda { params, body, .. } => {
                self.function(params, body, "an anonymous function");
                Al::default()
            }
            ExpKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                self.exp(cond);
                let before = self.consumed.clone();
                let a = self.exp(then_branch);
                let after_then = std::mem::replace(&mut self.consumed, before);
                let b = self.exp(else_branch);
                self.consumed.extend(after_then);
                Al::of(a.all.union(&b.all).copied().collect())
            }
            ExpKind::Match { scrutinee, cases } => {
                let s = self.exp(scrutinee);
                let before = self.consumed.clone();
                let mut acc = HashMap::new();
                let mut out = Set::new();
                for c in cases {
                    self.consumed = before.clone();
                    let depth = self.scope.len();
                    self.bind_pat(&c.pat, &s, true, &mut Vec::new());
                    out.extend(self.exp(&c.body).all);
                    self.scope.truncate(depth);
                    acc.extend(self.consumed.drain());
                }
                self.consumed = before;
                self.consumed.extend(acc);
                Al::of(out)
            }
            ExpKind::LetPat { pat, rhs, body, .. } => {
                let r = self.exp(rhs);
                let depth = self.scope.len();
                self.bind_pat(pat, &r, true, &mut Vec::new());
                let b = self.exp(body);
                self.scope.truncate(depth);
                b
            }
            ExpKind::LetFun {
                params, rhs, body, ..
            } => {
                self.function(params, rhs, "a local function");
                self.exp(body)
            }
            ExpKind::LetUpdate {
                name,
                name_span,
                steps,
                rhs,
                body,
            } => {
                self.steps(steps);
                self.exp(rhs);
                let depth = self.scope.len();
                if let Some(v) = self.lookup(name) {
                    self.use_var(v, *name_span);
                    if steps.iter().any(|s| matches!(s, UpdateStep::Index(..))) {
                        let set = self.vars[v].aliases.clone();
                        self.consume(&set, *name_span);
                    }
                    let consumable = self.vars[v].consumable;
                    self.new_var(name, *name_span, consumable, &Set::new());
                }
                let b = self.exp(body);
                self.scope.truncate(depth);
                b
            }
            ExpKind::Update {
                target,
                steps,
                value,
            } => {
                let t = self.exp(target);
                self.steps(steps);
                let v = self.exp(value);
                if steps.iter().any(|s| matches!(s, UpdateStep::Index(..))) {
                    self.consume(&t.all, target.span);
                    Al::default()
                } else {
                    Al::of(t.all.union(&v.all).copied().collect())
                }
            }
            ExpKind::Loop {
                pat,
                init,
                form,
                body,
            } => self.loop_(pat, init.as_deref(), form, body),
            ExpKind::Assert { cond, body } => {
                self.exp(cond);
                self.exp(body)
            }
            ExpKind::Constr(_, es) => Al::of(self.union(&es.iter().collect::<Vec<_>>())),
        }
    }

    fn dims(&mut self, idx: &[DimIndex]) {
        for d in idx {
            match d {
                DimIndex::Index(x) => {
                    self.exp(x);
                }
                DimIndex::Slice { start, end, stride } => {
                    for x in [start, end, stride].into_iter().flatten() {
                        self.exp(x);
                    }
                }
            }
        }
    }

    fn steps(&mut self, steps: &[UpdateStep]) {
        for s in steps {
            if let UpdateStep::Index(idx, _) = s {
                self.dims(idx);
            }
        }
    }

    /// `arg |> f` and `f <| arg`.
    fn pipe(&mut self, f: &Exp, arg: &Exp, span: Span) -> Al {
        let mut all: Vec<&Exp> = vec![arg];
        let mut head = f;
        while let ExpKind::Apply(g, more) = &head.kind {
            let mut v: Vec<&Exp> = more.iter().collect();
            v.extend(all);
            all = v;
            head = g;
        }
        self.call(head, &all, span)
    }

    fn call(&mut self, head: &Exp, args: &[&Exp], span: Span) -> Al {
        match &head.kind {
            ExpKind::Var(q) if q.quals.is_empty() && self.lookup(&q.name).is_none() => {
                self.call_named(&q.name.clone(), args, span)
            }
            _ => {
                let h = self.exp(head).all;
                let mut s = self.union(args);
                s.extend(h);
                Al::of(s)
            }
        }
    }

    /// A call of the global function `name`: consumes the arguments of its unique
    /// parameters; the result aliases the other arguments unless it is unique.
    fn call_named(&mut self, name: &str, args: &[&Exp], span: Span) -> Al {
        let sig = self.sigs.get(name).cloned().unwrap_or_default();
        let mut out = Set::new();
        let mut consume = Vec::new();
        let mut all = Vec::new();
        for (k, a) in args.iter().enumerate() {
            let al = self.exp(a);
            if sig.params.get(k).copied().unwrap_or(false) {
                self.check_self_aliased(&al, a.span);
                consume.push((k, al.all.clone(), a.span));
            } else {
                out.extend(al.all.iter().copied());
            }
            all.push(al.all);
        }
        for (k, set, at) in consume {
            let shared = all
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != k)
                .find_map(|(_, other)| set.intersection(other).next().copied());
            if let Some(v) = shared {
                let msg = format!(
                    "\"{}\" is consumed by this call and also passed in another of its arguments.",
                    self.vars[v].name
                );
                self.errors.push(Diagnostic::error(at, msg));
                continue;
            }
            self.consume(&set, at);
        }
        let _ = span;
        if sig.ret_unique {
            Al::default()
        } else {
            Al::of(out)
        }
    }

    /// The components of an argument for a consuming parameter must not alias each other.
    fn check_self_aliased(&mut self, al: &Al, span: Span) {
        let Some(parts) = &al.parts else {
            return;
        };
        for (i, p) in parts.iter().enumerate() {
            if parts[i + 1..].iter().any(|q| !p.all.is_disjoint(&q.all)) {
                self.errors.push(Diagnostic::error(
                    span,
                    "Argument passed for consuming parameter is self-aliased.",
                ));
                return;
            }
        }
    }

    /// A lambda or local function: its body may not consume what it did not bind.
    fn function(&mut self, params: &[Pat], body: &Exp, what: &'static str) {
        let depth = self.scope.len();
        self.boundary.push((self.vars.len(), what));
        for p in params {
            let unique = pat_unique(p);
            self.bind_pat(p, &Al::default(), unique, &mut Vec::new());
        }
        self.exp(body);
        self.boundary.pop();
        self.scope.truncate(depth);
    }

    fn loop_(&mut self, pat: &Pat, init: Option<&Exp>, form: &LoopForm, body: &Exp) -> Al {
        let init_al = match init {
            Some(x) => self.exp(x),
            None => {
                // `loop x for ...` starts from the variable `x` itself.
                let mut s = Set::new();
                if let PatKind::Var(n) = &pat.kind {
                    if let Some(v) = self.lookup(n) {
                        self.use_var(v, pat.span);
                        s = self.vars[v].aliases.clone();
                    }
                }
                Al::of(s)
            }
        };
        let depth = self.scope.len();
        let start = self.vars.len();
        self.boundary.push((start, "a loop body"));
        // The parameters per component of a tuple pattern, so that a consumed component
        // consumes only its own initial value.
        let comps: Vec<&Pat> = match (&pat.kind, &init_al.parts) {
            (PatKind::Tuple(ps), Some(parts)) if ps.len() == parts.len() => ps.iter().collect(),
            _ => vec![pat],
        };
        let mut params: Vec<Vec<usize>> = Vec::new();
        for c in &comps {
            let mut vs = Vec::new();
            self.bind_pat(c, &Al::default(), true, &mut vs);
            params.push(vs);
        }
        match form {
            LoopForm::For {
                var,
                var_span,
                bound,
            } => {
                self.exp(bound);
                self.new_var(var, *var_span, true, &Set::new());
            }
            LoopForm::ForIn { pat: p, array } => {
                let a = self.exp(array);
                self.bind_pat(p, &a, false, &mut Vec::new());
            }
            LoopForm::While(c) => {
                self.exp(c);
            }
        }
        let before = self.consumed.clone();
        let b = self.exp(body);
        let consumed: Vec<bool> = comps
            .iter()
            .zip(&params)
            .map(|(c, vs)| pat_unique(c) || vs.iter().any(|v| self.consumed.contains_key(v)))
            .collect();
        // What the body consumed of its own bindings ends with it.
        self.consumed
            .retain(|v, _| *v < start || before.contains_key(v));
        self.boundary.pop();
        self.scope.truncate(depth);
        let span = init.map(|x| x.span).unwrap_or(pat.span);
        let mut out: Set = b.all.into_iter().filter(|v| *v < start).collect();
        for (k, c) in consumed.into_iter().enumerate() {
            let part = match &init_al.parts {
                Some(parts) if comps.len() > 1 => parts[k].all.clone(),
                _ => init_al.all.clone(),
            };
            if c {
                self.consume(&part, span);
            } else {
                out.extend(part);
            }
        }
        Al::of(out)
    }
}

#[cfg(test)]
mod tests {
    use super::sig_of_text;

    #[test]
    fn intrinsic_signatures_mark_unique_positions() {
        let s = sig_of_text("*[k]t -> [n]i64 -> [n]t -> *[k]t");
        assert_eq!(s.params, vec![true, false, false]);
        assert!(s.ret_unique);
        let m = sig_of_text("(a -> x) -> [n]a -> *[n]x");
        assert_eq!(m.params, vec![false, false]);
        assert!(m.ret_unique);
        let f = sig_of_text("[n][m]t -> [n*m]t");
        assert_eq!(f.params, vec![false]);
        assert!(!f.ret_unique);
    }
}
