//! Lowering of the prelude's intrinsics and the numeric modules' members.

use crate::lower::{unsupported, Lower, R};
use crate::val::{Builtin, Val};
use runic_ir::*;
use runic_syntax::Span;

/// The arity of an unqualified intrinsic (operators included).
pub fn arity(name: &str) -> Option<usize> {
    if BinOp::from_symbol(name).is_some() {
        return Some(2);
    }
    runic_types::intrinsics::arity(name)
}

fn unop_of(name: &str) -> Option<UnOp> {
    UnOp::from_member_name(name)
}

fn member_binop(name: &str) -> Option<BinOp> {
    BinOp::from_member_name(name)
}

pub fn member_arity(t: PrimType, name: &str) -> Option<usize> {
    if PrimType::from_name(name).is_some() || name == "to_i64" || name == "to_f64" {
        return Some(1);
    }
    if t == PrimType::Bool {
        return None;
    }
    if member_binop(name).is_some() {
        return Some(2);
    }
    if unop_of(name).is_some() {
        return Some(1);
    }
    match name {
        "get_bit" | "from_fraction" => Some(2),
        "set_bit" | "mad_hi" | "lerp" | "mad" | "fma" => Some(3),
        "sum" | "product" | "maximum" | "minimum" => Some(1),
        _ => None,
    }
}

pub fn member_const(t: PrimType, name: &str) -> Option<Prim> {
    if t == PrimType::Bool {
        return None;
    }
    Some(match name {
        "highest" => Prim::highest(t),
        "lowest" => Prim::lowest(t),
        "num_bits" => Prim::I32(t.bits() as i32),
        "inf" if t.is_float() => Prim::float(t, f64::INFINITY),
        "nan" if t.is_float() => Prim::float(t, f64::NAN),
        "pi" if t.is_float() => Prim::float(t, std::f64::consts::PI),
        "e" if t.is_float() => Prim::float(t, std::f64::consts::E),
        "epsilon" if t.is_float() => Prim::float(
            t,
            match t {
                PrimType::F16 => 2f64.powi(-10),
                PrimType::F32 => 2f64.powi(-23),
                _ => f64::EPSILON,
            },
        ),
        _ => return None,
    })
}

fn prim(v: Val<'_>) -> Val<'_> {
    v
}

pub(crate) fn leaf<'a>(s: SubExp, t: Type) -> Val<'a> {
    Val::Leaf(s, t)
}

/// The outer size of an array value.
pub(crate) fn outer<'a>(l: &Lower<'a>, v: &Val<'a>, span: Span) -> R<SubExp> {
    match v.first_leaf() {
        Some((_, Type::Array { shape, .. })) => Ok(shape[0].clone()),
        _ => {
            let _ = l;
            unsupported(
                "an array operation on a value without array leaves",
                Some(span),
            )
        }
    }
}

/// One row of an array value, as a template for lambda parameters.
fn row_template<'a>(v: &Val<'a>) -> Option<Val<'a>> {
    let leaves: Vec<(SubExp, Type)> = v.leaves()?.into_iter().map(|(s, t)| (s, t.row())).collect();
    Some(v.rebuild(&mut leaves.into_iter()))
}

pub(crate) fn arrays<'a>(l: &Lower<'a>, v: &Val<'a>, span: Span) -> R<Vec<VName>> {
    l.leaves(v, span)?
        .iter()
        .map(|(s, _)| l.arr_var(s, span))
        .collect()
}

impl<'a> Lower<'a> {
    /// A lambda applying `f` to parameters shaped like `args`; returns it and its result
    /// template.
    pub fn lambda_of(&mut self, f: &Val<'a>, args: &[Val<'a>], span: Span) -> R<(Lambda, Val<'a>)> {
        let f = f.clone();
        self.lambda_with(args, span, |l, vals| l.apply_many(f, vals, span))
    }

    /// A lambda whose parameters are shaped like `args` and whose body `body` builds from
    /// them; returns it and its result template.
    pub fn lambda_with(
        &mut self,
        args: &[Val<'a>],
        span: Span,
        body: impl FnOnce(&mut Self, Vec<Val<'a>>) -> R<Val<'a>>,
    ) -> R<(Lambda, Val<'a>)> {
        let mut params = Vec::new();
        let mut vals = Vec::new();
        for a in args {
            let ls = self.leaves(a, span)?;
            let mut fresh = Vec::new();
            for (_, t) in ls {
                let p = Param {
                    name: self.names.fresh("x"),
                    ty: t.clone(),
                };
                self.var_types.insert(p.name, t.clone());
                fresh.push((SubExp::Var(p.name), t));
                params.push(p);
            }
            vals.push(a.rebuild(&mut fresh.into_iter()));
        }
        let (stms, res) = self.nested(|l| body(l, vals))?;
        let rl = self.leaves(&res, span)?;
        let mut lam = Lambda {
            id: runic_ir::LamId::fresh(),
            params,
            body: Body {
                stms,
                result: rl.iter().map(|(s, _)| s.clone()).collect(),
            },
            ret: rl.iter().map(|(_, t)| t.clone()).collect(),
        };
        let subst = crate::sizes::hoist_result_sizes(self, &mut lam);
        let res = if subst.is_empty() {
            res
        } else {
            let fixed: Vec<(SubExp, Type)> = rl
                .into_iter()
                .zip(&lam.ret)
                .map(|((s, _), t)| (s, t.clone()))
                .collect();
            res.rebuild(&mut fixed.into_iter())
        };
        Ok((lam, res))
    }

    fn soac_map(&mut self, f: &Val<'a>, arrs: &[Val<'a>], span: Span) -> R<Val<'a>> {
        let f = f.clone();
        self.soac_map_with(arrs, span, |l, rows| l.apply_many(f, rows, span))
    }

    /// `map` over `arrs` with a body built by `body` from the rows.
    pub fn soac_map_with(
        &mut self,
        arrs: &[Val<'a>],
        span: Span,
        body: impl FnOnce(&mut Self, Vec<Val<'a>>) -> R<Val<'a>>,
    ) -> R<Val<'a>> {
        let w = outer(self, &arrs[0], span)?;
        let rows: Vec<Val<'a>> = arrs
            .iter()
            .map(|a| {
                row_template(a).map_or_else(|| unsupported("map over functions", Some(span)), Ok)
            })
            .collect::<R<_>>()?;
        let (lam, res) = self.lambda_with(&rows, span, body)?;
        let mut ins = Vec::new();
        for a in arrs {
            ins.extend(arrays(self, a, span)?);
        }
        // Inputs must agree on the outer size.
        for a in &arrs[1..] {
            self.check_outer(a, &w, span)?;
        }
        let types: Vec<Type> = lam.ret.iter().map(|t| t.array_of(w.clone())).collect();
        let outs = self.emit(
            &["mapped"],
            Exp::Soac(Soac::Map { w, lam, arrs: ins }),
            types.clone(),
        );
        let leaves: Vec<(SubExp, Type)> = outs.into_iter().map(SubExp::Var).zip(types).collect();
        Ok(res.rebuild(&mut leaves.into_iter()))
    }

    /// Fail like the interpreter (`[n]` against the first array's length `w`) unless the
    /// array value `a` has outer size `w`.
    pub fn check_outer(&mut self, a: &Val<'a>, w: &SubExp, span: Span) -> R<()> {
        let (s, t) = match a.first_leaf() {
            Some(x) => x,
            None => return Ok(()),
        };
        let (elem, shape) = match t {
            Type::Array { elem, shape } => (elem, shape),
            _ => return Ok(()),
        };
        if &shape[0] == w {
            return Ok(());
        }
        let arr = self.arr_var(&s, span)?;
        let mut want = vec![w.clone()];
        want.extend(shape[1..].iter().cloned());
        let elem_text = if matches!(a, Val::Leaf(..)) {
            elem.to_string()
        } else {
            "t".to_string()
        };
        let text = format!("{}{elem_text}", crate::lower::ShapeText(&want));
        self.emit(
            &["ok"],
            Exp::Basic(BasicOp::ShapeCheck {
                arr,
                shape: want,
                type_text: text,
            }),
            vec![Type::Prim(PrimType::Bool)],
        );
        Ok(())
    }

    fn reduce_like(
        &mut self,
        op: &Val<'a>,
        ne: &Val<'a>,
        arr: &Val<'a>,
        scan: bool,
        commutative: bool,
        span: Span,
    ) -> R<Val<'a>> {
        let w = outer(self, arr, span)?;
        let (lam, _) = self.lambda_of(op, &[ne.clone(), ne.clone()], span)?;
        let neutral: Vec<SubExp> = self.leaves(ne, span)?.into_iter().map(|(s, _)| s).collect();
        let nt: Vec<Type> = self.leaves(ne, span)?.into_iter().map(|(_, t)| t).collect();
        let arrs = arrays(self, arr, span)?;
        let (exp, types) = if scan {
            (
                Soac::Scan {
                    w: w.clone(),
                    arrs,
                    pre: None,
                    lam,
                    neutral,
                },
                nt.iter().map(|t| t.array_of(w.clone())).collect::<Vec<_>>(),
            )
        } else {
            (
                Soac::Reduce {
                    w,
                    arrs,
                    pre: None,
                    lam,
                    neutral,
                    commutative,
                },
                nt,
            )
        };
        let outs = self.emit(&["red"], Exp::Soac(exp), types.clone());
        let leaves: Vec<(SubExp, Type)> = outs.into_iter().map(SubExp::Var).zip(types).collect();
        Ok(ne.rebuild(&mut leaves.into_iter()))
    }

    pub(crate) fn iota(&mut self, n: SubExp) -> Val<'a> {
        let ty = Type::Array {
            elem: PrimType::I64,
            shape: vec![n.clone()],
        };
        let s = self.basic(
            "iota",
            BasicOp::Range {
                start: SubExp::i64(0),
                // `0..1..<n`: the form the interpreter names in its invalid-range error.
                second: Some(SubExp::i64(1)),
                end: n,
                kind: RangeKind::UpToExclusive,
                elem: PrimType::I64,
            },
            ty.clone(),
        );
        leaf(s, ty)
    }

    fn each_leaf(
        &mut self,
        v: &Val<'a>,
        span: Span,
        mut f: impl FnMut(&mut Self, VName, &Type) -> R<(SubExp, Type)>,
    ) -> R<Val<'a>> {
        let ls = self.leaves(v, span)?;
        let mut out = Vec::new();
        for (s, t) in ls {
            let a = self.arr_var(&s, span)?;
            out.push(f(self, a, &t)?);
        }
        Ok(v.rebuild(&mut out.into_iter()))
    }

    fn slice_outer(
        &mut self,
        v: &Val<'a>,
        start: Option<SubExp>,
        end: Option<SubExp>,
        stride: Option<SubExp>,
        span: Span,
    ) -> R<Val<'a>> {
        let idx = vec![DimIndex::Slice { start, end, stride }];
        self.index_val(v, &idx, span)
    }

    fn reduce_prim(&mut self, op: BinOp, ne: Prim, arr: &Val<'a>, span: Span) -> R<Val<'a>> {
        let t = ne.ty();
        let lam = runic_ir::builder::binop_lambda(&mut self.names, op, t);
        for p in &lam.params {
            self.var_types.insert(p.name, p.ty.clone());
        }
        let w = outer(self, arr, span)?;
        let arrs = arrays(self, arr, span)?;
        let r = self.emit1(
            "red",
            Exp::Soac(Soac::Reduce {
                w,
                arrs,
                pre: None,
                lam,
                neutral: vec![SubExp::Const(ne)],
                commutative: true,
            }),
            Type::Prim(t),
        );
        Ok(leaf(r, Type::Prim(t)))
    }
}

fn size_arg(sizes: &[(String, Option<SubExp>)], k: usize, what: &str, span: Span) -> R<SubExp> {
    match sizes.get(k).and_then(|(_, s)| s.clone()) {
        Some(s) => Ok(s),
        None => unsupported(
            &format!("{what} with a size not known statically"),
            Some(span),
        ),
    }
}

/// Apply an intrinsic to all its arguments.
pub fn call<'a>(
    l: &mut Lower<'a>,
    b: &Builtin,
    args: Vec<Val<'a>>,
    sizes: &[(String, Option<SubExp>)],
    span: Span,
) -> R<Val<'a>> {
    match b {
        Builtin::Member(t, name) => member(l, *t, name, args, span),
        Builtin::Named(name) => named(l, name, args, sizes, span),
    }
}

fn member<'a>(
    l: &mut Lower<'a>,
    t: PrimType,
    name: &str,
    args: Vec<Val<'a>>,
    span: Span,
) -> R<Val<'a>> {
    if let Some(to) = PrimType::from_name(name).map(|_| t).or(match name {
        "to_i64" => Some(PrimType::I64),
        "to_f64" => Some(PrimType::F64),
        _ => None,
    }) {
        let (s, _) = l.prim_leaf(&args[0], span)?;
        let r = l.convert(to, s);
        return Ok(leaf(r, Type::Prim(to)));
    }
    match name {
        "sum" => return l.reduce_prim(BinOp::Add, Prim::zero(t), &args[0], span),
        "product" => return l.reduce_prim(BinOp::Mul, Prim::one(t), &args[0], span),
        "maximum" => return l.reduce_prim(BinOp::Max, lowest(t), &args[0], span),
        "minimum" => return l.reduce_prim(BinOp::Min, highest(t), &args[0], span),
        _ => {}
    }
    let ps: Vec<(SubExp, PrimType)> = args
        .iter()
        .map(|a| l.prim_leaf(a, span))
        .collect::<R<_>>()?;
    if let Some(op) = unop_of(name) {
        let (a, pt) = ps[0].clone();
        let r = l.unop(op, a, pt);
        let rt = runic_ir::builder::unop_type(op, pt);
        return Ok(prim(leaf(r, Type::Prim(rt))));
    }
    if name == "get_bit" {
        let r = l.basic(
            "bit",
            BasicOp::BinOp(BinOp::GetBit, ps[0].0.clone(), ps[1].0.clone()),
            Type::Prim(PrimType::I32),
        );
        return Ok(leaf(r, Type::Prim(PrimType::I32)));
    }
    if name == "from_fraction" {
        let r = l.basic(
            "frac",
            BasicOp::BinOp(BinOp::FromFraction, ps[0].0.clone(), ps[1].0.clone()),
            Type::Prim(t),
        );
        return Ok(leaf(r, Type::Prim(t)));
    }
    if let Some(op) = member_binop(name) {
        return l.prim_binop(op, &args[0], &args[1], span);
    }
    let tern = match name {
        "set_bit" => TernOp::SetBit,
        "mad_hi" => TernOp::MadHi,
        "lerp" => TernOp::Lerp,
        "mad" => TernOp::Mad,
        "fma" => TernOp::Fma,
        _ => return unsupported(&format!("{t}.{name}"), Some(span)),
    };
    let rt = if tern == TernOp::SetBit {
        ps[1].1
    } else {
        ps[0].1
    };
    let r = l.basic(
        "t",
        BasicOp::TernOp(tern, ps[0].0.clone(), ps[1].0.clone(), ps[2].0.clone()),
        Type::Prim(rt),
    );
    Ok(leaf(r, Type::Prim(rt)))
}

fn lowest(t: PrimType) -> Prim {
    if t.is_float() {
        Prim::float(t, f64::NEG_INFINITY)
    } else {
        Prim::lowest(t)
    }
}

fn highest(t: PrimType) -> Prim {
    if t.is_float() {
        Prim::float(t, f64::INFINITY)
    } else {
        Prim::highest(t)
    }
}

fn named<'a>(
    l: &mut Lower<'a>,
    name: &str,
    mut args: Vec<Val<'a>>,
    sizes: &[(String, Option<SubExp>)],
    span: Span,
) -> R<Val<'a>> {
    if let Some(op) = BinOp::from_symbol(name) {
        return l.prim_binop(op, &args[0], &args[1], span);
    }
    match name {
        "map" | "map1" | "map2" | "map3" | "map4" | "map5" => {
            let f = args.remove(0);
            l.soac_map(&f, &args, span)
        }
        "reduce" | "reduce_comm" => l.reduce_like(
            &args[0],
            &args[1],
            &args[2],
            false,
            name == "reduce_comm",
            span,
        ),
        "scan" => l.reduce_like(&args[0], &args[1], &args[2], true, false, span),
        "exscan" => {
            // exscan op ne xs = [ne] ++ init (scan op ne xs), without the concatenation
            // failing on empty input: shift by one with a map over indices.
            let sc = l.reduce_like(&args[0], &args[1], &args[2], true, false, span)?;
            let n = outer(l, &args[2], span)?;
            let is = l.iota(n.clone());
            let ne = args[1].clone();
            let scc = sc.clone();
            let shift = crate::val::Fun::Builtin {
                b: Builtin::Named("__exscan_row".into()),
                arity: 1,
                args: vec![],
                sizes: vec![],
                loc: None,
            };
            let _ = shift;
            // Build the lambda directly: \i -> if i == 0 then ne else sc[i-1]
            let ip = Param {
                name: l.names.fresh("i"),
                ty: Type::Prim(PrimType::I64),
            };
            l.var_types.insert(ip.name, ip.ty.clone());
            let iv = SubExp::Var(ip.name);
            let (stms, res) = l.nested(|l| {
                let c = l.binop(BinOp::Eq, iv.clone(), SubExp::i64(0), PrimType::I64);
                l.if_val(
                    c,
                    span,
                    |_| Ok(ne.clone()),
                    |l| {
                        let j = l.sub64(iv.clone(), SubExp::i64(1));
                        l.index_val(&scc, &[DimIndex::Fix(j)], span)
                    },
                )
            })?;
            let rl = l.leaves(&res, span)?;
            let lam = Lambda {
                id: runic_ir::LamId::fresh(),
                params: vec![ip],
                body: Body {
                    stms,
                    result: rl.iter().map(|(s, _)| s.clone()).collect(),
                },
                ret: rl.iter().map(|(_, t)| t.clone()).collect(),
            };
            let types: Vec<Type> = lam.ret.iter().map(|t| t.array_of(n.clone())).collect();
            let iv = l.arr_var(
                &is.first_leaf().map(|x| x.0).unwrap_or(SubExp::i64(0)),
                span,
            )?;
            let outs = l.emit(
                &["exscan"],
                Exp::Soac(Soac::Map {
                    w: n,
                    lam,
                    arrs: vec![iv],
                }),
                types.clone(),
            );
            let leaves: Vec<(SubExp, Type)> =
                outs.into_iter().map(SubExp::Var).zip(types).collect();
            Ok(args[1].rebuild(&mut leaves.into_iter()))
        }
        "iota" => {
            let (n, p) = l.prim_leaf(&args[0], span)?;
            let zero = SubExp::Const(Prim::zero(p));
            let ty = Type::Array {
                elem: p,
                shape: vec![n.clone()],
            };
            let n64 = l.convert(PrimType::I64, n.clone());
            let ty = match ty {
                Type::Array { elem, .. } => Type::Array {
                    elem,
                    shape: vec![n64],
                },
                t => t,
            };
            let s = l.basic(
                "iota",
                BasicOp::Range {
                    second: Some(SubExp::Const(Prim::one(p))),
                    start: zero,
                    end: n,
                    kind: RangeKind::UpToExclusive,
                    elem: p,
                },
                ty.clone(),
            );
            Ok(leaf(s, ty))
        }
        "indices" => {
            let n = outer(l, &args[0], span)?;
            Ok(l.iota(n))
        }
        "replicate" => {
            let (n, _) = l.prim_leaf(&args[0], span)?;
            let n = l.convert(PrimType::I64, n);
            let v = args[1].clone();
            let ls = l.leaves(&v, span)?;
            let mut out = Vec::new();
            for (s, t) in ls {
                let ty = t.array_of(n.clone());
                let r = l.basic("rep", BasicOp::Replicate(vec![n.clone()], s), ty.clone());
                out.push((r, ty));
            }
            Ok(v.rebuild(&mut out.into_iter()))
        }
        "rep" => {
            let n = size_arg(sizes, 0, "rep", span)?;
            let v = args[0].clone();
            let ls = l.leaves(&v, span)?;
            let mut out = Vec::new();
            for (s, t) in ls {
                let ty = t.array_of(n.clone());
                let r = l.basic("rep", BasicOp::Replicate(vec![n.clone()], s), ty.clone());
                out.push((r, ty));
            }
            Ok(v.rebuild(&mut out.into_iter()))
        }
        "tabulate" => {
            let (n, _) = l.prim_leaf(&args[0], span)?;
            let n = l.convert(PrimType::I64, n);
            let is = l.iota(n);
            l.soac_map(&args[1], &[is], span)
        }
        "copy" | "manifest" | "opaque" | "trace" | "break" => Ok(args.remove(0)),
        "length" => Ok(leaf(outer(l, &args[0], span)?, Type::Prim(PrimType::I64))),
        "null" => {
            let n = outer(l, &args[0], span)?;
            let r = l.binop(BinOp::Eq, n, SubExp::i64(0), PrimType::I64);
            Ok(leaf(r, Type::Prim(PrimType::Bool)))
        }
        "zip" | "zip2" | "zip3" | "zip4" | "zip5" => {
            let n = outer(l, &args[0], span)?;
            for a in &args[1..] {
                l.check_outer(a, &n, span)?;
            }
            Ok(Val::Rec(
                args.into_iter()
                    .enumerate()
                    .map(|(i, v)| (i.to_string(), v))
                    .collect(),
            ))
        }
        "unzip" | "unzip2" | "unzip3" | "unzip4" | "unzip5" => Ok(args.remove(0)),
        "++" | "concat" => {
            let (a, b) = (args[0].clone(), args[1].clone());
            let al = l.leaves(&a, span)?;
            let bl = l.leaves(&b, span)?;
            let mut out = Vec::new();
            for ((x, xt), (y, yt)) in al.into_iter().zip(bl) {
                let (xv, yv) = (l.arr_var(&x, span)?, l.arr_var(&y, span)?);
                let n = match (&xt, &yt) {
                    (Type::Array { shape: s1, .. }, Type::Array { shape: s2, .. }) => {
                        l.binop(BinOp::Add, s1[0].clone(), s2[0].clone(), PrimType::I64)
                    }
                    _ => return unsupported("concatenation of non-arrays", Some(span)),
                };
                let ty = match &xt {
                    Type::Array { elem, shape } => {
                        let mut s = shape.clone();
                        s[0] = n;
                        Type::Array {
                            elem: *elem,
                            shape: s,
                        }
                    }
                    t => t.clone(),
                };
                let r = l.basic("cat", BasicOp::Concat(0, vec![xv, yv]), ty.clone());
                out.push((r, ty));
            }
            Ok(a.rebuild(&mut out.into_iter()))
        }
        "flatten" => {
            let v = args.remove(0);
            l.each_leaf(&v, span, |l, a, t| {
                let (elem, shape) = match t {
                    Type::Array { elem, shape } => (*elem, shape.clone()),
                    _ => return unsupported("flatten", Some(span)),
                };
                let n = l.binop(
                    BinOp::Mul,
                    shape[0].clone(),
                    shape[1].clone(),
                    PrimType::I64,
                );
                let mut s = vec![n];
                s.extend(shape[2..].iter().cloned());
                let ty = Type::Array {
                    elem,
                    shape: s.clone(),
                };
                let r = l.basic("flat", BasicOp::Reshape { arr: a, shape: s }, ty.clone());
                Ok((r, ty))
            })
        }
        "unflatten" => {
            let n = size_arg(sizes, 0, "unflatten", span)?;
            let m = size_arg(sizes, 1, "unflatten", span)?;
            let v = args.remove(0);
            l.each_leaf(&v, span, |l, a, t| {
                let (elem, shape) = match t {
                    Type::Array { elem, shape } => (*elem, shape.clone()),
                    _ => return unsupported("unflatten", Some(span)),
                };
                let mut s = vec![n.clone(), m.clone()];
                s.extend(shape[1..].iter().cloned());
                let ty = Type::Array {
                    elem,
                    shape: s.clone(),
                };
                let r = l.basic("unflat", BasicOp::Reshape { arr: a, shape: s }, ty.clone());
                Ok((r, ty))
            })
        }
        "transpose" => {
            let v = args.remove(0);
            l.each_leaf(&v, span, |l, a, t| {
                let (elem, shape) = match t {
                    Type::Array { elem, shape } if shape.len() >= 2 => (*elem, shape.clone()),
                    _ => return unsupported("transpose", Some(span)),
                };
                let mut perm: Vec<usize> = (0..shape.len()).collect();
                perm.swap(0, 1);
                let s: Vec<SubExp> = perm.iter().map(|&i| shape[i].clone()).collect();
                let ty = Type::Array { elem, shape: s };
                let r = l.basic("tr", BasicOp::Rearrange(perm, a), ty.clone());
                Ok((r, ty))
            })
        }
        "reverse" => {
            let v = args.remove(0);
            l.slice_outer(&v, None, None, Some(SubExp::i64(-1)), span)
        }
        "head" => l.index_val(&args[0], &[DimIndex::Fix(SubExp::i64(0))], span),
        "last" => {
            let n = outer(l, &args[0], span)?;
            let i = l.sub64(n, SubExp::i64(1));
            l.index_val(&args[0], &[DimIndex::Fix(i)], span)
        }
        "tail" => l.slice_outer(&args[0], Some(SubExp::i64(1)), None, None, span),
        "init" => {
            let n = outer(l, &args[0], span)?;
            let i = l.sub64(n, SubExp::i64(1));
            l.slice_outer(&args[0], Some(SubExp::i64(0)), Some(i), None, span)
        }
        "take" => {
            let (k, p) = l.prim_leaf(&args[0], span)?;
            let k = if p == PrimType::I64 {
                k
            } else {
                l.convert(PrimType::I64, k)
            };
            l.slice_outer(&args[1], Some(SubExp::i64(0)), Some(k), None, span)
        }
        "drop" => {
            let (k, p) = l.prim_leaf(&args[0], span)?;
            let k = if p == PrimType::I64 {
                k
            } else {
                l.convert(PrimType::I64, k)
            };
            l.slice_outer(&args[1], Some(k), None, None, span)
        }
        "split" => {
            let k = size_arg(sizes, 0, "split", span)?;
            let a = l.slice_outer(&args[0], Some(SubExp::i64(0)), Some(k.clone()), None, span)?;
            let b = l.slice_outer(&args[0], Some(k), None, None, span)?;
            Ok(Val::Rec(vec![("0".into(), a), ("1".into(), b)]))
        }
        "and" => l.reduce_prim(BinOp::LogAnd, Prim::Bool(true), &args[0], span),
        "or" => l.reduce_prim(BinOp::LogOr, Prim::Bool(false), &args[0], span),
        "all" | "any" => {
            let f = args.remove(0);
            let bs = l.soac_map(&f, &args, span)?;
            if name == "all" {
                l.reduce_prim(BinOp::LogAnd, Prim::Bool(true), &bs, span)
            } else {
                l.reduce_prim(BinOp::LogOr, Prim::Bool(false), &bs, span)
            }
        }
        "filter" => filter(l, &args[0], &args[1], span),
        "scatter" | "scatter_2d" | "scatter_3d" => {
            let dims = match name {
                "scatter" => 1,
                "scatter_2d" => 2,
                _ => 3,
            };
            scatter(l, &args[0], &args[1], &args[2], dims, span)
        }
        "reduce_by_index" | "reduce_by_index_2d" | "reduce_by_index_3d" => {
            let dims = match name {
                "reduce_by_index" => 1,
                "reduce_by_index_2d" => 2,
                _ => 3,
            };
            hist(
                l, &args[0], &args[1], &args[2], &args[3], &args[4], dims, span,
            )
        }
        "hist" => {
            // hist op ne k is vs = reduce_by_index (replicate k ne) op ne is vs
            let (k, _) = l.prim_leaf(&args[2], span)?;
            let k = l.convert(PrimType::I64, k);
            let ne = args[1].clone();
            let ls = l.leaves(&ne, span)?;
            let mut out = Vec::new();
            for (s, t) in ls {
                let ty = t.array_of(k.clone());
                let r = l.basic("bins", BasicOp::Replicate(vec![k.clone()], s), ty.clone());
                out.push((r, ty));
            }
            let dest = ne.rebuild(&mut out.into_iter());
            hist(l, &dest, &args[0], &args[1], &args[3], &args[4], 1, span)
        }
        "jvp2" | "vjp2" => {
            let (lam, res) = l.lambda_of(&args[0], &[args[1].clone()], span)?;
            let xs: Vec<SubExp> = l
                .leaves(&args[1], span)?
                .into_iter()
                .map(|(s, _)| s)
                .collect();
            let ts: Vec<SubExp> = l
                .leaves(&args[2], span)?
                .into_iter()
                .map(|(s, _)| s)
                .collect();
            let mut types = lam.ret.clone();
            let exp = if name == "jvp2" {
                types.extend(lam.ret.iter().cloned());
                Exp::Jvp {
                    lam,
                    args: xs,
                    tangents: ts,
                    vector: false,
                }
            } else {
                types.extend(l.leaves(&args[1], span)?.into_iter().map(|(_, t)| t));
                Exp::Vjp {
                    lam,
                    args: xs,
                    cotangents: ts,
                    vector: false,
                }
            };
            let outs = l.emit(&["ad"], exp, types.clone());
            let mut it = outs.into_iter().map(SubExp::Var).zip(types);
            let primal = res.rebuild(&mut it);
            let second = if name == "jvp2" {
                res.rebuild(&mut it)
            } else {
                args[1].rebuild(&mut it)
            };
            Ok(Val::Rec(vec![("0".into(), primal), ("1".into(), second)]))
        }
        "jmp2" | "mjp2" => {
            // Many tangents (cotangents) at once: each has an extra outer dimension of n.
            let (lam, res) = l.lambda_of(&args[0], &[args[1].clone()], span)?;
            let n = outer(l, &args[2], span)?;
            let leaves_of = |l: &Lower<'a>, v: &Val<'a>| -> R<Vec<SubExp>> {
                Ok(l.leaves(v, span)?.into_iter().map(|(s, _)| s).collect())
            };
            let xs = leaves_of(l, &args[1])?;
            let ts = leaves_of(l, &args[2])?;
            let mut types = lam.ret.clone();
            let (exp, seeds_of) = if name == "jmp2" {
                types.extend(lam.ret.iter().map(|t| t.array_of(n.clone())));
                let e = Exp::Jvp {
                    lam,
                    args: xs,
                    tangents: ts,
                    vector: true,
                };
                (e, res.clone())
            } else {
                let at: Vec<Type> = l
                    .leaves(&args[1], span)?
                    .into_iter()
                    .map(|(_, t)| t)
                    .collect();
                types.extend(at.iter().map(|t| t.array_of(n.clone())));
                let e = Exp::Vjp {
                    lam,
                    args: xs,
                    cotangents: ts,
                    vector: true,
                };
                (e, args[1].clone())
            };
            let outs = l.emit(&["ad"], exp, types.clone());
            let mut it = outs.into_iter().map(SubExp::Var).zip(types);
            let primal = res.rebuild(&mut it);
            let second = seeds_of.rebuild(&mut it);
            Ok(Val::Rec(vec![("0".into(), primal), ("1".into(), second)]))
        }
        "with_vjp" => {
            let (f, res) = l.lambda_of(&args[0], &[args[2].clone()], span)?;
            let fadj = args[1].clone();
            let (adj, _) = l.lambda_with(&[res.clone(), res.clone()], span, |l, v| {
                l.apply_many(fadj, v, span)
            })?;
            let xs: Vec<SubExp> = l
                .leaves(&args[2], span)?
                .into_iter()
                .map(|(s, _)| s)
                .collect();
            let types = f.ret.clone();
            let outs = l.emit(&["wv"], Exp::WithVjp { f, adj, args: xs }, types.clone());
            Ok(res.rebuild(&mut outs.into_iter().map(SubExp::Var).zip(types)))
        }
        "flatmap" | "flatmap'" => {
            crate::flatmap::flatmap(l, &args[0], &args[1], name == "flatmap", span)
        }
        "tabulate_2d" | "tabulate_3d" => {
            let rank = if name == "tabulate_2d" { 2 } else { 3 };
            let mut ranges = Vec::new();
            for a in &args[..rank] {
                let (n, _) = l.prim_leaf(a, span)?;
                let n = l.convert(PrimType::I64, n);
                ranges.push(l.iota(n));
            }
            let f = args[rank].clone();
            tabulate_nest(l, &f, &ranges, Vec::new(), span)
        }
        "partition" => {
            let flags = l.soac_map(&args[0], &args[1..2], span)?;
            let no = not_flags(l, &flags, span)?;
            let yes_part = filter_by(l, &flags, &args[1], span)?;
            let no_part = filter_by(l, &no, &args[1], span)?;
            Ok(Val::Rec(vec![
                ("0".into(), yes_part),
                ("1".into(), no_part),
            ]))
        }
        "partition2" => {
            let k1 = l.soac_map(&args[0], &args[2..3], span)?;
            let k2 = l.soac_map(&args[1], &args[2..3], span)?;
            let n1 = not_flags(l, &k1, span)?;
            let n2 = not_flags(l, &k2, span)?;
            let second = and_flags(l, &n1, &k2, span)?;
            let third = and_flags(l, &n1, &n2, span)?;
            let a = filter_by(l, &k1, &args[2], span)?;
            let b = filter_by(l, &second, &args[2], span)?;
            let c = filter_by(l, &third, &args[2], span)?;
            Ok(Val::Rec(vec![
                ("0".into(), a),
                ("1".into(), b),
                ("2".into(), c),
            ]))
        }
        "spread" => {
            // spread k x is vs = scatter (replicate k x) is vs
            let dest = named(
                l,
                "replicate",
                vec![args[0].clone(), args[1].clone()],
                sizes,
                span,
            )?;
            scatter(l, &dest, &args[2], &args[3], 1, span)
        }
        "rotate" => {
            let (r, _) = l.prim_leaf(&args[0], span)?;
            let r = l.convert(PrimType::I64, r);
            let xs = args[1].clone();
            let n = outer(l, &xs, span)?;
            let is = l.iota(n.clone());
            // Row i of the result is row (i + r) mod n (no rows, no division).
            l.soac_map_with(&[is], span, |l, iv| {
                let (i, _) = l.prim_leaf(&iv[0], span)?;
                let j = l.binop(BinOp::Add, i, r, PrimType::I64);
                let src = l.binop(BinOp::Mod, j, n, PrimType::I64);
                l.index_val(&xs, &[DimIndex::Fix(src)], span)
            })
        }
        "flatten_3d" | "flatten_4d" => {
            let k = if name == "flatten_3d" { 3 } else { 4 };
            let v = args.remove(0);
            l.each_leaf(&v, span, |l, a, t| {
                let (elem, shape) = match t {
                    Type::Array { elem, shape } if shape.len() >= k => (*elem, shape.clone()),
                    _ => return unsupported(name, Some(span)),
                };
                let mut n = shape[0].clone();
                for d in &shape[1..k] {
                    n = l.binop(BinOp::Mul, n, d.clone(), PrimType::I64);
                }
                let mut s = vec![n];
                s.extend(shape[k..].iter().cloned());
                let ty = Type::Array {
                    elem,
                    shape: s.clone(),
                };
                let r = l.basic("flat", BasicOp::Reshape { arr: a, shape: s }, ty.clone());
                Ok((r, ty))
            })
        }
        "unflatten_3d" | "unflatten_4d" => {
            let k = if name == "unflatten_3d" { 3 } else { 4 };
            let mut dims = Vec::new();
            for i in 0..k {
                dims.push(size_arg(sizes, i, name, span)?);
            }
            let v = args.remove(0);
            l.each_leaf(&v, span, |l, a, t| {
                let (elem, shape) = match t {
                    Type::Array { elem, shape } => (*elem, shape.clone()),
                    _ => return unsupported(name, Some(span)),
                };
                let mut s = dims.clone();
                s.extend(shape[1..].iter().cloned());
                let ty = Type::Array {
                    elem,
                    shape: s.clone(),
                };
                let r = l.basic("unflat", BasicOp::Reshape { arr: a, shape: s }, ty.clone());
                Ok((r, ty))
            })
        }
        "sized" => {
            let (n, _) = l.prim_leaf(&args[0], span)?;
            let n = l.convert(PrimType::I64, n);
            let xs = args[1].clone();
            l.check_outer(&xs, &n, span)?;
            let ls = l.leaves(&xs, span)?;
            let out: Vec<(SubExp, Type)> = ls
                .into_iter()
                .map(|(s, t)| match t {
                    Type::Array { elem, mut shape } => {
                        shape[0] = n.clone();
                        (s, Type::Array { elem, shape })
                    }
                    t => (s, t),
                })
                .collect();
            Ok(xs.rebuild(&mut out.into_iter()))
        }
        _ => unsupported(&format!("the intrinsic {name}"), Some(span)),
    }
}

/// `f i j ...` for every index combination of `ranges` (nested maps, outermost first).
fn tabulate_nest<'a>(
    l: &mut Lower<'a>,
    f: &Val<'a>,
    ranges: &[Val<'a>],
    idx: Vec<Val<'a>>,
    span: Span,
) -> R<Val<'a>> {
    match ranges.split_first() {
        None => l.apply_many(f.clone(), idx, span),
        Some((r, rest)) => l.soac_map_with(std::slice::from_ref(r), span, |l, mut iv| {
            let mut idx = idx;
            idx.push(iv.remove(0));
            tabulate_nest(l, f, rest, idx, span)
        }),
    }
}

fn not_flags<'a>(l: &mut Lower<'a>, flags: &Val<'a>, span: Span) -> R<Val<'a>> {
    l.soac_map_with(std::slice::from_ref(flags), span, |l, fv| {
        let (f, _) = l.prim_leaf(&fv[0], span)?;
        let r = l.unop(UnOp::Not, f, PrimType::Bool);
        Ok(leaf(r, Type::Prim(PrimType::Bool)))
    })
}

fn and_flags<'a>(l: &mut Lower<'a>, a: &Val<'a>, b: &Val<'a>, span: Span) -> R<Val<'a>> {
    l.soac_map_with(&[a.clone(), b.clone()], span, |l, fv| {
        let (x, _) = l.prim_leaf(&fv[0], span)?;
        let (y, _) = l.prim_leaf(&fv[1], span)?;
        let r = l.binop(BinOp::LogAnd, x, y, PrimType::Bool);
        Ok(leaf(r, Type::Prim(PrimType::Bool)))
    })
}

/// `filter p xs`: flags, an exclusive prefix sum of them for target positions, and a
/// scatter into an array of the counted size.
fn filter<'a>(l: &mut Lower<'a>, p: &Val<'a>, xs: &Val<'a>, span: Span) -> R<Val<'a>> {
    let flags = l.soac_map(p, std::slice::from_ref(xs), span)?;
    filter_by(l, &flags, xs, span)
}

/// The rows of `xs` whose flag (an array of bools) is set, in order.
fn filter_by<'a>(l: &mut Lower<'a>, flags: &Val<'a>, xs: &Val<'a>, span: Span) -> R<Val<'a>> {
    let n = outer(l, xs, span)?;
    let fv = l.arr_var(
        &flags.first_leaf().map(|x| x.0).unwrap_or(SubExp::i64(0)),
        span,
    )?;
    // ones = map i64.bool flags; offs = scan (+) 0 ones
    let bp = Param {
        name: l.names.fresh("f"),
        ty: Type::Prim(PrimType::Bool),
    };
    l.var_types.insert(bp.name, bp.ty.clone());
    let (stms, one) = l.nested(|l| Ok(l.convert(PrimType::I64, SubExp::Var(bp.name))))?;
    let ones_lam = Lambda {
        id: runic_ir::LamId::fresh(),
        params: vec![bp],
        body: Body {
            stms,
            result: vec![one],
        },
        ret: vec![Type::Prim(PrimType::I64)],
    };
    let arr_i64 = Type::Array {
        elem: PrimType::I64,
        shape: vec![n.clone()],
    };
    let add = runic_ir::builder::binop_lambda(&mut l.names, BinOp::Add, PrimType::I64);
    let offs = l.emit1(
        "offs",
        Exp::Soac(Soac::Scan {
            w: n.clone(),
            arrs: vec![fv],
            pre: Some(ones_lam),
            lam: add,
            neutral: vec![SubExp::i64(0)],
        }),
        arr_i64.clone(),
    );
    let offv = l.arr_var(&offs, span)?;
    // count = if n == 0 then 0 else offs[n-1]
    let c0 = l.binop(BinOp::Eq, n.clone(), SubExp::i64(0), PrimType::I64);
    let nn = n.clone();
    let cnt = l.if_val(
        c0,
        span,
        |_| Ok(leaf(SubExp::i64(0), Type::Prim(PrimType::I64))),
        |l| {
            let j = l.sub64(nn, SubExp::i64(1));
            let r = l.basic(
                "cnt",
                BasicOp::Index(offv, vec![DimIndex::Fix(j)]),
                Type::Prim(PrimType::I64),
            );
            Ok(leaf(r, Type::Prim(PrimType::I64)))
        },
    )?;
    let (cnt, _) = l.prim_leaf(&cnt, span)?;
    // dest index: if flag then off-1 else -1
    let fp = Param {
        name: l.names.fresh("f"),
        ty: Type::Prim(PrimType::Bool),
    };
    let op = Param {
        name: l.names.fresh("o"),
        ty: Type::Prim(PrimType::I64),
    };
    l.var_types.insert(fp.name, fp.ty.clone());
    l.var_types.insert(op.name, op.ty.clone());
    let (fname, oname) = (fp.name, op.name);
    let (stms, r) = l.nested(|l| {
        let v = l.if_val(
            SubExp::Var(fname),
            span,
            |l| {
                let d = l.sub64(SubExp::Var(oname), SubExp::i64(1));
                Ok(leaf(d, Type::Prim(PrimType::I64)))
            },
            |_| Ok(leaf(SubExp::i64(-1), Type::Prim(PrimType::I64))),
        )?;
        Ok(l.prim_leaf(&v, span)?.0)
    })?;
    let idx_lam = Lambda {
        id: runic_ir::LamId::fresh(),
        params: vec![fp, op],
        body: Body {
            stms,
            result: vec![r],
        },
        ret: vec![Type::Prim(PrimType::I64)],
    };
    let is = l.emit1(
        "dst",
        Exp::Soac(Soac::Map {
            w: n.clone(),
            lam: idx_lam,
            arrs: vec![fv, offv],
        }),
        arr_i64,
    );
    let isv = l.arr_var(&is, span)?;
    let ls = l.leaves(xs, span)?;
    let mut dests = Vec::new();
    let mut vals = Vec::new();
    let mut types = Vec::new();
    for (s, t) in ls {
        let (elem, shape) = match &t {
            Type::Array { elem, shape } => (*elem, shape.clone()),
            _ => return unsupported("filter", Some(span)),
        };
        let mut sh = shape.clone();
        sh[0] = cnt.clone();
        let ty = Type::Array {
            elem,
            shape: sh.clone(),
        };
        let d = l.basic("scratch", BasicOp::Scratch(elem, sh), ty.clone());
        dests.push(l.arr_var(&d, span)?);
        vals.push(l.arr_var(&s, span)?);
        types.push(ty);
    }
    let outs = l.emit(
        &["filtered"],
        Exp::Soac(Soac::Scatter {
            w: n,
            dests,
            is: vec![isv],
            vals,
        }),
        types.clone(),
    );
    let leaves: Vec<(SubExp, Type)> = outs.into_iter().map(SubExp::Var).zip(types).collect();
    Ok(xs.rebuild(&mut leaves.into_iter()))
}

fn index_arrays<'a>(l: &mut Lower<'a>, is: &Val<'a>, dims: usize, span: Span) -> R<Vec<VName>> {
    if dims == 1 {
        return arrays(l, is, span);
    }
    let mut out = Vec::new();
    for k in 0..dims {
        match is.field(&k.to_string()) {
            Some(v) => out.extend(arrays(l, v, span)?),
            None => return unsupported("multi-dimensional indices", Some(span)),
        }
    }
    Ok(out)
}

fn scatter<'a>(
    l: &mut Lower<'a>,
    dest: &Val<'a>,
    is: &Val<'a>,
    vs: &Val<'a>,
    dims: usize,
    span: Span,
) -> R<Val<'a>> {
    let w = outer(l, vs, span)?;
    let isv = index_arrays(l, is, dims, span)?;
    let dl = l.leaves(dest, span)?;
    let dests = consumable_copies(l, &dl, span)?;
    let types: Vec<Type> = dl.iter().map(|(_, t)| t.clone()).collect();
    let vals = arrays(l, vs, span)?;
    let outs = l.emit(
        &["scattered"],
        Exp::Soac(Soac::Scatter {
            w,
            dests,
            is: isv,
            vals,
        }),
        types.clone(),
    );
    let leaves: Vec<(SubExp, Type)> = outs.into_iter().map(SubExp::Var).zip(types).collect();
    Ok(dest.rebuild(&mut leaves.into_iter()))
}

#[allow(clippy::too_many_arguments)]
fn hist<'a>(
    l: &mut Lower<'a>,
    dest: &Val<'a>,
    op: &Val<'a>,
    ne: &Val<'a>,
    is: &Val<'a>,
    vs: &Val<'a>,
    dims: usize,
    span: Span,
) -> R<Val<'a>> {
    let w = outer(l, vs, span)?;
    let isv = index_arrays(l, is, dims, span)?;
    let (lam, _) = l.lambda_of(op, &[ne.clone(), ne.clone()], span)?;
    let neutral: Vec<SubExp> = l.leaves(ne, span)?.into_iter().map(|(s, _)| s).collect();
    let dl = l.leaves(dest, span)?;
    let dests = consumable_copies(l, &dl, span)?;
    let types: Vec<Type> = dl.iter().map(|(_, t)| t.clone()).collect();
    let vals = arrays(l, vs, span)?;
    let outs = l.emit(
        &["hist"],
        Exp::Soac(Soac::Hist {
            w,
            dests,
            lam,
            neutral,
            is: isv,
            vals,
        }),
        types.clone(),
    );
    let leaves: Vec<(SubExp, Type)> = outs.into_iter().map(SubExp::Var).zip(types).collect();
    Ok(dest.rebuild(&mut leaves.into_iter()))
}

/// Copies of arrays that an operation consumes (the originals may still be used; runic-opt
/// drops a copy whose original is dead afterwards).
fn consumable_copies<'a>(l: &mut Lower<'a>, dl: &[(SubExp, Type)], span: Span) -> R<Vec<VName>> {
    let mut out = Vec::new();
    for (s, t) in dl {
        let a = l.arr_var(s, span)?;
        let c = l.basic("cp", BasicOp::Copy(a), t.clone());
        out.push(l.arr_var(&c, span)?);
    }
    Ok(out)
}
