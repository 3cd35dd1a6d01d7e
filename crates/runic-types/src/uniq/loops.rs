//! Loops: the body consumes only what it binds, a consumed parameter consumes its initial
//! value, and what the loop returns for a consumed parameter is fresh.

use super::cx::{Al, Cx};
use super::{pat_unique, Set};
use runic_syntax::ast::*;
use runic_syntax::Diagnostic;

impl Cx<'_> {
    pub(super) fn loop_(
        &mut self,
        pat: &Pat,
        init: Option<&Exp>,
        form: &LoopForm,
        body: &Exp,
    ) -> Al {
        let init_al = match init {
            Some(x) => self.exp(x),
            None => {
                // `loop x for ...` starts from the variable `x` itself.
                let mut s = Al::default();
                if let Some(n) = pat_var(pat) {
                    if let Some(v) = self.lookup(n) {
                        self.use_var(v, pat.span);
                        s = self.var_al(v);
                    }
                }
                s
            }
        };
        let depth = self.scope.len();
        let start = self.vars.len();
        // A record pattern is handled as a tuple of its fields, in the pattern's order.
        let field_names: Option<Vec<Name>> = match &strip(pat).kind {
            PatKind::Record(fs) => Some(fs.iter().map(|(n, _)| n.clone()).collect()),
            _ => None,
        };
        let init_al = fields_as_parts(init_al, field_names.as_deref());
        // The parameters per component of a tuple pattern, so that a consumed component
        // consumes only its own initial value.
        let comps: Vec<&Pat> = match (&strip(pat).kind, &init_al.parts) {
            (PatKind::Tuple(ps), Some(parts)) if ps.len() == parts.len() => ps.iter().collect(),
            (PatKind::Record(fs), Some(parts)) if fs.len() == parts.len() => {
                fs.iter().map(|(_, p)| p).collect()
            }
            _ => vec![pat],
        };
        let mut params: Vec<Vec<usize>> = Vec::new();
        self.binding_loop_params = true;
        for c in &comps {
            let mut vs = Vec::new();
            self.bind_pat(c, &Al::default(), true, &mut vs);
            params.push(vs);
        }
        self.binding_loop_params = false;
        let mut iterated = Set::new();
        let mut while_uses = usize::MAX;
        match form {
            LoopForm::For {
                var,
                var_span,
                bound,
            } => {
                self.exp(bound);
                self.new_var(var, *var_span, true, &Al::default(), None);
            }
            LoopForm::ForIn { pat: p, array } => {
                let a = self.exp(array);
                iterated = a.all.clone();
                self.bind_pat(p, &a, false, &mut Vec::new());
            }
            LoopForm::While(c) => {
                while_uses = self.uses.len();
                // The condition runs before every iteration and after the last: it consumes
                // nothing, not even the parameters.
                self.boundary
                    .push((self.vars.len(), "a while-loop condition"));
                self.exp(c);
                self.boundary.pop();
            }
        }
        self.boundary.push((start, "a loop body"));
        let before = self.consumed.clone();
        // The while condition and body run after the loop consumed its initial value.
        let uses_from = self.uses.len().min(while_uses);
        let b = self.exp(body);
        let b = fields_as_parts(b, field_names.as_deref());
        let consumed: Vec<bool> = comps
            .iter()
            .zip(&params)
            .map(|(c, vs)| pat_unique(c) || vs.iter().any(|v| self.consumed.contains_key(v)))
            .collect();
        // What the body returns for a consumed parameter must be fresh in every iteration.
        let n = comps.len();
        for (k, c) in consumed.iter().enumerate() {
            if !*c {
                continue;
            }
            let part = if n == 1 { b.clone() } else { b.part(k, n) };
            if let Some(v) = part.all.iter().copied().find(|v| *v < start) {
                let pname = params[k]
                    .first()
                    .map(|p| self.vars[*p].name.clone())
                    .unwrap_or_default();
                let msg = format!(
                    "Return value for consuming loop parameter \"{pname}\" aliases \"{}\".",
                    self.vars[v].name
                );
                self.errors.push(Diagnostic::error(body.span, msg));
            }
        }
        self.check_returned_apart(&b, &consumed, &params, body);
        // What the body consumed of its own bindings ends with it.
        self.consumed
            .retain(|v, _| *v < start || before.contains_key(v));
        self.boundary.pop();
        self.scope.truncate(depth);
        let used: Vec<(usize, Set)> = self.uses[uses_from..].to_vec();
        let span = init.map(|x| x.span).unwrap_or(pat.span);
        let out = self.loop_result(&b, &init_al, &consumed, start, body.span);
        for (k, c) in consumed.into_iter().enumerate() {
            let part = init_al.part(k, n).all;
            if !c {
                continue;
            }
            if let Some(v) = part.intersection(&iterated).next() {
                let msg = format!(
                    "Argument is consumed, but aliases \"{}\", the array the loop iterates over.",
                    self.vars[*v].name
                );
                self.errors.push(Diagnostic::error(span, msg));
                continue;
            }
            if let Some((v, _)) = used
                .iter()
                .find(|(v, s)| *v < start && !s.is_disjoint(&part))
            {
                let msg = format!(
                    "Using variable \"{}\" in the loop, but it was consumed at {} as the initial value of a consuming loop parameter.",
                    self.vars[*v].name,
                    self.loc(span)
                );
                self.errors.push(Diagnostic::error(span, msg));
                continue;
            }
            let note = declared_type(comps[k])
                .map(|t| format!("the loop parameter is declared {}", self.text(t.span())));
            self.consume_with(&part, span, note);
        }
        out
    }

    /// The values a loop body returns for its consumed parameters may not alias each other:
    /// each must be unique in the next iteration.
    fn check_returned_apart(
        &mut self,
        b: &Al,
        consumed: &[bool],
        params: &[Vec<usize>],
        body: &Exp,
    ) {
        let n = consumed.len();
        if n < 2 {
            return;
        }
        for j in 1..n {
            for k in 0..j {
                if consumed[j] && consumed[k] && !b.part(j, n).all.is_disjoint(&b.part(k, n).all) {
                    let pname = params[j]
                        .first()
                        .map(|p| self.vars[*p].name.clone())
                        .unwrap_or_default();
                    let msg = format!(
                        "Return value for loop parameter \"{pname}\" aliases another returned value (see docs/TYPE-CHECKS.md#aliases-previously-returned)."
                    );
                    self.errors.push(Diagnostic::error(body.span, msg));
                    return;
                }
            }
        }
    }

    /// The aliases of a loop's result, per component: what the body returns, where the
    /// body's own values get a fresh name each (shared where components share them); an
    /// observed (not consumed) component may also be any observed part of the initial
    /// value or anything the body returns for one, as the loop may permute them.
    fn loop_result(
        &mut self,
        b: &Al,
        init: &Al,
        consumed: &[bool],
        start: usize,
        span: runic_syntax::Span,
    ) -> Al {
        let n = consumed.len();
        let mut fresh = std::collections::HashMap::new();
        for v in b.all.iter().copied().filter(|v| *v >= start) {
            let q = self.fresh("result of loop".into(), span, true);
            fresh.insert(v, q);
        }
        let b = b.rename(&|v| fresh.get(&v).copied().unwrap_or(v));
        let body_part = |k: usize| if n == 1 { b.clone() } else { b.part(k, n) };
        let mut observed = Set::new();
        for (k, c) in consumed.iter().enumerate() {
            if !*c {
                observed.extend(init.part(k, n).all);
                observed.extend(body_part(k).all.into_iter().filter(|v| *v < start));
            }
        }
        let parts: Vec<Al> = (0..n)
            .map(|k| {
                let mut s = body_part(k).all;
                if !consumed[k] {
                    s.extend(observed.iter().copied());
                }
                Al::of(s)
            })
            .collect();
        if n == 1 {
            return parts.into_iter().next().unwrap_or_default();
        }
        let all = parts.iter().flat_map(|p| p.all.iter().copied()).collect();
        Al {
            all,
            parts: Some(parts),
            fields: None,
        }
    }
}

/// The pattern without attributes and ascriptions.
/// A record's aliases per field, as the parts of a tuple in the order of `names` (the fields
/// of a record loop pattern); unchanged when they are not known field by field.
fn fields_as_parts(al: Al, names: Option<&[Name]>) -> Al {
    let (Some(names), Some(fields)) = (names, &al.fields) else {
        return al;
    };
    let parts: Option<Vec<Al>> = names
        .iter()
        .map(|n| fields.iter().find(|(m, _)| m == n).map(|(_, a)| a.clone()))
        .collect();
    match parts {
        Some(parts) => Al {
            all: al.all.clone(),
            parts: Some(parts),
            fields: al.fields.clone(),
        },
        None => al,
    }
}

fn strip(p: &Pat) -> &Pat {
    match &p.kind {
        PatKind::Ascribe(q, _) | PatKind::Attr(_, q) => strip(q),
        _ => p,
    }
}

fn pat_var(p: &Pat) -> Option<&Name> {
    match &strip(p).kind {
        PatKind::Var(n) => Some(n),
        _ => None,
    }
}

fn declared_type(p: &Pat) -> Option<&TypeExp> {
    match &p.kind {
        PatKind::Ascribe(_, t) => Some(t),
        PatKind::Attr(_, q) => declared_type(q),
        _ => None,
    }
}
