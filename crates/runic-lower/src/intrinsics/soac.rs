//! SOAC intrinsics (`map`, `reduce`, `scan`, `scatter`, `hist`, `tabulate`, …) and their lambdas.

use super::*;
use crate::lower::{unsupported, Lower, R};
use crate::val::Val;
use runic_syntax::Span;

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
                let p = self.b().param("x", t.clone());
                fresh.push((SubExp::Var(p.name), t));
                params.push(p);
            }
            vals.push(a.rebuild(&mut fresh.into_iter()));
        }
        let (stms, res) = self.nested(|l| body(l, vals))?;
        let rl = self.leaves(&res, span)?;
        let body = Body {
            stms,
            result: rl.iter().map(|(s, _)| s.clone()).collect(),
        };
        let mut lam = Lambda::new(params, body, rl.iter().map(|(_, t)| t.clone()).collect());
        let res = if crate::sizes::hoist_result_sizes(self, &mut lam)? {
            // The template's types name the copies.
            let fixed: Vec<(SubExp, Type)> = rl
                .into_iter()
                .zip(&lam.ret)
                .map(|((s, _), t)| (s, t.clone()))
                .collect();
            res.rebuild(&mut fixed.into_iter())
        } else {
            res
        };
        Ok((lam, res))
    }

    pub(super) fn soac_map(&mut self, f: &Val<'a>, arrs: &[Val<'a>], span: Span) -> R<Val<'a>> {
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
            ins.extend(row_arrays(self, a, span)?);
        }
        // Inputs must agree on the outer size.
        for a in &arrs[1..] {
            self.check_outer(a, &w, span)?;
        }
        let map = Exp::Soac(Soac::Map {
            w: w.clone(),
            lam,
            arrs: ins,
        });
        let v = self.let_val("mapped", map, &res)?;
        self.with_unit_dims(v, &[w])
    }

    /// Fail like the interpreter (`[n]` against the first array's length `w`) unless the
    /// array value `a` has outer size `w`.
    pub fn check_outer(&mut self, a: &Val<'a>, w: &SubExp, span: Span) -> R<()> {
        let (s, t) = match a.first_leaf() {
            Some(x) => x,
            None => return Ok(()),
        };
        let Type::Array { elem, shape } = t else {
            return Ok(());
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
        let check = BasicOp::ShapeCheck {
            arr,
            shape: want,
            type_text: text,
        };
        self.b().let_basic("ok", check)?;
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
        let ne_leaves = self.leaves(ne, span)?;
        let arrs = row_arrays(self, arr, span)?;
        if arrs.is_empty() {
            // Elements without data: the operator has nothing to combine.
            return if scan {
                self.with_unit_dims(ne.clone(), &[w])
            } else {
                Ok(ne.clone())
            };
        }
        self.check_rows_match_neutral(&w, &arrs, &ne_leaves)?;
        let neutral: Vec<SubExp> = ne_leaves.into_iter().map(|(s, _)| s).collect();
        let soac = if scan {
            Soac::Scan {
                w: w.clone(),
                arrs,
                pre: None,
                lam,
                neutral,
            }
        } else {
            Soac::Reduce {
                w: w.clone(),
                arrs,
                pre: None,
                lam,
                neutral,
                commutative,
            }
        };
        let v = self.let_val("red", Exp::Soac(soac), ne)?;
        self.with_unit_dims(v, if scan { std::slice::from_ref(&w) } else { &[] })
    }

    /// Fail like the interpreter ("Row shape of input array does not match shape of
    /// neutral element") when a non-empty input's rows do not have the shape of an array
    /// neutral element (checked where the sizes are not the same variables).
    fn check_rows_match_neutral(
        &mut self,
        w: &SubExp,
        arrs: &[VName],
        ne: &[(SubExp, Type)],
    ) -> R<()> {
        let mut conds = Vec::new();
        for (a, (_, t)) in arrs.iter().zip(ne) {
            let Type::Array { shape: want, .. } = t else {
                continue;
            };
            let Type::Array { shape, .. } = self.type_of(&SubExp::Var(*a))? else {
                continue;
            };
            for (have, want) in shape[1..].iter().zip(want) {
                if have != want {
                    conds.push(self.b().op2(BinOp::Eq, have.clone(), want.clone())?);
                }
            }
        }
        if conds.is_empty() {
            return Ok(());
        }
        let mut ok = self.b().op2(BinOp::Eq, w.clone(), SubExp::i64(0))?;
        let mut all = SubExp::Const(Prim::Bool(true));
        for c in conds {
            all = self.b().op2(BinOp::LogAnd, all, c)?;
        }
        ok = self.b().op2(BinOp::LogOr, ok, all)?;
        self.assert(
            ok,
            "Row shape of input array does not match shape of neutral element",
        )
    }

    pub(super) fn reduce_prim(
        &mut self,
        op: BinOp,
        ne: Prim,
        arr: &Val<'a>,
        span: Span,
    ) -> R<Val<'a>> {
        let t = ne.ty();
        let lam = self.b().binop_lam(op, t);
        let w = outer(self, arr, span)?;
        let arrs = arrays(self, arr, span)?;
        let reduce = Soac::Reduce {
            w,
            arrs,
            pre: None,
            lam,
            neutral: vec![SubExp::Const(ne)],
            commutative: true,
        };
        let r = self.b().let1("red", Exp::Soac(reduce))?;
        self.leaf_of(r)
    }
}

/// The SOAC intrinsics; `None` if `name` is not one of them.
pub(super) fn call<'a>(
    l: &mut Lower<'a>,
    name: &str,
    args: &mut Vec<Val<'a>>,
    sizes: &[(String, Option<SubExp>)],
    span: Span,
) -> R<Option<Val<'a>>> {
    let v = match name {
        "map" | "map1" | "map2" | "map3" | "map4" | "map5" => {
            let f = args.remove(0);
            l.soac_map(&f, args, span)
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
            // The lambda \i -> if i == 0 then ne else sc[i-1].
            let ip = l.b().param("i", Type::Prim(PrimType::I64));
            let iv = SubExp::Var(ip.name);
            let (stms, res) = l.nested(|l| {
                let c = l.b().op2(BinOp::Eq, iv.clone(), SubExp::i64(0))?;
                l.if_val(
                    c,
                    span,
                    |_| Ok(ne.clone()),
                    |l| {
                        let j = l.b().sub_i64(iv.clone(), SubExp::i64(1));
                        l.index_val(&sc, &[DimIndex::Fix(j)], span)
                    },
                )
            })?;
            let rl = l.leaves(&res, span)?;
            let body = Body {
                stms,
                result: rl.iter().map(|(s, _)| s.clone()).collect(),
            };
            let lam = Lambda::new(vec![ip], body, rl.into_iter().map(|(_, t)| t).collect());
            let arrs = arrays(l, &is, span)?;
            let map = Exp::Soac(Soac::Map {
                w: n.clone(),
                lam,
                arrs,
            });
            let v = l.let_val("exscan", map, &args[1])?;
            l.with_unit_dims(v, &[n])
        }
        "tabulate" => {
            let (n, _) = l.prim_leaf(&args[0], span)?;
            let n = l.b().convert_to(PrimType::I64, n)?;
            let is = l.iota(n);
            l.soac_map(&args[1], &[is], span)
        }
        "and" => l.reduce_prim(BinOp::LogAnd, Prim::Bool(true), &args[0], span),
        "or" => l.reduce_prim(BinOp::LogOr, Prim::Bool(false), &args[0], span),
        "all" | "any" => {
            let f = args.remove(0);
            let bs = l.soac_map(&f, args, span)?;
            if name == "all" {
                l.reduce_prim(BinOp::LogAnd, Prim::Bool(true), &bs, span)
            } else {
                l.reduce_prim(BinOp::LogOr, Prim::Bool(false), &bs, span)
            }
        }
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
            let k = l.b().convert_to(PrimType::I64, k)?;
            let ne = args[1].clone();
            let ls = l.leaves(&ne, span)?;
            let mut out = Vec::new();
            for (s, _) in ls {
                let r = l
                    .b()
                    .let_basic("bins", BasicOp::Replicate(vec![k.clone()], s))?;
                out.push(l.typed(r)?);
            }
            let dest = ne.rebuild(&mut out.into_iter());
            let dest = l.with_unit_dims(dest, &[k])?;
            hist(l, &dest, &args[0], &args[1], &args[3], &args[4], 1, span)
        }
        "tabulate_2d" | "tabulate_3d" => {
            let rank = if name == "tabulate_2d" { 2 } else { 3 };
            let mut ranges = Vec::new();
            for a in &args[..rank] {
                let (n, _) = l.prim_leaf(a, span)?;
                let n = l.b().convert_to(PrimType::I64, n)?;
                ranges.push(l.iota(n));
            }
            let f = args[rank].clone();
            tabulate_nest(l, &f, &ranges, Vec::new(), span)
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
        _ => return Ok(None),
    }?;
    Ok(Some(v))
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
    // The values must be as many as the indices (the interpreter's shape message).
    let w = outer(l, is, span)?;
    l.check_outer(vs, &w, span)?;
    let isv = index_arrays(l, is, dims, span)?;
    let dl = dest_rows(dest, dims, span)?;
    let vals = row_arrays(l, vs, span)?;
    if dl.is_empty() {
        return Ok(dest.clone());
    }
    let dests = consumable_copies(l, &dl, span)?;
    let scatter = Soac::Scatter {
        w,
        dests,
        is: isv,
        vals,
    };
    let types = typing::exp_types(&l.names, &Exp::Soac(scatter.clone()))?;
    let out = l
        .b()
        .bind_named(&["scattered"], Exp::Soac(scatter), types.clone());
    let mut out = out.into_iter().map(SubExp::Var).zip(types);
    Ok(dest.rebuild_rows(dims, &mut out))
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
    // The values must be as many as the indices (the interpreter's shape message).
    let w = outer(l, is, span)?;
    l.check_outer(vs, &w, span)?;
    let isv = index_arrays(l, is, dims, span)?;
    let (lam, _) = l.lambda_of(op, &[ne.clone(), ne.clone()], span)?;
    let neutral: Vec<SubExp> = l.leaves(ne, span)?.into_iter().map(|(s, _)| s).collect();
    let dl = dest_rows(dest, dims, span)?;
    let vals = row_arrays(l, vs, span)?;
    if dl.is_empty() {
        return Ok(dest.clone());
    }
    let dests = consumable_copies(l, &dl, span)?;
    let hist = Soac::Hist {
        w,
        dests,
        lam,
        neutral,
        is: isv,
        vals,
    };
    let types = typing::exp_types(&l.names, &Exp::Soac(hist.clone()))?;
    let out = l.b().bind_named(&["hist"], Exp::Soac(hist), types.clone());
    let mut out = out.into_iter().map(SubExp::Var).zip(types);
    Ok(dest.rebuild_rows(dims, &mut out))
}

/// The leaves of a scatter or histogram destination that its elements (`dims` in) have.
fn dest_rows(dest: &Val<'_>, dims: usize, span: Span) -> R<Vec<(SubExp, Type)>> {
    dest.row_leaves(dims).map_or_else(
        || unsupported("a function value inside an array", Some(span)),
        Ok,
    )
}

/// Copies of arrays that an operation consumes (the originals may still be used; runic-opt
/// drops a copy whose original is dead afterwards).
fn consumable_copies<'a>(l: &mut Lower<'a>, dl: &[(SubExp, Type)], span: Span) -> R<Vec<VName>> {
    let mut out = Vec::new();
    for (s, _) in dl {
        let a = l.arr_var(s, span)?;
        out.push(l.b().let_exp("cp", Exp::Basic(BasicOp::Copy(a)))?[0]);
    }
    Ok(out)
}
