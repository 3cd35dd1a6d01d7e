//! The shared derivative table's [`Algebra`] over IR: values are operands, and each
//! operation emits a statement with the builder (constants are folded), so the rules of
//! `runic_prim::deriv` generate derivative code instead of computing numbers.

use crate::error::AdError;
use crate::scope::Types;
use runic_ir::builder::{binop_type, unop_type};
use runic_ir::*;
use runic_prim::deriv::Algebra;

pub struct IrAlg<'b, 'n> {
    pub b: &'b mut Builder<'n>,
    pub types: &'b mut Types,
}

/// The primitive type of an operand.
pub fn prim_of(types: &Types, s: &SubExp) -> Result<PrimType, AdError> {
    match s {
        SubExp::Const(c) => Ok(c.ty()),
        SubExp::Var(v) => types
            .get(v)
            .and_then(Type::elem)
            .ok_or_else(|| AdError::internal(format!("unknown type of {v}"))),
    }
}

impl IrAlg<'_, '_> {
    fn record(&mut self, s: &SubExp, t: PrimType) {
        if let SubExp::Var(v) = s {
            self.types.entry(*v).or_insert(Type::Prim(t));
        }
    }
}

impl Algebra for IrAlg<'_, '_> {
    type V = SubExp;
    type E = AdError;
    fn prim(&mut self, p: Prim) -> SubExp {
        SubExp::Const(p)
    }
    fn binop(&mut self, op: BinOp, a: &SubExp, b: &SubExp) -> Result<SubExp, AdError> {
        let t = prim_of(self.types, a)?;
        let r = self.b.binop(op, a.clone(), b.clone(), t);
        self.record(&r, binop_type(op, t));
        Ok(r)
    }
    fn unop(&mut self, op: UnOp, a: &SubExp) -> Result<SubExp, AdError> {
        let t = prim_of(self.types, a)?;
        let r = self.b.unop(op, a.clone(), t);
        self.record(&r, unop_type(op, t));
        Ok(r)
    }
    fn convert(&mut self, a: &SubExp, to: PrimType) -> Result<SubExp, AdError> {
        let r = self.b.convert(to, a.clone());
        self.record(&r, to);
        Ok(r)
    }
    fn select(&mut self, c: &SubExp, a: &SubExp, b: &SubExp) -> Result<SubExp, AdError> {
        if let SubExp::Const(Prim::Bool(k)) = c {
            return Ok(if *k { a.clone() } else { b.clone() });
        }
        let t = prim_of(self.types, a)?;
        let r = self.b.if_(
            c.clone(),
            vec![Type::Prim(t)],
            |_| vec![a.clone()],
            |_| vec![b.clone()],
        )[0];
        self.types.insert(r, Type::Prim(t));
        Ok(SubExp::Var(r))
    }
    fn not_differentiable(&mut self, what: &str) -> AdError {
        AdError::not_differentiable(what)
    }
}
