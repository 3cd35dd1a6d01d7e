//! Exporting solved types and sizes as the public `Type`/`Size`; size terms as `i64` expressions.

use super::Checker;
use crate::infer_ty::{Sz, T};
use crate::ty::{canonical_field_order, Size, Type};
use runic_syntax::ast::*;

impl Checker {
    pub fn export(&mut self, t: &T) -> Type {
        match self.s.zonk(t) {
            T::Var(_) => Type::unit(),
            T::Prim(p) => Type::Prim(p),
            T::Param(n) => Type::Param(n),
            T::Array(s, e) => {
                let size = self.export_size(&s);
                self.export(&e).array_of(vec![size])
            }
            T::Record(fs) => {
                let mut v: Vec<(Name, Type)> = fs
                    .iter()
                    .map(|(n, t)| (n.clone(), self.export(t)))
                    .collect();
                v.sort_by(|a, b| canonical_field_order(&a.0, &b.0));
                Type::Record(v)
            }
            T::Sum(cs) if is_abstract(&cs) => {
                // An abstract type: the backends see its definition.
                let t = self.expand_abstract(&T::Sum(cs), None);
                if matches!(&t, T::Sum(c) if is_abstract(c)) {
                    Type::unit()
                } else {
                    self.export(&t)
                }
            }
            T::Sum(cs) => Type::Sum(
                cs.iter()
                    .map(|(n, ts)| (n.clone(), ts.iter().map(|t| self.export(t)).collect()))
                    .collect(),
            ),
            T::Arrow(n, a, b) => Type::Arrow {
                param_name: n,
                param: Box::new(self.export(&a)),
                ret: Box::new(self.export(&b)),
            },
        }
    }

    pub(super) fn export_size(&mut self, s: &Sz) -> Size {
        match self.s.size(s) {
            Sz::Flex(k) => {
                let next = self.s.unknowns;
                let u = *self.flex_out.entry(k).or_insert(next);
                if u == next {
                    self.s.unknowns += 1;
                }
                Size::Unknown(u)
            }
            Sz::Name(n) => Size::Var(n),
            Sz::Const(c) => Size::Const(c),
            Sz::Unknown(u) => Size::Unknown(u),
            Sz::Exp(e) => Size::Exp(e),
            // A term with an unknown part (`k + <size of an if>`) is itself unknown: the
            // backends read it from the value instead of evaluating a partial term.
            op @ Sz::Op(..) if !self.size_fully_known(&op) => {
                let u = self.s.unknowns;
                self.s.unknowns += 1;
                Size::Unknown(u)
            }
            op @ Sz::Op(..) => Size::Exp(Box::new(self.size_exp(&op))),
        }
    }

    /// Whether a size term, with its solved variables substituted, has no flexible or rigid
    /// unknown part.
    fn size_fully_known(&self, s: &Sz) -> bool {
        match self.s.size(s) {
            Sz::Flex(_) | Sz::Unknown(_) => false,
            Sz::Name(_) | Sz::Const(_) | Sz::Exp(_) => true,
            Sz::Op(_, a, b) => self.size_fully_known(&a) && self.size_fully_known(&b),
        }
    }

    /// Build an `i64` expression for a size term (types recorded as `i64`).
    fn size_exp(&mut self, s: &Sz) -> Exp {
        let span = self.def_span;
        let id = self.fresh_id();
        let s = &self.s.size(s);
        let kind = match s {
            Sz::Name(n) => ExpKind::Var(QualName::unqual(n.clone())),
            Sz::Const(c) => ExpKind::Literal(Literal::Int {
                value: *c as u128,
                suffix: Some(PrimType::I64),
            }),
            Sz::Op(o, a, b) => ExpKind::BinOp {
                op: BinOpName {
                    name: QualName {
                        quals: vec!["i64".into()],
                        name: o.to_string(),
                    },
                    backtick: false,
                    span,
                },
                lhs: Box::new(self.size_exp(a)),
                rhs: Box::new(self.size_exp(b)),
            },
            Sz::Exp(e) => return (**e).clone(),
            Sz::Flex(_) | Sz::Unknown(_) => ExpKind::Hole,
        };
        self.info.exp_types.insert(id, Type::Prim(PrimType::I64));
        Exp { id, span, kind }
    }
}

fn is_abstract(cs: &std::collections::BTreeMap<Name, Vec<T>>) -> bool {
    cs.len() == 1 && cs.keys().all(|c| c.starts_with(super::modules::ABSTRACT))
}
