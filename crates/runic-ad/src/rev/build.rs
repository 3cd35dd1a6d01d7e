//! Adding adjoints: `a + c` for adjoints of any type (elementwise for arrays, `||` for
//! booleans) and `acc[is…] += c` through an accumulator, plus `let p = s` for results
//! whose names are given. Everything else a rule builds comes from the typed builder
//! (`runic_ir::Builder`: `let_exp`, `op2`, `select`, `lam`, `map_fn`, `let_if`, `inline`, …).

use super::R;
use crate::error::AdError;
use runic_ir::*;

/// `a[i]` (a row or an element), to bind with a name hint: `b.let_basic("x", at(a, i))`.
pub fn at(a: VName, i: SubExp) -> BasicOp {
    BasicOp::Index(a, vec![DimIndex::Fix(i)])
}

/// `let p = s`.
pub fn copy_to(b: &mut Builder, p: Param, s: SubExp) {
    b.let_pat(vec![p], Exp::Basic(BasicOp::SubExp(s)));
}

/// `a + c` for adjoints of type `ty` (elementwise for arrays, into a fresh array).
pub fn add_values(b: &mut Builder, ty: &Type, a: SubExp, c: SubExp) -> R<SubExp> {
    match ty {
        Type::Acc { .. } => Err(AdError::unsupported("adjoints of accumulators")),
        Type::Array { .. } if !matches!((&a, &c), (SubExp::Var(_), SubExp::Var(_))) => {
            Err(AdError::internal("array adjoints must be variables"))
        }
        _ => Ok(b.add_values(ty, a, c)?),
    }
}

/// `acc[is ++ j…] += c[j…]` for every element of `c` (a scalar, or an array written at
/// every index below `is`), through the accumulator `acc`.
pub fn acc_add_all(b: &mut Builder, acc: VName, is: Vec<SubExp>, c: SubExp) -> R<()> {
    let ct = b.type_of(&c)?;
    match &ct {
        Type::Prim(_) => {
            let vals = vec![c];
            b.let_basic("acc", BasicOp::UpdateAcc { acc, is, vals })?;
            Ok(())
        }
        Type::Array { shape, .. } => {
            let c = c
                .as_var()
                .ok_or_else(|| AdError::internal("array adjoints must be variables"))?;
            let n = shape[0].clone();
            let iota = b.iota(n.clone());
            let i64t = Type::Prim(PrimType::I64);
            let rows = b.lam(vec![("j", i64t), ("row", ct.row())], |b, jr| -> R<_> {
                let is = [is, vec![jr[0].clone()]].concat();
                acc_add_all(b, acc, is, jr[1].clone())?;
                Ok(vec![jr[0].clone()])
            })?;
            b.map("done", n, rows, vec![iota, c])?;
            Ok(())
        }
        Type::Acc { .. } => Err(AdError::unsupported("adjoints of accumulators")),
    }
}

/// `acc[idx] += c` for the read `x = arr[idx]` inside a map, where `acc` is the adjoint of
/// the free array `arr`: one `update_acc` per element of `c`. A plain index joins the
/// accumulator index; a slice `start:end:stride` is a map over its positions `j` (as many
/// as `c`'s next dimension) writing at `start + j·stride`. So each element costs O(1), a
/// slice's elements are updated in parallel, and dimensions after `idx` are whole rows.
pub fn acc_add_at(b: &mut Builder, acc: VName, arr: VName, idx: &[DimIndex], c: SubExp) -> R<()> {
    acc_add_dims(b, acc, arr, Vec::new(), idx, c)
}

/// [`acc_add_at`] for the index components `idx` after the accumulator indices `is`.
fn acc_add_dims(
    b: &mut Builder,
    acc: VName,
    arr: VName,
    mut is: Vec<SubExp>,
    idx: &[DimIndex],
    c: SubExp,
) -> R<()> {
    let Some((d, rest)) = idx.split_first() else {
        return acc_add_all(b, acc, is, c);
    };
    match d {
        DimIndex::Fix(i) => {
            is.push(as_i64(b, i)?);
            acc_add_dims(b, acc, arr, is, rest, c)
        }
        DimIndex::Slice { start, stride, .. } => {
            let stride = match stride {
                Some(s) => as_i64(b, s)?,
                None => SubExp::i64(1),
            };
            let start = match start {
                Some(s) => as_i64(b, s)?,
                None => default_start(b, arr, is.len(), &stride)?,
            };
            let c = c
                .as_var()
                .ok_or_else(|| AdError::internal("the adjoint of a slice is a scalar"))?;
            let n = b.array_size(c, 0);
            let js = b.iota(n.clone());
            b.map_fn("done", n, vec![js, c], |b, jc| -> R<_> {
                let (j, row) = (jc[0].clone(), jc[1].clone());
                let step = b.mul_(j.clone(), stride)?;
                let k = b.add_(start, step)?;
                acc_add_dims(b, acc, arr, [is, vec![k]].concat(), rest, row)?;
                Ok(vec![j])
            })?;
            Ok(())
        }
    }
}

/// Where a slice of dimension `dim` of `arr` without a start begins (language.md §7.6): at
/// 0 going up, at the last index going down.
fn default_start(b: &mut Builder, arr: VName, dim: usize, stride: &SubExp) -> R<SubExp> {
    match stride {
        SubExp::Const(p) if p.as_int().is_some_and(|s| s > 0) => Ok(SubExp::i64(0)),
        _ => {
            let w = b.array_size(arr, dim);
            let last = b.sub_(w, SubExp::i64(1))?;
            let up = b.op2(BinOp::Gt, stride.clone(), SubExp::i64(0))?;
            Ok(b.select(up, SubExp::i64(0), last)?)
        }
    }
}

/// An array index as an `i64` (accumulator indices are `i64`; array indices may be any
/// integer type).
fn as_i64(b: &mut Builder, i: &SubExp) -> R<SubExp> {
    Ok(match b.prim_of(i)? {
        PrimType::I64 => i.clone(),
        _ => b.convert(PrimType::I64, i.clone()),
    })
}
