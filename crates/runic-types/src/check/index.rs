//! Field access, indexing and update paths, and the sizes of slices and ranges.

use super::{err, Checker, R};
use crate::infer_ty::{Cons, Sz, SIGNED, T};
use runic_syntax::ast::*;
use runic_syntax::Span;
use std::collections::BTreeMap;

impl Checker {
    pub(super) fn field_of(&mut self, t: &T, f: &str, span: Span) -> R<T> {
        match self.s.shallow(t) {
            T::Record(fs) => match fs.get(f) {
                Some(ft) => Ok(ft.clone()),
                None => err(
                    span,
                    format!(
                        "Field \"{f}\" does not exist in type \"{}\".",
                        self.s.show(t)
                    ),
                ),
            },
            T::Var(v) => {
                let ft = self.s.fresh_var();
                let mut fs = BTreeMap::new();
                fs.insert(f.to_string(), ft.clone());
                let w = self.s.fresh(Cons::Fields(fs));
                if let T::Var(wv) = w {
                    self.origins.push((wv, span));
                }
                match self.s.unify(&T::Var(v), &w) {
                    Ok(()) => Ok(ft),
                    Err(c) => err(span, c.message),
                }
            }
            other => err(
                span,
                format!(
                    "Cannot access field \"{f}\" of a value of type \"{}\".",
                    self.s.show(&other)
                ),
            ),
        }
    }

    pub(super) fn index_type(&mut self, t: &T, idxs: &mut [DimIndex], span: Span) -> R<T> {
        let k = idxs.len();
        // Check the index expressions first.
        let mut slices: Vec<bool> = Vec::new();
        for ix in idxs.iter_mut() {
            match ix {
                DimIndex::Index(x) => {
                    let it = self.infer(x)?;
                    let a = self.fresh_prims(SIGNED.to_vec(), x.span);
                    self.expect(&a, &it, x.span, "an index")?;
                    slices.push(false);
                }
                DimIndex::Slice { start, end, stride } => {
                    for x in [start, end, stride].into_iter().flatten() {
                        let it = self.infer(x)?;
                        self.expect(&T::i64(), &it, x.span, "a slice bound")?;
                    }
                    slices.push(true);
                }
            }
        }
        let z = self.s.zonk(t);
        if !matches!(z, T::Var(_) | T::Array(..)) && k > 0 {
            return err(
                span,
                format!("Cannot index into a value of type \"{}\".", self.s.show(&z)),
            );
        }
        if let T::Array(..) = z {
            let mut rank = 0;
            let mut cur = &z;
            while let T::Array(_, e) = cur {
                rank += 1;
                cur = e;
            }
            if rank < k && !matches!(cur, T::Var(_)) {
                return err(
                    span,
                    format!(
                        "Too many indices: {k} given for an array of rank {rank} (type \"{}\").",
                        self.s.show(&z)
                    ),
                );
            }
        }
        let elem = self.s.fresh_var();
        let dims: Vec<Sz> = (0..k).map(|_| self.s.fresh_flex()).collect();
        let mut arr = elem.clone();
        for d in dims.iter().rev() {
            arr = T::Array(d.clone(), Box::new(arr));
        }
        if let Err(c) = self.s.unify(&arr, t) {
            return err(span, c.message);
        }
        let mut result = elem;
        for (i, ix) in idxs.iter().enumerate().rev() {
            if let DimIndex::Slice { start, end, stride } = ix {
                let d = dims[i].clone();
                let sz = self.slice_size(&d, start.as_ref(), end.as_ref(), stride.as_ref());
                result = T::Array(sz, Box::new(result));
            }
        }
        Ok(result)
    }

    fn slice_size(
        &mut self,
        d: &Sz,
        start: Option<&Exp>,
        end: Option<&Exp>,
        stride: Option<&Exp>,
    ) -> Sz {
        let is_lit = |e: Option<&Exp>, v: u128| matches!(e.map(|e| &e.kind), Some(ExpKind::Literal(Literal::Int { value, .. })) if *value == v);
        let is_neg_one = |e: Option<&Exp>| match e.map(|e| &e.kind) {
            Some(ExpKind::Negate(x)) => {
                matches!(&x.kind, ExpKind::Literal(Literal::Int { value: 1, .. }))
            }
            _ => false,
        };
        let unit_stride = stride.is_none() || is_lit(stride, 1);
        let end_term = |me: &mut Self| match end {
            Some(j) => me.size_term(j),
            None => d.clone(),
        };
        if unit_stride && (start.is_none() || is_lit(start, 0)) {
            return end_term(self);
        }
        if unit_stride {
            let j = end_term(self);
            let i = self.size_term(start.expect("start present"));
            return Sz::Op("-", Box::new(j), Box::new(i));
        }
        if is_neg_one(stride) {
            match (start, end) {
                (None, None) => return d.clone(),
                (Some(i), Some(j)) => {
                    let i = self.size_term(i);
                    let j = self.size_term(j);
                    return Sz::Op("-", Box::new(i), Box::new(j));
                }
                _ => {}
            }
        }
        self.s.fresh_unknown()
    }

    pub(super) fn range_size(
        &mut self,
        start: &Exp,
        second: Option<&Exp>,
        end: &Exp,
        kind: &RangeEnd,
    ) -> Sz {
        let lit = |e: &Exp, v: u128| matches!(&e.kind, ExpKind::Literal(Literal::Int { value, suffix }) if *value == v && suffix.is_none_or(|p| p == PrimType::I64));
        match (kind, second) {
            (RangeEnd::UpToExclusive, None) if lit(start, 0) => self.size_term(end),
            (RangeEnd::UpToExclusive, Some(s2)) if lit(start, 0) && lit(s2, 1) => {
                self.size_term(end)
            }
            (RangeEnd::UpToExclusive, None) => {
                let e = self.size_term(end);
                let s = self.size_term(start);
                Sz::Op("-", Box::new(e), Box::new(s))
            }
            (RangeEnd::Inclusive, None) => {
                let e = self.size_term(end);
                let s = self.size_term(start);
                Sz::Op(
                    "+",
                    Box::new(Sz::Op("-", Box::new(e), Box::new(s))),
                    Box::new(Sz::Const(1)),
                )
            }
            (RangeEnd::Inclusive, Some(s2)) if lit(start, 1) && lit(s2, 2) => self.size_term(end),
            _ => self.s.fresh_unknown(),
        }
    }

    /// The type at the end of an update path (`with [i].f = v`).
    pub(super) fn update_path(&mut self, t: &T, steps: &mut [UpdateStep]) -> R<T> {
        let mut cur = t.clone();
        for st in steps {
            cur = match st {
                UpdateStep::Index(idxs, span) => {
                    let span = *span;
                    self.index_type(&cur, idxs, span)?
                }
                UpdateStep::Field(f, span) => {
                    let span = *span;
                    self.field_of(&cur, f, span)?
                }
            };
        }
        Ok(cur)
    }
}
