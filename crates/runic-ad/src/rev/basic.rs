//! Return sweep of scalar and array operations (no nested scopes).
//!
//! - Scalar operations: `ā += ∂f/∂a · vbar` for each operand, the partials taken from the
//!   derivative table shared with forward mode (`runic_prim::deriv`).
//! - `x = a[i]`: `ā[i] += xbar` (in place, or through an accumulator inside a map).
//! - `r = a with [i] = v`: `vbar += r̄[i]`, `ā += r̄ with [i] = 0`.
//! - Reshapes, transpositions, copies, concatenations and array literals move adjoints
//!   back the same way; `replicate` sums them. Work and span are those of the operation.

use super::{common, Rev, R};
use crate::alg::{prim_of, IrAlg};
use crate::error::AdError;
use runic_ir::*;
use runic_prim::deriv::{self, Partial};

pub fn reverse(rev: &mut Rev, b: &mut Builder, pat: &[Param], op: BasicOp) -> R<()> {
    let [p] = pat else { return Ok(()) };
    let Some(vbar) = rev.adjs.get(&p.name).cloned() else {
        return Ok(());
    };
    let r = SubExp::Var(p.name);
    match op {
        BasicOp::SubExp(a) => rev.add_adj(b, &a, vbar),
        BasicOp::Copy(a) => rev.add_adj(b, &SubExp::Var(a), vbar),
        BasicOp::BinOp(op, x, y) => {
            if !rev.is_active(&x) && !rev.is_active(&y) {
                return Ok(());
            }
            let t = prim_of(b.names, &x)?;
            let rt = p.ty.elem().unwrap_or(t);
            let ps = {
                let mut alg = IrAlg { b };
                deriv::binop_partials(&mut alg, op, t, &x, &y, &r)?
            };
            let [px, py] = ps;
            pull(rev, b, px, rt, &vbar, &x)?;
            pull(rev, b, py, rt, &vbar, &y)
        }
        BasicOp::UnOp(op, x) => {
            if !rev.is_active(&x) {
                return Ok(());
            }
            let t = prim_of(b.names, &x)?;
            let rt = p.ty.elem().unwrap_or(t);
            let px = {
                let mut alg = IrAlg { b };
                deriv::unop_partial(&mut alg, op, t, &x, &r)?
            };
            pull(rev, b, px, rt, &vbar, &x)
        }
        BasicOp::Convert(to, x) => {
            let from = prim_of(b.names, &x)?;
            pull(rev, b, deriv::convert_partial(from, to), to, &vbar, &x)
        }
        BasicOp::TernOp(op, x, y, z) => {
            let t = prim_of(b.names, &x)?;
            let ps = match op {
                TernOp::Fma | TernOp::Mad | TernOp::MadHi => deriv::fma_partials::<IrAlg>(&x, &y),
                TernOp::Lerp => {
                    let mut alg = IrAlg { b };
                    deriv::lerp_partials(&mut alg, t, &x, &y, &z)?
                }
                // set_bit: constant, as in the reference.
                TernOp::SetBit => return Ok(()),
            };
            let rt = p.ty.elem().unwrap_or(t);
            for (pa, a) in ps.into_iter().zip([x, y, z]) {
                pull(rev, b, pa, rt, &vbar, &a)?;
            }
            Ok(())
        }
        BasicOp::Index(a, idx) => rev.add_adj_at(b, a, &idx, vbar),
        BasicOp::Update(a, idx, v) => {
            // vbar += r̄[idx]; ā += r̄ with [idx] = 0.
            let vt = b.type_of(&v)?;
            let vbar_arr = vbar
                .as_var()
                .ok_or_else(|| AdError::internal("array adjoint is a scalar"))?;
            if rev.is_active(&v) {
                // Of the type of `v` (`idx` may be a slice, whose size is known at run time).
                let part = b.bind1(
                    "adj",
                    Exp::Basic(BasicOp::Index(vbar_arr, idx.clone())),
                    vt.clone(),
                );
                rev.add_adj(b, &v, SubExp::Var(part))?;
            }
            if rev.active.contains(&a) {
                let base = if rev.owned.contains(&vbar_arr) {
                    vbar_arr
                } else {
                    b.let_exp("adj", Exp::Basic(BasicOp::Copy(vbar_arr)))?[0]
                };
                let z = rev.zeros(b, &vt)?;
                let cleared = b.let_exp("adj", Exp::Basic(BasicOp::Update(base, idx, z)))?[0];
                rev.owned.insert(cleared);
                rev.adjs.remove(&p.name);
                rev.add_adj(b, &SubExp::Var(a), SubExp::Var(cleared))?;
            }
            Ok(())
        }
        BasicOp::Replicate(shape, v) => {
            if !rev.is_active(&v) {
                return Ok(());
            }
            let vt = b.type_of(&v)?;
            let s = sum_outer(rev, b, &vbar, &shape, &vt)?;
            rev.add_adj(b, &v, s)
        }
        BasicOp::Reshape { arr, .. } => {
            if !rev.active.contains(&arr) {
                return Ok(());
            }
            let Type::Array { shape, .. } = b.type_of(&SubExp::Var(arr))? else {
                return Ok(());
            };
            let vbar_arr = vbar.as_var().ok_or_else(|| AdError::internal("reshape"))?;
            let back = BasicOp::Reshape {
                arr: vbar_arr,
                shape,
            };
            let back = b.let_basic("adj", back)?;
            rev.add_adj(b, &SubExp::Var(arr), back)
        }
        BasicOp::Rearrange(perm, arr) => {
            if !rev.active.contains(&arr) {
                return Ok(());
            }
            let mut inv = vec![0; perm.len()];
            for (i, &p) in perm.iter().enumerate() {
                inv[p] = i;
            }
            let vbar_arr = vbar
                .as_var()
                .ok_or_else(|| AdError::internal("rearrange"))?;
            let back = b.let_basic("adj", BasicOp::Rearrange(inv, vbar_arr))?;
            rev.add_adj(b, &SubExp::Var(arr), back)
        }
        BasicOp::Concat(dim, arrs) => {
            let vbar_arr = vbar.as_var().ok_or_else(|| AdError::internal("concat"))?;
            let mut offset = SubExp::i64(0);
            for a in arrs {
                let at = b.type_of(&SubExp::Var(a))?;
                let n = b.array_size(a, dim);
                let end = b.add_i64(offset.clone(), n);
                if rev.active.contains(&a) {
                    let mut idx: Vec<DimIndex> = (0..dim)
                        .map(|_| DimIndex::Slice {
                            start: None,
                            end: None,
                            stride: None,
                        })
                        .collect();
                    idx.push(DimIndex::Slice {
                        start: Some(offset.clone()),
                        end: Some(end.clone()),
                        stride: None,
                    });
                    // Of the type of `a` (a slice's size is known at run time).
                    let part = b.bind1("adj", Exp::Basic(BasicOp::Index(vbar_arr, idx)), at);
                    // A slice is a view in the reference semantics; copy it so that later
                    // in-place updates of either adjoint cannot interfere.
                    let part = b.let_exp("adj", Exp::Basic(BasicOp::Copy(part)))?[0];
                    rev.owned.insert(part);
                    rev.add_adj(b, &SubExp::Var(a), SubExp::Var(part))?;
                }
                offset = end;
            }
            Ok(())
        }
        BasicOp::ArrayLit(es, _) => {
            let vbar_arr = vbar
                .as_var()
                .ok_or_else(|| AdError::internal("array literal"))?;
            for (k, e) in es.into_iter().enumerate() {
                if rev.is_active(&e) {
                    let at = vec![DimIndex::Fix(SubExp::i64(k as i64))];
                    let part = b.let_basic("adj", BasicOp::Index(vbar_arr, at))?;
                    rev.add_adj(b, &e, part)?;
                }
            }
            Ok(())
        }
        // The reference's observable behaviour (§11.4 Sizes): the end of a range receives
        // the sum of its elements' cotangents.
        BasicOp::Range { end, elem, .. } => {
            if !rev.is_active(&end) {
                return Ok(());
            }
            let xs = vbar.as_var().ok_or_else(|| AdError::internal("range"))?;
            let plus = b.binop_lam(BinOp::Add, elem);
            let Type::Array { shape, .. } = &p.ty else {
                return Ok(());
            };
            let zero = vec![SubExp::Const(Prim::zero(elem))];
            let s = b.reduce_comm("sum", shape[0].clone(), plus, zero, vec![xs])?;
            rev.add_adj(b, &end, s[0].clone())
        }
        // Sizes, fresh storage and checks carry no adjoint.
        BasicOp::ArraySize(..)
        | BasicOp::Scratch(..)
        | BasicOp::Assert { .. }
        | BasicOp::ShapeCheck { .. } => Ok(()),
        BasicOp::UpdateAcc { .. } => Err(AdError::internal(
            "an accumulator update reached the rule for basic operations",
        )),
    }
}

/// `ā += pullback(∂, vbar)` for one scalar operand.
fn pull(
    rev: &mut Rev,
    b: &mut Builder,
    p: Partial<SubExp>,
    out_t: PrimType,
    vbar: &SubExp,
    a: &SubExp,
) -> R<()> {
    if !rev.is_active(a) {
        return Ok(());
    }
    let c = {
        let mut alg = IrAlg { b };
        deriv::pull_back(&mut alg, &p, out_t, vbar)?
    };
    match c {
        Some(c) => rev.add_adj(b, a, c),
        None => Ok(()),
    }
}

/// The sum over the leading dimensions `outer` of `xbar` (whose rows have type `row`): the
/// adjoint of `replicate outer v`.
fn sum_outer(
    rev: &mut Rev,
    b: &mut Builder,
    xbar: &SubExp,
    outer: &[SubExp],
    row: &Type,
) -> R<SubExp> {
    let SubExp::Var(xv) = xbar else {
        return Ok(xbar.clone());
    };
    if outer.is_empty() {
        return Ok(xbar.clone());
    }
    // Flatten the replicated dimensions into one, then reduce with elementwise addition.
    let mut total = SubExp::i64(1);
    for d in outer {
        total = b.mul_i64(total, d.clone());
    }
    let flat = if outer.len() == 1 {
        *xv
    } else {
        let mut shape = vec![total.clone()];
        if let Type::Array { shape: s, .. } = row {
            shape.extend(s.iter().cloned());
        }
        b.let_exp("flat", Exp::Basic(BasicOp::Reshape { arr: *xv, shape }))?[0]
    };
    let plus = common::add_lambda(b, row)?;
    let z = rev.zeros(b, row)?;
    Ok(b.reduce_comm("sum", total, plus, vec![z], vec![flat])?[0].clone())
}
