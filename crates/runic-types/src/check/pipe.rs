//! `lhs |> f args`: reverse application. When the left operand's outer sizes are rigid
//! unknowns (the result of `filter`, say) the pipe is checked, and rewritten, as
//! `let p = lhs in f args p`: the left operand is evaluated first, so its sizes are known
//! when `f args` runs, and the `let` gives them the run-time names that a size parameter of
//! `f` read only from a functional argument needs (the reference's causality rule allows
//! `filter p xs |> f (\_ -> 0)`, and rejects `f (\_ -> 0) <| filter p xs`).

use super::{Anon, Checker, Denot, R};
use crate::infer_ty::{Sz, T};
use runic_syntax::ast::*;

impl Checker {
    /// Infer `e` if it is a use of the prelude's `|>`; `None` for any other expression.
    pub(super) fn infer_pipe(&mut self, e: &mut Exp) -> R<Option<T>> {
        let id = e.id;
        let ExpKind::BinOp { op, lhs, rhs } = &mut e.kind else {
            return Ok(None);
        };
        if !op.name.quals.is_empty() || op.name.name != "|>" || op.backtick {
            return Ok(None);
        }
        match self.lookup("|>") {
            Some(Denot::Value(sc, _)) if is_reverse_application(&sc.tparams, &sc.ty) => {}
            _ => return Ok(None),
        }
        let opt = self.op_type(op, id)?;
        let name = format!("\"{}\"", op.name);
        let lt = self.infer(lhs)?;
        if !matches!(self.s.zonk(&lt), T::Array(Sz::Unknown(_), _)) {
            let rt = self.infer(rhs)?;
            let r1 = self.apply_one(opt, lt, lhs, 1, &name, op.span)?;
            return self.apply_one(r1, rt, rhs, 2, &name, op.span).map(Some);
        }
        let span = e.span;
        let ExpKind::BinOp { lhs, rhs, .. } =
            std::mem::replace(&mut e.kind, ExpKind::Tuple(vec![]))
        else {
            return Ok(None);
        };
        let var = format!("%pipe{}", id.0);
        let mut pat = Pat {
            id: self.fresh_id(),
            span: lhs.span,
            kind: PatKind::Var(var.clone()),
        };
        let arg = Exp {
            id: self.fresh_id(),
            span: lhs.span,
            kind: ExpKind::Var(QualName::unqual(var)),
        };
        let mut body = Exp {
            id: self.fresh_id(),
            span,
            kind: ExpKind::Apply(rhs, vec![arg]),
        };
        let mut sizes = Vec::new();
        let depth = self.scopes.len();
        let outer = self.named_unknowns.len();
        let r = (|| {
            let hidden = self.name_let_sizes(&mut sizes, &pat, &lt);
            self.bind_pattern(&mut pat, &lt, Anon::Flex, false)?;
            if let Some((named, ns)) = hidden {
                self.pat_rec.push((pat.id, named));
                self.named_unknowns.extend(ns);
            }
            self.infer(&mut body)
        })();
        self.named_unknowns.truncate(outer);
        self.scopes.truncate(depth);
        e.kind = ExpKind::LetPat {
            sizes,
            pat,
            rhs: lhs,
            body: Box::new(body),
        };
        r.map(Some)
    }
}

/// Whether a scheme is `'a 'b. a -> (a -> b) -> b`, which can only be reverse application.
fn is_reverse_application(tparams: &[Name], ty: &T) -> bool {
    let [a, b] = tparams else {
        return false;
    };
    let T::Arrow(_, x, rest) = ty else {
        return false;
    };
    let T::Arrow(_, f, r) = &**rest else {
        return false;
    };
    let T::Arrow(_, fx, fr) = &**f else {
        return false;
    };
    let is = |t: &T, n: &Name| matches!(t, T::Param(p) if p == n);
    is(x, a) && is(fx, a) && is(fr, b) && is(r, b)
}
