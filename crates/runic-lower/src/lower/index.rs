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
    ) -> Val<'a> {
        let s64 = self.convert(PrimType::I64, s.clone());
        let e64 = self.convert(PrimType::I64, en.clone());
        let step = match &sec {
            Some(x) => {
                let x64 = self.convert(PrimType::I64, x.clone());
                self.sub64(x64, s64.clone())
            }
            None => SubExp::i64(if kind == RangeKind::DownToExclusive {
                -1
            } else {
                1
            }),
        };
        let is0 = self.binop(BinOp::Eq, step.clone(), SubExp::i64(0), PrimType::I64);
        let is0 = self.convert(PrimType::I64, is0);
        let step = self.binop(BinOp::Add, step, is0, PrimType::I64);
        let diff = self.sub64(e64, s64);
        let num = match kind {
            RangeKind::Inclusive => self.binop(BinOp::Add, diff, step.clone(), PrimType::I64),
            _ => {
                // Exclusive: ceil(diff / step) for the step's sign.
                let sg = self.binop(BinOp::Lt, step.clone(), SubExp::i64(0), PrimType::I64);
                let sg = self.convert(PrimType::I64, sg);
                let two = self.binop(BinOp::Mul, sg, SubExp::i64(2), PrimType::I64);
                let sign = self.sub64(SubExp::i64(1), two);
                let adj = self.sub64(step.clone(), sign);
                self.binop(BinOp::Add, diff, adj, PrimType::I64)
            }
        };
        let q = self.binop(BinOp::Quot, num, step, PrimType::I64);
        let n = self.max0(q);
        let ty = Type::Array {
            elem: p,
            shape: vec![n],
        };
        let r = self.basic(
            "range",
            BasicOp::Range {
                start: s,
                second: sec,
                end: en,
                kind,
                elem: p,
            },
            ty.clone(),
        );
        Val::Leaf(r, ty)
    }

    pub fn sub64(&mut self, a: SubExp, b: SubExp) -> SubExp {
        self.binop(BinOp::Sub, a, b, PrimType::I64)
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
                                let (s, p) = l.prim_leaf(&v, x.span)?;
                                Ok(Some(l.convert_from(p, PrimType::I64, s)))
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
    fn index_type(&mut self, t: &Type, idx: &[DimIndex]) -> Type {
        let (elem, shape) = match t {
            Type::Array { elem, shape } => (*elem, shape.clone()),
            t => return t.clone(),
        };
        let mut out = Vec::new();
        for (k, d) in shape.iter().enumerate() {
            match idx.get(k) {
                None => out.push(d.clone()),
                Some(DimIndex::Fix(_)) => {}
                Some(DimIndex::Slice { start, end, stride }) => {
                    out.push(self.slice_len(d.clone(), start, end, stride));
                }
            }
        }
        if out.is_empty() {
            Type::Prim(elem)
        } else {
            Type::Array { elem, shape: out }
        }
    }

    pub fn slice_len(
        &mut self,
        n: SubExp,
        start: &Option<SubExp>,
        end: &Option<SubExp>,
        stride: &Option<SubExp>,
    ) -> SubExp {
        match (start, end, stride) {
            (None, None, None) => n,
            (s, e, None) => {
                let s = s.clone().unwrap_or(SubExp::i64(0));
                let e = e.clone().unwrap_or(n);
                let d = self.sub64(e, s);
                self.max0(d)
            }
            (s, e, Some(st)) => {
                // Defaults depend on the stride's sign: 0..n forward, n-1..-1 backward.
                let neg = self.binop(BinOp::Lt, st.clone(), SubExp::i64(0), PrimType::I64);
                let negi = self.convert(PrimType::I64, neg);
                let s = match s {
                    Some(s) => s.clone(),
                    None => {
                        let last = self.sub64(n.clone(), SubExp::i64(1));
                        self.binop(BinOp::Mul, negi.clone(), last, PrimType::I64)
                    }
                };
                let e = match e {
                    Some(e) => e.clone(),
                    None => {
                        // forward: n; backward: -1
                        let np1 = self.binop(BinOp::Add, n.clone(), SubExp::i64(1), PrimType::I64);
                        let t = self.binop(BinOp::Mul, negi.clone(), np1, PrimType::I64);
                        self.sub64(n, t)
                    }
                };
                let two = self.binop(BinOp::Mul, negi, SubExp::i64(2), PrimType::I64);
                let sign = self.sub64(SubExp::i64(1), two);
                let is0 = self.binop(BinOp::Eq, st.clone(), SubExp::i64(0), PrimType::I64);
                let is0 = self.convert(PrimType::I64, is0);
                let st = self.binop(BinOp::Add, st.clone(), is0, PrimType::I64);
                let diff = self.sub64(e, s);
                let adj = self.sub64(st.clone(), sign);
                let num = self.binop(BinOp::Add, diff, adj, PrimType::I64);
                let q = self.binop(BinOp::Quot, num, st, PrimType::I64);
                self.max0(q)
            }
        }
    }

    pub fn index_val(&mut self, av: &Val<'a>, idx: &[DimIndex], span: Span) -> R<Val<'a>> {
        let leaves = self.leaves(av, span)?;
        let mut out = Vec::new();
        for (s, t) in leaves {
            let v = self.arr_var(&s, span)?;
            let rt = self.index_type(&t, idx);
            let r = self.basic("idx", BasicOp::Index(v, idx.to_vec()), rt.clone());
            out.push((r, rt));
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
                let tl = self.leaves(&target, span)?;
                let vl = self.leaves(&nv, span)?;
                let mut out = Vec::new();
                for ((s, t), (v, _)) in tl.into_iter().zip(vl) {
                    // `Update` consumes its array while the source keeps the old value
                    // alive: update a copy (runic-opt drops it when the old value is dead).
                    let a = self.arr_var(&s, span)?;
                    let c = self.basic("cp", BasicOp::Copy(a), t.clone());
                    let c = self.arr_var(&c, span)?;
                    let r = self.basic("upd", BasicOp::Update(c, idx.clone(), v), t.clone());
                    out.push((r, t));
                }
                Ok(target.rebuild(&mut out.into_iter()))
            }
        }
    }
}
