//! Tangents of scalar and array operations (no nested scopes); the primal is emitted as is.
//!
//! - Scalar operations: `dr = Σᵢ ∂f/∂aᵢ · daᵢ` over the operands that have a tangent, the
//!   partials taken from the derivative table shared with reverse mode
//!   (`runic_prim::deriv`); no tangent when no operand has one. In vector mode the sum is
//!   one `map` over the seeds ([`Diff::combine`]).
//! - Array operations are linear, so the tangent is the same operation on the tangents:
//!   `a[i]` → `da[i]`, `a with [i] = v` → `da with [i] = dv`, and likewise `replicate`,
//!   reshapes, transpositions, copies, concatenations and array literals (in vector mode
//!   the seed dimension stays innermost).
//! - Sizes, ranges, scratch storage and checks have no tangent; `update_acc` writes the
//!   tangents of its values to the tangent accumulator.
//!
//! Work and span: those of the operation, times a small constant (times the number of
//! seeds for the work in vector mode).

use super::{Contribution, Diff, R};
use crate::alg::{prim_of, IrAlg};
use runic_ir::*;
use runic_prim::deriv::{self, Algebra};

impl Diff {
    /// The tangent of a basic operation binding `p` (its primal is already emitted).
    pub(super) fn basic(&mut self, b: &mut Builder, p: &Param, op: BasicOp) -> R<Option<SubExp>> {
        let r = SubExp::Var(p.name);
        // A linear operation: the same operation on the tangents.
        let same = |b: &mut Builder, op: BasicOp| -> R<_> { Ok(Some(b.let_basic("d", op)?)) };
        // The same, when its shape is computed at run time (a slice, a concatenation): the
        // tangent of the primal's type.
        let sized =
            |d: &Self, b: &mut Builder, op: BasicOp| Some(b.basic("d", op, d.tan_ty(&p.ty)));
        Ok(match op {
            BasicOp::SubExp(a) => self.tan_opt(&a),
            // dr = ∂r/∂x·dx + ∂r/∂y·dy
            BasicOp::BinOp(op, x, y) => {
                let (dx, dy) = (self.tan_opt(&x), self.tan_opt(&y));
                if dx.is_none() && dy.is_none() {
                    return Ok(None);
                }
                let t = prim_of(b.names, &x)?;
                let ps = deriv::binop_partials(&mut IrAlg { b }, op, t, &x, &y, &r)?;
                let rt = p.ty.elem().unwrap_or(t);
                self.combine(b, rt, ps.into_iter().zip([(x, dx), (y, dy)]).collect())?
            }
            BasicOp::UnOp(op, x) => {
                let Some(dx) = self.tan_opt(&x) else {
                    return Ok(None);
                };
                let t = prim_of(b.names, &x)?;
                let d = deriv::unop_partial(&mut IrAlg { b }, op, t, &x, &r)?;
                let rt = p.ty.elem().unwrap_or(t);
                self.combine(b, rt, vec![(d, (x, Some(dx)))])?
            }
            BasicOp::Convert(to, x) => {
                let Some(dx) = self.tan_opt(&x) else {
                    return Ok(None);
                };
                let d = deriv::convert_partial(prim_of(b.names, &x)?, to);
                self.combine(b, to, vec![(d, (x, Some(dx)))])?
            }
            BasicOp::TernOp(op, x, y, z) => {
                let ds = [self.tan_opt(&x), self.tan_opt(&y), self.tan_opt(&z)];
                if ds.iter().all(Option::is_none) {
                    return Ok(None);
                }
                let t = prim_of(b.names, &x)?;
                let ps = match op {
                    TernOp::Fma | TernOp::Mad | TernOp::MadHi => {
                        deriv::fma_partials::<IrAlg>(&x, &y)
                    }
                    TernOp::Lerp => deriv::lerp_partials(&mut IrAlg { b }, t, &x, &y, &z)?,
                    // set_bit: the reference treats it as constant.
                    TernOp::SetBit => return Ok(None),
                };
                let [d0, d1, d2] = ds;
                let ops = ps.into_iter().zip([(x, d0), (y, d1), (z, d2)]).collect();
                self.combine(b, p.ty.elem().unwrap_or(t), ops)?
            }
            // d(a[i]) = da[i]
            BasicOp::Index(arr, idx) => match self.tan_of_var(arr) {
                Some(da) => sized(self, b, BasicOp::Index(da, idx)),
                None => None,
            },
            // d(a with [i] = v) = da with [i] = dv
            BasicOp::Update(arr, idx, v) => {
                if self.tan_opt(&SubExp::Var(arr)).is_none() && self.tan_opt(&v).is_none() {
                    return Ok(None);
                }
                let da = self.tan_var(b, arr)?;
                let dv = self.tan(b, &v)?;
                same(b, BasicOp::Update(da, idx, dv))?
            }
            BasicOp::Replicate(shape, v) => match self.tan_opt(&v) {
                Some(dv) => same(b, BasicOp::Replicate(shape, dv))?,
                None => None,
            },
            // In vector mode the seed dimension stays innermost.
            BasicOp::Reshape { arr, mut shape } => match self.tan_of_var(arr) {
                Some(da) => {
                    shape.extend(self.seeds.clone());
                    same(b, BasicOp::Reshape { arr: da, shape })?
                }
                None => None,
            },
            BasicOp::Rearrange(mut perm, arr) => match self.tan_of_var(arr) {
                Some(da) => {
                    if self.seeds.is_some() {
                        perm.push(perm.len());
                    }
                    same(b, BasicOp::Rearrange(perm, da))?
                }
                None => None,
            },
            BasicOp::Copy(arr) => match self.tan_of_var(arr) {
                Some(da) => same(b, BasicOp::Copy(da))?,
                None => None,
            },
            BasicOp::Concat(dim, arrs) => {
                if arrs.iter().all(|a| self.tan_of_var(*a).is_none()) {
                    return Ok(None);
                }
                let das = self.tans_of(b, &arrs)?;
                sized(self, b, BasicOp::Concat(dim, das))
            }
            BasicOp::ArrayLit(es, ety) => {
                if es.iter().all(|e| self.tan_opt(e).is_none()) {
                    return Ok(None);
                }
                let des = es.iter().map(|e| self.tan(b, e)).collect::<R<Vec<_>>>()?;
                same(b, BasicOp::ArrayLit(des, self.tan_ty(&ety)))?
            }
            // Sizes, index ranges, fresh storage and checks have zero tangents.
            BasicOp::Range { .. }
            | BasicOp::ArraySize(..)
            | BasicOp::Scratch(..)
            | BasicOp::Assert { .. }
            | BasicOp::ShapeCheck { .. } => None,
            // The tangent accumulator gets the tangents of the values (zeros included: an
            // accumulator without an operator overwrites).
            BasicOp::UpdateAcc { acc, is, vals } => match self.tan_of_var(acc) {
                Some(dacc) => {
                    let dvals: Vec<SubExp> =
                        vals.iter().map(|v| self.tan(b, v)).collect::<R<_>>()?;
                    if self.seeded_accs.contains(&dacc) {
                        return self.update_seeded_acc(b, dacc, is, dvals).map(Some);
                    }
                    let op = BasicOp::UpdateAcc {
                        acc: dacc,
                        is,
                        vals: dvals,
                    };
                    same(b, op)?
                }
                None => None,
            },
        })
    }
}

/// `Σᵢ ∂ᵢ·dxᵢ` over the contributions with a tangent, on scalar tangents of type `rt`
/// (each term from the derivative table's push-forward; `None` when all are zero).
pub(super) fn push_forward_sum(
    b: &mut Builder,
    rt: PrimType,
    parts: Vec<Contribution>,
) -> R<Option<SubExp>> {
    let mut acc: Option<SubExp> = None;
    for (p, (x, dx)) in parts {
        let Some(dx) = dx else { continue };
        let in_t = prim_of(b.names, &x)?;
        let mut alg = IrAlg { b };
        let Some(c) = deriv::push_forward(&mut alg, &p, in_t, &dx)? else {
            continue;
        };
        acc = Some(match acc {
            None => c,
            Some(a) => alg.tadd(rt, &a, &c)?,
        });
    }
    Ok(acc)
}
