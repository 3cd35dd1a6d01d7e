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
                        for p in params.iter() {
                            cenv = check_function_param(p, cenv);
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
                Fun::Checked {
                    inner,
                    ret,
                    arity,
                    env,
                    span: at,
                } => {
                    let v = self.apply_many(inner.clone(), vec![arg], span)?;
                    if *arity > 1 {
                        Val::Fun(Rc::new(Fun::Checked {
                            inner: v,
                            ret,
                            arity: arity - 1,
                            env: env.clone(),
                            span: *at,
                        }))
                    } else {
                        self.loc = Some(loc_of(*at));
                        self.check_shape(&v, ret, env, *at)?;
                        v
                    }
                }
            };
        }
        Ok(f)
    }
}

/// A parameter `(f: t₁ -> … -> [n]t)` bound to a function value: rebound as
/// [`Fun::Checked`] with the callee's environment (every parameter and size bound), so that
/// what it returns is checked against the declared result, as the interpreter does.
fn check_function_param<'a>(p: &'a ast::Pat, env: Env<'a>) -> Env<'a> {
    let ast::PatKind::Ascribe(inner, te) = &p.kind else {
        return env;
    };
    let ast::PatKind::Var(name) = &inner.kind else {
        return env;
    };
    let Some((arity, ret)) = arrow_result(te) else {
        return env;
    };
    let Some(v @ Val::Fun(_)) = env.lookup(name).cloned() else {
        return env;
    };
    let checked = Fun::Checked {
        inner: v,
        ret,
        arity,
        env: env.clone(),
        span: te.span(),
    };
    env.bind(name, Val::Fun(Rc::new(checked)))
}

/// The number of arrows of a function type and its final result, when that is an array
/// type (the only results whose shape can differ from the declaration).
fn arrow_result(mut t: &ast::TypeExp) -> Option<(usize, &ast::TypeExp)> {
    let mut arity = 0;
    while let ast::TypeExp::Arrow(_, _, res, _) = t {
        arity += 1;
        t = res;
    }
    let array = match t {
        ast::TypeExp::Unique(inner, _) => matches!(**inner, ast::TypeExp::Array(..)),
        _ => matches!(t, ast::TypeExp::Array(..)),
    };
    (arity > 0 && array).then_some((arity, t))
}
