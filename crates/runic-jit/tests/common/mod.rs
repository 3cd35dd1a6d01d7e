//! Builders of small IR pieces and a random source shared by the kernel tests (each test
//! binary uses a part of them).
#![allow(dead_code)]

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

/// A small xorshift generator: reproducible inputs without a dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}
