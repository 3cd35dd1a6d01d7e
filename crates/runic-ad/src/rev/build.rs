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
        Type::Prim(_) => add_scalars(b, a, c),
        Type::Array { shape, .. } => {
            let (SubExp::Var(a), SubExp::Var(c)) = (a, c) else {
                return Err(AdError::internal("array adjoints must be variables"));
            };
            let row = ty.row();
            let plus = b.lam(
                vec![("x", row.clone()), ("y", row.clone())],
                |b, xy| -> R<_> { Ok(vec![add_values(b, &row, xy[0].clone(), xy[1].clone())?]) },
            )?;
            Ok(SubExp::Var(
                b.map("adj", shape[0].clone(), plus, vec![a, c])?[0],
            ))
        }
        Type::Acc { .. } => Err(AdError::unsupported("adjoints of accumulators")),
    }
}

/// `a + c` on scalars (`a || c` on booleans).
pub fn add_scalars(b: &mut Builder, a: SubExp, c: SubExp) -> R<SubExp> {
    let op = match b.prim_of(&a)? {
        PrimType::Bool => BinOp::LogOr,
        _ => BinOp::Add,
    };
    Ok(b.op2(op, a, c)?)
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
