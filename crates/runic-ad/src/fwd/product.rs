//! `p = reduce (*) ne xs` on floats: `dp = Σᵢ dxᵢ · ∂p/∂xᵢ`, the gradient coming from a
//! `vjp` of the same reduce, which reverse mode (run next) differentiates with its
//! zero-counting rule (seed 001 §3). When `p` is 0 or not finite (the gradient, which
//! divides the product by each factor, is then wrong), the rule on (value, tangent) pairs
//! runs instead. Not used inside another AD construct, whose derivative is differentiated
//! again: there the exact pair rule is kept.
//!
//! Work O(n) (a few passes of simple operators, where the pair rule needs a reduce of a
//! two-value operator); span O(log n).

use super::reduce::Fold;
use super::{Diff, R};
use crate::alg::prim_of;
use crate::error::AdError;
use runic_ir::traverse::{Renamer, VisitorMut};
use runic_ir::*;
use runic_prim::deriv::Algebra;
use std::collections::HashMap;

impl Diff {
    /// `p = reduce (*) ne xs` on floats: `dp = Σᵢ dxᵢ·∂p/∂xᵢ`, the gradient coming from a
    /// `vjp` of the same reduce, which reverse mode (run next) differentiates with its
    /// zero-counting rule (seed 001 §3). That costs a few passes of simple operators,
    /// where the rule on (value, tangent) pairs needs a reduce of a two-value operator.
    /// The gradient divides the product by each factor, which is wrong when the product
    /// under- or overflowed: when `p` is 0 or not finite, the pair rule runs instead.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn product_by_gradient(
        &mut self,
        b: &mut Builder,
        p: Param,
        src: SrcInfo,
        w: SubExp,
        x: VName,
        op: Lambda,
        ne: SubExp,
    ) -> R<()> {
        let t = prim_of(b.names, &ne)?;
        let dty = self.tan_ty(&p.ty);
        let py = SubExp::Var(p.name);
        let zero = SubExp::Const(Prim::zero(t));
        let mut alg = self.alg(b);
        let is_zero = alg.binop(BinOp::Eq, &py, &zero)?;
        let diff = alg.binop(BinOp::Sub, &py, &py)?;
        let not_finite = alg.binop(BinOp::Neq, &diff, &zero)?;
        let exact = alg.binop(BinOp::LogOr, &is_zero, &not_finite)?;
        // The gradient outside the branch: it does not depend on the tangents (so a jmp
        // computes it once), and computing it is harmless when it is not used.
        let grad = self.product_gradient(b, &src, &w, x, op.clone(), ne.clone(), t)?;
        let mut tb = Builder::new(b.names);
        tb.src = src.clone();
        let dt = self.product_by_pairs(&mut tb, &src, &w, x, &op, &ne, t)?;
        let then_body = tb.finish(vec![dt]);
        let mut eb = Builder::new(b.names);
        eb.src = src.clone();
        let dg = self.dot(&mut eb, &w, x, grad, t)?;
        let else_body = eb.finish(vec![dg]);
        let exp = Exp::If {
            cond: exact,
            then_body,
            else_body,
            ret: vec![dty.clone()],
        };
        let dp = self.bind(b, "d", exp, dty);
        self.tans.insert(p.name, SubExp::Var(dp));
        Ok(())
    }

    /// The tangent of `reduce (*) ne x` by the rule on (value, tangent) pairs.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn product_by_pairs(
        &mut self,
        b: &mut Builder,
        src: &SrcInfo,
        w: &SubExp,
        x: VName,
        op: &Lambda,
        ne: &SubExp,
        t: PrimType,
    ) -> R<SubExp> {
        let mut op = op.clone();
        Renamer {
            names: b.names,
            map: HashMap::new(),
        }
        .lambda(&mut op);
        b.names.record_types(&op);
        let r = self.fresh_param(b, "prod", &Type::Prim(t));
        let fold = Fold {
            w: w.clone(),
            arrs: vec![x],
            pre: None,
            lam: op,
            neutral: vec![ne.clone()],
        };
        self.reduce_or_scan(b, vec![r.clone()], src.clone(), fold, |f| Soac::Reduce {
            w: f.w,
            arrs: f.arrs,
            pre: f.pre,
            lam: f.lam,
            neutral: f.neutral,
            commutative: true,
        })?;
        self.tans
            .remove(&r.name)
            .ok_or_else(|| AdError::internal("the pair rule gave no tangent"))
    }

    /// The gradient of `reduce (*) ne x`, from a generated `vjp`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn product_gradient(
        &mut self,
        b: &mut Builder,
        src: &SrcInfo,
        w: &SubExp,
        x: VName,
        op: Lambda,
        ne: SubExp,
        t: PrimType,
    ) -> R<VName> {
        let xt = b.type_of(&SubExp::Var(x))?;
        // vjp (\xs -> reduce (*) ne xs) x 1
        let mut op = op;
        Renamer {
            names: b.names,
            map: HashMap::new(),
        }
        .lambda(&mut op);
        b.names.record_types(&op);
        let xs = self.fresh_param(b, "xs", &xt);
        let r = self.fresh_param(b, "prod", &Type::Prim(t));
        let lam = Lambda {
            id: runic_ir::LamId::fresh(),
            params: vec![xs.clone()],
            body: Body {
                stms: vec![Stm {
                    pat: vec![r.clone()],
                    exp: Exp::Soac(Soac::Reduce {
                        w: w.clone(),
                        arrs: vec![xs.name],
                        pre: None,
                        lam: op,
                        neutral: vec![ne],
                        commutative: true,
                    }),
                    src: src.clone(),
                }],
                result: vec![SubExp::Var(r.name)],
            },
            ret: vec![Type::Prim(t)],
        };
        let y = self.fresh_param(b, "prod", &Type::Prim(t));
        let grad = self.fresh_param(b, "grad", &xt);
        b.add(Stm {
            pat: vec![y, grad.clone()],
            exp: Exp::Vjp {
                lam,
                args: vec![SubExp::Var(x)],
                cotangents: vec![SubExp::Const(Prim::one(t))],
                vector: false,
            },
            src: src.clone(),
        });
        Ok(grad.name)
    }

    /// `Σᵢ dxᵢ·gradᵢ`, the product fused into the reduce as its producer.
    pub(super) fn dot(
        &mut self,
        b: &mut Builder,
        w: &SubExp,
        x: VName,
        grad: VName,
        t: PrimType,
    ) -> R<SubExp> {
        let dx = self.tan_var(b, x)?;
        let mul = runic_ir::builder::binop_lambda(b.names, BinOp::Mul, t);
        let add = runic_ir::builder::binop_lambda(b.names, BinOp::Add, t);
        b.names.record_types(&mul);
        b.names.record_types(&add);
        let dot = Exp::Soac(Soac::Reduce {
            w: w.clone(),
            arrs: vec![dx, grad],
            pre: Some(mul),
            lam: add,
            neutral: vec![SubExp::Const(Prim::zero(t))],
            commutative: true,
        });
        let ty = self.tan_ty(&Type::Prim(t));
        Ok(SubExp::Var(self.bind(b, "d", dot, ty)))
    }
}
