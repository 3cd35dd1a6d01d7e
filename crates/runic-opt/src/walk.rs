//! Generic traversal: apply a substitution to every operand of a body.

use runic_ir::*;
use std::collections::HashMap;

pub type Subst = HashMap<VName, SubExp>;

fn se(s: &mut SubExp, m: &Subst) {
    if let SubExp::Var(v) = s {
        if let Some(r) = m.get(v) {
            *s = r.clone();
        }
    }
}

fn vn(v: &mut VName, m: &Subst) {
    if let Some(SubExp::Var(r)) = m.get(v) {
        *v = *r;
    }
}

fn ty(t: &mut Type, m: &Subst) {
    match t {
        Type::Array { shape, .. } | Type::Acc { shape, .. } => {
            shape.iter_mut().for_each(|d| se(d, m))
        }
        Type::Prim(_) => {}
    }
}

fn dims(ds: &mut [DimIndex], m: &Subst) {
    for d in ds {
        match d {
            DimIndex::Fix(s) => se(s, m),
            DimIndex::Slice { start, end, stride } => {
                for s in [start, end, stride].into_iter().flatten() {
                    se(s, m);
                }
            }
        }
    }
}

pub fn lambda(l: &mut Lambda, m: &Subst) {
    l.params.iter_mut().for_each(|p| ty(&mut p.ty, m));
    l.ret.iter_mut().for_each(|t| ty(t, m));
    body(&mut l.body, m);
}

pub fn body(b: &mut Body, m: &Subst) {
    for s in &mut b.stms {
        stm(s, m);
    }
    b.result.iter_mut().for_each(|s| se(s, m));
}

pub fn stm(s: &mut Stm, m: &Subst) {
    s.pat.iter_mut().for_each(|p| ty(&mut p.ty, m));
    exp(&mut s.exp, m);
}

pub fn exp(e: &mut Exp, m: &Subst) {
    match e {
        Exp::Basic(op) => basic(op, m),
        Exp::Apply { args, ret, .. } => {
            args.iter_mut().for_each(|a| se(a, m));
            ret.iter_mut().for_each(|t| ty(t, m));
        }
        Exp::If {
            cond,
            then_body,
            else_body,
            ret,
        } => {
            se(cond, m);
            body(then_body, m);
            body(else_body, m);
            ret.iter_mut().for_each(|t| ty(t, m));
        }
        Exp::Loop {
            params,
            form,
            body: b,
        } => {
            for (p, init) in params.iter_mut() {
                ty(&mut p.ty, m);
                se(init, m);
            }
            if let LoopForm::For { bound, .. } = form {
                se(bound, m);
            }
            body(b, m);
        }
        Exp::Soac(s) => match s {
            Soac::Map { w, lam, arrs } => {
                se(w, m);
                lambda(lam, m);
                arrs.iter_mut().for_each(|a| vn(a, m));
            }
            Soac::Reduce {
                w,
                arrs,
                pre,
                lam,
                neutral,
                ..
            }
            | Soac::Scan {
                w,
                arrs,
                pre,
                lam,
                neutral,
            } => {
                se(w, m);
                arrs.iter_mut().for_each(|a| vn(a, m));
                if let Some(p) = pre {
                    lambda(p, m);
                }
                lambda(lam, m);
                neutral.iter_mut().for_each(|a| se(a, m));
            }
            Soac::Hist {
                w,
                dests,
                lam,
                neutral,
                is,
                vals,
            } => {
                se(w, m);
                dests
                    .iter_mut()
                    .chain(is.iter_mut())
                    .chain(vals.iter_mut())
                    .for_each(|a| vn(a, m));
                lambda(lam, m);
                neutral.iter_mut().for_each(|a| se(a, m));
            }
            Soac::Scatter { w, dests, is, vals } => {
                se(w, m);
                dests
                    .iter_mut()
                    .chain(is.iter_mut())
                    .chain(vals.iter_mut())
                    .for_each(|a| vn(a, m));
            }
        },
        Exp::WithAcc { inputs, lam } => {
            for i in inputs.iter_mut() {
                i.shape.iter_mut().for_each(|d| se(d, m));
                i.arrays.iter_mut().for_each(|a| vn(a, m));
                if let Some((l, ne)) = &mut i.op {
                    lambda(l, m);
                    ne.iter_mut().for_each(|a| se(a, m));
                }
            }
            lambda(lam, m);
        }
        Exp::Jvp {
            lam,
            args,
            tangents,
            ..
        } => {
            lambda(lam, m);
            args.iter_mut()
                .chain(tangents.iter_mut())
                .for_each(|a| se(a, m));
        }
        Exp::Vjp {
            lam,
            args,
            cotangents,
            ..
        } => {
            lambda(lam, m);
            args.iter_mut()
                .chain(cotangents.iter_mut())
                .for_each(|a| se(a, m));
        }
        Exp::WithVjp { f, adj, args } => {
            lambda(f, m);
            lambda(adj, m);
            args.iter_mut().for_each(|a| se(a, m));
        }
    }
}

fn basic(op: &mut BasicOp, m: &Subst) {
    match op {
        BasicOp::SubExp(a) | BasicOp::UnOp(_, a) | BasicOp::Convert(_, a) => se(a, m),
        BasicOp::BinOp(_, a, b) => {
            se(a, m);
            se(b, m);
        }
        BasicOp::TernOp(_, a, b, c) => {
            se(a, m);
            se(b, m);
            se(c, m);
        }
        BasicOp::Index(a, ds) => {
            vn(a, m);
            dims(ds, m);
        }
        BasicOp::Update(a, ds, v) => {
            vn(a, m);
            dims(ds, m);
            se(v, m);
        }
        BasicOp::Range {
            start, second, end, ..
        } => {
            se(start, m);
            if let Some(s) = second {
                se(s, m);
            }
            se(end, m);
        }
        BasicOp::Replicate(shape, v) => {
            shape.iter_mut().for_each(|d| se(d, m));
            se(v, m);
        }
        BasicOp::Reshape { arr, shape } => {
            vn(arr, m);
            shape.iter_mut().for_each(|d| se(d, m));
        }
        BasicOp::Rearrange(_, a) | BasicOp::Copy(a) | BasicOp::ArraySize(a, _) => vn(a, m),
        BasicOp::Concat(_, arrs) => arrs.iter_mut().for_each(|a| vn(a, m)),
        BasicOp::ArrayLit(rows, t) => {
            rows.iter_mut().for_each(|r| se(r, m));
            ty(t, m);
        }
        BasicOp::Scratch(_, shape) => shape.iter_mut().for_each(|d| se(d, m)),
        BasicOp::Assert { cond, .. } => se(cond, m),
        BasicOp::ShapeCheck { arr, shape, .. } => {
            vn(arr, m);
            shape.iter_mut().for_each(|d| se(d, m));
        }
        BasicOp::UpdateAcc { acc, is, vals } => {
            vn(acc, m);
            is.iter_mut().chain(vals.iter_mut()).for_each(|a| se(a, m));
        }
    }
}

/// Every variable used (read) anywhere in `e`, including in types.
pub fn uses_exp(e: &Exp, out: &mut std::collections::HashSet<VName>) {
    let dbg = format!("{e:?}");
    // Operands print as `VName(n)`: collect them from the debug form (simple and complete).
    collect_vnames(&dbg, out);
}

pub fn uses_type(t: &Type, out: &mut std::collections::HashSet<VName>) {
    collect_vnames(&format!("{t:?}"), out);
}

fn collect_vnames(s: &str, out: &mut std::collections::HashSet<VName>) {
    let mut rest = s;
    while let Some(i) = rest.find("VName(") {
        rest = &rest[i + 6..];
        let end = rest.find(')').unwrap_or(0);
        if let Ok(n) = rest[..end].parse::<u32>() {
            out.insert(VName(n));
        }
    }
}
