//! Which map lambdas run a row per lane: [`row_plan`] walks the body once (`Scope`),
//! taking what the lanes compute and nothing else.

use super::super::{check_body, enabled, sub_type, Plan};
use runic_ir::*;
use std::collections::{HashMap, HashSet};

/// The plan of `lam` if its elements can run with one row per lane (see the module
/// comment); `free` gives the type of a variable the lambda does not bind.
pub(crate) fn row_plan(
    lam: &Lambda,
    free: &dyn Fn(VName) -> Option<PrimType>,
    free_vector: &dyn Fn(VName) -> Option<PrimType>,
) -> Option<Plan> {
    if !enabled() {
        return None;
    }
    let t = lam.params.iter().find_map(|p| match &p.ty {
        Type::Array { elem, shape } if shape.len() == 1 => Some(*elem),
        _ => None,
    })?;
    if !matches!(t, PrimType::F32 | PrimType::F64) {
        return None;
    }
    let mut sc = Scope {
        t,
        free,
        tys: HashMap::new(),
        rows: HashSet::new(),
        iotas: HashSet::new(),
        made: HashSet::new(),
        ints: HashSet::new(),
        indices: HashSet::new(),
        consts: Vec::new(),
    };
    // The rows in scope: the parameters', free vectors of `T` (the same in every lane),
    // then those the body makes. Parameters that are `i64`s may only index rows.
    for p in &lam.params {
        if sc.is_row(&p.ty) {
            sc.rows.insert(p.name);
        } else if sc.is_t(&p.ty) {
            sc.tys.insert(p.name, t);
        } else if p.ty == Type::Prim(PrimType::I64) {
            sc.indices.insert(p.name);
        } else {
            return None;
        }
    }
    sc.rows.extend(
        runic_ir::traverse::free_vars(lam)
            .into_iter()
            .filter(|v| free_vector(*v) == Some(t)),
    );
    if !lam.ret.iter().all(|r| sc.is_t(r) || sc.is_row(r)) {
        return None;
    }
    sc.stms(&lam.body, true)?;
    // Scalar results of `T`, and rows the body made in a slot.
    let results_ok = lam.body.result.iter().zip(&lam.ret).all(|(r, ty)| match r {
        SubExp::Var(v) if sc.is_row(ty) => sc.made.contains(v),
        _ => sc.is_t(ty) && sc.ty(r) == Some(t),
    });
    (results_ok && sc.consts_fit()).then_some(Plan {
        elem: t,
        lanes: if t == PrimType::F32 { 4 } else { 2 },
        index: 0,
    })
}

/// Whether `ty` is a row of `t`.
fn row_of(t: PrimType, ty: &Type) -> bool {
    matches!(ty, Type::Array { elem, shape } if *elem == t && shape.len() == 1)
}

/// What [`row_plan`] knows of the names in scope: scalars of `T` and booleans (`tys`, as
/// `check_body` takes them), rows of `T` (those in a slot: `made`), rows of `iota`s,
/// small integers in lanes (`ints`: made only from `iota`s' elements, constants, free
/// sizes and `i64` parameters, by `min`, `max` and `if`), the `i64` parameters (each
/// lane's own, which index rows as they are and are checked to fit `i32` lanes where
/// they are compared), and the integer constants the lanes use.
struct Scope<'f> {
    t: PrimType,
    free: &'f dyn Fn(VName) -> Option<PrimType>,
    tys: HashMap<VName, PrimType>,
    rows: HashSet<VName>,
    iotas: HashSet<VName>,
    made: HashSet<VName>,
    ints: HashSet<VName>,
    indices: HashSet<VName>,
    consts: Vec<i64>,
}

impl Scope<'_> {
    fn is_t(&self, ty: &Type) -> bool {
        matches!(ty, Type::Prim(p) if *p == self.t)
    }

    fn is_row(&self, ty: &Type) -> bool {
        row_of(self.t, ty)
    }

    fn ty(&self, s: &SubExp) -> Option<PrimType> {
        sub_type(s, &self.tys, self.free)
    }

    /// A width the same in every lane: a constant or a free size.
    fn uniform(&self, w: &SubExp) -> bool {
        match w {
            SubExp::Const(_) => true,
            SubExp::Var(v) => (self.free)(*v) == Some(PrimType::I64),
        }
    }

    /// Whether `s` is a small integer in lanes: one of `ints`, an `i64` constant, or a
    /// free `i64` (checked to fit in `i32` lanes when the group runs).
    fn int(&mut self, s: &SubExp) -> bool {
        match s {
            SubExp::Const(Prim::I64(c)) => {
                self.consts.push(*c);
                true
            }
            SubExp::Const(_) => false,
            SubExp::Var(v) => {
                self.ints.contains(v)
                    || self.indices.contains(v)
                    || (self.free)(*v) == Some(PrimType::I64)
            }
        }
    }

    /// Whether `s` can index the lanes' rows: a small integer or an index parameter, or a
    /// constant of any integer type (clamped to `i32` it is as far outside a row).
    fn index(&mut self, s: &SubExp) -> bool {
        matches!(s, SubExp::Const(p) if p.as_int().is_some()) || self.int(s)
    }

    /// `i32` lanes hold the integers of `f32` rows: the constants must stay apart when
    /// those beyond `i32` are clamped to its ends (one at most at each end).
    fn consts_fit(&self) -> bool {
        let at_most_one = |end: &dyn Fn(i64) -> bool| {
            let cs: HashSet<i64> = self.consts.iter().copied().filter(|c| end(*c)).collect();
            cs.len() <= 1
        };
        at_most_one(&|c| c >= i32::MAX as i64) && at_most_one(&|c| c <= i32::MIN as i64)
    }

    /// Checks `body`'s statements; `top`: the lambda's own body or a branch of it (where
    /// SOACs and rows may be), else a scalar lambda inside a SOAC.
    fn stms(&mut self, body: &Body, top: bool) -> Option<()> {
        for s in &body.stms {
            self.stm(s, top)?;
        }
        Some(())
    }

    fn stm(&mut self, s: &Stm, top: bool) -> Option<()> {
        let t = self.t;
        fn one(s: &Stm) -> Option<&Param> {
            match &s.pat[..] {
                [p] => Some(p),
                _ => None,
            }
        }
        match &s.exp {
            Exp::Soac(Soac::Reduce {
                w,
                arrs,
                pre,
                lam: op,
                neutral,
                ..
            }) if top => {
                let p = one(s)?;
                let [ne] = &neutral[..] else { return None };
                let params = self.soac_params(arrs)?;
                if !self.uniform(w) {
                    return None;
                }
                let int = p.ty == Type::Prim(PrimType::I64);
                let elem = if int { PrimType::I64 } else { t };
                let ne_ok = if int {
                    self.int(ne)
                } else {
                    self.ty(ne) == Some(t)
                };
                if !ne_ok || !(int || self.is_t(&p.ty)) {
                    return None;
                }
                match pre {
                    Some(pre) => self.lambda(pre, &params, &[elem])?,
                    None if params == [elem] => {}
                    None => return None,
                }
                self.lambda(op, &[elem, elem], &[elem])?;
                self.bind(p.name, elem);
            }
            Exp::Soac(Soac::Map { w, lam: f, arrs }) if top => {
                let params = self.soac_params(arrs)?;
                let fits = self.uniform(w)
                    && !s.pat.is_empty()
                    && s.pat.iter().all(|p| self.is_row(&p.ty));
                if !fits {
                    return None;
                }
                self.lambda(f, &params, &vec![t; s.pat.len()])?;
                self.made_rows(s);
            }
            Exp::Basic(BasicOp::Range { .. }) if top => {
                let w = runic_ir::traverse::iota_width(&s.exp)?;
                if !self.uniform(&w) {
                    return None;
                }
                self.iotas.insert(one(s)?.name);
            }
            Exp::Basic(BasicOp::Replicate(shape, x)) if top => {
                let ([w], p) = (&shape[..], one(s)?) else {
                    return None;
                };
                if !self.uniform(w) || !self.is_row(&p.ty) || self.ty(x) != Some(t) {
                    return None;
                }
                self.rows.insert(p.name);
            }
            // A copy reads the same row: rows in slots are never written after they are made.
            Exp::Basic(BasicOp::Copy(a)) if top => {
                if !self.rows.contains(a) || !self.is_row(&one(s)?.ty) {
                    return None;
                }
                self.rows.insert(one(s)?.name);
            }
            // An element of a row at each lane's own index.
            Exp::Basic(BasicOp::Index(a, idx)) if top => {
                let [DimIndex::Fix(k)] = &idx[..] else {
                    return None;
                };
                let p = one(s)?;
                if !self.rows.contains(a) || !self.index(k) || !self.is_t(&p.ty) {
                    return None;
                }
                self.tys.insert(p.name, t);
            }
            // A row with one element replaced at each lane's own index.
            Exp::Basic(BasicOp::Update(a, idx, x)) if top => {
                let [DimIndex::Fix(k)] = &idx[..] else {
                    return None;
                };
                let p = one(s)?;
                let ok = self.rows.contains(a) && self.is_row(&p.ty) && self.ty(x) == Some(t);
                if !ok || !self.index(k) {
                    return None;
                }
                self.made_rows(s);
            }
            Exp::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                if self.ty(cond) != Some(PrimType::Bool) {
                    return None;
                }
                for b in [then_body, else_body] {
                    self.stms(b, top)?;
                    if b.result.len() != s.pat.len() {
                        return None;
                    }
                    for (r, p) in b.result.iter().zip(&s.pat) {
                        let ok = match &p.ty {
                            Type::Prim(PrimType::I64) => self.int(r),
                            ty if self.is_row(ty) => {
                                top && matches!(r, SubExp::Var(v) if self.rows.contains(v))
                            }
                            Type::Prim(x) if *x == t || *x == PrimType::Bool => {
                                self.ty(r) == Some(*x)
                            }
                            _ => false,
                        };
                        if !ok {
                            return None;
                        }
                    }
                }
                for p in &s.pat {
                    match &p.ty {
                        Type::Prim(x) => self.bind(p.name, *x),
                        _ => self.made_rows(s),
                    }
                }
            }
            Exp::Basic(op) if self.int_op(s.pat.first().map(|p| &p.ty), op) => {
                let p = one(s)?;
                self.bind(p.name, p.ty.elem()?);
            }
            _ => {
                let one = Body {
                    stms: vec![s.clone()],
                    result: Vec::new(),
                };
                check_body(&one, t, &mut self.tys, self.free)?;
            }
        }
        Some(())
    }

    /// Whether `op` is an operation on small integers in lanes giving `ty`: `min`, `max`
    /// or a copy of them, or a comparison of them.
    fn int_op(&mut self, ty: Option<&Type>, op: &BasicOp) -> bool {
        let cmp = |o: &BinOp| {
            use BinOp::*;
            matches!(o, Eq | Neq | Lt | Le | Gt | Ge)
        };
        match (ty, op) {
            (Some(Type::Prim(PrimType::I64)), BasicOp::SubExp(a)) => self.int(a),
            (Some(Type::Prim(PrimType::I64)), BasicOp::BinOp(BinOp::Min | BinOp::Max, a, b)) => {
                self.int(a) && self.int(b)
            }
            (Some(Type::Prim(PrimType::Bool)), BasicOp::BinOp(o, a, b)) if cmp(o) => {
                let is_int = |s: &SubExp| match s {
                    SubExp::Const(p) => p.ty() == PrimType::I64,
                    SubExp::Var(v) => {
                        self.ints.contains(v)
                            || self.indices.contains(v)
                            || (self.free)(*v) == Some(PrimType::I64)
                    }
                };
                (is_int(a) || is_int(b)) && self.int(a) && self.int(b)
            }
            _ => false,
        }
    }

    /// The element types of a SOAC's inputs (rows of `T`, or `iota`s), if it has some.
    fn soac_params(&self, arrs: &[VName]) -> Option<Vec<PrimType>> {
        let elem = |a: &VName| match (self.rows.contains(a), self.iotas.contains(a)) {
            (true, _) => Some(self.t),
            (_, true) => Some(PrimType::I64),
            _ => None,
        };
        let params: Vec<PrimType> = arrs.iter().map(elem).collect::<Option<_>>()?;
        (!params.is_empty()).then_some(params)
    }

    fn bind(&mut self, v: VName, ty: PrimType) {
        if ty == PrimType::I64 {
            self.ints.insert(v);
        } else {
            self.tys.insert(v, ty);
        }
    }

    /// The rows of `s`'s pattern, made in slots.
    fn made_rows(&mut self, s: &Stm) {
        let t = self.t;
        for p in s.pat.iter().filter(|p| row_of(t, &p.ty)) {
            self.rows.insert(p.name);
            self.made.insert(p.name);
        }
    }

    /// Whether `l` takes `params` and returns `results` (each `T` or a small integer),
    /// its body scalar code in lanes.
    fn lambda(&mut self, l: &Lambda, params: &[PrimType], results: &[PrimType]) -> Option<()> {
        let prim = |ty: &Type| match ty {
            Type::Prim(p) => Some(*p),
            _ => None,
        };
        let ps: Vec<PrimType> = l
            .params
            .iter()
            .map(|p| prim(&p.ty))
            .collect::<Option<_>>()?;
        let rs: Vec<PrimType> = l.ret.iter().map(prim).collect::<Option<_>>()?;
        if ps != params || rs != results || l.body.result.len() != results.len() {
            return None;
        }
        for (p, ty) in l.params.iter().zip(params) {
            self.bind(p.name, *ty);
        }
        self.stms(&l.body, false)?;
        for (r, ty) in l.body.result.iter().zip(results) {
            let ok = if *ty == PrimType::I64 {
                self.int(r)
            } else {
                self.ty(r) == Some(*ty)
            };
            if !ok {
                return None;
            }
        }
        Some(())
    }
}
