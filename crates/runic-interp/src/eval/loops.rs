//! `loop` expressions: initial values, parameter binding and iteration.

use super::values::make_record;
use super::{Eval, R};
use crate::env::Env;
use crate::error::RuntimeError;
use crate::prim::Prim;
use crate::value::Value;
use runic_syntax::ast::*;
use std::rc::Rc;

impl<'a> Eval<'a> {
    fn loop_init(&self, p: &'a Pat, env: &Env<'a>) -> R<Value<'a>> {
        match &p.kind {
            PatKind::Var(n) => self.lookup_unqual(n, p.id, p.span, env),
            PatKind::Tuple(ps) => {
                let mut vs = Vec::new();
                for sp in ps {
                    vs.push(self.loop_init(sp, env)?);
                }
                Ok(Value::Tuple(Rc::new(vs)))
            }
            PatKind::Record(fs) => {
                let mut vs = Vec::new();
                for (n, sp) in fs {
                    vs.push((n.as_str(), self.loop_init(sp, env)?));
                }
                Ok(make_record(vs))
            }
            PatKind::Ascribe(inner, _) | PatKind::Attr(_, inner) => self.loop_init(inner, env),
            _ => Ok(Value::unit()),
        }
    }

    fn bind_loop_param(&self, pat: &'a Pat, v: Value<'a>, env: &mut Env<'a>, first: bool) -> R<()> {
        self.bind_irrefutable(pat, v, env, &mut Vec::new())
            .map_err(|mut er| {
                if !first && er.message.starts_with("Value of (desugared) shape") {
                    er.message =
                        "shape of loop result does not match shapes in loop parameter".into();
                }
                er
            })
    }

    pub(super) fn eval_loop(
        &self,
        pat: &'a Pat,
        init: Option<&'a Exp>,
        form: &'a LoopForm,
        body: &'a Exp,
        env: &Env<'a>,
    ) -> R<Value<'a>> {
        let mut cur = match init {
            Some(x) => self.eval(x, env)?,
            None => self.loop_init(pat, env)?,
        };
        let mut first = true;
        match form {
            LoopForm::For { var, bound, .. } => {
                let n = self.eval_prim(bound, env)?;
                let t = n.ty();
                let count = n.as_int().unwrap_or(0);
                let mut i: i128 = 0;
                while i < count {
                    if i & 0xfff == 0 {
                        self.check_interrupt()?;
                    }
                    let mut env2 = env.clone();
                    self.bind_loop_param(pat, cur, &mut env2, first)?;
                    first = false;
                    env2.bind(var, Value::Prim(Prim::int(t, i)));
                    cur = self.eval(body, &env2)?;
                    i += 1;
                }
            }
            LoopForm::ForIn { pat: xp, array } => {
                let av = self.eval(array, env)?;
                let Value::Array(arr) = av else {
                    return Err(RuntimeError::at(
                        "internal error: for-in over a non-array",
                        array.span,
                    ));
                };
                for k in 0..arr.len() {
                    if k & 0xfff == 0 {
                        self.check_interrupt()?;
                    }
                    let mut env2 = env.clone();
                    self.bind_loop_param(pat, cur, &mut env2, first)?;
                    first = false;
                    self.bind_irrefutable(xp, arr.row(k), &mut env2, &mut Vec::new())?;
                    cur = self.eval(body, &env2)?;
                }
            }
            LoopForm::While(cond) => {
                let mut k: u64 = 0;
                loop {
                    if k & 0xfff == 0 {
                        self.check_interrupt()?;
                    }
                    k += 1;
                    let mut env2 = env.clone();
                    self.bind_loop_param(pat, cur.clone(), &mut env2, first)?;
                    first = false;
                    if !self.eval_bool(cond, &env2)? {
                        break;
                    }
                    // Release the copy held by `cur` so the body may update in place.
                    drop(std::mem::replace(&mut cur, Value::unit()));
                    cur = self.eval(body, &env2)?;
                }
            }
        }
        // A final check of an annotated parameter against the last result.
        if !first {
            let mut env2 = env.clone();
            self.bind_loop_param(pat, cur.clone(), &mut env2, false)?;
        }
        Ok(cur)
    }
}
