//! Application: closures are inlined, builtins lowered once all their arguments are known.

use super::*;
use crate::val::{Fun, Val};
use runic_syntax::ast::{self};
use runic_syntax::Span;
use std::rc::Rc;

impl<'a> Lower<'a> {
    pub fn apply_many(&mut self, f: Val<'a>, args: Vec<Val<'a>>, span: Span) -> R<Val<'a>> {
        let mut f = f;
        let mut it = args.into_iter().peekable();
        while let Some(arg) = it.next() {
            let fun = match &f {
                Val::Fun(rc) => rc.clone(),
                _ => return unsupported("application of a non-function", Some(span)),
            };
            f = match &*fun {
                Fun::Closure {
                    params,
                    body,
                    env,
                    args: have,
                    type_params,
                    sizes,
                    ret,
                    scope,
                } => {
                    let mut all = have.clone();
                    all.push(arg);
                    while all.len() < params.len() {
                        match it.next() {
                            Some(v) => all.push(v),
                            None => break,
                        }
                    }
                    if all.len() < params.len() {
                        Val::Fun(Rc::new(Fun::Closure {
                            params,
                            body,
                            env: env.clone(),
                            args: all,
                            type_params,
                            sizes: sizes.clone(),
                            ret: *ret,
                            scope: *scope,
                        }))
                    } else {
                        let mut cenv = env.clone();
                        for (n, v) in sizes {
                            cenv = cenv.bind(n, v.clone());
                        }
                        for (p, a) in params.iter().zip(all) {
                            if let Some(t) = self.ck.info.pat_types.get(&p.id) {
                                self.check_param_sizes(&a, t, &cenv, p.span)?;
                            }
                            cenv = self.bind_pat(p, a, &cenv)?;
                        }
                        let outer_scope = std::mem::replace(&mut self.pos, *scope);
                        let v = self.exp(body, &cenv);
                        self.pos = outer_scope;
                        let v = v?;
                        if let Some(rt) = ret {
                            self.loc = Some(loc_of(body.span));
                            self.check_shape(&v, rt, &cenv, body.span)?;
                        }
                        v
                    }
                }
                Fun::Builtin {
                    b,
                    arity,
                    args: have,
                    sizes,
                    loc,
                } => {
                    let mut all = have.clone();
                    all.push(arg);
                    while all.len() < *arity {
                        match it.next() {
                            Some(v) => all.push(v),
                            None => break,
                        }
                    }
                    if all.len() < *arity {
                        Val::Fun(Rc::new(Fun::Builtin {
                            b: b.clone(),
                            arity: *arity,
                            args: all,
                            sizes: sizes.clone(),
                            loc: *loc,
                        }))
                    } else {
                        let saved = self.loc;
                        // Errors inside an intrinsic are reported at the call.
                        self.loc = self.calls.last().copied().or(self.loc);
                        let r = crate::intrinsics::call(self, b, all, sizes, span);
                        self.loc = saved;
                        r?
                    }
                }
                Fun::RightSection { op, rhs } => {
                    self.apply_many(op.clone(), vec![arg, rhs.clone()], span)?
                }
                Fun::Proj { steps, env } => {
                    let mut v = arg;
                    for s in steps.iter() {
                        v = match s {
                            ast::ProjStep::Field(n) => match v.field(n) {
                                Some(x) => x.clone(),
                                None => return unsupported("projection section", Some(span)),
                            },
                            ast::ProjStep::Index(dims) => {
                                let idx = self.dim_indices(dims, env)?;
                                self.index_val(&v, &idx, span)?
                            }
                        };
                    }
                    v
                }
            };
        }
        Ok(f)
    }
}
