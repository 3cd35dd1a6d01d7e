//! A readable text form of the IR, e.g.
//! `let {xs_3 : [n_1]f32} = map(n_1, \{x_4 : f32} : {f32} -> …, ys_2)`.

use crate::ir::*;
use std::fmt::{self, Write};

impl fmt::Display for Prog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut p = Printer::new(&self.names);
        for (i, fun) in self.funs.iter().enumerate() {
            if i > 0 {
                p.out.push('\n');
            }
            p.fundef(fun);
        }
        f.write_str(&p.out)
    }
}

/// Print one body (e.g. in error messages and tests).
pub fn body_to_string(names: &NameSource, body: &Body) -> String {
    let mut p = Printer::new(names);
    p.body(body);
    p.out
}

/// Print one expression on one or more lines.
pub fn exp_to_string(names: &NameSource, exp: &Exp) -> String {
    let mut p = Printer::new(names);
    p.exp(exp);
    p.out
}

/// A variable as printed: its hint and its number (`xs_3`).
pub fn vname_to_string(names: &NameSource, v: VName) -> String {
    format!("{}_{}", names.hint(v), v.0)
}

struct Printer<'a> {
    names: &'a NameSource,
    out: String,
    indent: usize,
}

impl<'a> Printer<'a> {
    fn new(names: &'a NameSource) -> Self {
        Printer {
            names,
            out: String::new(),
            indent: 0,
        }
    }

    fn nl(&mut self) {
        self.out.push('\n');
        for _ in 0..self.indent {
            self.out.push_str("  ");
        }
    }

    fn v(&mut self, v: VName) {
        let s = vname_to_string(self.names, v);
        self.out.push_str(&s);
    }

    fn se(&mut self, s: &SubExp) {
        match s {
            SubExp::Var(v) => self.v(*v),
            SubExp::Const(p) => {
                let _ = write!(self.out, "{}", prim_text(p));
            }
        }
    }

    fn list<T>(&mut self, xs: &[T], mut f: impl FnMut(&mut Self, &T)) {
        for (i, x) in xs.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            f(self, x);
        }
    }

    fn ty(&mut self, t: &Type) {
        match t {
            Type::Prim(p) => self.out.push_str(p.name()),
            Type::Array { elem, shape } => {
                for d in shape {
                    self.out.push('[');
                    self.se(d);
                    self.out.push(']');
                }
                self.out.push_str(elem.name());
            }
            Type::Acc { shape, elems } => {
                self.out.push_str("acc(");
                for d in shape {
                    self.out.push('[');
                    self.se(d);
                    self.out.push(']');
                }
                self.out.push_str(", ");
                self.list(elems, |p, e| p.out.push_str(e.name()));
                self.out.push(')');
            }
        }
    }

    fn params(&mut self, ps: &[Param]) {
        self.out.push('{');
        self.list(ps, |p, x| {
            p.v(x.name);
            p.out.push_str(" : ");
            p.ty(&x.ty);
        });
        self.out.push('}');
    }

    fn types(&mut self, ts: &[Type]) {
        self.out.push('{');
        self.list(ts, |p, t| p.ty(t));
        self.out.push('}');
    }

    fn fundef(&mut self, f: &FunDef) {
        if let Some(e) = &f.entry {
            let _ = write!(self.out, "entry \"{}\" ", e.name);
        }
        let _ = write!(self.out, "fun {} ", f.name);
        self.params(&f.params);
        self.out.push_str(" : ");
        self.types(&f.ret);
        self.out.push_str(" =");
        self.indent += 1;
        self.body(&f.body);
        self.indent -= 1;
        self.out.push('\n');
    }

    /// Statements on their own lines, then `in {results}`.
    fn body(&mut self, b: &Body) {
        for s in &b.stms {
            self.nl();
            self.out.push_str("let ");
            self.params(&s.pat);
            self.out.push_str(" = ");
            self.exp(&s.exp);
        }
        self.nl();
        self.out.push_str("in {");
        self.list(&b.result, |p, s| p.se(s));
        self.out.push('}');
    }

    fn block(&mut self, b: &Body) {
        self.out.push('{');
        self.indent += 1;
        self.body(b);
        self.indent -= 1;
        self.nl();
        self.out.push('}');
    }

    fn lambda(&mut self, l: &Lambda) {
        self.out.push('\\');
        self.params(&l.params);
        self.out.push_str(" : ");
        self.types(&l.ret);
        self.out.push_str(" -> ");
        self.block(&l.body);
    }

    fn vars(&mut self, vs: &[VName]) {
        self.list(vs, |p, v| p.v(*v));
    }

    fn ses(&mut self, vs: &[SubExp]) {
        self.list(vs, |p, v| p.se(v));
    }

    fn dims(&mut self, idx: &[DimIndex]) {
        self.out.push('[');
        self.list(idx, |p, d| match d {
            DimIndex::Fix(s) => p.se(s),
            DimIndex::Slice { start, end, stride } => {
                if let Some(s) = start {
                    p.se(s);
                }
                p.out.push(':');
                if let Some(s) = end {
                    p.se(s);
                }
                if let Some(s) = stride {
                    p.out.push(':');
                    p.se(s);
                }
            }
        });
        self.out.push(']');
    }

    fn basic(&mut self, op: &BasicOp) {
        match op {
            BasicOp::SubExp(s) => self.se(s),
            BasicOp::BinOp(op, a, b) => {
                let _ = write!(self.out, "{op:?}(");
                self.se(a);
                self.out.push_str(", ");
                self.se(b);
                self.out.push(')');
            }
            BasicOp::UnOp(op, a) => {
                let _ = write!(self.out, "{op:?}(");
                self.se(a);
                self.out.push(')');
            }
            BasicOp::TernOp(op, a, b, c) => {
                let _ = write!(self.out, "{op:?}(");
                self.ses(&[a.clone(), b.clone(), c.clone()]);
                self.out.push(')');
            }
            BasicOp::Convert(t, a) => {
                let _ = write!(self.out, "to_{t}(");
                self.se(a);
                self.out.push(')');
            }
            BasicOp::Index(a, idx) => {
                self.v(*a);
                self.dims(idx);
            }
            BasicOp::Update(a, idx, v) => {
                self.v(*a);
                self.out.push_str(" with ");
                self.dims(idx);
                self.out.push_str(" = ");
                self.se(v);
            }
            BasicOp::Range {
                start,
                second,
                end,
                kind,
                elem,
            } => {
                let _ = write!(self.out, "range_{elem}(");
                self.se(start);
                if let Some(s) = second {
                    self.out.push_str(" .. ");
                    self.se(s);
                }
                self.out.push_str(match kind {
                    RangeKind::UpToExclusive => " ..< ",
                    RangeKind::DownToExclusive => " ..> ",
                    RangeKind::Inclusive => " ... ",
                });
                self.se(end);
                self.out.push(')');
            }
            BasicOp::Replicate(shape, v) => {
                self.out.push_str("replicate([");
                self.ses(shape);
                self.out.push_str("], ");
                self.se(v);
                self.out.push(')');
            }
            BasicOp::Reshape { arr, shape } => {
                self.out.push_str("reshape([");
                self.ses(shape);
                self.out.push_str("], ");
                self.v(*arr);
                self.out.push(')');
            }
            BasicOp::Rearrange(perm, a) => {
                let _ = write!(self.out, "rearrange({perm:?}, ");
                self.v(*a);
                self.out.push(')');
            }
            BasicOp::Concat(d, arrs) => {
                let _ = write!(self.out, "concat@{d}(");
                self.vars(arrs);
                self.out.push(')');
            }
            BasicOp::Copy(a) => {
                self.out.push_str("copy(");
                self.v(*a);
                self.out.push(')');
            }
            BasicOp::ArrayLit(rows, t) => {
                self.out.push('[');
                self.ses(rows);
                self.out.push_str("] : ");
                self.ty(t);
            }
            BasicOp::Scratch(t, shape) => {
                let _ = write!(self.out, "scratch({t}, [");
                self.ses(shape);
                self.out.push_str("])");
            }
            BasicOp::ArraySize(a, d) => {
                self.out.push_str("size(");
                self.v(*a);
                let _ = write!(self.out, ", {d})");
            }
            BasicOp::Assert { cond, message } => {
                self.out.push_str("assert(");
                self.se(cond);
                let _ = write!(self.out, ", {message:?})");
            }
            BasicOp::ShapeCheck {
                arr,
                shape,
                type_text,
            } => {
                self.out.push_str("shape_check(");
                self.v(*arr);
                self.out.push_str(", [");
                self.ses(shape);
                let _ = write!(self.out, "], {type_text:?})");
            }
            BasicOp::UpdateAcc { acc, is, vals } => {
                self.out.push_str("update_acc(");
                self.v(*acc);
                self.out.push_str(", [");
                self.ses(is);
                self.out.push_str("], {");
                self.ses(vals);
                self.out.push_str("})");
            }
        }
    }

    fn opt_pre(&mut self, pre: &Option<Lambda>) {
        if let Some(l) = pre {
            self.out.push_str("pre ");
            self.lambda(l);
            self.out.push_str(", ");
        }
    }

    fn soac(&mut self, s: &Soac) {
        match s {
            Soac::Map { w, lam, arrs } => {
                self.out.push_str("map(");
                self.se(w);
                self.out.push_str(", ");
                self.lambda(lam);
                self.out.push_str(", ");
                self.vars(arrs);
                self.out.push(')');
            }
            Soac::Reduce {
                w,
                arrs,
                pre,
                lam,
                neutral,
                commutative,
            } => {
                self.out.push_str(if *commutative {
                    "reduce_comm("
                } else {
                    "reduce("
                });
                self.se(w);
                self.out.push_str(", ");
                self.opt_pre(pre);
                self.lambda(lam);
                self.out.push_str(", {");
                self.ses(neutral);
                self.out.push_str("}, ");
                self.vars(arrs);
                self.out.push(')');
            }
            Soac::Scan {
                w,
                arrs,
                pre,
                lam,
                neutral,
            } => {
                self.out.push_str("scan(");
                self.se(w);
                self.out.push_str(", ");
                self.opt_pre(pre);
                self.lambda(lam);
                self.out.push_str(", {");
                self.ses(neutral);
                self.out.push_str("}, ");
                self.vars(arrs);
                self.out.push(')');
            }
            Soac::Hist {
                w,
                dests,
                lam,
                neutral,
                is,
                vals,
            } => {
                self.out.push_str("hist(");
                self.se(w);
                self.out.push_str(", {");
                self.vars(dests);
                self.out.push_str("}, ");
                self.lambda(lam);
                self.out.push_str(", {");
                self.ses(neutral);
                self.out.push_str("}, {");
                self.vars(is);
                self.out.push_str("}, {");
                self.vars(vals);
                self.out.push_str("})");
            }
            Soac::Scatter { w, dests, is, vals } => {
                self.out.push_str("scatter(");
                self.se(w);
                self.out.push_str(", {");
                self.vars(dests);
                self.out.push_str("}, {");
                self.vars(is);
                self.out.push_str("}, {");
                self.vars(vals);
                self.out.push_str("})");
            }
        }
    }

    fn exp(&mut self, e: &Exp) {
        match e {
            Exp::Basic(op) => self.basic(op),
            Exp::Apply { fun, args, ret } => {
                let _ = write!(self.out, "{fun}(");
                self.ses(args);
                self.out.push_str(") : ");
                self.types(ret);
            }
            Exp::If {
                cond,
                then_body,
                else_body,
                ret,
            } => {
                self.out.push_str("if ");
                self.se(cond);
                self.out.push_str(" : ");
                self.types(ret);
                self.out.push_str(" then ");
                self.block(then_body);
                self.out.push_str(" else ");
                self.block(else_body);
            }
            Exp::Loop { params, form, body } => {
                self.out.push_str("loop {");
                self.list(params, |p, (x, init)| {
                    p.v(x.name);
                    p.out.push_str(" : ");
                    p.ty(&x.ty);
                    p.out.push_str(" = ");
                    p.se(init);
                });
                self.out.push_str("} ");
                match form {
                    LoopForm::For { i, bound } => {
                        self.out.push_str("for ");
                        self.v(*i);
                        self.out.push_str(" < ");
                        self.se(bound);
                    }
                    LoopForm::While { cond } => {
                        self.out.push_str("while ");
                        self.v(*cond);
                    }
                }
                self.out.push_str(" do ");
                self.block(body);
            }
            Exp::Soac(s) => self.soac(s),
            Exp::WithAcc { inputs, lam } => {
                self.out.push_str("with_acc({");
                self.list(inputs, |p, inp| {
                    p.out.push_str("([");
                    p.ses(&inp.shape);
                    p.out.push_str("], {");
                    p.vars(&inp.arrays);
                    p.out.push('}');
                    if let Some((l, ne)) = &inp.op {
                        p.out.push_str(", ");
                        p.lambda(l);
                        p.out.push_str(", {");
                        p.ses(ne);
                        p.out.push('}');
                    }
                    p.out.push(')');
                });
                self.out.push_str("}, ");
                self.lambda(lam);
                self.out.push(')');
            }
            Exp::Jvp {
                lam,
                args,
                tangents,
                vector,
            } => {
                self.out.push_str(if *vector { "jmp(" } else { "jvp(" });
                self.lambda(lam);
                self.out.push_str(", {");
                self.ses(args);
                self.out.push_str("}, {");
                self.ses(tangents);
                self.out.push_str("})");
            }
            Exp::Vjp {
                lam,
                args,
                cotangents,
                vector,
            } => {
                self.out.push_str(if *vector { "mjp(" } else { "vjp(" });
                self.lambda(lam);
                self.out.push_str(", {");
                self.ses(args);
                self.out.push_str("}, {");
                self.ses(cotangents);
                self.out.push_str("})");
            }
            Exp::WithVjp { f, adj, args } => {
                self.out.push_str("with_vjp(");
                self.lambda(f);
                self.out.push_str(", ");
                self.lambda(adj);
                self.out.push_str(", {");
                self.ses(args);
                self.out.push_str("})");
            }
        }
    }
}

/// A constant with its type suffix (`3i64`, `1.5f32`, `true`).
pub fn prim_text(p: &Prim) -> String {
    match p {
        Prim::Bool(b) => b.to_string(),
        _ => format!("{}{}", p.plain(), p.ty().name()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::Builder;

    #[test]
    fn prints_a_map_function() {
        let mut prog = Prog::default();
        let n = prog.names.fresh("n");
        let ys = prog.names.fresh("ys");
        let arr_ty = Type::Array {
            elem: PrimType::F32,
            shape: vec![SubExp::Var(n)],
        };
        let mut b = Builder::new(&mut prog.names);
        let lam = b.lambda(
            vec![("x", Type::Prim(PrimType::F32))],
            vec![Type::Prim(PrimType::F32)],
            |b, ps| {
                vec![b.binop(
                    BinOp::Mul,
                    SubExp::Var(ps[0]),
                    SubExp::Const(Prim::F32(2.0)),
                    PrimType::F32,
                )]
            },
        );
        let xs = b.bind_named(
            &["xs"],
            Exp::Soac(Soac::Map {
                w: SubExp::Var(n),
                lam,
                arrs: vec![ys],
            }),
            vec![arr_ty.clone()],
        );
        let body = b.finish(vec![SubExp::Var(xs[0])]);
        prog.funs.push(FunDef {
            name: "main".into(),
            params: vec![
                Param {
                    name: n,
                    ty: Type::Prim(PrimType::I64),
                },
                Param {
                    name: ys,
                    ty: arr_ty.clone(),
                },
            ],
            ret: vec![arr_ty],
            body,
            entry: None,
            src: SrcInfo::default(),
        });
        let text = prog.to_string();
        let expected = "fun main {n_0 : i64, ys_1 : [n_0]f32} : {[n_0]f32} =
  let {xs_4 : [n_0]f32} = map(n_0, \\{x_2 : f32} : {f32} -> {
    let {b_3 : f32} = Mul(x_2, 2f32)
    in {b_3}
  }, ys_1)
  in {xs_4}
";
        assert_eq!(text, expected);
    }
}
