//! Operators: built-in ones on scalars, `==` on records and arrays, and user-defined ones.

use super::*;
use crate::val::{Env, Val};
use runic_ir::*;
use runic_syntax::ast::{self};
use runic_syntax::Span;

impl<'a> Lower<'a> {
    pub(super) fn binop_exp(
        &mut self,
        e: &'a ast::Exp,
        op: &'a ast::BinOpName,
        lhs: &'a ast::Exp,
        rhs: &'a ast::Exp,
        env: &Env<'a>,
    ) -> R<Val<'a>> {
        let builtin = self.builtin_op(op, env);
        if let Some(bop @ (BinOp::LogAnd | BinOp::LogOr)) = builtin {
            let l = self.exp(lhs, env)?;
            let (l, _) = self.prim_leaf(&l, lhs.span)?;
            let r = if bop == BinOp::LogAnd {
                self.if_val(
                    l,
                    e.span,
                    |lw| lw.exp(rhs, env),
                    |_| {
                        Ok(Val::Leaf(
                            SubExp::Const(Prim::Bool(false)),
                            Type::Prim(PrimType::Bool),
                        ))
                    },
                )?
            } else {
                self.if_val(
                    l,
                    e.span,
                    |_| {
                        Ok(Val::Leaf(
                            SubExp::Const(Prim::Bool(true)),
                            Type::Prim(PrimType::Bool),
                        ))
                    },
                    |lw| lw.exp(rhs, env),
                )?
            };
            return Ok(r);
        }
        let l = self.exp(lhs, env)?;
        let r = self.exp(rhs, env)?;
        self.loc = Some(loc_of(e.span));
        if let Some(bop) = builtin {
            return self.prim_binop(bop, &l, &r, e.span);
        }
        let f = self.op_value(op, e.id, env)?;
        self.calls.push(loc_of(e.span));
        let res = self.apply_many(f, vec![l, r], e.span);
        self.calls.pop();
        res
    }

    /// The built-in operator an operator name denotes, unless the user rebound it.
    fn builtin_op(&self, op: &ast::BinOpName, env: &Env<'a>) -> Option<BinOp> {
        if op.backtick {
            return None;
        }
        let q = &op.name;
        if q.quals.is_empty() {
            if env.lookup(&q.name).is_some() || self.global(&q.name).is_some() {
                return None;
            }
            BinOp::from_symbol(&q.name)
        } else if q.quals.len() == 1 && PrimType::from_name(&q.quals[0]).is_some() {
            BinOp::from_symbol(&q.name)
        } else {
            None
        }
    }

    pub(super) fn op_value(
        &mut self,
        op: &'a ast::BinOpName,
        id: ast::NodeId,
        env: &Env<'a>,
    ) -> R<Val<'a>> {
        self.lookup(&op.name, id, op.span, env)
    }

    /// A built-in binary operator on values (scalars, or records of them for `==`/`!=`).
    pub fn prim_binop(&mut self, op: BinOp, l: &Val<'a>, r: &Val<'a>, span: Span) -> R<Val<'a>> {
        match (l, r) {
            (Val::Leaf(a, Type::Prim(_)), Val::Leaf(b, Type::Prim(_))) => {
                let s = self.b().op2(op, a.clone(), b.clone())?;
                self.leaf_of(s)
            }
            _ if matches!(op, BinOp::Eq | BinOp::Neq) => {
                let ls = self.leaves(l, span)?;
                let rs = self.leaves(r, span)?;
                let mut acc = SubExp::Const(Prim::Bool(true));
                for ((a, ta), (b, tb)) in ls.into_iter().zip(rs) {
                    let eq = match ta {
                        Type::Prim(_) => self.b().op2(BinOp::Eq, a, b)?,
                        _ => self.array_eq(a, &ta, b, &tb, span)?,
                    };
                    acc = self.b().op2(BinOp::LogAnd, acc, eq)?;
                }
                if op == BinOp::Neq {
                    acc = self.b().op1(UnOp::Not, acc)?;
                }
                self.leaf_of(acc)
            }
            _ => unsupported("an operator on non-scalar values", Some(span)),
        }
    }

    /// Equality of two arrays of the same rank: equal shapes and equal elements.
    fn array_eq(&mut self, a: SubExp, ta: &Type, b: SubExp, tb: &Type, span: Span) -> R<SubExp> {
        let (elem, sa, sb) = match (ta, tb) {
            (Type::Array { elem, shape: sa }, Type::Array { shape: sb, .. }) => {
                (*elem, sa.clone(), sb.clone())
            }
            _ => return unsupported("equality of an array and a non-array", Some(span)),
        };
        let (av, bv) = (self.arr_var(&a, span)?, self.arr_var(&b, span)?);
        let mut same = SubExp::Const(Prim::Bool(true));
        let mut total = SubExp::i64(1);
        for (x, y) in sa.iter().zip(&sb) {
            let mut b = self.b();
            let e = b.op2(BinOp::Eq, x.clone(), y.clone())?;
            same = b.op2(BinOp::LogAnd, same, e)?;
            total = b.mul_i64(total, x.clone());
        }
        let r = self.if_val(
            same,
            span,
            |l| {
                // Both have `total` elements here: compare them row-major.
                let mut b = l.b();
                let flat = |arr| BasicOp::Reshape {
                    arr,
                    shape: vec![total.clone()],
                };
                let fa = b.let_exp("fa", Exp::Basic(flat(av)))?[0];
                let fb = b.let_exp("fb", Exp::Basic(flat(bv)))?[0];
                let t = Type::Prim(elem);
                let eq = b.lam(vec![("x", t.clone()), ("y", t)], |b, xy| {
                    Ok::<_, TypeError>(vec![b.op2(BinOp::Eq, xy[0].clone(), xy[1].clone())?])
                })?;
                let and = b.binop_lam(BinOp::LogAnd, PrimType::Bool);
                let reduce = Soac::Reduce {
                    w: total.clone(),
                    arrs: vec![fa, fb],
                    pre: Some(eq),
                    lam: and,
                    neutral: vec![SubExp::Const(Prim::Bool(true))],
                    commutative: true,
                };
                let r = b.let1("aeq", Exp::Soac(reduce))?;
                drop(b);
                l.leaf_of(r)
            },
            |_| {
                Ok(Val::Leaf(
                    SubExp::Const(Prim::Bool(false)),
                    Type::Prim(PrimType::Bool),
                ))
            },
        )?;
        Ok(self.prim_leaf(&r, span)?.0)
    }
}
