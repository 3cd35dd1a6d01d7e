//! Ranges, indexing, slicing and in-place updates.

use super::*;
use crate::val::{Env, Val};
use runic_ir::*;
use runic_syntax::ast::{self};
use runic_syntax::Span;

impl<'a> Lower<'a> {
    /// The length of a range, computed as the executor will (invalid ranges fail there).
    pub fn range(
        &mut self,
        s: SubExp,
        sec: Option<SubExp>,
        en: SubExp,
        kind: RangeKind,
        p: PrimType,
    ) -> R<Val<'a>> {
        let mut b = self.b();
        let s64 = b.convert_to(PrimType::I64, s.clone())?;
        let e64 = b.convert_to(PrimType::I64, en.clone())?;
        let step = match &sec {
            Some(x) => {
                let x64 = b.convert_to(PrimType::I64, x.clone())?;
                b.sub_i64(x64, s64.clone())
            }
            None => SubExp::i64(if kind == RangeKind::DownToExclusive {
                -1
            } else {
                1
            }),
        };
        let is0 = b.op2(BinOp::Eq, step.clone(), SubExp::i64(0))?;
        let is0 = b.convert_to(PrimType::I64, is0)?;
        let step = b.add_i64(step, is0);
        let diff = b.sub_i64(e64, s64);
        let num = match kind {
            RangeKind::Inclusive => b.add_i64(diff, step.clone()),
            _ => {
                // Exclusive: ceil(diff / step) for the step's sign.
                let sg = b.op2(BinOp::Lt, step.clone(), SubExp::i64(0))?;
                let sg = b.convert_to(PrimType::I64, sg)?;
                let two = b.mul_i64(sg, SubExp::i64(2));
                let sign = b.sub_i64(SubExp::i64(1), two);
                let adj = b.sub_i64(step.clone(), sign);
                b.add_i64(diff, adj)
            }
        };
        let q = b.op2(BinOp::Quot, num, step)?;
        let n = max0(&mut b, q)?;
        // The length is computed here, not inferred from the operands.
        let ty = Type::Array {
            elem: p,
            shape: vec![n],
        };
        let range = BasicOp::Range {
            start: s,
            second: sec,
            end: en,
            kind,
            elem: p,
        };
        let r = b.basic("range", range, ty.clone());
        Ok(Val::Leaf(r, ty))
    }

    pub(super) fn dim_indices(
        &mut self,
        dims: &'a [ast::DimIndex],
        env: &Env<'a>,
    ) -> R<Vec<DimIndex>> {
        let mut out = Vec::new();
        for d in dims {
            out.push(match d {
                ast::DimIndex::Index(x) => {
                    let v = self.exp(x, env)?;
                    DimIndex::Fix(self.prim_leaf(&v, x.span)?.0)
                }
                ast::DimIndex::Slice { start, end, stride } => {
                    let part = |l: &mut Self, x: &'a Option<ast::Exp>| -> R<Option<SubExp>> {
                        match x {
                            Some(x) => {
                                let v = l.exp(x, env)?;
                                let (s, _) = l.prim_leaf(&v, x.span)?;
                                Ok(Some(l.b().convert_to(PrimType::I64, s)?))
                            }
                            None => Ok(None),
                        }
                    };
                    DimIndex::Slice {
                        start: part(self, start)?,
                        end: part(self, end)?,
                        stride: part(self, stride)?,
                    }
                }
            });
        }
        Ok(out)
    }

    /// The type after indexing, computing slice lengths.
    fn index_type(&mut self, t: &Type, idx: &[DimIndex]) -> R<Type> {
        let (elem, shape) = match t {
            Type::Array { elem, shape } => (*elem, shape.clone()),
            t => return Ok(t.clone()),
        };
        let mut out = Vec::new();
        for (k, d) in shape.iter().enumerate() {
            match idx.get(k) {
                None => out.push(d.clone()),
                Some(DimIndex::Fix(_)) => {}
                Some(DimIndex::Slice { start, end, stride }) => {
                    out.push(self.slice_len(d.clone(), start, end, stride)?);
                }
            }
        }
        Ok(if out.is_empty() {
            Type::Prim(elem)
        } else {
            Type::Array { elem, shape: out }
        })
    }

    pub fn slice_len(
        &mut self,
        n: SubExp,
        start: &Option<SubExp>,
        end: &Option<SubExp>,
        stride: &Option<SubExp>,
    ) -> R<SubExp> {
        let mut b = self.b();
        match (start, end, stride) {
            (None, None, None) => Ok(n),
            (s, e, None) => {
                let s = s.clone().unwrap_or(SubExp::i64(0));
                let e = e.clone().unwrap_or(n);
                let d = b.sub_i64(e, s);
                max0(&mut b, d)
            }
            (s, e, Some(st)) => {
                // Defaults depend on the stride's sign: 0..n forward, n-1..-1 backward.
                let neg = b.op2(BinOp::Lt, st.clone(), SubExp::i64(0))?;
                let negi = b.convert_to(PrimType::I64, neg)?;
                let s = match s {
                    Some(s) => s.clone(),
                    None => {
                        let last = b.sub_i64(n.clone(), SubExp::i64(1));
                        b.mul_i64(negi.clone(), last)
                    }
                };
                let e = match e {
                    Some(e) => e.clone(),
                    None => {
                        // forward: n; backward: -1
                        let np1 = b.add_i64(n.clone(), SubExp::i64(1));
                        let t = b.mul_i64(negi.clone(), np1);
                        b.sub_i64(n, t)
                    }
                };
                let two = b.mul_i64(negi, SubExp::i64(2));
                let sign = b.sub_i64(SubExp::i64(1), two);
                let is0 = b.op2(BinOp::Eq, st.clone(), SubExp::i64(0))?;
                let is0 = b.convert_to(PrimType::I64, is0)?;
                let st = b.add_i64(st.clone(), is0);
                let diff = b.sub_i64(e, s);
                let adj = b.sub_i64(st.clone(), sign);
                let num = b.add_i64(diff, adj);
                let q = b.op2(BinOp::Quot, num, st)?;
                max0(&mut b, q)
            }
        }
    }

    pub fn index_val(&mut self, av: &Val<'a>, idx: &[DimIndex], span: Span) -> R<Val<'a>> {
        // A bounded slice's length is computed at run time; other indices' types follow
        // from the array's.
        let bounded = idx.iter().any(|d| {
            matches!(d, DimIndex::Slice { start, end, stride }
                if start.is_some() || end.is_some() || stride.is_some())
        });
        let leaves = self.leaves(av, span)?;
        let mut out = Vec::new();
        for (s, t) in leaves {
            let v = self.arr_var(&s, span)?;
            let op = BasicOp::Index(v, idx.to_vec());
            let r = if bounded {
                let rt = self.index_type(&t, idx)?;
                self.b().basic("idx", op, rt)
            } else {
                self.b().let_basic("idx", op)?
            };
            out.push(self.typed(r)?);
        }
        Ok(av.rebuild(&mut out.into_iter()))
    }

    pub(super) fn update_steps(
        &mut self,
        target: Val<'a>,
        steps: &'a [ast::UpdateStep],
        nv: Val<'a>,
        env: &Env<'a>,
        span: Span,
    ) -> R<Val<'a>> {
        let (first, rest) = match steps.split_first() {
            Some(x) => x,
            None => return Ok(nv),
        };
        match first {
            ast::UpdateStep::Field(n, _) => {
                let fs = match &target {
                    Val::Rec(fs) => fs.clone(),
                    _ => return unsupported("field update of a non-record", Some(span)),
                };
                let mut out = Vec::new();
                for (fname, fv) in fs {
                    if &fname == n {
                        let u = self.update_steps(fv, rest, nv.clone(), env, span)?;
                        out.push((fname, u));
                    } else {
                        out.push((fname, fv));
                    }
                }
                Ok(Val::Rec(out))
            }
            ast::UpdateStep::Index(dims, step_span) => {
                let idx = self.dim_indices(dims, env)?;
                let nv = if rest.is_empty() {
                    nv
                } else {
                    let cur = self.index_val(&target, &idx, span)?;
                    self.update_steps(cur, rest, nv, env, span)?
                };
                // Bounds and shape errors point at the index, as in the interpreter.
                self.loc = Some(loc_of(*step_span));
                // Witnesses of empty records that the indexed element lacks stay as they are.
                let depth = idx.iter().filter(|d| matches!(d, DimIndex::Fix(_))).count();
                let tl = target.row_leaves(depth).unwrap_or_default();
                let vl = self.leaves(&nv, span)?;
                let mut out = Vec::new();
                for ((s, _), (v, _)) in tl.into_iter().zip(vl) {
                    // `Update` consumes its array while the source keeps the old value
                    // alive: update a copy (runic-opt drops it when the old value is dead).
                    let a = self.arr_var(&s, span)?;
                    let c = self.b().let_basic("cp", BasicOp::Copy(a))?;
                    let c = self.arr_var(&c, span)?;
                    let r = self
                        .b()
                        .let_basic("upd", BasicOp::Update(c, idx.clone(), v))?;
                    out.push(self.typed(r)?);
                }
                Ok(target.rebuild_rows(depth, out.into_iter()))
            }
        }
    }
}

/// `max(x, 0)` on `i64`.
fn max0(b: &mut Builder, x: SubExp) -> R<SubExp> {
    Ok(b.op2(BinOp::Max, x, SubExp::i64(0))?)
}
