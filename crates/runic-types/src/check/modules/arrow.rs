//! Parametric module types `(p: A) -> B`: elaborating them, and matching a parametric module
//! against one. The parameter is compared contravariantly (every module of type `A` must be
//! accepted by the parametric module's own parameter), the result covariantly (applied to
//! such a module, the parametric module must give a module of type `B`).

use super::{Frame, Functor, ModVal, SigVal};
use crate::check::{Checker, R};
use runic_syntax::ast::*;
use runic_syntax::{Diagnostic, Span};
use std::rc::Rc;

/// The parts of an elaborated `(p: A) -> B`.
pub(super) struct ArrowSig<'a> {
    pub param: Option<&'a Name>,
    pub param_sig: &'a Rc<SigVal>,
    pub result: &'a ModTypeExp,
    pub closure: &'a [Frame],
}

impl Checker {
    /// Elaborates `(p: A) -> B`, checking `B` once with `p` an abstract module of type `A`.
    pub(super) fn elab_arrow_sig(
        &mut self,
        param: Option<&Name>,
        a: &ModTypeExp,
        b: &ModTypeExp,
    ) -> R<Rc<SigVal>> {
        let param_sig = self.elab_sig(a)?;
        let closure = self.frames.clone();
        let out = self.out.len();
        self.generic += 1;
        let r = self.with_param_abstract(param, &param_sig, &closure, a.span(), |ck, _| {
            ck.elab_sig(b)
        });
        self.generic -= 1;
        self.out.truncate(out);
        r?;
        Ok(Rc::new(SigVal::Arrow {
            param: param.cloned(),
            param_sig,
            result: b.clone(),
            closure,
        }))
    }

    /// Runs `k` in `closure` with the parameter bound to an abstract module of its type.
    fn with_param_abstract<X>(
        &mut self,
        param: Option<&Name>,
        param_sig: &SigVal,
        closure: &[Frame],
        span: Span,
        k: impl FnOnce(&mut Checker, &ModVal) -> R<X>,
    ) -> R<X> {
        let who = param.cloned().unwrap_or_default();
        self.prefix.push(format!("{who}?"));
        let abs = self.match_sig(None, param_sig, true, span, &who);
        self.prefix.pop();
        let abs = abs?;
        let saved = std::mem::replace(&mut self.frames, closure.to_vec());
        let mut pf = Frame::default();
        if let Some(p) = param {
            pf.vis.mods.insert(p.clone(), abs.clone());
        }
        self.frames.push(pf);
        let r = k(self, &abs);
        self.frames = saved;
        r
    }

    /// Matches parametric module `f` against `(p: A) -> B`. Transparently (`:>`), gives `f`
    /// itself; opaquely (`:`), a parametric module that takes a module of type `A` and gives
    /// `f` applied to it, ascribed `B` (see [`Checker::ascribed_functor`]).
    pub(super) fn match_functor(
        &mut self,
        f: &Rc<Functor>,
        sig: &ArrowSig,
        opaque: bool,
        span: Span,
        who: &str,
        path: String,
    ) -> R<ModVal> {
        // A body with errors of its own was reported once already.
        if f.broken.get() {
            return Ok(ModVal::Functor(f.clone()));
        }
        let out = self.out.len();
        let errors = self.errors.len();
        self.generic += 1;
        self.prefix.push(format!("{who}?"));
        let r = self.with_param_abstract(
            sig.param,
            sig.param_sig,
            sig.closure,
            span,
            |ck, abs| {
                // Contravariant: the module type's parameter must satisfy `f`'s.
                let view = ck
                    .match_sig(Some(abs), &f.param_sig, false, span, &f.param.name)
                    .map_err(|d| {
                        note(
                            d,
                            format!(
                                "in the parameter of the parametric module: the module type's parameter must satisfy the module type of \"{}\", the parametric module's own parameter",
                                f.param.name
                            ),
                        )
                    })?;
                // Covariant: the result, applied to that parameter, must satisfy `B`.
                let result = ck.instantiate_functor(f, view, span)?;
                let result_sig = ck.elab_sig(sig.result)?;
                ck.match_sig_at(Some(&result), &result_sig, opaque, span, who, path)
                    .map_err(|d| note(d, "in the result of the parametric module"))
            },
        );
        self.prefix.pop();
        self.generic -= 1;
        self.out.truncate(out);
        // Errors the body reports on this abstract application repeat its own check.
        self.errors.truncate(errors);
        r.map(|_| match opaque {
            true => self.ascribed_functor(f, sig, span),
            false => ModVal::Functor(f.clone()),
        })
    }

    /// `\(p: A) : B -> f p`, read where `(p: A) -> B` was written: applications are checked
    /// against `A`, not `f`'s own parameter, and the types `B` leaves abstract are abstract
    /// in every application.
    fn ascribed_functor(&mut self, f: &Rc<Functor>, sig: &ArrowSig, span: Span) -> ModVal {
        // Names no source program can write.
        let inner = "%ascribed".to_string();
        let param = sig.param.cloned().unwrap_or_else(|| "%param".to_string());
        let mut closure = sig.closure.to_vec();
        let mut frame = Frame::default();
        frame
            .vis
            .mods
            .insert(inner.clone(), ModVal::Functor(f.clone()));
        closure.push(frame);
        let var = |n: &str| Box::new(ModExp::Var(QualName::unqual(n.to_string()), span));
        ModVal::Functor(Rc::new(Functor {
            param: ModParam {
                name: param.clone(),
                name_span: f.param.name_span,
                sig: f.param.sig.clone(),
                span: f.param.span,
            },
            param_sig: sig.param_sig.clone(),
            result: Some(sig.result.clone()),
            body: ModExp::Apply(var(&inner), var(&param), span),
            closure,
            dir: f.dir.clone(),
            broken: std::cell::Cell::new(false),
            abstract_result: false,
        }))
    }
}

fn note(mut d: Box<Diagnostic>, what: impl Into<String>) -> Box<Diagnostic> {
    d.notes.push(what.into());
    d
}
