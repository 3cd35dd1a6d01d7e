//! Array constructors and reshaping: `iota`, `replicate`, `concat`, `flatten`, slices, `zip`…

use super::*;
use crate::lower::{unsupported, Lower, R};
use crate::val::Val;
use runic_syntax::Span;

impl<'a> Lower<'a> {
    pub(crate) fn iota(&mut self, n: SubExp) -> Val<'a> {
        // `0..1..<n`: the form the interpreter names in its invalid-range error.
        let s = self.b().iota(n.clone());
        leaf(SubExp::Var(s), Type::Prim(PrimType::I64).array_of(n))
    }

    /// The value of `v` with each array leaf `a` (of type `t`) replaced by `f(a, t)`.
    fn each_leaf(
        &mut self,
        v: &Val<'a>,
        span: Span,
        mut f: impl FnMut(&mut Self, VName, &Type) -> R<SubExp>,
    ) -> R<Val<'a>> {
        let ls = self.leaves(v, span)?;
        let mut out = Vec::new();
        for (s, t) in ls {
            let a = self.arr_var(&s, span)?;
            let r = f(self, a, &t)?;
            out.push(self.typed(r)?);
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
}

/// The array intrinsics; `None` if `name` is not one of them.
pub(super) fn call<'a>(
    l: &mut Lower<'a>,
    name: &str,
    args: &mut Vec<Val<'a>>,
    sizes: &[(String, Option<SubExp>)],
    span: Span,
) -> R<Option<Val<'a>>> {
    let v = match name {
        "iota" => {
            let (n, p) = l.prim_leaf(&args[0], span)?;
            let zero = SubExp::Const(Prim::zero(p));
            let n64 = l.b().convert_to(PrimType::I64, n.clone())?;
            let ty = Type::Array {
                elem: p,
                shape: vec![n64],
            };
            let range = BasicOp::Range {
                second: Some(SubExp::Const(Prim::one(p))),
                start: zero,
                end: n,
                kind: RangeKind::UpToExclusive,
                elem: p,
            };
            let s = l.b().basic("iota", range, ty.clone());
            Ok(leaf(s, ty))
        }
        "indices" => {
            let n = outer(l, &args[0], span)?;
            Ok(l.iota(n))
        }
        "replicate" => {
            let (n, _) = l.prim_leaf(&args[0], span)?;
            let n = l.b().convert_to(PrimType::I64, n)?;
            replicate(l, n, &args[1], span)
        }
        "rep" => {
            let n = size_arg(sizes, 0, "rep", span)?;
            replicate(l, n, &args[0], span)
        }
        "copy" | "manifest" | "opaque" | "trace" | "break" => Ok(args.remove(0)),
        "length" => l.leaf_of(outer(l, &args[0], span)?),
        "null" => {
            let n = outer(l, &args[0], span)?;
            let r = l.b().op2(BinOp::Eq, n, SubExp::i64(0))?;
            l.leaf_of(r)
        }
        "zip" | "zip2" | "zip3" | "zip4" | "zip5" => {
            let n = outer(l, &args[0], span)?;
            for a in &args[1..] {
                l.check_outer(a, &n, span)?;
            }
            Ok(Val::Rec(
                std::mem::take(args)
                    .into_iter()
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
                // The length is computed here, not inferred from the operands.
                let ty = match (&xt, &yt) {
                    (Type::Array { elem, shape }, Type::Array { shape: s2, .. }) => {
                        let mut s = shape.clone();
                        s[0] = l.b().add_i64(shape[0].clone(), s2[0].clone());
                        Type::Array {
                            elem: *elem,
                            shape: s,
                        }
                    }
                    _ => return unsupported("concatenation of non-arrays", Some(span)),
                };
                let r = l
                    .b()
                    .basic("cat", BasicOp::Concat(0, vec![xv, yv]), ty.clone());
                out.push((r, ty));
            }
            Ok(a.rebuild(&mut out.into_iter()))
        }
        "flatten" => {
            let v = args.remove(0);
            l.each_leaf(&v, span, |l, a, t| {
                let Type::Array { shape, .. } = t else {
                    return unsupported("flatten", Some(span));
                };
                let n = l.b().mul_i64(shape[0].clone(), shape[1].clone());
                let mut s = vec![n];
                s.extend(shape[2..].iter().cloned());
                Ok(l.b()
                    .let_basic("flat", BasicOp::Reshape { arr: a, shape: s })?)
            })
        }
        "unflatten" => {
            let n = size_arg(sizes, 0, "unflatten", span)?;
            let m = size_arg(sizes, 1, "unflatten", span)?;
            let v = args.remove(0);
            l.each_leaf(&v, span, |l, a, t| {
                let Type::Array { shape, .. } = t else {
                    return unsupported("unflatten", Some(span));
                };
                let mut s = vec![n.clone(), m.clone()];
                s.extend(shape[1..].iter().cloned());
                Ok(l.b()
                    .let_basic("unflat", BasicOp::Reshape { arr: a, shape: s })?)
            })
        }
        "transpose" => {
            let v = args.remove(0);
            l.each_leaf(&v, span, |l, a, t| {
                if t.rank() < 2 {
                    return unsupported("transpose", Some(span));
                }
                let mut perm: Vec<usize> = (0..t.rank()).collect();
                perm.swap(0, 1);
                Ok(l.b().let_basic("tr", BasicOp::Rearrange(perm, a))?)
            })
        }
        "reverse" => {
            let v = args.remove(0);
            l.slice_outer(&v, None, None, Some(SubExp::i64(-1)), span)
        }
        "head" => l.index_val(&args[0], &[DimIndex::Fix(SubExp::i64(0))], span),
        "last" => {
            let n = outer(l, &args[0], span)?;
            let i = l.b().sub_i64(n, SubExp::i64(1));
            l.index_val(&args[0], &[DimIndex::Fix(i)], span)
        }
        "tail" => l.slice_outer(&args[0], Some(SubExp::i64(1)), None, None, span),
        "init" => {
            let n = outer(l, &args[0], span)?;
            let i = l.b().sub_i64(n, SubExp::i64(1));
            l.slice_outer(&args[0], Some(SubExp::i64(0)), Some(i), None, span)
        }
        "take" => {
            let (k, _) = l.prim_leaf(&args[0], span)?;
            let k = l.b().convert_to(PrimType::I64, k)?;
            l.slice_outer(&args[1], Some(SubExp::i64(0)), Some(k), None, span)
        }
        "drop" => {
            let (k, _) = l.prim_leaf(&args[0], span)?;
            let k = l.b().convert_to(PrimType::I64, k)?;
            l.slice_outer(&args[1], Some(k), None, None, span)
        }
        "split" => {
            let k = size_arg(sizes, 0, "split", span)?;
            let a = l.slice_outer(&args[0], Some(SubExp::i64(0)), Some(k.clone()), None, span)?;
            let b = l.slice_outer(&args[0], Some(k), None, None, span)?;
            Ok(Val::Rec(vec![("0".into(), a), ("1".into(), b)]))
        }
        "rotate" => {
            let (r, _) = l.prim_leaf(&args[0], span)?;
            let r = l.b().convert_to(PrimType::I64, r)?;
            let xs = args[1].clone();
            let n = outer(l, &xs, span)?;
            let is = l.iota(n.clone());
            // Row i of the result is row (i + r) mod n: with r reduced into [0, n) once
            // (modulo max(n, 1): no rows, no division by zero), i + r wraps at most once,
            // and the rows need a comparison instead of a 64-bit division each (which made
            // a rotated vector cost 11 ns an element).
            let n1 = l.b().op2(BinOp::Max, n.clone(), SubExp::i64(1))?;
            let r = l.b().op2(BinOp::Mod, r, n1)?;
            l.soac_map_with(&[is], span, |l, iv| {
                let (i, _) = l.prim_leaf(&iv[0], span)?;
                let j = l.b().add_(i, r)?;
                let past = l.b().op2(BinOp::Ge, j.clone(), n.clone())?;
                let wrapped = l.b().sub_(j.clone(), n.clone())?;
                let src = l.b().select(past, wrapped, j)?;
                l.index_val(&xs, &[DimIndex::Fix(src)], span)
            })
        }
        "flatten_3d" | "flatten_4d" => {
            let k = if name == "flatten_3d" { 3 } else { 4 };
            let v = args.remove(0);
            l.each_leaf(&v, span, |l, a, t| {
                let shape = match t {
                    Type::Array { shape, .. } if shape.len() >= k => shape,
                    _ => return unsupported(name, Some(span)),
                };
                let mut n = shape[0].clone();
                for d in &shape[1..k] {
                    n = l.b().mul_i64(n, d.clone());
                }
                let mut s = vec![n];
                s.extend(shape[k..].iter().cloned());
                Ok(l.b()
                    .let_basic("flat", BasicOp::Reshape { arr: a, shape: s })?)
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
                let Type::Array { shape, .. } = t else {
                    return unsupported(name, Some(span));
                };
                let mut s = dims.clone();
                s.extend(shape[1..].iter().cloned());
                Ok(l.b()
                    .let_basic("unflat", BasicOp::Reshape { arr: a, shape: s })?)
            })
        }
        "sized" => {
            let (n, _) = l.prim_leaf(&args[0], span)?;
            let n = l.b().convert_to(PrimType::I64, n)?;
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
        _ => return Ok(None),
    }?;
    Ok(Some(v))
}

/// `n` copies of `v` (each leaf replicated).
fn replicate<'a>(l: &mut Lower<'a>, n: SubExp, v: &Val<'a>, span: Span) -> R<Val<'a>> {
    let mut out = Vec::new();
    for (s, _) in l.leaves(v, span)? {
        let r = l
            .b()
            .let_basic("rep", BasicOp::Replicate(vec![n.clone()], s))?;
        out.push(l.typed(r)?);
    }
    let v = v.rebuild(&mut out.into_iter());
    l.with_unit_dims(v, &[n])
}
