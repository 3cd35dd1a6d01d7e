//! `p = reduce (*) ne xs` on floats: `dp = Σᵢ dxᵢ · ∂p/∂xᵢ`, the gradient coming from a
//! `vjp` of the same reduce, which reverse mode (run next) differentiates with its
//! zero-counting rule (seed 001 §3). When `p` is 0 or not finite (the gradient, which
//! divides the product by each factor, is then wrong), the rule on (value, tangent) pairs
//! runs instead. Not used inside another AD construct, whose derivative is differentiated
//! again: there the exact pair rule is kept.
//!
//! Work O(n) (a few passes of simple operators, where the pair rule needs a reduce of a
//! two-value operator); span O(log n).

use super::reduce::{Fold, FoldKind};
use super::{Diff, R};
use crate::error::AdError;
use runic_ir::traverse::{Renamer, VisitorMut};
use runic_ir::*;

impl Diff {
    /// Whether this rule applies to a fold: `reduce (*) ne [x]` on floats, `x` tracked, and
    /// the derivative not differentiated again.
    pub(super) fn is_float_product(&self, f: &Fold) -> bool {
        let float_mul = matches!(f.lam.binop_either_order(), Some((BinOp::Mul, t)) if t.is_float());
        let tracked = matches!(f.arrs.as_slice(), [x] if self.tans.contains_key(x));
        matches!(f.kind, FoldKind::Reduce { .. })
            && float_mul
            && f.pre.is_none()
            && f.neutral.len() == 1
            && tracked
            && !self.differentiated_again
    }

    /// `p = reduce (*) ne xs` on floats (see [`Diff::is_float_product`]):
    ///
    /// ```text
    /// p  = reduce (*) ne xs
    /// ∇  = vjp (\xs -> reduce (*) ne xs) xs 1      -- outside the branch: seed-invariant
    /// dp = if p == 0 || p - p != 0                  -- zero, or not finite
    ///      then (reduce (*)ᴾ (ne, 0) (xs, dxs)).1   -- the exact rule on pairs
    ///      else reduce (+) 0 (map (*) dxs ∇)
    /// ```
    pub(super) fn product_by_gradient(&mut self, b: &mut Builder, p: Param, f: Fold) -> R<()> {
        let (w, x, op, ne) = (f.w.clone(), f.arrs[0], f.lam.clone(), f.neutral[0].clone());
        b.let_pat(vec![p.clone()], Exp::Soac(f.soac()));
        let t = b.prim_of(&ne)?;
        let py = SubExp::Var(p.name);
        let zero = SubExp::Const(Prim::zero(t));
        let is_zero = b.op2(BinOp::Eq, py.clone(), zero.clone())?;
        let diff = b.sub_(py.clone(), py)?;
        let not_finite = b.op2(BinOp::Neq, diff, zero)?;
        let exact = b.op2(BinOp::LogOr, is_zero, not_finite)?;
        // The gradient outside the branch: it does not depend on the tangents (so a jmp
        // computes it once), and computing it is harmless when it is not used.
        let grad = product_gradient(b, &w, x, op.clone(), ne.clone())?;
        let dx = self.tan_var(b, x)?;
        let then_body =
            b.body_try(|b| Ok::<_, AdError>(vec![self.product_by_pairs(b, &w, x, op, ne)?]))?;
        let else_body = b.body_try(|b| Ok::<_, AdError>(vec![dot(b, &w, dx, grad, t)?]))?;
        let exp = Exp::If {
            cond: exact,
            then_body,
            else_body,
            ret: vec![self.tan_ty(&p.ty)],
        };
        let dp = b.let1("d", exp)?;
        self.tans.insert(p.name, dp);
        Ok(())
    }

    /// The tangent of `reduce (*) ne x` by the rule on (value, tangent) pairs.
    fn product_by_pairs(
        &mut self,
        b: &mut Builder,
        w: &SubExp,
        x: VName,
        mut op: Lambda,
        ne: SubExp,
    ) -> R<SubExp> {
        Renamer::new(b.names).lambda(&mut op);
        let r = b.param("prod", b.type_of(&ne)?);
        let fold = Fold {
            w: w.clone(),
            arrs: vec![x],
            pre: None,
            lam: op,
            neutral: vec![ne],
            kind: FoldKind::Reduce { commutative: true },
        };
        self.reduce_or_scan(b, vec![r.clone()], fold)?;
        self.tans
            .remove(&r.name)
            .ok_or_else(|| AdError::internal("the pair rule gave no tangent"))
    }
}

/// The gradient of `reduce (*) ne x`, from a generated
/// `vjp (\xs -> reduce (*) ne xs) x 1`.
fn product_gradient(b: &mut Builder, w: &SubExp, x: VName, mut op: Lambda, ne: SubExp) -> R<VName> {
    let xt = b.type_of(&SubExp::Var(x))?;
    let one = SubExp::Const(Prim::one(b.prim_of(&ne)?));
    Renamer::new(b.names).lambda(&mut op);
    let xs = b.param("xs", xt);
    let lam = b.lam_over(vec![xs.clone()], |b| {
        let prod = Soac::Reduce {
            w: w.clone(),
            arrs: vec![xs.name],
            pre: None,
            lam: op,
            neutral: vec![ne],
            commutative: true,
        };
        Ok::<_, AdError>(vec![b.let1("prod", Exp::Soac(prod))?])
    })?;
    let vjp = Exp::Vjp {
        lam,
        args: vec![SubExp::Var(x)],
        cotangents: vec![one],
        vector: false,
    };
    Ok(b.let_named(&["prod", "grad"], vjp)?[1])
}

/// `Σᵢ dxᵢ·gradᵢ` at the scalar type `t`, the product fused into the reduce as its
/// producer.
fn dot(b: &mut Builder, w: &SubExp, dx: VName, grad: VName, t: PrimType) -> R<SubExp> {
    let mul = b.binop_lam(BinOp::Mul, t);
    let add = b.binop_lam(BinOp::Add, t);
    let dot = Soac::Reduce {
        w: w.clone(),
        arrs: vec![dx, grad],
        pre: Some(mul),
        lam: add,
        neutral: vec![SubExp::Const(Prim::zero(t))],
        commutative: true,
    };
    Ok(b.let1("d", Exp::Soac(dot))?)
}
