//! Function application: checking the arguments one at a time against the function's type.

use super::type_exp::subst_exp_var;
use super::{err, ordinal, Checker, R};
use crate::infer_ty::{map_sizes, size_mentions, Sz, T};
use runic_syntax::ast::*;
use runic_syntax::Span;

impl Checker {
    pub(super) fn apply_args(
        &mut self,
        mut ft: T,
        args: &mut [Exp],
        fname: &str,
        fspan: Span,
    ) -> R<T> {
        let total = args.len();
        for (i, arg) in args.iter_mut().enumerate() {
            let shallow = self.s.shallow(&ft);
            match shallow {
                T::Arrow(..) | T::Var(_) => {
                    let before = self.s.unknowns;
                    let at = self.infer(arg)?;
                    if matches!(
                        arg.kind,
                        ExpKind::LeftSection { .. } | ExpKind::RightSection { .. }
                    ) {
                        self.check_section_causality(&at, before, arg.span)?;
                    }
                    ft = self.apply_one(shallow, at, arg, i + 1, fname, fspan)?;
                }
                other => {
                    let msg = if i == 0 {
                        format!("{fname} is not a function (it has type \"{}\") but is applied to {total} argument{}.", self.s.show(&other), if total == 1 { "" } else { "s" })
                    } else {
                        format!(
                            "{fname} takes {i} argument{} but is applied to {total}.",
                            if i == 1 { "" } else { "s" }
                        )
                    };
                    return err(arg.span.to(fspan), msg);
                }
            }
        }
        Ok(ft)
    }

    /// Apply a function type to one argument of type `at`.
    pub(super) fn apply_one(
        &mut self,
        ft: T,
        at: T,
        arg: &Exp,
        pos: usize,
        fname: &str,
        fspan: Span,
    ) -> R<T> {
        match self.s.shallow(&ft) {
            T::Arrow(pn, p, r) => {
                self.expect(
                    &p,
                    &at,
                    arg.span,
                    &format!("the {} argument of {fname}", ordinal(pos)),
                )
                .map_err(|d| cannot_apply(d, fname, arg, pos))?;
                let r = *r;
                Ok(match pn {
                    Some(n) => {
                        let by = self.size_term(arg);
                        // The parameter's name is replaced in the function's own type
                        // before its type variables are resolved: what they stand for comes
                        // from the caller, whose sizes may have the same name (`hist`'s
                        // `k` against a caller's `[k]` rows of the neutral element).
                        // A size written as an expression over the parameter (`[s.0]`) gets
                        // the argument in its place when that is simple enough to stand in
                        // a size, and else becomes an unknown size (one per expression).
                        let simple = super::type_exp::simple_exp(arg);
                        let mut unknowns: Vec<(String, Sz)> = Vec::new();
                        let r = map_sizes(&r, &mut |s| match s {
                            Sz::Exp(e) if size_mentions(s, &n) => {
                                if simple {
                                    Sz::Exp(Box::new(subst_exp_var(e, &n, arg)))
                                } else {
                                    let text = runic_syntax::pretty::print_exp(e);
                                    if let Some((_, u)) = unknowns.iter().find(|(x, _)| *x == text)
                                    {
                                        return u.clone();
                                    }
                                    let u = self.s.fresh_unknown();
                                    unknowns.push((text, u.clone()));
                                    u
                                }
                            }
                            _ => crate::infer_ty::subst_size(s, &n, &by),
                        });
                        self.s.zonk(&r)
                    }
                    None => r,
                })
            }
            T::Var(_) => {
                let r = self.s.fresh_var();
                let want = T::arrow(at.clone(), r.clone());
                self.expect(
                    &ft,
                    &want,
                    arg.span,
                    &format!("the {} argument of {fname}", ordinal(pos)),
                )
                .map_err(|d| cannot_apply(d, fname, arg, pos))?;
                Ok(r)
            }
            other => err(
                arg.span.to(fspan),
                format!(
                    "{fname} takes {} argument{} but is applied to more.",
                    pos - 1,
                    if pos == 2 { "" } else { "s" }
                ) + &format!(" (its result has type \"{}\")", self.s.show(&other)),
            ),
        }
    }
}

/// A type error in an argument: say first which application failed, as the reference does
/// (`Cannot apply "f" to "x"`), then why.
fn cannot_apply(
    mut d: Box<runic_syntax::Diagnostic>,
    fname: &str,
    arg: &Exp,
    pos: usize,
) -> Box<runic_syntax::Diagnostic> {
    let text = runic_syntax::pretty::print_exp(arg);
    // Names the checker made (flattened module members, hidden binders) are not shown.
    let internal = text.contains(['?', '%', '\n']);
    let shown = if text.chars().count() > 40 || internal {
        format!("its {} argument", ordinal(pos))
    } else {
        format!("\"{text}\" (its {} argument)", ordinal(pos))
    };
    d.notes.insert(
        0,
        format!("Cannot apply {fname} to {shown}: the types do not match."),
    );
    d
}
