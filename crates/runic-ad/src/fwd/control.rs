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
    /// `if c then t else e`: each branch also returns the tangents of the results that
    /// either branch gives one.
    pub(super) fn if_(
        &mut self,
        b: &mut Builder,
        pat: Vec<Param>,
        cond: SubExp,
        then_body: Body,
        else_body: Body,
        ret: Vec<Type>,
    ) -> R<()> {
        let (mut then_body, dthen) = self.sub_body(b, then_body)?;
        let (mut else_body, delse) = self.sub_body(b, else_body)?;
        let active: Vec<bool> = dthen
            .iter()
            .zip(&delse)
            .map(|(t, e)| t.is_some() || e.is_some())
            .collect();
        self.finish_tangents(b, &mut then_body, &dthen, &active)?;
        self.finish_tangents(b, &mut else_body, &delse, &active)?;
        let ret = self.with_tangent_types(ret, &active);
        let pat = self.with_tangents(b, pat, &active);
        let exp = Exp::If {
            cond,
            then_body,
            else_body,
            ret,
        };
        b.let_pat(pat, exp);
        Ok(())
    }

    /// `loop (ps = inits) for/while .. do body`, with the active parameters' tangents as
    /// more loop parameters (initially the tangents of their initial values).
    pub(super) fn loop_(
        &mut self,
        b: &mut Builder,
        pat: Vec<Param>,
        params: Vec<(Param, SubExp)>,
        form: LoopForm,
        body: Body,
    ) -> R<()> {
        if let LoopForm::For { i, .. } = &form {
            self.tans.remove(i);
        }
        // A parameter is active if its initial value or its next value has a tangent:
        // grow the active set until the body's result tangents agree with it.
        let mut active: Vec<bool> = params
            .iter()
            .map(|(_, init)| self.tan_opt(init).is_some())
            .collect();
        let (dparams, mut dbody, dres) = loop {
            let mut dparams = Vec::new();
            for ((p, _), a) in params.iter().zip(&active) {
                if *a {
                    let dp = self.tangent_param(b, p);
                    self.tans.insert(p.name, SubExp::Var(dp.name));
                    dparams.push(dp);
                } else {
                    self.tans.remove(&p.name);
                }
            }
            let (dbody, dres) = self.sub_body(b, body.clone())?;
            let next: Vec<bool> = active
                .iter()
                .zip(&dres)
                .map(|(a, t)| *a || t.is_some())
                .collect();
            if next == active {
                break (dparams, dbody, dres);
            }
            active = next;
        };
        self.finish_tangents(b, &mut dbody, &dres, &active)?;
        let inits: Vec<&SubExp> = params
            .iter()
            .zip(&active)
            .filter(|(_, a)| **a)
            .map(|((_, init), _)| init)
            .collect();
        let mut params2 = params.clone();
        for (dp, init) in dparams.into_iter().zip(inits) {
            params2.push((dp, self.tan(b, init)?));
        }
        let pat = self.with_tangents(b, pat, &active);
        let exp = Exp::Loop {
            params: params2,
            form,
            body: dbody,
        };
        b.let_pat(pat, exp);
        Ok(())
    }
}
