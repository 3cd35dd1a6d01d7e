//! The shared derivative table's [`Algebra`] over IR: values are operands, and each
//! operation emits a statement with the builder (constants are folded), so the rules of
//! `runic_prim::deriv` generate derivative code instead of computing numbers.

use crate::error::AdError;
use runic_ir::*;
use runic_prim::deriv::Algebra;

pub struct IrAlg<'b, 'n> {
    pub b: &'b mut Builder<'n>,
}

/// The element type of an operand (of a scalar, or of an array's elements).
pub fn prim_of(names: &NameSource, s: &SubExp) -> Result<PrimType, AdError> {
    match s {
        SubExp::Const(c) => Ok(c.ty()),
        SubExp::Var(v) => names
            .type_of(*v)
            .and_then(Type::elem)
            .ok_or_else(|| AdError::internal(format!("unknown type of {v}"))),
    }
}

impl Algebra for IrAlg<'_, '_> {
    type V = SubExp;
    type E = AdError;
    fn prim(&mut self, p: Prim) -> SubExp {
        SubExp::Const(p)
    }
    fn binop(&mut self, op: BinOp, a: &SubExp, b: &SubExp) -> Result<SubExp, AdError> {
        Ok(self.b.op2(op, a.clone(), b.clone())?)
    }
    fn unop(&mut self, op: UnOp, a: &SubExp) -> Result<SubExp, AdError> {
        Ok(self.b.op1(op, a.clone())?)
    }
    fn convert(&mut self, a: &SubExp, to: PrimType) -> Result<SubExp, AdError> {
        Ok(self.b.convert(to, a.clone()))
    }
    fn select(&mut self, c: &SubExp, a: &SubExp, b: &SubExp) -> Result<SubExp, AdError> {
        if let SubExp::Const(Prim::Bool(k)) = c {
            return Ok(if *k { a.clone() } else { b.clone() });
        }
        Ok(self.b.select(c.clone(), a.clone(), b.clone())?)
    }
    fn not_differentiable(&mut self, what: &str) -> AdError {
        AdError::not_differentiable(what)
    }
}
