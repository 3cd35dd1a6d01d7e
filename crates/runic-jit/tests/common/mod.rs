//! Builders of small IR pieces shared by the kernel tests.

use runic_ir::*;

/// Variable `k` of primitive type `t`, as a parameter or pattern element.
pub fn param(k: u32, t: PrimType) -> Param {
    Param {
        name: VName(k),
        ty: Type::Prim(t),
    }
}

/// Variable `k` as an operand.
pub fn var(k: u32) -> SubExp {
    SubExp::Var(VName(k))
}

/// `let k: t = op`.
pub fn stm(k: u32, t: PrimType, op: BasicOp) -> Stm {
    Stm {
        pat: vec![param(k, t)],
        exp: Exp::Basic(op),
        src: SrcInfo::default(),
    }
}
