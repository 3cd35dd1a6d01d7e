//! Scope helpers over IR bodies: the types of all binders, the variables an expression
//! reads, and renaming every binder of a body to fresh names (to duplicate code within one
//! function, where each variable may be bound only once).

use runic_ir::traverse::{add_uses, binders, Walk};
use runic_ir::*;
use std::collections::{HashMap, HashSet};

use crate::error::AdError;

/// Types of every variable bound in a function (parameters, patterns, lambda and loop
/// parameters, loop counters).
pub type Types = HashMap<VName, Type>;

pub fn fun_types(f: &FunDef, out: &mut Types) {
    for p in &f.params {
        out.insert(p.name, p.ty.clone());
    }
    body_types(&f.body, out);
}

pub fn body_types(b: &Body, out: &mut Types) {
    for s in &b.stms {
        for p in &s.pat {
            out.insert(p.name, p.ty.clone());
        }
        exp_types(&s.exp, out);
    }
}

pub fn lambda_types(l: &Lambda, out: &mut Types) {
    for p in &l.params {
        out.insert(p.name, p.ty.clone());
    }
    body_types(&l.body, out);
}

fn exp_types(e: &Exp, out: &mut Types) {
    match e {
        Exp::Basic(_) | Exp::Apply { .. } => {}
        Exp::If {
            then_body,
            else_body,
            ..
        } => {
            body_types(then_body, out);
            body_types(else_body, out);
        }
        Exp::Loop { params, form, body } => {
            for (p, _) in params {
                out.insert(p.name, p.ty.clone());
            }
            if let LoopForm::For { i, bound } = form {
                let t = match bound {
                    SubExp::Const(c) => Type::Prim(c.ty()),
                    SubExp::Var(v) => out.get(v).cloned().unwrap_or(Type::Prim(PrimType::I64)),
                };
                out.insert(*i, t);
            }
            body_types(body, out);
        }
        Exp::Soac(s) => match s {
            Soac::Map { lam, .. } | Soac::Hist { lam, .. } => lambda_types(lam, out),
            Soac::Reduce { pre, lam, .. } | Soac::Scan { pre, lam, .. } => {
                if let Some(p) = pre {
                    lambda_types(p, out);
                }
                lambda_types(lam, out);
            }
            Soac::Scatter { .. } => {}
        },
        Exp::WithAcc { inputs, lam } => {
            for i in inputs {
                if let Some((l, _)) = &i.op {
                    lambda_types(l, out);
                }
            }
            lambda_types(lam, out);
        }
        Exp::Jvp { lam, .. } | Exp::Vjp { lam, .. } => lambda_types(lam, out),
        Exp::WithVjp { f, adj, .. } => {
            lambda_types(f, out);
            lambda_types(adj, out);
        }
    }
}

/// Every variable mentioned anywhere in `x`: what it reads and what it binds (an
/// over-approximation of what it reads, which is what dependence checks need).
pub fn mentions<T: Walk + ?Sized>(x: &T, out: &mut HashSet<VName>) {
    add_uses(x, out);
    out.extend(binders(x));
}

/// A run-time size error unless every array seed (tangent or cotangent) has its value's
/// shape, after `skip` leading seed dimensions (the seeds' own dimension of `jmp`/`mjp`);
/// the message is §9.6's shape mismatch with run-time sizes, as in the interpreter.
pub fn check_seed_shapes(
    b: &mut Builder,
    types: &mut Types,
    values: &[SubExp],
    seeds: &[SubExp],
    skip: usize,
) -> Result<(), AdError> {
    let i64_t = Type::Prim(PrimType::I64);
    let bind = |b: &mut Builder, types: &mut Types, hint: &str, exp: BasicOp, ty: Type| {
        let v = b.bind1(hint, Exp::Basic(exp), ty.clone());
        types.insert(v, ty);
        v
    };
    for (a, t) in values.iter().zip(seeds) {
        let (Some(av), Some(tv)) = (a.as_var(), t.as_var()) else {
            continue;
        };
        let value_t = types
            .get(&av)
            .cloned()
            .ok_or_else(|| AdError::internal(format!("unknown type of {av}")))?;
        let (rank, Some(elem)) = (value_t.rank(), value_t.elem()) else {
            continue;
        };
        if rank == 0 {
            continue;
        }
        // The seeds' outer `skip` dimensions, then the value's.
        let dims = (0..skip).map(|d| (tv, d)).chain((0..rank).map(|d| (av, d)));
        let mut shape = Vec::new();
        for (arr, d) in dims {
            let size = BasicOp::ArraySize(arr, d);
            shape.push(SubExp::Var(bind(b, types, "n", size, i64_t.clone())));
        }
        let type_text = (0..shape.len())
            .map(|k| format!("[{{{k}}}]"))
            .collect::<String>()
            + elem.name();
        let check = BasicOp::ShapeCheck {
            arr: tv,
            shape,
            type_text,
        };
        bind(b, types, "ok", check, Type::Prim(PrimType::Bool));
    }
    Ok(())
}

/// The operator of a lambda `\x y -> x ⊕ y` (or `y ⊕ x` for a commutative `⊕`) on
/// scalars, with its operand type.
pub fn simple_binop(lam: &Lambda) -> Option<(BinOp, PrimType)> {
    let [x, y] = lam.params.as_slice() else {
        return None;
    };
    let [s] = lam.body.stms.as_slice() else {
        return None;
    };
    let [p] = s.pat.as_slice() else { return None };
    if lam.body.result != vec![SubExp::Var(p.name)] {
        return None;
    }
    let Type::Prim(t) = x.ty else { return None };
    let Exp::Basic(BasicOp::BinOp(op, a, c)) = &s.exp else {
        return None;
    };
    let (xv, yv) = (SubExp::Var(x.name), SubExp::Var(y.name));
    let commutative = matches!(op, BinOp::Add | BinOp::Mul | BinOp::Min | BinOp::Max);
    if (*a == xv && *c == yv) || (commutative && *a == yv && *c == xv) {
        Some((*op, t))
    } else {
        None
    }
}
