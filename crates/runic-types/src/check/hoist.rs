//! `f (let p = e in body)` where `f` has size parameters: checked, and rewritten, as
//! `let p = e in f body`. The sizes the `let` binds (`let xs' = filter p xs in xs' ++ xs`
//! has size `k + n`, `k` the size of `xs'`) then have run-time names where `f` is applied,
//! so a size parameter solved to one of them is known when `f` runs, as the reference
//! accepts (`f [n] [m] (_: [n+m]t)`). The rewrite is skipped where a name the pattern binds
//! is mentioned by the function or another argument (it would capture it).

use super::{Checker, Denot};
use runic_syntax::ast::*;

impl Checker {
    /// Rewrite `e` (an application) as above if it qualifies; whether it did.
    pub(super) fn hoist_let_argument(&mut self, e: &mut Exp) -> bool {
        let ExpKind::Apply(f, args) = &e.kind else {
            return false;
        };
        let ExpKind::Var(q) = &f.kind else {
            return false;
        };
        if !q.quals.is_empty() {
            return false;
        }
        match self.lookup(&q.name) {
            Some(Denot::Value(sc, _)) if !sc.sparams.is_empty() => {}
            _ => return false,
        }
        let mut hoist = None;
        for (k, a) in args.iter().enumerate() {
            let ExpKind::LetPat { pat, sizes, .. } = &a.kind else {
                continue;
            };
            let mut bound: Vec<Name> = sizes.iter().map(|(n, _)| n.clone()).collect();
            pat_names(pat, &mut bound);
            let mut used = Vec::new();
            exp_names(f, &mut used);
            for (j, other) in args.iter().enumerate() {
                if j != k {
                    exp_names(other, &mut used);
                }
            }
            if !bound.iter().any(|b| used.contains(b)) {
                hoist = Some(k);
                break;
            }
        }
        let Some(k) = hoist else {
            return false;
        };
        let span = e.span;
        let id = e.id;
        let ExpKind::Apply(f, mut args) = std::mem::replace(&mut e.kind, ExpKind::Tuple(vec![]))
        else {
            return false;
        };
        let arg = args.remove(k);
        let ExpKind::LetPat {
            sizes,
            pat,
            rhs,
            body,
        } = arg.kind
        else {
            return false;
        };
        args.insert(k, *body);
        let call = Exp {
            id,
            span,
            kind: ExpKind::Apply(f, args),
        };
        e.id = self.fresh_id();
        e.kind = ExpKind::LetPat {
            sizes,
            pat,
            rhs,
            body: Box::new(call),
        };
        true
    }
}

/// The names a pattern binds.
fn pat_names(p: &Pat, out: &mut Vec<Name>) {
    match &p.kind {
        PatKind::Var(n) => out.push(n.clone()),
        PatKind::Wildcard | PatKind::Literal { .. } => {}
        PatKind::Tuple(ps) | PatKind::Constr(_, ps) => ps.iter().for_each(|q| pat_names(q, out)),
        PatKind::Record(fs) => fs.iter().for_each(|(_, q)| pat_names(q, out)),
        PatKind::Ascribe(q, _) | PatKind::Attr(_, q) => pat_names(q, out),
    }
}

/// Every identifier an expression's text mentions (a conservative superset of its free
/// variables: bound names and field names are included).
fn exp_names(e: &Exp, out: &mut Vec<Name>) {
    let text = runic_syntax::pretty::print_exp(e);
    out.extend(
        text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '\''))
            .filter(|w| !w.is_empty())
            .map(|w| w.to_string()),
    );
}
