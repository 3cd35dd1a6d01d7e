//! Control flow: the primal runs once, with the tangents beside it.
//!
//! - `if c then t else e`: each branch is differentiated and also returns the tangents of
//!   the results that either branch gives one (zeros where the other does not). Work and
//!   span: those of the branch taken, times a small constant.
//! - `loop`: a tangent parameter for each loop parameter whose initial value or next value
//!   has a tangent (the set grows until the body's result tangents agree with it); the
//!   body is differentiated once. Work and span: the loop's, times a small constant.

use super::{Diff, R};
use runic_ir::*;

impl Diff {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn if_(
        &mut self,
        b: &mut Builder,
        pat: Vec<Param>,
        src: SrcInfo,
        cond: SubExp,
        then_body: Body,
        else_body: Body,
        ret: Vec<Type>,
    ) -> R<()> {
        let (mut ts, tres, tt) = self.sub_body(b, then_body)?;
        let (mut es, eres, et) = self.sub_body(b, else_body)?;
        let active: Vec<bool> = tt
            .iter()
            .zip(&et)
            .map(|(a, b)| a.is_some() || b.is_some())
            .collect();
        let t_extra = self.finish_tangents(b, &mut ts, &tres, &tt, &active)?;
        let e_extra = self.finish_tangents(b, &mut es, &eres, &et, &active)?;
        let mut ret2 = ret.clone();
        ret2.extend(
            ret.iter()
                .zip(&active)
                .filter(|(_, a)| **a)
                .map(|(t, _)| self.tan_ty(t)),
        );
        let mut pat2 = pat.clone();
        pat2.extend(self.tangent_pat(b, &pat, &active));
        b.add(Stm {
            pat: pat2,
            exp: Exp::If {
                cond,
                then_body: Body {
                    stms: ts,
                    result: tres.into_iter().chain(t_extra).collect(),
                },
                else_body: Body {
                    stms: es,
                    result: eres.into_iter().chain(e_extra).collect(),
                },
                ret: ret2,
            },
            src,
        });
        Ok(())
    }

    pub(super) fn loop_(
        &mut self,
        b: &mut Builder,
        pat: Vec<Param>,
        src: SrcInfo,
        params: Vec<(Param, SubExp)>,
        form: LoopForm,
        body: Body,
    ) -> R<()> {
        for (p, _) in &params {
            b.names.set_type(p.name, p.ty.clone());
        }
        if let LoopForm::For { i, bound } = &form {
            let t = b.type_of(bound)?;
            b.names.set_type(*i, t);
            self.tans.remove(i);
        }
        // A parameter is active if its initial value or its next value has a tangent:
        // grow the active set until the body's result tangents agree with it.
        let mut active: Vec<bool> = params
            .iter()
            .map(|(_, init)| self.tan_opt(init).is_some())
            .collect();
        loop {
            let mut tparams = Vec::new();
            for ((p, _), a) in params.iter().zip(&active) {
                if *a {
                    let dp = self.tangent_param(b, p);
                    self.tans.insert(p.name, SubExp::Var(dp.name));
                    tparams.push(dp);
                } else {
                    self.tans.remove(&p.name);
                }
            }
            let (mut stms, res, tres) = self.sub_body(b, body.clone())?;
            let next: Vec<bool> = active
                .iter()
                .zip(&tres)
                .map(|(a, t)| *a || t.is_some())
                .collect();
            if next != active {
                active = next;
                continue;
            }
            let extra = self.finish_tangents(b, &mut stms, &res, &tres, &active)?;
            let mut params2 = params.clone();
            let mut tp = tparams.into_iter();
            for ((_, init), a) in params.iter().zip(&active) {
                if *a {
                    let dinit = self.tan(b, init)?;
                    if let Some(dp) = tp.next() {
                        params2.push((dp, dinit));
                    }
                }
            }
            let mut pat2 = pat.clone();
            pat2.extend(self.tangent_pat(b, &pat, &active));
            b.add(Stm {
                pat: pat2,
                exp: Exp::Loop {
                    params: params2,
                    form,
                    body: Body {
                        stms,
                        result: res.into_iter().chain(extra).collect(),
                    },
                },
                src,
            });
            return Ok(());
        }
    }
}
