//! Branches: `if` on values, with sizes that differ between the branches as extra results.

use super::*;
use crate::val::Val;
use runic_ir::traverse::binders;
use runic_ir::*;
use runic_syntax::Span;

impl<'a> Lower<'a> {
    /// `if c then … else …` on values: branch results are flattened; array sizes that
    /// differ between the branches (or are computed inside them) become extra results.
    pub fn if_val(
        &mut self,
        c: SubExp,
        span: Span,
        then_f: impl FnOnce(&mut Self) -> R<Val<'a>>,
        else_f: impl FnOnce(&mut Self) -> R<Val<'a>>,
    ) -> R<Val<'a>> {
        if let SubExp::Const(Prim::Bool(b)) = c {
            return if b { then_f(self) } else { else_f(self) };
        }
        let loc = self.loc;
        let (ts, tv) = self.nested(then_f)?;
        self.loc = loc;
        let (es, ev) = self.nested(else_f)?;
        self.loc = loc;
        let tl = self.leaves(&tv, span)?;
        let el = self.leaves(&ev, span)?;
        if tl.len() != el.len() {
            return unsupported("branches of different structure", Some(span));
        }
        let bound_t = binders(&ts);
        let bound_e = binders(&es);
        // Existential sizes: one extra i64 result per differing or local dimension.
        let mut ext_t = Vec::new();
        let mut ext_e = Vec::new();
        let mut ret = Vec::new();
        let mut ext_slots: Vec<Vec<Option<usize>>> = Vec::new();
        for ((_, tt), (_, et)) in tl.iter().zip(&el) {
            let mut slots = Vec::new();
            if let (Type::Array { shape: s1, .. }, Type::Array { shape: s2, .. }) = (tt, et) {
                for (d1, d2) in s1.iter().zip(s2) {
                    let local = |d: &SubExp, b: &std::collections::HashSet<VName>| {
                        d.as_var().is_some_and(|v| b.contains(&v))
                    };
                    if d1 != d2 || local(d1, &bound_t) || local(d2, &bound_e) {
                        slots.push(Some(ext_t.len()));
                        ext_t.push(d1.clone());
                        ext_e.push(d2.clone());
                    } else {
                        slots.push(None);
                    }
                }
            }
            ext_slots.push(slots);
        }
        let nexts = ext_t.len();
        let ext_names: Vec<VName> = (0..nexts).map(|_| self.names.fresh("d")).collect();
        for _ in 0..nexts {
            ret.push(Type::Prim(PrimType::I64));
        }
        for ((_, tt), slots) in tl.iter().zip(&ext_slots) {
            ret.push(match tt {
                Type::Array { elem, shape } => Type::Array {
                    elem: *elem,
                    shape: shape
                        .iter()
                        .zip(slots)
                        .map(|(d, s)| match s {
                            Some(k) => SubExp::Var(ext_names[*k]),
                            None => d.clone(),
                        })
                        .collect(),
                },
                t => t.clone(),
            });
        }
        let mut tres = ext_t;
        tres.extend(tl.iter().map(|(s, _)| s.clone()));
        let mut eres = ext_e;
        eres.extend(el.iter().map(|(s, _)| s.clone()));
        // The branch result types as the If sees them (sizes named by the pattern).
        let exp = Exp::If {
            cond: c,
            then_body: Body {
                stms: ts,
                result: tres,
            },
            else_body: Body {
                stms: es,
                result: eres,
            },
            ret: ret.clone(),
        };
        let mut pat: Vec<Param> = ext_names
            .iter()
            .map(|v| Param {
                name: *v,
                ty: Type::Prim(PrimType::I64),
            })
            .collect();
        for t in ret.iter().skip(nexts) {
            pat.push(Param {
                name: self.names.fresh("r"),
                ty: t.clone(),
            });
        }
        let outs: Vec<(SubExp, Type)> = pat
            .iter()
            .skip(nexts)
            .map(|p| (SubExp::Var(p.name), p.ty.clone()))
            .collect();
        let src = self.src();
        self.b().add(Stm { pat, exp, src });
        Ok(tv.rebuild(&mut outs.into_iter()))
    }
}
