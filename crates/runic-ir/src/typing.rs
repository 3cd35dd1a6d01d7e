//! The result types of an expression, computed from the types of its operands: what a
//! builder needs to bind an expression without being told its types.
//!
//! Shapes are exact where they follow from the operands (a map's result is `[w]` of its
//! lambda's results, an index with fixed components drops dimensions, a transpose permutes
//! them). Where a shape must be computed at run time (a bounded slice, a range, a
//! concatenation), [`exp_types`] says so and the caller binds with explicit types (the
//! builder's `index`, `concat` and `range` helpers compute those sizes).

use crate::builder::{binop_type, unop_type};
use crate::ir::*;
use std::collections::HashMap;
use std::fmt;

/// Why the types of an expression could not be inferred: always a bug in the code that
/// built it (an operand without a known type, operands of mismatched types), or an
/// expression whose result shape needs run-time sizes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeError(pub String);

impl fmt::Display for TypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot type IR: {}", self.0)
    }
}

impl std::error::Error for TypeError {}

pub type TResult<T> = Result<T, TypeError>;

/// Where types of variables are looked up.
pub trait TypeEnv {
    fn lookup(&self, v: VName) -> Option<&Type>;
}

impl TypeEnv for NameSource {
    fn lookup(&self, v: VName) -> Option<&Type> {
        self.type_of(v)
    }
}

impl TypeEnv for HashMap<VName, Type> {
    fn lookup(&self, v: VName) -> Option<&Type> {
        self.get(&v)
    }
}

fn err<T>(msg: impl Into<String>) -> TResult<T> {
    Err(TypeError(msg.into()))
}

/// The type of an operand.
pub fn subexp_type(env: &impl TypeEnv, s: &SubExp) -> TResult<Type> {
    match s {
        SubExp::Const(c) => Ok(Type::Prim(c.ty())),
        SubExp::Var(v) => var_type(env, *v),
    }
}

pub fn var_type(env: &impl TypeEnv, v: VName) -> TResult<Type> {
    env.lookup(v)
        .cloned()
        .ok_or_else(|| TypeError(format!("no type known for {v}")))
}

/// The primitive type of a scalar operand.
pub fn prim_type(env: &impl TypeEnv, s: &SubExp) -> TResult<PrimType> {
    match subexp_type(env, s)? {
        Type::Prim(p) => Ok(p),
        t => err(format!("{s:?} is not a scalar but {t:?}")),
    }
}

fn arrays_of(ts: &[Type], w: &SubExp) -> Vec<Type> {
    ts.iter().map(|t| t.array_of(w.clone())).collect()
}

/// The types of the values `e` binds, in pattern order.
pub fn exp_types(env: &impl TypeEnv, e: &Exp) -> TResult<Vec<Type>> {
    match e {
        Exp::Basic(op) => Ok(vec![basic_type(env, op)?]),
        Exp::Apply { ret, .. } | Exp::If { ret, .. } => Ok(ret.clone()),
        Exp::Loop { params, .. } => Ok(params.iter().map(|(p, _)| p.ty.clone()).collect()),
        Exp::Soac(s) => soac_types(env, s),
        Exp::WithAcc { inputs, lam } => {
            let mut out = Vec::new();
            for i in inputs {
                for a in &i.arrays {
                    out.push(var_type(env, *a)?);
                }
            }
            out.extend(lam.ret.iter().skip(inputs.len()).cloned());
            Ok(out)
        }
        Exp::Jvp {
            lam,
            tangents,
            vector,
            ..
        } => {
            let mut out = lam.ret.clone();
            out.extend(seeded(env, &lam.ret, tangents, *vector)?);
            Ok(out)
        }
        Exp::Vjp {
            lam,
            cotangents,
            vector,
            ..
        } => {
            let mut out = lam.ret.clone();
            let params: Vec<Type> = lam.params.iter().map(|p| p.ty.clone()).collect();
            out.extend(seeded(env, &params, cotangents, *vector)?);
            Ok(out)
        }
        Exp::WithVjp { f, .. } => Ok(f.ret.clone()),
    }
}

/// The types of derivatives of values of types `ts`: the same, or with the seeds' outer
/// dimension in front (`jmp`/`mjp`).
fn seeded(env: &impl TypeEnv, ts: &[Type], seeds: &[SubExp], vector: bool) -> TResult<Vec<Type>> {
    if !vector {
        return Ok(ts.to_vec());
    }
    let Some(first) = seeds.first() else {
        return err("vector derivative without seeds");
    };
    let k = match subexp_type(env, first)? {
        Type::Array { shape, .. } => shape[0].clone(),
        t => return err(format!("seeds of type {t:?} are not an array")),
    };
    Ok(arrays_of(ts, &k))
}

fn soac_types(env: &impl TypeEnv, s: &Soac) -> TResult<Vec<Type>> {
    match s {
        Soac::Map { w, lam, .. } => Ok(arrays_of(&lam.ret, w)),
        Soac::Reduce { neutral, .. } => neutral.iter().map(|n| subexp_type(env, n)).collect(),
        Soac::Scan { w, neutral, .. } => {
            let ts: Vec<Type> = neutral
                .iter()
                .map(|n| subexp_type(env, n))
                .collect::<TResult<_>>()?;
            Ok(arrays_of(&ts, w))
        }
        Soac::Hist { dests, .. } | Soac::Scatter { dests, .. } => {
            dests.iter().map(|d| var_type(env, *d)).collect()
        }
    }
}

fn basic_type(env: &impl TypeEnv, op: &BasicOp) -> TResult<Type> {
    let prim = |p| Ok(Type::Prim(p));
    match op {
        BasicOp::SubExp(s) => subexp_type(env, s),
        BasicOp::BinOp(op, a, b) => {
            let (ta, tb) = (prim_type(env, a)?, prim_type(env, b)?);
            match op {
                BinOp::GetBit => prim(PrimType::I32),
                BinOp::Ldexp => prim(ta),
                _ if ta != tb => err(format!("{op:?} of {ta} and {tb}")),
                _ => prim(binop_type(*op, ta)),
            }
        }
        BasicOp::UnOp(op, a) => prim(unop_type(*op, prim_type(env, a)?)),
        BasicOp::TernOp(op, a, b, _) => match op {
            TernOp::SetBit => prim(prim_type(env, b)?),
            _ => prim(prim_type(env, a)?),
        },
        BasicOp::Convert(t, _) => prim(*t),
        BasicOp::Index(arr, idx) => index_type(&var_type(env, *arr)?, idx),
        BasicOp::Update(arr, ..) | BasicOp::Copy(arr) => var_type(env, *arr),
        BasicOp::Range { .. } => err("a range's size is computed at run time"),
        BasicOp::Replicate(shape, v) => {
            let mut t = subexp_type(env, v)?;
            for d in shape.iter().rev() {
                t = t.array_of(d.clone());
            }
            Ok(t)
        }
        BasicOp::Reshape { arr, shape } => match var_type(env, *arr)?.elem() {
            Some(elem) => Ok(Type::Array {
                elem,
                shape: shape.clone(),
            }),
            None => err("reshape of an accumulator"),
        },
        BasicOp::Rearrange(perm, arr) => match var_type(env, *arr)? {
            Type::Array { elem, shape } if perm.len() == shape.len() => Ok(Type::Array {
                elem,
                shape: perm.iter().map(|&i| shape[i].clone()).collect(),
            }),
            t => err(format!("rearrange {perm:?} of {t:?}")),
        },
        BasicOp::Concat(..) => err("a concatenation's size is computed at run time"),
        BasicOp::ArrayLit(rows, t) => Ok(t.array_of(SubExp::i64(rows.len() as i64))),
        BasicOp::Scratch(elem, shape) => Ok(Type::Array {
            elem: *elem,
            shape: shape.clone(),
        }),
        BasicOp::ArraySize(..) => prim(PrimType::I64),
        BasicOp::Assert { .. } | BasicOp::ShapeCheck { .. } => prim(PrimType::Bool),
        BasicOp::UpdateAcc { acc, .. } => var_type(env, *acc),
    }
}

/// The type of `arr[idx]` when every slice component is a whole dimension (`:`); a bounded
/// slice's size is computed at run time.
pub fn index_type(arr: &Type, idx: &[DimIndex]) -> TResult<Type> {
    let Type::Array { elem, shape } = arr else {
        return err(format!("indexing {arr:?}"));
    };
    if idx.len() > shape.len() {
        return err(format!("{} indices into rank {}", idx.len(), shape.len()));
    }
    let mut out = Vec::new();
    for (d, i) in shape.iter().zip(idx) {
        match i {
            DimIndex::Fix(_) => {}
            DimIndex::Slice {
                start: None,
                end: None,
                stride: None,
            } => out.push(d.clone()),
            DimIndex::Slice { .. } => return err("a bounded slice's size is computed at run time"),
        }
    }
    out.extend(shape[idx.len()..].iter().cloned());
    Ok(if out.is_empty() {
        Type::Prim(*elem)
    } else {
        Type::Array {
            elem: *elem,
            shape: out,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_of_basic_operations() {
        let mut env = HashMap::new();
        let n = VName(0);
        let a = VName(1);
        env.insert(n, Type::Prim(PrimType::I64));
        let mat = Type::Array {
            elem: PrimType::F32,
            shape: vec![SubExp::Var(n), SubExp::i64(3)],
        };
        env.insert(a, mat.clone());
        let row = exp_types(
            &env,
            &Exp::Basic(BasicOp::Index(a, vec![DimIndex::Fix(SubExp::i64(0))])),
        )
        .unwrap();
        assert_eq!(row, vec![mat.row()]);
        let tr = exp_types(&env, &Exp::Basic(BasicOp::Rearrange(vec![1, 0], a))).unwrap();
        assert_eq!(
            tr[0],
            Type::Array {
                elem: PrimType::F32,
                shape: vec![SubExp::i64(3), SubExp::Var(n)]
            }
        );
        let cmp = Exp::Basic(BasicOp::BinOp(BinOp::Lt, SubExp::Var(n), SubExp::i64(2)));
        assert_eq!(
            exp_types(&env, &cmp).unwrap(),
            vec![Type::Prim(PrimType::Bool)]
        );
        let bad = Exp::Basic(BasicOp::BinOp(
            BinOp::Add,
            SubExp::Var(n),
            SubExp::Const(Prim::F32(1.0)),
        ));
        assert!(exp_types(&env, &bad).is_err());
        let unknown = Exp::Basic(BasicOp::Copy(VName(9)));
        assert!(exp_types(&env, &unknown).is_err());
    }
}
