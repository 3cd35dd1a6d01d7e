//! The alias analysis of expressions: what each expression's value aliases, and the uses and
//! consumptions it performs, in evaluation order.

use super::cx::{Al, Closure, Cx, Kind};
use super::{display_name, may_alias, pat_unique, type_mentions_unique, type_unique, Set, UniqSig};
use crate::ty::Type;
use runic_syntax::ast::*;
use runic_syntax::{Diagnostic, Span};

/// A callee: a top-level (or intrinsic) function by name, or a local function variable.
struct Callee {
    name: String,
    sig: UniqSig,
    /// What the result aliases besides the arguments, and what calling it uses.
    closure: Closure,
    /// A functional parameter: its results may alias anything.
    opaque: bool,
}

impl Cx<'_> {
    /// The aliases of `e`'s value, after checking its uses and consumptions.
    pub fn exp(&mut self, e: &Exp) -> Al {
        let al = self.exp_inner(e);
        if may_alias(self.info.exp_types.get(&e.id)) {
            al
        } else {
            Al::default()
        }
    }

    /// Evaluates `es` in order, each held while the later ones are evaluated.
    fn in_order(&mut self, es: &[&Exp]) -> Vec<Al> {
        let mut out = Vec::new();
        let mut held = Vec::new();
        for x in es {
            let a = self.exp(x);
            held.push((a.all.clone(), self.hold(), x.span));
            out.push(a);
        }
        for (s, t, sp) in held {
            self.check_held(&s, t, sp);
        }
        out
    }

    fn exp_inner(&mut self, e: &Exp) -> Al {
        match &e.kind {
            ExpKind::Var(q) if q.quals.is_empty() => match self.lookup(&q.name) {
                Some(v) => {
                    self.use_var(v, e.span);
                    if let Some(f) = &self.vars[v].sig {
                        self.last_fn = Some(f.clone());
                    }
                    self.var_al(v)
                }
                None => Al::of(Set::from([self.global(&q.name, e.span)])),
            },
            ExpKind::Literal(_) | ExpKind::Var(_) | ExpKind::ProjSection(_) | ExpKind::Hole => {
                Al::default()
            }
            ExpKind::OpSection(_) => Al::default(),
            ExpKind::Tuple(es) => {
                let parts = self.in_order(&es.iter().collect::<Vec<_>>());
                let all = parts.iter().flat_map(|p| p.all.iter().copied()).collect();
                Al {
                    all,
                    parts: Some(parts),
                    fields: None,
                }
            }
            ExpKind::Record(fs) => {
                let mut s = Set::new();
                let mut held = Vec::new();
                let mut fields = Vec::new();
                for f in fs {
                    match f {
                        RecordField::Explicit(n, x) => {
                            let a = self.exp(x);
                            held.push((a.all.clone(), self.hold(), x.span));
                            s.extend(a.all.iter().copied());
                            fields.push((n.clone(), a));
                        }
                        RecordField::Punned(n, span) => {
                            if let Some(v) = self.lookup(n) {
                                self.use_var(v, *span);
                                s.extend(self.vars[v].aliases.clone());
                                fields.push((n.clone(), self.var_al(v)));
                            }
                        }
                    }
                }
                for (a, t, sp) in held {
                    self.check_held(&a, t, sp);
                }
                Al {
                    all: s,
                    parts: None,
                    fields: Some(fields),
                }
            }
            // A fresh array: its elements are copied in.
            ExpKind::ArrayLit(es) => {
                self.in_order(&es.iter().collect::<Vec<_>>());
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
            ExpKind::Project(x, field) => {
                let a = self.exp(x);
                if let Some((_, f)) = a.fields.iter().flatten().find(|(n, _)| n == field) {
                    return f.clone();
                }
                match (field.parse::<usize>(), &a.parts) {
                    (Ok(k), Some(ps)) if k < ps.len() => ps[k].clone(),
                    _ => Al::of(a.all),
                }
            }
            ExpKind::Attr(_, x) | ExpKind::LocalOpen(_, x) => self.exp(x),
            ExpKind::Ascribe(x, t) | ExpKind::Coerce(x, t) => {
                let a = self.exp(x);
                self.type_sizes(t);
                if type_unique(t) {
                    let note = format!("it is ascribed the unique type {}", self.text(t.span()));
                    self.check_fresh(&a.all, x.span, &note);
                }
                a
            }
            ExpKind::Index(x, idx) => {
                let s = self.exp(x).all;
                let t = self.hold();
                self.dims(idx);
                self.check_held(&s, t, x.span);
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
                self.call(head, &all, e)
            }
            ExpKind::BinOp { op, lhs, rhs } => match op.name.name.as_str() {
                "|>" if op.name.quals.is_empty() => self.pipe(rhs, lhs, e),
                "<|" if op.name.quals.is_empty() => self.pipe(lhs, rhs, e),
                _ => {
                    // Operands are evaluated left to right.
                    let callee = self.callee_named(&op.name.name);
                    self.apply(callee, &[lhs, rhs], e, true)
                }
            },
            ExpKind::LeftSection { op, lhs: x } | ExpKind::RightSection { op, rhs: x } => {
                let pos = usize::from(matches!(e.kind, ExpKind::RightSection { .. }));
                let sig = self.callee_named(&op.name.name).sig;
                if sig.params.get(pos).copied().unwrap_or(false) {
                    self.errors.push(Diagnostic::error(
                        e.span,
                        "Operator sections may not supply an argument for a consuming parameter.",
                    ));
                }
                Al::of(self.exp(x).all)
            }
            ExpKind::Lambda { params, ret, body } => {
                self.function(params, ret.as_ref(), body, "an anonymous function");
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
                let after_then = std::mem::replace(&mut self.consumed, before.clone());
                let b = self.exp(else_branch);
                self.consumed.extend(after_then);
                let joined = join(&a, &b);
                self.take_over(joined, &before, "result of if-expression", e.span)
            }
            ExpKind::Match { scrutinee, cases } => {
                let t0 = self.n_consumptions;
                let s = self.exp(scrutinee);
                if self.n_consumptions > t0
                    && matches!(
                        self.info.exp_types.get(&scrutinee.id),
                        Some(Type::Arrow { .. })
                    )
                {
                    self.errors.push(Diagnostic::error(
                        scrutinee.span,
                        "Matched expression of higher-order type may not perform consumption.",
                    ));
                }
                let before = self.consumed.clone();
                let mut acc = std::collections::HashMap::new();
                let mut out: Option<Al> = None;
                for c in cases {
                    self.consumed = before.clone();
                    let depth = self.scope.len();
                    self.bind_pat(&c.pat, &s, true, &mut Vec::new());
                    let r = self.exp(&c.body);
                    out = Some(match out {
                        None => r,
                        Some(o) => join(&o, &r),
                    });
                    self.scope.truncate(depth);
                    acc.extend(self.consumed.drain());
                }
                self.consumed = before.clone();
                self.consumed.extend(acc);
                self.take_over(out.unwrap_or_default(), &before, "result of match", e.span)
            }
            ExpKind::LetPat { pat, rhs, body, .. } => {
                self.last_fn = None;
                let r = self.exp(rhs);
                let f = self.last_fn.take();
                self.check_pat_ascription(pat, &r);
                let depth = self.scope.len();
                let first = self.vars.len();
                self.bind_pat(pat, &r, true, &mut Vec::new());
                // A variable bound to a function value keeps its closure.
                if let (Some(f), Some(Type::Arrow { .. })) = (f, self.info.exp_types.get(&rhs.id)) {
                    if first < self.vars.len() {
                        self.vars[first].sig = Some(f);
                    }
                }
                let b = self.exp(body);
                self.scope.truncate(depth);
                b
            }
            ExpKind::LetFun {
                name,
                name_span,
                params,
                ret,
                rhs,
                body,
                ..
            } => {
                let closure = self.function(params, ret.as_ref(), rhs, "a local function");
                self.last_fn = None;
                let depth = self.scope.len();
                let id = self.new_var(name, *name_span, false, &Al::default(), None);
                self.vars[id].aliases = Set::new();
                let sig = UniqSig {
                    params: params.iter().map(pat_unique).collect(),
                    ret_unique: ret.as_ref().is_some_and(type_unique),
                    params_take_consumer: params
                        .iter()
                        .map(super::pat_mentions_unique_deep)
                        .collect(),
                    ret_global: closure.ret.iter().any(|v| self.vars[*v].is_global_like()),
                    user: true,
                    ret_parts: None,
                };
                self.vars[id].sig = Some((sig, closure));
                let b = self.exp(body);
                self.scope.truncate(depth);
                b
            }
            ExpKind::LetUpdate {
                name,
                name_span,
                steps,
                rhs,
                body,
            } => {
                let v = self.exp(rhs);
                let t = self.hold();
                self.steps(steps);
                let depth = self.scope.len();
                if let Some(x) = self.lookup(name) {
                    self.use_var(x, *name_span);
                    let whole = self.var_al(x);
                    self.check_field_update(&whole, name, steps, *name_span);
                    if steps.iter().any(|s| matches!(s, UpdateStep::Index(..))) {
                        let set = self.vars[x].aliases.clone();
                        if self.check_in_place(&set, &v.all, rhs.span) {
                            self.consume(&set, *name_span);
                            self.check_held(&v.all, t, rhs.span);
                        }
                    } else {
                        self.check_held(&v.all, t, rhs.span);
                    }
                    let consumable = self.vars[x].consumable;
                    self.new_var(name, *name_span, consumable, &Al::default(), None);
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
                // The value is evaluated first and held while the source is.
                let v = self.exp(value);
                let t0 = self.hold();
                let t = self.exp(target);
                self.steps(steps);
                let root = self.text(target.span);
                self.check_field_update(&t, &root, steps, target.span);
                if steps.iter().any(|s| matches!(s, UpdateStep::Index(..))) {
                    if self.check_in_place(&t.all, &v.all, value.span) {
                        self.consume(&t.all, target.span);
                        self.check_held(&v.all, t0, value.span);
                    }
                    Al::default()
                } else {
                    self.check_held(&v.all, t0, value.span);
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
            ExpKind::Constr(_, es) => {
                let parts = self.in_order(&es.iter().collect::<Vec<_>>());
                let all = parts.iter().flat_map(|p| p.all.iter().copied()).collect();
                Al {
                    all,
                    parts: (parts.len() >= 2).then_some(parts),
                    fields: None,
                }
            }
        }
    }

    /// After an `if`/`match`: its result takes over the variables a branch consumed (they
    /// are gone, but the result still holds their memory), under a fresh name each.
    fn take_over(
        &mut self,
        r: Al,
        before: &std::collections::HashMap<usize, (Span, u64)>,
        what: &str,
        span: Span,
    ) -> Al {
        let gone: Vec<usize> = r
            .all
            .iter()
            .copied()
            .filter(|v| self.consumed.contains_key(v) && !before.contains_key(v))
            .collect();
        if gone.is_empty() {
            return r;
        }
        let mut map = std::collections::HashMap::new();
        for v in gone {
            let c = self.vars[v].consumable;
            let f = self.fresh(what.to_string(), span, c);
            map.insert(v, f);
        }
        r.rename(&|v| map.get(&v).copied().unwrap_or(v))
    }

    /// The size expressions in a type: they may consume nothing.
    pub fn type_sizes(&mut self, t: &TypeExp) {
        match t {
            TypeExp::Array(d, t, _) => {
                if let SizeExp::Exp(x) = d {
                    self.boundary.push((self.vars.len(), "a size expression"));
                    self.exp(x);
                    self.boundary.pop();
                }
                self.type_sizes(t)
            }
            TypeExp::Apply(f, a, _) => {
                self.type_sizes(f);
                if let TypeArg::Type(t) = &**a {
                    self.type_sizes(t);
                } else if let TypeArg::Size(SizeExp::Exp(x)) = &**a {
                    self.boundary.push((self.vars.len(), "a size expression"));
                    self.exp(x);
                    self.boundary.pop();
                }
            }
            TypeExp::Tuple(ts, _) => ts.iter().for_each(|t| self.type_sizes(t)),
            TypeExp::Record(fs, _) => fs.iter().for_each(|(_, t)| self.type_sizes(t)),
            TypeExp::Unique(t, _) | TypeExp::Exists(_, t, _) => self.type_sizes(t),
            TypeExp::Arrow(_, a, b, _) => {
                self.type_sizes(a);
                self.type_sizes(b)
            }
            TypeExp::Sum(cs, _) => cs
                .iter()
                .flat_map(|(_, ts)| ts)
                .for_each(|t| self.type_sizes(t)),
            TypeExp::Var(..) => {}
        }
    }

    /// The size expressions in a pattern's types.
    pub fn pat_sizes(&mut self, p: &Pat) {
        match &p.kind {
            PatKind::Ascribe(q, t) => {
                self.pat_sizes(q);
                self.type_sizes(t)
            }
            PatKind::Tuple(ps) | PatKind::Constr(_, ps) => {
                ps.iter().for_each(|q| self.pat_sizes(q))
            }
            PatKind::Record(fs) => fs.iter().for_each(|(_, q)| self.pat_sizes(q)),
            PatKind::Attr(_, q) => self.pat_sizes(q),
            _ => {}
        }
    }

    /// An in-place update through record fields keeps the other fields: the updated one
    /// may not share memory with them.
    fn check_field_update(&mut self, al: &Al, root: &str, steps: &[UpdateStep], span: Span) {
        if !steps.iter().any(|s| matches!(s, UpdateStep::Index(..))) {
            return;
        }
        let mut cur = al.clone();
        let mut path = root.to_string();
        for s in steps {
            let UpdateStep::Field(f, _) = s else {
                return;
            };
            let Some(fields) = cur.fields.clone() else {
                return;
            };
            let Some((_, target)) = fields.iter().find(|(n, _)| n == f) else {
                return;
            };
            for (n, other) in &fields {
                if n != f && !other.all.is_disjoint(&target.all) {
                    let msg = format!(
                        "The in-place update of \"{path}.{f}\" shares memory with \"{path}.{n}\", which the update keeps."
                    );
                    self.errors.push(Diagnostic::error(span, msg));
                    return;
                }
            }
            path = format!("{path}.{f}");
            cur = target.clone();
        }
    }

    /// A value written in place may not share memory with the array it is written into.
    /// Reports it and returns false when it does.
    fn check_in_place(&mut self, target: &Set, value: &Set, span: Span) -> bool {
        let Some(v) = target.intersection(value).next() else {
            return true;
        };
        let msg = format!(
            "The value written in-place aliases \"{}\", the array being updated.",
            self.vars[*v].name
        );
        self.errors.push(Diagnostic::error(span, msg));
        false
    }

    /// A value that must be unique (ascribed `*t`) aliases only consumable values.
    fn check_fresh(&mut self, set: &Set, span: Span, note: &str) {
        if let Some(v) = set.iter().copied().find(|v| {
            let var = &self.vars[*v];
            !var.consumable || var.kind == Kind::Global
        }) {
            let msg = format!(
                "Consuming \"{}\", which is not consumable ({note}).",
                self.vars[v].name
            );
            self.errors.push(Diagnostic::error(span, msg));
        }
    }

    /// `let p : *t = e`: the unique parts of the pattern must be fresh.
    fn check_pat_ascription(&mut self, pat: &Pat, r: &Al) {
        if let PatKind::Ascribe(_, t) = &pat.kind {
            if type_mentions_unique(t) {
                let note = format!("it is bound to the unique type {}", self.text(t.span()));
                self.check_fresh(&r.all, pat.span, &note);
            }
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
    fn pipe(&mut self, f: &Exp, arg: &Exp, e: &Exp) -> Al {
        let mut all: Vec<&Exp> = vec![arg];
        let mut head = f;
        while let ExpKind::Apply(g, more) = &head.kind {
            let mut v: Vec<&Exp> = more.iter().collect();
            v.extend(all);
            all = v;
            head = g;
        }
        self.call(head, &all, e)
    }

    fn callee_named(&self, name: &str) -> Callee {
        let sig = self.sigs.get(name).cloned().unwrap_or_default();
        Callee {
            name: display_name(name).to_string(),
            sig,
            closure: Closure::default(),
            opaque: false,
        }
    }

    /// The callee named by `head`, if it is a variable.
    fn callee(&self, head: &Exp) -> Option<Callee> {
        let ExpKind::Var(q) = &head.kind else {
            return None;
        };
        if !q.quals.is_empty() {
            return None;
        }
        match self.lookup(&q.name) {
            None => Some(self.callee_named(&q.name)),
            Some(v) => {
                let var = &self.vars[v];
                match &var.sig {
                    Some((sig, closure)) => Some(Callee {
                        name: var.name.clone(),
                        sig: sig.clone(),
                        closure: closure.clone(),
                        opaque: false,
                    }),
                    None if var.opaque_fn => Some(Callee {
                        name: var.name.clone(),
                        sig: UniqSig::default(),
                        closure: Closure::default(),
                        opaque: true,
                    }),
                    None => None,
                }
            }
        }
    }

    fn call(&mut self, head: &Exp, args: &[&Exp], e: &Exp) -> Al {
        if let Some(c) = self.callee(head) {
            if let ExpKind::Var(q) = &head.kind {
                if let Some(v) = self.lookup(&q.name) {
                    self.use_var(v, head.span);
                }
            }
            return self.apply(c, args, e, false);
        }
        // Arguments are evaluated right to left, then the function; each value is held.
        let mut held = Vec::new();
        let mut vals = vec![Set::new(); args.len()];
        for (k, a) in args.iter().enumerate().rev() {
            let al = self.exp(a).all;
            held.push((al.clone(), self.hold(), a.span));
            vals[k] = al;
        }
        self.last_fn = None;
        let h = self.exp(head).all;
        for (a, t, sp) in held {
            self.check_held(&a, t, sp);
        }
        let mut s: Set = h;
        // A function value computed here (a lambda): it consumes the arguments of its
        // unique parameters, and its result aliases the others and what it captures.
        let f = self.last_fn.take();
        for (k, v) in vals.into_iter().enumerate() {
            match &f {
                Some((sig, _)) if sig.params.get(k).copied().unwrap_or(false) => {
                    self.consume(&v, args[k].span)
                }
                _ => s.extend(v),
            }
        }
        if let Some((sig, c)) = f {
            if sig.ret_unique && args.len() >= sig.params.len() {
                return Al::default();
            }
            s.extend(c.ret);
        }
        Al::of(s)
    }

    /// A function passed as argument `k` of `callee` that consumes, where the parameter's
    /// type does not admit it: the callee may call it more than once.
    fn check_consumer_arg(&mut self, callee: &Callee, k: usize, a: &Exp) {
        if callee
            .sig
            .params_take_consumer
            .get(k)
            .copied()
            .unwrap_or(false)
        {
            return;
        }
        let mut head = a;
        let mut n = 0;
        while let ExpKind::Apply(g, more) = &head.kind {
            n += more.len();
            head = g;
        }
        let Some(f) = self.callee(head) else {
            return;
        };
        // The intrinsics' operators (reduce, scan, ...) may consume their accumulators.
        let named_ok = !callee.sig.user;
        if f.opaque || !f.sig.params.iter().any(|c| *c) {
            return;
        }
        if n == 0 && !named_ok {
            let msg = format!(
                "Function \"{}\" is consuming, but is passed as an argument of \"{}\" for a parameter that is not consuming.",
                f.name, callee.name
            );
            self.errors.push(Diagnostic::error(a.span, msg));
        } else if n < f.sig.params.len() && f.sig.params[..n].iter().any(|c| *c) {
            let msg = format!(
                "Partial application of \"{}\" performs consumption, but is passed as an argument of \"{}\", which may call it more than once.",
                f.name, callee.name
            );
            self.errors.push(Diagnostic::error(a.span, msg));
        }
    }

    /// A call: consumes the arguments of its unique parameters; the result aliases the
    /// other arguments (and the callee's closure) unless it is unique.
    fn apply(&mut self, callee: Callee, args: &[&Exp], e: &Exp, left_to_right: bool) -> Al {
        let sig = &callee.sig;
        let mut out = callee.closure.ret.clone();
        let full = args.len() >= sig.params.len();
        let mut consume = Vec::new();
        let mut all: Vec<Set> = vec![Set::new(); args.len()];
        let mut held = Vec::new();
        let since = self.hold();
        let order: Vec<usize> = if left_to_right {
            (0..args.len()).collect()
        } else {
            (0..args.len()).rev().collect()
        };
        for k in order {
            let a = args[k];
            self.check_consumer_arg(&callee, k, a);
            self.last_fn = None;
            let al = self.exp(a);
            // A function argument: the result may alias what it captures.
            if let Some((_, c)) = self.last_fn.take() {
                out.extend(c.ret.iter().chain(c.free.iter()).copied());
            }
            held.push((al.all.clone(), self.hold(), a.span));
            if sig.params.get(k).copied().unwrap_or(false) {
                self.check_self_aliased(&al, a.span);
                consume.push((k, al.all.clone(), a.span));
            } else {
                out.extend(al.all.iter().copied());
            }
            all[k] = al.all;
        }
        for (s, t, sp) in held {
            self.check_held(&s, t, sp);
        }
        // The function is held while its arguments are evaluated: what it uses must survive.
        let free = callee.closure.free.clone();
        self.check_held(&free, since, e.span);
        for (k, set, at) in consume {
            let shared = all
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != k)
                .find_map(|(_, other)| set.intersection(other).next().copied());
            if let Some(v) = set.intersection(&free).next() {
                let msg = format!(
                    "Argument is consumed, but aliases \"{}\", which aliases the function \"{}\" (it is used by the function).",
                    self.vars[*v].name, callee.name
                );
                self.errors.push(Diagnostic::error(at, msg));
                continue;
            }
            if let Some(v) = shared {
                let msg = format!(
                    "Argument is consumed, but aliases \"{}\", which is also passed in another argument of \"{}\".",
                    self.vars[v].name, callee.name
                );
                self.errors.push(Diagnostic::error(at, msg));
                continue;
            }
            self.consume(&set, at);
        }
        if !full && !callee.opaque && callee.sig.user {
            // A partial application: a function value capturing its arguments.
            let rest = UniqSig {
                params: sig.params[args.len()..].to_vec(),
                params_take_consumer: sig
                    .params_take_consumer
                    .get(args.len()..)
                    .unwrap_or(&[])
                    .to_vec(),
                ..sig.clone()
            };
            let mut c = callee.closure.clone();
            c.ret.extend(out.iter().copied());
            c.free.extend(all.iter().flat_map(|s| s.iter().copied()));
            self.last_fn = Some((rest, c));
        }
        if sig.ret_unique && full {
            return Al::default();
        }
        if (sig.user || callee.opaque) && full && may_alias(self.info.exp_types.get(&e.id)) {
            // A fresh name for the result: its components may be the same array.
            let what = format!("result of applying \"{}\"", callee.name);
            let consumable = !(callee.opaque || sig.ret_global);
            let q = self.fresh(what, e.span, consumable);
            self.vars[q].global_like = sig.ret_global;
            if !consumable {
                self.vars[q].name = callee.name.clone();
                self.vars[q].why_not = Some(if callee.opaque {
                    "it is the result of a functional parameter, which may alias anything".into()
                } else {
                    "the function's result may alias a top-level definition".into()
                });
            }
            out.insert(q);
        }
        // Components the callee returns fresh (declared `*`, or inferred) alias nothing.
        if let (Some(fresh), true) = (&sig.ret_parts, full) {
            let parts: Vec<Al> = fresh
                .iter()
                .map(|f| {
                    if *f {
                        Al::default()
                    } else {
                        Al::of(out.clone())
                    }
                })
                .collect();
            let all = parts.iter().flat_map(|p| p.all.iter().copied()).collect();
            return Al {
                all,
                parts: Some(parts),
                fields: None,
            };
        }
        Al::of(out)
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

    /// A lambda or local function: its body may not consume what it did not bind, and a
    /// unique result aliases nothing it may not consume. Returns what its result aliases
    /// outside it.
    fn function(
        &mut self,
        params: &[Pat],
        ret: Option<&TypeExp>,
        body: &Exp,
        what: &'static str,
    ) -> Closure {
        let depth = self.scope.len();
        let start = self.vars.len();
        let uses_from = self.uses.len();
        self.boundary.push((start, what));
        for p in params {
            let unique = pat_unique(p);
            self.bind_pat(p, &Al::default(), unique, &mut Vec::new());
        }
        let r = self.exp(body);
        if let Some(t) = ret {
            self.check_unique_return(t, &r, start, body, what);
        }
        self.boundary.pop();
        self.scope.truncate(depth);
        // Top-level definitions first used inside have ids after `start`, but are free too.
        let outside = |v: &usize| *v < start || self.vars[*v].kind == Kind::Global;
        let free = self.uses[uses_from..]
            .iter()
            .flat_map(|(_, s)| s.iter().copied())
            .filter(outside)
            .collect();
        let closure = Closure {
            ret: r.all.iter().copied().filter(outside).collect(),
            free,
        };
        let sig = UniqSig {
            params: params.iter().map(pat_unique).collect(),
            ret_unique: ret.is_some_and(type_unique),
            params_take_consumer: params.iter().map(super::pat_mentions_unique_deep).collect(),
            ret_global: closure.ret.iter().any(|v| self.vars[*v].is_global_like()),
            user: true,
            ret_parts: None,
        };
        self.last_fn = Some((sig, closure.clone()));
        closure
    }
}

/// The aliases of a value that is either `a` or `b`.
fn join(a: &Al, b: &Al) -> Al {
    let all = a.all.union(&b.all).copied().collect();
    let parts = match (&a.parts, &b.parts) {
        (Some(x), Some(y)) if x.len() == y.len() => {
            Some(x.iter().zip(y).map(|(p, q)| join(p, q)).collect())
        }
        _ => None,
    };
    let fields = match (&a.fields, &b.fields) {
        (Some(x), Some(y)) => Some(
            x.iter()
                .map(|(n, p)| match y.iter().find(|(m, _)| m == n) {
                    Some((_, q)) => (n.clone(), join(p, q)),
                    None => (n.clone(), p.clone()),
                })
                .collect(),
        ),
        _ => None,
    };
    Al { all, parts, fields }
}
