//! The IR verifier: scoping (every variable bound before use, and bound once per function),
//! operand and result types of every operation, SOAC operator arities and types, calls
//! against signatures, loop parameters against loop bodies, and (optionally) the absence of
//! AD constructs.
//!
//! Types are compared by element type and rank; dimension operands are checked for scope
//! (they may also name variables bound earlier in the same pattern, which is how an `if` or
//! a loop returns arrays of a size it computes). Function parameters' dimensions are not
//! scope-checked: entry points read their sizes from their arguments in the body.
//!
//! Conventions checked here that other passes rely on: `Assert` and `ShapeCheck` bind one
//! `bool` (a certificate, always true when execution continues); `ArraySize` gives an `i64`.

use crate::builder::{binop_type, unop_type};
use crate::ir::*;
use crate::print::vname_to_string;
use std::collections::{HashMap, HashSet};

/// Options for [`verify_with`].
#[derive(Clone, Copy, Debug, Default)]
pub struct VerifyOptions {
    /// Reject `Jvp`, `Vjp` and `WithVjp` (after the AD pass).
    pub no_ad: bool,
}

/// Verify a program; the errors say where (function, statement, source location).
pub fn verify(prog: &Prog) -> Result<(), Vec<String>> {
    verify_with(prog, VerifyOptions::default())
}

/// Verify a program that must contain no AD constructs any more.
pub fn verify_no_ad(prog: &Prog) -> Result<(), Vec<String>> {
    verify_with(prog, VerifyOptions { no_ad: true })
}

pub fn verify_with(prog: &Prog, opts: VerifyOptions) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    let sigs: HashMap<&str, &FunDef> = prog.funs.iter().map(|f| (f.name.as_str(), f)).collect();
    let mut seen_funs = HashSet::new();
    for f in &prog.funs {
        if !seen_funs.insert(f.name.as_str()) {
            errors.push(format!("function {} is defined twice", f.name));
        }
        let mut v = Verifier {
            prog,
            sigs: &sigs,
            opts,
            scope: HashMap::new(),
            bound: HashSet::new(),
            errors: Vec::new(),
            fun: &f.name,
            ctx: String::new(),
        };
        for p in &f.params {
            v.bind_param(p, false);
        }
        let res = v.body(&f.body);
        v.ctx = "function result".into();
        v.match_types(&res, &f.ret, "function result");
        if let Some(e) = &f.entry {
            let n: usize = e.params.iter().map(|p| p.layout.num_values()).sum();
            if n != f.params.len() {
                v.err(format!(
                    "entry point {} describes {} parameter values but has {}",
                    e.name,
                    n,
                    f.params.len()
                ));
            }
            let n: usize = e.results.iter().map(|r| r.num_values).sum();
            if n != f.ret.len() {
                v.err(format!(
                    "entry point {} describes {} result values but returns {}",
                    e.name,
                    n,
                    f.ret.len()
                ));
            }
        }
        errors.extend(v.errors);
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

struct Verifier<'a> {
    prog: &'a Prog,
    sigs: &'a HashMap<&'a str, &'a FunDef>,
    opts: VerifyOptions,
    scope: HashMap<VName, Type>,
    bound: HashSet<VName>,
    errors: Vec<String>,
    fun: &'a str,
    ctx: String,
}

fn same_type(a: &Type, b: &Type) -> bool {
    match (a, b) {
        (Type::Prim(x), Type::Prim(y)) => x == y,
        (
            Type::Array {
                elem: e1,
                shape: s1,
            },
            Type::Array {
                elem: e2,
                shape: s2,
            },
        ) => {
            e1 == e2
                && s1.len() == s2.len()
                && s1.iter().zip(s2).all(|(x, y)| match (x, y) {
                    (SubExp::Const(a), SubExp::Const(b)) => a == b,
                    _ => true,
                })
        }
        (Type::Acc { elems: e1, .. }, Type::Acc { elems: e2, .. }) => e1 == e2,
        _ => false,
    }
}

fn ty_text(names: &NameSource, t: &Type) -> String {
    let mut s = String::new();
    match t {
        Type::Prim(p) => s.push_str(p.name()),
        Type::Array { elem, shape } => {
            for d in shape {
                match d {
                    SubExp::Var(v) => s.push_str(&format!("[{}]", vname_to_string(names, *v))),
                    SubExp::Const(c) => s.push_str(&format!("[{}]", c.plain())),
                }
            }
            s.push_str(elem.name());
        }
        Type::Acc { elems, .. } => {
            s.push_str("acc(");
            s.push_str(
                &elems
                    .iter()
                    .map(|e| e.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            );
            s.push(')');
        }
    }
    s
}

impl<'a> Verifier<'a> {
    fn err(&mut self, msg: String) {
        self.errors
            .push(format!("in function {}: {}: {}", self.fun, self.ctx, msg));
    }

    fn name(&self, v: VName) -> String {
        vname_to_string(&self.prog.names, v)
    }

    fn tt(&self, t: &Type) -> String {
        ty_text(&self.prog.names, t)
    }

    fn bind_param(&mut self, p: &Param, check_dims: bool) {
        if check_dims {
            self.check_dims(&p.ty);
        }
        if !self.bound.insert(p.name) {
            let n = self.name(p.name);
            self.err(format!("{n} is bound twice"));
        }
        self.scope.insert(p.name, p.ty.clone());
    }

    fn check_dims(&mut self, t: &Type) {
        let dims: Vec<SubExp> = match t {
            Type::Array { shape, .. } | Type::Acc { shape, .. } => shape.clone(),
            Type::Prim(_) => vec![],
        };
        for d in dims {
            // A size computed inside a nested body may escape into the type of what the
            // body returns (an existential size): it only has to be bound somewhere before.
            if let SubExp::Var(v) = &d {
                if !self.scope.contains_key(v) && self.bound.contains(v) {
                    continue;
                }
            }
            let dt = self.subexp(&d);
            if let Some(dt) = dt {
                if dt != Type::Prim(PrimType::I64) {
                    let s = self.tt(&dt);
                    self.err(format!("array dimension has type {s}, not i64"));
                }
            }
        }
    }

    fn subexp(&mut self, s: &SubExp) -> Option<Type> {
        match s {
            SubExp::Const(p) => Some(Type::Prim(p.ty())),
            SubExp::Var(v) => match self.scope.get(v) {
                Some(t) => Some(t.clone()),
                None => {
                    let n = self.name(*v);
                    self.err(format!("{n} is used but not in scope"));
                    None
                }
            },
        }
    }

    fn var(&mut self, v: VName) -> Option<Type> {
        self.subexp(&SubExp::Var(v))
    }

    fn prim_of(&mut self, s: &SubExp, what: &str) -> Option<PrimType> {
        match self.subexp(s)? {
            Type::Prim(p) => Some(p),
            t => {
                let t = self.tt(&t);
                self.err(format!("{what} must be a scalar, but has type {t}"));
                None
            }
        }
    }

    fn expect_prim(&mut self, s: &SubExp, want: PrimType, what: &str) {
        if let Some(p) = self.prim_of(s, what) {
            if p != want {
                self.err(format!("{what} has type {p}, expected {want}"));
            }
        }
    }

    fn expect_int(&mut self, s: &SubExp, what: &str) {
        if let Some(p) = self.prim_of(s, what) {
            if !p.is_int() {
                self.err(format!("{what} has type {p}, expected an integer type"));
            }
        }
    }

    fn match_types(&mut self, got: &[Option<Type>], want: &[Type], what: &str) {
        if got.len() != want.len() {
            self.err(format!(
                "{what}: {} values where {} are expected",
                got.len(),
                want.len()
            ));
            return;
        }
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            if let Some(g) = g {
                if !same_type(g, w) {
                    let (g, w) = (self.tt(g), self.tt(w));
                    self.err(format!("{what} #{i} has type {g}, expected {w}"));
                }
            }
        }
    }

    /// Verify a body in a nested scope; returns the result types.
    fn body(&mut self, b: &Body) -> Vec<Option<Type>> {
        let saved = self.scope.clone();
        for stm in &b.stms {
            self.stm(stm);
        }
        let res = b.result.iter().map(|s| self.subexp(s)).collect();
        self.scope = saved;
        res
    }

    fn stm(&mut self, stm: &Stm) {
        let pat_text: Vec<String> = stm.pat.iter().map(|p| self.name(p.name)).collect();
        let loc = match stm.src.loc {
            Some(l) => format!(" (at {}:{}-{})", l.file, l.start, l.end),
            None => String::new(),
        };
        self.ctx = format!("statement binding {{{}}}{loc}", pat_text.join(", "));
        let types = self.exp(&stm.exp);
        let pt: Vec<Type> = stm.pat.iter().map(|p| p.ty.clone()).collect();
        if let Some(types) = types {
            self.match_types(
                &types.into_iter().map(Some).collect::<Vec<_>>(),
                &pt,
                "pattern element",
            );
        }
        // Dimensions may refer to variables bound earlier in the same pattern.
        for p in &stm.pat {
            self.bind_param(p, true);
        }
    }

    fn lambda(&mut self, l: &Lambda, args: &[Type], what: &str) -> Vec<Type> {
        if l.params.len() != args.len() {
            self.err(format!(
                "{what} takes {} parameters but is given {}",
                l.params.len(),
                args.len()
            ));
        } else {
            for (i, (p, a)) in l.params.iter().zip(args).enumerate() {
                if !same_type(&p.ty, a) {
                    let (pt, at) = (self.tt(&p.ty), self.tt(a));
                    self.err(format!(
                        "{what} parameter #{i} has type {pt}, but gets {at}"
                    ));
                }
            }
        }
        let saved = self.scope.clone();
        for p in &l.params {
            self.bind_param(p, true);
        }
        let res = self.body(&l.body);
        self.scope = saved;
        self.match_types(&res, &l.ret, &format!("{what} result"));
        l.ret.clone()
    }

    /// The row types of SOAC inputs, checking that each has outer size `w`.
    fn rows(&mut self, w: &SubExp, arrs: &[VName], what: &str) -> Vec<Type> {
        self.expect_prim(w, PrimType::I64, "SOAC width");
        let mut out = Vec::new();
        for a in arrs {
            match self.var(*a) {
                Some(t @ Type::Array { .. }) => {
                    if let (Type::Array { shape, .. }, SubExp::Const(_)) = (&t, w) {
                        if let SubExp::Const(_) = &shape[0] {
                            if shape[0] != *w {
                                let n = self.name(*a);
                                self.err(format!("{what} input {n} has outer size other than w"));
                            }
                        }
                    }
                    out.push(t.row());
                }
                Some(t) => {
                    let (n, t) = (self.name(*a), self.tt(&t));
                    self.err(format!("{what} input {n} is not an array but {t}"));
                    out.push(t_dummy());
                }
                None => out.push(t_dummy()),
            }
        }
        out
    }

    fn neutral_types(&mut self, ne: &[SubExp]) -> Vec<Type> {
        ne.iter()
            .map(|s| self.subexp(s).unwrap_or_else(t_dummy))
            .collect()
    }

    fn operator(&mut self, lam: &Lambda, elems: &[Type], what: &str) {
        let mut args = elems.to_vec();
        args.extend(elems.iter().cloned());
        let ret = self.lambda(lam, &args, what);
        if ret.len() != elems.len() || ret.iter().zip(elems).any(|(a, b)| !same_type(a, b)) {
            self.err(format!(
                "{what} returns {} values that do not match its neutral elements",
                ret.len()
            ));
        }
    }

    fn exp(&mut self, e: &Exp) -> Option<Vec<Type>> {
        match e {
            Exp::Basic(op) => self.basic(op),
            Exp::Apply { fun, args, ret } => {
                let sig = self.sigs.get(fun.as_str()).copied();
                let arg_types: Vec<Option<Type>> = args.iter().map(|a| self.subexp(a)).collect();
                match sig {
                    None => self.err(format!("call of unknown function {fun}")),
                    Some(f) => {
                        let pts: Vec<Type> = f.params.iter().map(|p| p.ty.clone()).collect();
                        self.match_types(&arg_types, &pts, &format!("argument of {fun}"));
                        let r: Vec<Option<Type>> = ret.iter().cloned().map(Some).collect();
                        self.match_types(&r, &f.ret, &format!("result of {fun}"));
                    }
                }
                Some(ret.clone())
            }
            Exp::If {
                cond,
                then_body,
                else_body,
                ret,
            } => {
                self.expect_prim(cond, PrimType::Bool, "condition");
                let ctx = self.ctx.clone();
                let t = self.body(then_body);
                self.ctx = ctx.clone();
                self.match_types(&t, ret, "then branch result");
                let e = self.body(else_body);
                self.ctx = ctx;
                self.match_types(&e, ret, "else branch result");
                Some(ret.clone())
            }
            Exp::Loop { params, form, body } => {
                let ctx = self.ctx.clone();
                for (p, init) in params {
                    let it = self.subexp(init);
                    self.match_types(&[it], std::slice::from_ref(&p.ty), "loop initial value");
                }
                let saved = self.scope.clone();
                match form {
                    LoopForm::For { i, bound } => {
                        self.expect_int(bound, "loop bound");
                        let bt = self.subexp(bound).unwrap_or(Type::Prim(PrimType::I64));
                        self.bind_param(&Param { name: *i, ty: bt }, false);
                    }
                    LoopForm::While { cond } => {
                        match params.iter().find(|(p, _)| p.name == *cond) {
                            Some((p, _)) if p.ty == Type::Prim(PrimType::Bool) => {}
                            _ => {
                                let n = self.name(*cond);
                                self.err(format!(
                                    "while condition {n} is not a bool loop parameter"
                                ))
                            }
                        }
                    }
                }
                for (p, _) in params {
                    self.bind_param(p, true);
                }
                let res = self.body(body);
                self.ctx = ctx;
                let pts: Vec<Type> = params.iter().map(|(p, _)| p.ty.clone()).collect();
                self.match_types(&res, &pts, "loop body result");
                self.scope = saved;
                Some(pts)
            }
            Exp::Soac(s) => Some(self.soac(s)),
            Exp::WithAcc { inputs, lam } => {
                let mut accs = Vec::new();
                let mut out = Vec::new();
                for inp in inputs {
                    let mut elems = Vec::new();
                    for a in &inp.arrays {
                        if let Some(t) = self.var(*a) {
                            elems.push(t.elem().unwrap_or(PrimType::Bool));
                            out.push(t);
                        }
                    }
                    if let Some((l, ne)) = &inp.op {
                        let nt = self.neutral_types(ne);
                        self.operator(l, &nt, "accumulator operator");
                    }
                    accs.push(Type::Acc {
                        shape: inp.shape.clone(),
                        elems,
                    });
                }
                let ret = self.lambda(lam, &accs, "with_acc lambda");
                out.extend(ret.into_iter().skip(accs.len()));
                Some(out)
            }
            Exp::Jvp {
                lam,
                args,
                tangents,
                vector,
            } => {
                self.no_ad("jvp");
                let at: Vec<Type> = self.neutral_types(args);
                let tt = self.neutral_types(tangents);
                if !*vector {
                    let t: Vec<Option<Type>> = tt.into_iter().map(Some).collect();
                    self.match_types(&t, &at, "tangent");
                }
                let ret = self.lambda(lam, &at, "jvp lambda");
                let mut out = ret.clone();
                out.extend(ret);
                if *vector {
                    return None;
                }
                Some(out)
            }
            Exp::Vjp {
                lam,
                args,
                cotangents,
                vector,
            } => {
                self.no_ad("vjp");
                let at: Vec<Type> = self.neutral_types(args);
                let ct = self.neutral_types(cotangents);
                let ret = self.lambda(lam, &at, "vjp lambda");
                if !*vector {
                    let c: Vec<Option<Type>> = ct.into_iter().map(Some).collect();
                    self.match_types(&c, &ret, "cotangent");
                }
                let mut out = ret;
                out.extend(at);
                if *vector {
                    return None;
                }
                Some(out)
            }
            Exp::WithVjp { f, adj, args } => {
                self.no_ad("with_vjp");
                let at: Vec<Type> = self.neutral_types(args);
                let ret = self.lambda(f, &at, "with_vjp function");
                let mut adj_args = ret.clone();
                adj_args.extend(ret.iter().cloned());
                let adj_ret = self.lambda(adj, &adj_args, "with_vjp adjoint");
                let r: Vec<Option<Type>> = adj_ret.into_iter().map(Some).collect();
                self.match_types(&r, &at, "with_vjp adjoint result");
                Some(ret)
            }
        }
    }

    fn no_ad(&mut self, what: &str) {
        if self.opts.no_ad {
            self.err(format!("{what} remains after AD"));
        }
    }

    fn soac(&mut self, s: &Soac) -> Vec<Type> {
        match s {
            Soac::Map { w, lam, arrs } => {
                let rows = self.rows(w, arrs, "map");
                let ret = self.lambda(lam, &rows, "map lambda");
                ret.iter().map(|t| t.array_of(w.clone())).collect()
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
                let is_scan = matches!(s, Soac::Scan { .. });
                let what = if is_scan { "scan" } else { "reduce" };
                let rows = self.rows(w, arrs, what);
                let nt = self.neutral_types(neutral);
                let elems = match pre {
                    Some(p) => self.lambda(p, &rows, &format!("{what} pre lambda")),
                    None => rows,
                };
                if elems.len() != nt.len() || elems.iter().zip(&nt).any(|(a, b)| !same_type(a, b)) {
                    self.err(format!(
                        "{what} inputs do not match its {} neutral elements",
                        nt.len()
                    ));
                }
                self.operator(lam, &nt, &format!("{what} operator"));
                if is_scan {
                    nt.iter().map(|t| t.array_of(w.clone())).collect()
                } else {
                    nt
                }
            }
            Soac::Hist {
                w,
                dests,
                lam,
                neutral,
                is,
                vals,
            } => {
                let it = self.rows(w, is, "hist indices");
                for t in it {
                    if t != Type::Prim(PrimType::I64) {
                        self.err("hist index arrays must be [w]i64".into());
                    }
                }
                let vt = self.rows(w, vals, "hist values");
                let nt = self.neutral_types(neutral);
                let mut dts = Vec::new();
                for (k, d) in dests.iter().enumerate() {
                    let dt = self.var(*d).unwrap_or_else(t_dummy);
                    let mut bin = dt.clone();
                    for _ in 0..is.len() {
                        bin = bin.row();
                    }
                    if dt.rank() < is.len() {
                        self.err("hist destination has fewer dimensions than indices".into());
                    }
                    if let Some(v) = vt.get(k) {
                        if !same_type(v, &bin) {
                            self.err(format!("hist values #{k} do not match the destination"));
                        }
                    }
                    dts.push(dt);
                }
                if dests.len() != vals.len() || dests.len() != neutral.len() {
                    self.err(
                        "hist needs one value array and neutral element per destination".into(),
                    );
                }
                self.operator(lam, &nt, "hist operator");
                dts
            }
            Soac::Scatter { w, dests, is, vals } => {
                let it = self.rows(w, is, "scatter indices");
                for t in it {
                    if t != Type::Prim(PrimType::I64) {
                        self.err("scatter index arrays must be [w]i64".into());
                    }
                }
                let vt = self.rows(w, vals, "scatter values");
                if dests.len() != vals.len() {
                    self.err("scatter needs one value array per destination".into());
                }
                let mut dts = Vec::new();
                for (k, d) in dests.iter().enumerate() {
                    let dt = self.var(*d).unwrap_or_else(t_dummy);
                    let mut elem = dt.clone();
                    for _ in 0..is.len() {
                        elem = elem.row();
                    }
                    if let Some(v) = vt.get(k) {
                        if !same_type(v, &elem) || dt.rank() < is.len() {
                            self.err(format!("scatter values #{k} do not match the destination"));
                        }
                    }
                    dts.push(dt);
                }
                dts
            }
        }
    }

    fn basic(&mut self, op: &BasicOp) -> Option<Vec<Type>> {
        let one = |t: Type| Some(vec![t]);
        match op {
            BasicOp::SubExp(s) => one(self.subexp(s)?),
            BasicOp::BinOp(op, a, b) => {
                let ta = self.prim_of(a, "left operand")?;
                let tb = self.prim_of(b, "right operand")?;
                let ok = match op {
                    BinOp::Ldexp => ta.is_float() && tb == PrimType::I32,
                    BinOp::GetBit => tb.is_numeric() && ta == PrimType::I32,
                    _ => ta == tb,
                };
                if !ok {
                    self.err(format!("{op:?} applied to {ta} and {tb}"));
                }
                let rt = match op {
                    BinOp::GetBit => PrimType::I32,
                    _ => binop_type(*op, ta),
                };
                one(Type::Prim(rt))
            }
            BasicOp::UnOp(op, a) => {
                let t = self.prim_of(a, "operand")?;
                one(Type::Prim(unop_type(*op, t)))
            }
            BasicOp::TernOp(op, a, b, c) => {
                let (ta, tb, tc) = (
                    self.prim_of(a, "operand")?,
                    self.prim_of(b, "operand")?,
                    self.prim_of(c, "operand")?,
                );
                match op {
                    TernOp::SetBit => one(Type::Prim(tb)),
                    _ => {
                        if ta != tb || tb != tc {
                            self.err(format!("{op:?} applied to {ta}, {tb} and {tc}"));
                        }
                        one(Type::Prim(ta))
                    }
                }
            }
            BasicOp::Convert(t, a) => {
                self.prim_of(a, "converted operand")?;
                one(Type::Prim(*t))
            }
            BasicOp::Index(arr, idx) => {
                let t = self.var(*arr)?;
                let mut fixed = 0;
                for d in idx {
                    match d {
                        DimIndex::Fix(i) => {
                            fixed += 1;
                            self.expect_int(i, "index");
                        }
                        DimIndex::Slice { start, end, stride } => {
                            for s in [start, end, stride].into_iter().flatten() {
                                self.expect_int(s, "slice bound");
                            }
                        }
                    }
                }
                if idx.len() > t.rank() {
                    let n = self.name(*arr);
                    self.err(format!(
                        "{} indices into {n} of rank {}",
                        idx.len(),
                        t.rank()
                    ));
                    return None;
                }
                let rank = t.rank() - fixed;
                let elem = t.elem()?;
                // Shapes of slices are not tracked: the pattern says them.
                if rank == 0 {
                    one(Type::Prim(elem))
                } else {
                    None.or_else(|| {
                        Some(vec![Type::Array {
                            elem,
                            shape: vec![SubExp::Var(*arr); rank],
                        }])
                    })
                    .map(|v| v.into_iter().map(|t| any_shape(&t)).collect())
                }
            }
            BasicOp::Update(arr, idx, v) => {
                let t = self.var(*arr)?;
                let fixed = idx.iter().filter(|d| matches!(d, DimIndex::Fix(_))).count();
                let vt = self.subexp(v)?;
                if idx.len() > t.rank() || vt.rank() + fixed != t.rank() || vt.elem() != t.elem() {
                    let (n, s) = (self.name(*arr), self.tt(&vt));
                    self.err(format!("update of {n} with a value of type {s}"));
                }
                one(t)
            }
            BasicOp::Range {
                start,
                second,
                end,
                elem,
                ..
            } => {
                for s in [Some(start), second.as_ref(), Some(end)]
                    .into_iter()
                    .flatten()
                {
                    self.expect_prim(s, *elem, "range bound");
                }
                one(any_shape(&Type::Array {
                    elem: *elem,
                    shape: vec![SubExp::i64(0)],
                }))
            }
            BasicOp::Replicate(shape, v) => {
                for d in shape {
                    self.expect_prim(d, PrimType::I64, "replicate size");
                }
                let mut t = self.subexp(v)?;
                for d in shape.iter().rev() {
                    t = t.array_of(d.clone());
                }
                one(t)
            }
            BasicOp::Reshape { arr, shape } => {
                let t = self.var(*arr)?;
                for d in shape {
                    self.expect_prim(d, PrimType::I64, "reshape size");
                }
                one(Type::Array {
                    elem: t.elem()?,
                    shape: shape.clone(),
                })
            }
            BasicOp::Rearrange(perm, arr) => {
                let t = self.var(*arr)?;
                let mut sorted = perm.clone();
                sorted.sort();
                if sorted != (0..t.rank()).collect::<Vec<_>>() {
                    self.err(format!(
                        "rearrange {perm:?} of an array of rank {}",
                        t.rank()
                    ));
                    return None;
                }
                match &t {
                    Type::Array { elem, shape } => one(Type::Array {
                        elem: *elem,
                        shape: perm.iter().map(|&i| shape[i].clone()).collect(),
                    }),
                    _ => None,
                }
            }
            BasicOp::Concat(d, arrs) => {
                let ts: Vec<Type> = arrs.iter().filter_map(|a| self.var(*a)).collect();
                let first = ts.first()?.clone();
                if ts
                    .iter()
                    .any(|t| t.rank() != first.rank() || t.elem() != first.elem())
                    || *d >= first.rank()
                {
                    self.err(format!("concat along dimension {d} of mismatched arrays"));
                }
                one(any_shape(&first))
            }
            BasicOp::Copy(a) => one(self.var(*a)?),
            BasicOp::ArrayLit(rows, t) => {
                for r in rows {
                    if let Some(rt) = self.subexp(r) {
                        if !same_type(&rt, t) {
                            let (a, b) = (self.tt(&rt), self.tt(t));
                            self.err(format!("array literal row of type {a}, expected {b}"));
                        }
                    }
                }
                one(t.array_of(SubExp::i64(rows.len() as i64)))
            }
            BasicOp::Scratch(t, shape) => {
                for d in shape {
                    self.expect_prim(d, PrimType::I64, "scratch size");
                }
                one(Type::Array {
                    elem: *t,
                    shape: shape.clone(),
                })
            }
            BasicOp::ArraySize(a, d) => {
                let t = self.var(*a)?;
                if *d >= t.rank() {
                    let n = self.name(*a);
                    self.err(format!(
                        "size of dimension {d} of {n}, of rank {}",
                        t.rank()
                    ));
                }
                one(Type::Prim(PrimType::I64))
            }
            BasicOp::Assert { cond, .. } => {
                self.expect_prim(cond, PrimType::Bool, "assertion");
                one(Type::Prim(PrimType::Bool))
            }
            BasicOp::ShapeCheck { arr, shape, .. } => {
                let t = self.var(*arr)?;
                for d in shape {
                    self.expect_prim(d, PrimType::I64, "shape-check size");
                }
                if t.rank() != shape.len() {
                    let n = self.name(*arr);
                    self.err(format!(
                        "shape check of {n} against {} dimensions",
                        shape.len()
                    ));
                }
                one(Type::Prim(PrimType::Bool))
            }
            BasicOp::UpdateAcc { acc, is, vals } => {
                let t = self.var(*acc)?;
                for i in is {
                    self.expect_prim(i, PrimType::I64, "accumulator index");
                }
                for v in vals {
                    self.subexp(v);
                }
                if !matches!(t, Type::Acc { .. }) {
                    let n = self.name(*acc);
                    self.err(format!("update_acc of {n}, which is not an accumulator"));
                }
                one(t)
            }
        }
    }
}

/// A placeholder type after an error was reported (keeps checking going).
fn t_dummy() -> Type {
    Type::Prim(PrimType::Bool)
}

/// `t` with every dimension a constant that [`same_type`] will not compare (the verifier does
/// not track the sizes of slices, ranges and concatenations).
fn any_shape(t: &Type) -> Type {
    match t {
        Type::Array { elem, shape } => Type::Array {
            elem: *elem,
            shape: shape.iter().map(|_| SubExp::Var(VName(u32::MAX))).collect(),
        },
        t => t.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::Builder;

    fn f32t() -> Type {
        Type::Prim(PrimType::F32)
    }

    fn fun(prog: &mut Prog, f: impl FnOnce(&mut Builder, VName) -> Vec<SubExp>) {
        let n = prog.names.fresh("n");
        let xs = prog.names.fresh("xs");
        let arr = Type::Array {
            elem: PrimType::F32,
            shape: vec![SubExp::Var(n)],
        };
        let mut b = Builder::new(&mut prog.names);
        let res = f(&mut b, xs);
        let body = b.finish(res);
        prog.funs.push(FunDef {
            name: "f".into(),
            params: vec![
                Param {
                    name: n,
                    ty: Type::Prim(PrimType::I64),
                },
                Param { name: xs, ty: arr },
            ],
            ret: vec![f32t()],
            body,
            entry: None,
            src: SrcInfo::default(),
        });
    }

    #[test]
    fn accepts_a_reduce() {
        let mut prog = Prog::default();
        fun(&mut prog, |b, xs| {
            let lam = crate::builder::binop_lambda(b.names, BinOp::Add, PrimType::F32);
            let r = b.bind(
                Exp::Soac(Soac::Reduce {
                    w: SubExp::Var(VName(0)),
                    arrs: vec![xs],
                    pre: None,
                    lam,
                    neutral: vec![SubExp::Const(Prim::F32(0.0))],
                    commutative: true,
                }),
                vec![f32t()],
            );
            vec![SubExp::Var(r[0])]
        });
        assert_eq!(verify(&prog), Ok(()));
    }

    #[test]
    fn rejects_unbound_and_mistyped() {
        let mut prog = Prog::default();
        let ghost = prog.names.fresh("ghost");
        fun(&mut prog, |b, _| {
            let a = b.basic(
                "a",
                BasicOp::BinOp(BinOp::Add, SubExp::Var(ghost), SubExp::i64(1)),
                Type::Prim(PrimType::I64),
            );
            let c = b.basic(
                "c",
                BasicOp::BinOp(BinOp::Add, a, SubExp::Const(Prim::F32(1.0))),
                f32t(),
            );
            vec![c]
        });
        let errs = verify(&prog).unwrap_err();
        assert!(
            errs.iter()
                .any(|e| e.contains("ghost_0 is used but not in scope")),
            "{errs:?}"
        );
        assert!(
            errs.iter()
                .any(|e| e.contains("Add applied to i64 and f32")),
            "{errs:?}"
        );
    }

    #[test]
    fn rejects_bad_lambda_arity_and_double_binding() {
        let mut prog = Prog::default();
        fun(&mut prog, |b, xs| {
            let lam = crate::builder::binop_lambda(b.names, BinOp::Add, PrimType::F32);
            let r = b.bind(
                Exp::Soac(Soac::Map {
                    w: SubExp::Var(VName(0)),
                    lam,
                    arrs: vec![xs],
                }),
                vec![Type::Array {
                    elem: PrimType::F32,
                    shape: vec![SubExp::Var(VName(0))],
                }],
            );
            let stm = Stm {
                pat: vec![Param {
                    name: r[0],
                    ty: f32t(),
                }],
                exp: Exp::Basic(BasicOp::SubExp(SubExp::Const(Prim::F32(1.0)))),
                src: SrcInfo::default(),
            };
            b.add(stm);
            vec![SubExp::Var(r[0])]
        });
        let errs = verify(&prog).unwrap_err();
        assert!(
            errs.iter()
                .any(|e| e.contains("takes 2 parameters but is given 1")),
            "{errs:?}"
        );
        assert!(
            errs.iter().any(|e| e.contains("is bound twice")),
            "{errs:?}"
        );
    }

    #[test]
    fn checks_loop_results_and_ad() {
        let mut prog = Prog::default();
        fun(&mut prog, |b, _| {
            let acc = b.param("acc", f32t());
            let i = b.fresh("i");
            let accv = acc.name;
            let body = b.body(|b| {
                let c = b.convert(PrimType::F64, SubExp::Var(accv));
                vec![c]
            });
            let r = b.bind(
                Exp::Loop {
                    params: vec![(acc, SubExp::Const(Prim::F32(0.0)))],
                    form: LoopForm::For {
                        i,
                        bound: SubExp::i64(3),
                    },
                    body,
                },
                vec![f32t()],
            );
            let lam = b.lambda(vec![("x", f32t())], vec![f32t()], |_, ps| {
                vec![SubExp::Var(ps[0])]
            });
            let j = b.bind(
                Exp::Jvp {
                    lam,
                    args: vec![SubExp::Var(r[0])],
                    tangents: vec![SubExp::Const(Prim::F32(1.0))],
                    vector: false,
                },
                vec![f32t(), f32t()],
            );
            vec![SubExp::Var(j[1])]
        });
        let errs = verify(&prog).unwrap_err();
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0].contains("loop body result #0 has type f64"),
            "{errs:?}"
        );
        let errs = verify_no_ad(&prog).unwrap_err();
        assert!(errs.iter().any(|e| e.contains("jvp remains after AD")));
    }
}
