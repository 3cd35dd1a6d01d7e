//! Function application: curried application of function values and closure calls.

use super::values::project;
use super::{Eval, MAX_CALL_DEPTH, R};
use crate::env::Env;
use crate::error::RuntimeError;
use crate::index;
use crate::value::{BuiltinFn, Closure, Fun, Value};
use runic_syntax::ast::*;
use std::rc::Rc;

impl<'a> Eval<'a> {
    /// Apply a function value to arguments, one at a time (curried).
    pub fn apply_many(&self, f: Value<'a>, args: Vec<Value<'a>>) -> R<Value<'a>> {
        let mut f = f;
        let mut it = args.into_iter();
        let mut next = it.next();
        while let Some(arg) = next.take() {
            let fun = match &f {
                Value::Fun(rc) => rc.clone(),
                _ => {
                    return Err(RuntimeError::new(
                        "internal error: application of a non-function",
                    ))
                }
            };
            match &*fun {
                Fun::Closure(c) => {
                    let mut all = c.args.clone();
                    all.push(arg);
                    while all.len() < c.params.len() {
                        match it.next() {
                            Some(v) => all.push(v),
                            None => break,
                        }
                    }
                    if all.len() < c.params.len() {
                        f = Value::Fun(Rc::new(Fun::Closure(Closure {
                            args: all,
                            ..c.clone()
                        })));
                    } else {
                        f = self.call_closure(c, all)?;
                    }
                }
                Fun::Builtin(b) => {
                    let mut all = b.args.clone();
                    all.push(arg);
                    while all.len() < b.arity {
                        match it.next() {
                            Some(v) => all.push(v),
                            None => break,
                        }
                    }
                    if all.len() < b.arity {
                        f = Value::Fun(Rc::new(Fun::Builtin(BuiltinFn {
                            args: all,
                            ..b.clone()
                        })));
                    } else {
                        f = self.call_builtin(b.op, all, &b.sizes)?;
                    }
                }
                Fun::RightSection { op, rhs } => {
                    f = self.apply_many(op.clone(), vec![arg, rhs.clone()])?;
                }
                Fun::Proj { steps, env } => {
                    f = self.project_steps(arg, steps, env)?;
                }
                Fun::Checked {
                    inner,
                    ret,
                    given,
                    arity,
                    env,
                    span,
                } => {
                    let ret = ret.after_arg(*given, &arg);
                    let v = self.apply_many(inner.clone(), vec![arg])?;
                    f = if *arity > 1 {
                        Value::Fun(Rc::new(Fun::Checked {
                            inner: v,
                            ret,
                            given: given + 1,
                            arity: arity - 1,
                            env: env.clone(),
                            span: *span,
                        }))
                    } else {
                        match &ret {
                            Expect::Declared(t) => self.check_ret(&v, t, env, *span)?,
                            Expect::LikeArg {
                                seen: Some(like), ..
                            } => check_same_shape(&v, like, *span)?,
                            Expect::LikeArg { seen: None, .. } => {}
                        }
                        v
                    };
                }
            }
            next = it.next();
        }
        Ok(f)
    }

    pub fn apply1(&self, f: &Value<'a>, x: Value<'a>) -> R<Value<'a>> {
        self.apply_many(f.clone(), vec![x])
    }

    pub fn apply2(&self, f: &Value<'a>, x: Value<'a>, y: Value<'a>) -> R<Value<'a>> {
        self.apply_many(f.clone(), vec![x, y])
    }

    fn call_closure(&self, c: &Closure<'a>, args: Vec<Value<'a>>) -> R<Value<'a>> {
        self.check_interrupt()?;
        let depth = self.depth.get();
        if depth >= MAX_CALL_DEPTH {
            return Err(RuntimeError::new("stack overflow: recursion too deep"));
        }
        self.depth.set(depth + 1);
        let r = self.call_closure_body(c, args);
        self.depth.set(depth);
        r
    }

    fn call_closure_body(&self, c: &Closure<'a>, args: Vec<Value<'a>>) -> R<Value<'a>> {
        let mut env = c.env.clone();
        let mut pending: Vec<&'a str> = Vec::new();
        for tp in c.type_params {
            if let TypeParam::Size(n, _) = tp {
                match c.sizes.iter().find(|(m, _)| *m == n.as_str()) {
                    Some((_, v)) => env.bind(n, Value::i64(*v)),
                    None => pending.push(n),
                }
            }
        }
        for (p, a) in c.params.iter().zip(args) {
            self.bind_irrefutable(p, a, &mut env, &mut pending)?;
        }
        for p in c.params {
            check_function_param(p, c.type_params, &mut env);
        }
        let v = self.eval(c.body, &env)?;
        if let Some(rt) = c.ret {
            self.check_ret(&v, rt, &env, c.body.span)?;
        }
        Ok(v)
    }

    fn project_steps(
        &self,
        mut v: Value<'a>,
        steps: &'a [ProjStep],
        env: &Env<'a>,
    ) -> R<Value<'a>> {
        for s in steps {
            v = match s {
                ProjStep::Field(f) => project(&v, f)?,
                ProjStep::Index(dims) => {
                    let d = self.eval_dims(dims, env)?;
                    index::index_value(&v, &d).map_err(RuntimeError::new)?
                }
            };
        }
        Ok(v)
    }
}

/// A parameter `(f: t₁ -> … -> r)` bound to a function value, where `r` is an array type
/// (`[n]t`), or a type parameter of the callee that is also the type of one of `f`'s own
/// arguments (`f: t -> t`): the value is rebound as [`Fun::Checked`], with the callee's
/// environment (all its parameters and sizes bound), so that what it returns is checked
/// against `r`. A function passed there may compute a result of another size (`\ys ->
/// filter p ys`): the checker defers that equality to run time, as for any argument.
fn check_function_param<'a>(p: &'a Pat, type_params: &'a [TypeParam], env: &mut Env<'a>) {
    let PatKind::Ascribe(inner, te) = &p.kind else {
        return;
    };
    let PatKind::Var(name) = &inner.kind else {
        return;
    };
    let Some((arity, expect)) = te.result_check(type_params) else {
        return;
    };
    let Some(v @ Value::Fun(_)) = env.lookup(name) else {
        return;
    };
    let checked = Fun::Checked {
        inner: v,
        ret: expect,
        given: 0,
        arity,
        env: env.clone(),
        span: te.span(),
    };
    env.bind(name, Value::Fun(Rc::new(checked)));
}

/// `v`'s shape is `like`'s, or the declared-type error naming `like`'s type.
fn check_same_shape<'a>(v: &Value<'a>, like: &Value<'a>, span: runic_syntax::Span) -> R<()> {
    if v.shape() == like.shape() {
        return Ok(());
    }
    let elem = match like {
        Value::Array(a) => match &a.data {
            crate::value::Data::Flat(b) => b.elem_type().to_string(),
            crate::value::Data::Boxed(_) => String::new(),
        },
        _ => String::new(),
    };
    Err(RuntimeError::at(
        format!(
            "Value of (desugared) shape {} cannot match shape of type \"{}{elem}\".",
            crate::value::shape_string(v.shape()),
            crate::value::shape_string(like.shape()),
        ),
        span,
    ))
}
