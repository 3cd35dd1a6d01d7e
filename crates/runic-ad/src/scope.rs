//! Scope helpers over IR bodies: the types of all binders, the variables an expression
//! reads, and renaming every binder of a body to fresh names (to duplicate code within one
//! function, where each variable may be bound only once).

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

/// Every variable mentioned anywhere in `x` (operands, types, and also binders inside it —
/// an over-approximation of what it reads, which is what dependence checks need). Operands
/// print as `VName(n)` in the debug form, so that form is scanned: complete by construction.
pub fn mentions<T: std::fmt::Debug>(x: &T, out: &mut HashSet<VName>) {
    let text = format!("{x:?}");
    let mut rest = text.as_str();
    while let Some(i) = rest.find("VName(") {
        rest = &rest[i + 6..];
        let end = rest.find(')').unwrap_or(0);
        if let Ok(n) = rest[..end].parse::<u32>() {
            out.insert(VName(n));
        }
    }
}

/// Renames every binder of a body to a fresh variable (uses follow), so that a copy of the
/// body can live in the same function as the original.
pub struct Renamer<'a> {
    pub names: &'a mut NameSource,
    pub map: HashMap<VName, VName>,
}

impl Renamer<'_> {
    fn bind(&mut self, v: &mut VName) {
        let hint = self.names.hint(*v).to_string();
        let n = self.names.fresh(&hint);
        self.map.insert(*v, n);
        *v = n;
    }
    fn var(&self, v: &mut VName) {
        if let Some(n) = self.map.get(v) {
            *v = *n;
        }
    }
    fn se(&self, s: &mut SubExp) {
        if let SubExp::Var(v) = s {
            self.var(v);
        }
    }
    fn ty(&self, t: &mut Type) {
        match t {
            Type::Array { shape, .. } | Type::Acc { shape, .. } => {
                shape.iter_mut().for_each(|d| self.se(d))
            }
            Type::Prim(_) => {}
        }
    }
    fn param(&mut self, p: &mut Param) {
        self.ty(&mut p.ty);
        self.bind(&mut p.name);
    }
    pub fn lambda(&mut self, l: &mut Lambda) {
        l.params.iter_mut().for_each(|p| self.param(p));
        self.body(&mut l.body);
        l.ret.iter_mut().for_each(|t| self.ty(t));
    }
    pub fn body(&mut self, b: &mut Body) {
        for s in &mut b.stms {
            self.exp(&mut s.exp);
            s.pat.iter_mut().for_each(|p| self.param(p));
        }
        b.result.iter_mut().for_each(|s| self.se(s));
    }
    fn dims(&self, ds: &mut [DimIndex]) {
        for d in ds {
            match d {
                DimIndex::Fix(s) => self.se(s),
                DimIndex::Slice { start, end, stride } => {
                    for s in [start, end, stride].into_iter().flatten() {
                        self.se(s);
                    }
                }
            }
        }
    }
    fn basic(&mut self, op: &mut BasicOp) {
        match op {
            BasicOp::SubExp(a) | BasicOp::UnOp(_, a) | BasicOp::Convert(_, a) => self.se(a),
            BasicOp::BinOp(_, a, b) => {
                self.se(a);
                self.se(b);
            }
            BasicOp::TernOp(_, a, b, c) => {
                self.se(a);
                self.se(b);
                self.se(c);
            }
            BasicOp::Index(v, ds) => {
                self.var(v);
                self.dims(ds);
            }
            BasicOp::Update(v, ds, x) => {
                self.var(v);
                self.dims(ds);
                self.se(x);
            }
            BasicOp::Range {
                start, second, end, ..
            } => {
                self.se(start);
                if let Some(s) = second {
                    self.se(s);
                }
                self.se(end);
            }
            BasicOp::Replicate(shape, v) => {
                shape.iter_mut().for_each(|d| self.se(d));
                self.se(v);
            }
            BasicOp::Reshape { arr, shape } => {
                self.var(arr);
                shape.iter_mut().for_each(|d| self.se(d));
            }
            BasicOp::Rearrange(_, v) | BasicOp::Copy(v) | BasicOp::ArraySize(v, _) => self.var(v),
            BasicOp::Concat(_, vs) => vs.iter_mut().for_each(|v| self.var(v)),
            BasicOp::ArrayLit(es, t) => {
                es.iter_mut().for_each(|e| self.se(e));
                self.ty(t);
            }
            BasicOp::Scratch(_, shape) => shape.iter_mut().for_each(|d| self.se(d)),
            BasicOp::Assert { cond, .. } => self.se(cond),
            BasicOp::ShapeCheck { arr, shape, .. } => {
                self.var(arr);
                shape.iter_mut().for_each(|d| self.se(d));
            }
            BasicOp::UpdateAcc { acc, is, vals } => {
                self.var(acc);
                is.iter_mut()
                    .chain(vals.iter_mut())
                    .for_each(|s| self.se(s));
            }
        }
    }
    fn exp(&mut self, e: &mut Exp) {
        match e {
            Exp::Basic(op) => self.basic(op),
            Exp::Apply { args, ret, .. } => {
                args.iter_mut().for_each(|a| self.se(a));
                ret.iter_mut().for_each(|t| self.ty(t));
            }
            Exp::If {
                cond,
                then_body,
                else_body,
                ret,
            } => {
                self.se(cond);
                self.body(then_body);
                self.body(else_body);
                ret.iter_mut().for_each(|t| self.ty(t));
            }
            Exp::Loop { params, form, body } => {
                for (_, init) in params.iter_mut() {
                    self.se(init);
                }
                match form {
                    LoopForm::For { i, bound } => {
                        self.se(bound);
                        self.bind(i);
                    }
                    LoopForm::While { .. } => {}
                }
                for (p, _) in params.iter_mut() {
                    self.param(p);
                }
                if let LoopForm::While { cond } = form {
                    self.var(cond);
                }
                self.body(body);
            }
            Exp::Soac(s) => self.soac(s),
            Exp::WithAcc { inputs, lam } => {
                for i in inputs {
                    i.shape.iter_mut().for_each(|d| self.se(d));
                    i.arrays.iter_mut().for_each(|v| self.var(v));
                    if let Some((l, ne)) = &mut i.op {
                        ne.iter_mut().for_each(|n| self.se(n));
                        self.lambda(l);
                    }
                }
                self.lambda(lam);
            }
            Exp::Jvp {
                lam,
                args,
                tangents: extra,
                ..
            }
            | Exp::Vjp {
                lam,
                args,
                cotangents: extra,
                ..
            } => {
                args.iter_mut()
                    .chain(extra.iter_mut())
                    .for_each(|a| self.se(a));
                self.lambda(lam);
            }
            Exp::WithVjp { f, adj, args } => {
                args.iter_mut().for_each(|a| self.se(a));
                self.lambda(f);
                self.lambda(adj);
            }
        }
    }
    fn soac(&mut self, s: &mut Soac) {
        let vars = |r: &Self, vs: &mut Vec<VName>| vs.iter_mut().for_each(|v| r.var(v));
        match s {
            Soac::Map { w, lam, arrs } => {
                self.se(w);
                vars(self, arrs);
                self.lambda(lam);
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
                self.se(w);
                vars(self, arrs);
                neutral.iter_mut().for_each(|n| self.se(n));
                if let Some(p) = pre {
                    self.lambda(p);
                }
                self.lambda(lam);
            }
            Soac::Hist {
                w,
                dests,
                lam,
                neutral,
                is,
                vals,
            } => {
                self.se(w);
                vars(self, dests);
                vars(self, is);
                vars(self, vals);
                neutral.iter_mut().for_each(|n| self.se(n));
                self.lambda(lam);
            }
            Soac::Scatter { w, dests, is, vals } => {
                self.se(w);
                vars(self, dests);
                vars(self, is);
                vars(self, vals);
            }
        }
    }
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
            .ok_or_else(|| AdError::new(format!("internal: unknown type of {av}")))?;
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
