//! Builder-like helpers of the reverse-mode rules: binding adjoint sums (scalars and
//! arrays), accumulator updates, maps of lambdas built in place, `iota`, reversing rows,
//! inlining a lambda, selections and branches.

use super::{Rev, R};
use crate::error::AdError;
use runic_ir::builder::binop_type;
use runic_ir::*;

pub fn copy_stm(p: Param, s: SubExp, src: &SrcInfo) -> Stm {
    Stm {
        pat: vec![p],
        exp: Exp::Basic(BasicOp::SubExp(s)),
        src: src.clone(),
    }
}

/// `a + c` for adjoints of type `ty` (elementwise for arrays, into a fresh array).
pub fn add_values(rev: &mut Rev, b: &mut Builder, ty: &Type, a: SubExp, c: SubExp) -> R<SubExp> {
    match ty {
        Type::Prim(t) => Ok(add_scalars(rev, b, *t, a, c)),
        Type::Array { .. } => {
            let (SubExp::Var(av), SubExp::Var(cv)) = (&a, &c) else {
                return Err(AdError::internal("array adjoints must be variables"));
            };
            Ok(SubExp::Var(add_arrays(rev, b, ty, *av, *cv)))
        }
        Type::Acc { .. } => Err(AdError::unsupported("adjoints of accumulators")),
    }
}

pub fn add_scalars(rev: &mut Rev, b: &mut Builder, t: PrimType, a: SubExp, c: SubExp) -> SubExp {
    let op = if t == PrimType::Bool {
        BinOp::LogOr
    } else {
        BinOp::Add
    };
    let r = b.binop(op, a, c, t);
    if let SubExp::Var(v) = &r {
        b.names.set_type(*v, Type::Prim(binop_type(op, t)));
    }
    r
}

/// Elementwise sum of two arrays of type `ty` (nested maps, one per dimension).
fn add_arrays(rev: &mut Rev, b: &mut Builder, ty: &Type, a: VName, c: VName) -> VName {
    let Type::Array { elem, shape } = ty else {
        return a;
    };
    let row = ty.row();
    let x = rev.fresh_param(b, "x", &row);
    let y = rev.fresh_param(b, "y", &row);
    let mut sb = Builder::new(b.names);
    sb.src = b.src.clone();
    let r = match &row {
        Type::Prim(_) => add_scalars(
            rev,
            &mut sb,
            *elem,
            SubExp::Var(x.name),
            SubExp::Var(y.name),
        ),
        _ => SubExp::Var(add_arrays(rev, &mut sb, &row, x.name, y.name)),
    };
    let body = sb.finish(vec![r]);
    let lam = Lambda {
        id: runic_ir::LamId::fresh(),
        params: vec![x, y],
        body,
        ret: vec![row],
    };
    rev.bind(
        b,
        "adj",
        Exp::Soac(Soac::Map {
            w: shape[0].clone(),
            lam,
            arrs: vec![a, c],
        }),
        ty.clone(),
    )
}

/// `acc[is ++ j…] += c[j…]` for every element of `c` (a scalar, or an array written at
/// every index below `is`), through the accumulator `acc`.
pub fn acc_add_all(
    rev: &mut Rev,
    b: &mut Builder,
    acc: VName,
    is: Vec<SubExp>,
    c: SubExp,
) -> R<()> {
    let acc_ty = b.type_of(&SubExp::Var(acc))?;
    let cty = b.type_of(&c)?;
    match &cty {
        Type::Prim(_) => {
            rev.bind(
                b,
                "acc",
                Exp::Basic(BasicOp::UpdateAcc {
                    acc,
                    is,
                    vals: vec![c],
                }),
                acc_ty,
            );
            Ok(())
        }
        Type::Array { shape, .. } => {
            let SubExp::Var(cv) = c else {
                return Err(AdError::internal("array adjoints must be variables"));
            };
            let n = shape[0].clone();
            let iota = iota(rev, b, n.clone());
            let j = rev.fresh_param(b, "j", &Type::Prim(PrimType::I64));
            let row = rev.fresh_param(b, "row", &cty.row());
            let mut sb = Builder::new(b.names);
            sb.src = b.src.clone();
            let mut is2 = is;
            is2.push(SubExp::Var(j.name));
            acc_add_all(rev, &mut sb, acc, is2, SubExp::Var(row.name))?;
            let body = sb.finish(vec![SubExp::Var(j.name)]);
            let i64t = Type::Prim(PrimType::I64);
            rev.bind(
                b,
                "done",
                Exp::Soac(Soac::Map {
                    w: n.clone(),
                    lam: Lambda {
                        id: runic_ir::LamId::fresh(),
                        params: vec![j, row],
                        body,
                        ret: vec![i64t.clone()],
                    },
                    arrs: vec![iota, cv],
                }),
                i64t.array_of(n),
            );
            Ok(())
        }
        Type::Acc { .. } => Err(AdError::unsupported("adjoints of accumulators")),
    }
}

/// `iota n` (an `i64` array).
pub fn iota(rev: &mut Rev, b: &mut Builder, n: SubExp) -> VName {
    let ty = Type::Prim(PrimType::I64).array_of(n.clone());
    rev.bind(
        b,
        "iota",
        Exp::Basic(BasicOp::Range {
            start: SubExp::i64(0),
            second: Some(SubExp::i64(1)),
            end: n,
            kind: RangeKind::UpToExclusive,
            elem: PrimType::I64,
        }),
        ty,
    )
}

/// A `map` of a lambda built by `f` (given the parameters) over `arrs`; returns the result
/// arrays.
pub fn map(
    rev: &mut Rev,
    b: &mut Builder,
    w: &SubExp,
    arrs: Vec<VName>,
    ret: Vec<Type>,
    f: impl FnOnce(&mut Rev, &mut Builder, &[VName]) -> R<Vec<SubExp>>,
) -> R<Vec<VName>> {
    let mut params = Vec::new();
    for a in &arrs {
        let t = b.type_of(&SubExp::Var(*a))?.row();
        params.push(rev.fresh_param(b, "x", &t));
    }
    let names: Vec<VName> = params.iter().map(|p| p.name).collect();
    let mut sb = Builder::new(b.names);
    sb.src = b.src.clone();
    let res = f(rev, &mut sb, &names)?;
    let body = sb.finish(res);
    let tys: Vec<Type> = ret.iter().map(|t| t.array_of(w.clone())).collect();
    Ok(rev.bind_many(
        b,
        "m",
        Exp::Soac(Soac::Map {
            w: w.clone(),
            lam: Lambda {
                id: runic_ir::LamId::fresh(),
                params,
                body,
                ret,
            },
            arrs,
        }),
        tys,
    ))
}

/// The rows of `arr` (outer size `w`) in reverse order (`arr[::-1]`, as `reverse`).
pub fn reverse(rev: &mut Rev, b: &mut Builder, w: &SubExp, arr: VName) -> R<VName> {
    let t = b.type_of(&SubExp::Var(arr))?;
    let Type::Array { elem, shape } = t else {
        return Err(AdError::internal("reversing a non-array"));
    };
    let mut shape = shape;
    shape[0] = w.clone();
    let idx = vec![DimIndex::Slice {
        start: None,
        end: None,
        stride: Some(SubExp::i64(-1)),
    }];
    Ok(rev.bind(
        b,
        "rev",
        Exp::Basic(BasicOp::Index(arr, idx)),
        Type::Array { elem, shape },
    ))
}

/// Inline a renamed copy of `lam` applied to `args`; its results.
pub fn apply(rev: &mut Rev, b: &mut Builder, lam: &Lambda, args: &[SubExp]) -> Vec<SubExp> {
    let l = rev.renamed(b, lam);
    let src = b.src.clone();
    for (p, a) in l.params.iter().zip(args) {
        b.add(copy_stm(p.clone(), a.clone(), &src));
    }
    for s in l.body.stms {
        b.add(s);
    }
    l.body.result
}

/// `if c then a else b` on scalars of type `t`.
pub fn select(
    rev: &mut Rev,
    b: &mut Builder,
    t: PrimType,
    c: SubExp,
    x: SubExp,
    y: SubExp,
) -> SubExp {
    if let SubExp::Const(Prim::Bool(k)) = c {
        return if k { x } else { y };
    }
    let r = b.if_(
        c,
        vec![Type::Prim(t)],
        |_| vec![x.clone()],
        |_| vec![y.clone()],
    )[0];
    b.names.set_type(r, Type::Prim(t));
    SubExp::Var(r)
}

/// A scalar binary operation, its result's type recorded.
pub fn binop(
    rev: &mut Rev,
    b: &mut Builder,
    op: BinOp,
    x: SubExp,
    y: SubExp,
    t: PrimType,
) -> SubExp {
    let r = b.binop(op, x, y, t);
    if let SubExp::Var(v) = &r {
        b.names.set_type(*v, Type::Prim(binop_type(op, t)));
    }
    r
}

/// `if c then (then_f) else (else_f)` where each branch is built by a closure.
pub fn if_with(
    rev: &mut Rev,
    b: &mut Builder,
    c: SubExp,
    tys: Vec<Type>,
    then_f: impl FnOnce(&mut Rev, &mut Builder) -> R<Vec<SubExp>>,
    else_f: impl FnOnce(&mut Rev, &mut Builder) -> R<Vec<SubExp>>,
) -> R<Vec<SubExp>> {
    let mut tb = Builder::new(b.names);
    tb.src = b.src.clone();
    let tr = then_f(rev, &mut tb)?;
    let then_body = tb.finish(tr);
    let mut eb = Builder::new(b.names);
    eb.src = b.src.clone();
    let er = else_f(rev, &mut eb)?;
    let else_body = eb.finish(er);
    let vs = rev.bind_many(
        b,
        "r",
        Exp::If {
            cond: c,
            then_body,
            else_body,
            ret: tys.clone(),
        },
        tys,
    );
    Ok(vs.into_iter().map(SubExp::Var).collect())
}
