//! The AD constructs: `jvp2`, `vjp2`, their vector forms `jmp2`, `mjp2`, and `with_vjp`.

use super::*;
use crate::lower::{Lower, R};
use crate::val::Val;
use runic_syntax::Span;

/// The AD intrinsics; `None` if `name` is not one of them.
pub(super) fn call<'a>(
    l: &mut Lower<'a>,
    name: &str,
    args: &[Val<'a>],
    span: Span,
) -> R<Option<Val<'a>>> {
    let v = match name {
        "jvp2" | "vjp2" => {
            let (lam, res) = l.lambda_of(&args[0], &[args[1].clone()], span)?;
            let xs: Vec<SubExp> = l
                .leaves(&args[1], span)?
                .into_iter()
                .map(|(s, _)| s)
                .collect();
            let ts: Vec<SubExp> = l
                .leaves(&args[2], span)?
                .into_iter()
                .map(|(s, _)| s)
                .collect();
            let mut types = lam.ret.clone();
            let exp = if name == "jvp2" {
                types.extend(lam.ret.iter().cloned());
                Exp::Jvp {
                    lam,
                    args: xs,
                    tangents: ts,
                    vector: false,
                }
            } else {
                types.extend(l.leaves(&args[1], span)?.into_iter().map(|(_, t)| t));
                Exp::Vjp {
                    lam,
                    args: xs,
                    cotangents: ts,
                    vector: false,
                }
            };
            let outs = l.emit(&["ad"], exp, types.clone());
            let mut it = outs.into_iter().map(SubExp::Var).zip(types);
            let primal = res.rebuild(&mut it);
            let second = if name == "jvp2" {
                res.rebuild(&mut it)
            } else {
                args[1].rebuild(&mut it)
            };
            Ok(Val::Rec(vec![("0".into(), primal), ("1".into(), second)]))
        }
        "jmp2" | "mjp2" => {
            // Many tangents (cotangents) at once: each has an extra outer dimension of n.
            let (lam, res) = l.lambda_of(&args[0], &[args[1].clone()], span)?;
            let n = outer(l, &args[2], span)?;
            let leaves_of = |l: &Lower<'a>, v: &Val<'a>| -> R<Vec<SubExp>> {
                Ok(l.leaves(v, span)?.into_iter().map(|(s, _)| s).collect())
            };
            let xs = leaves_of(l, &args[1])?;
            let ts = leaves_of(l, &args[2])?;
            let mut types = lam.ret.clone();
            let (exp, seeds_of) = if name == "jmp2" {
                types.extend(lam.ret.iter().map(|t| t.array_of(n.clone())));
                let e = Exp::Jvp {
                    lam,
                    args: xs,
                    tangents: ts,
                    vector: true,
                };
                (e, res.clone())
            } else {
                let at: Vec<Type> = l
                    .leaves(&args[1], span)?
                    .into_iter()
                    .map(|(_, t)| t)
                    .collect();
                types.extend(at.iter().map(|t| t.array_of(n.clone())));
                let e = Exp::Vjp {
                    lam,
                    args: xs,
                    cotangents: ts,
                    vector: true,
                };
                (e, args[1].clone())
            };
            let outs = l.emit(&["ad"], exp, types.clone());
            let mut it = outs.into_iter().map(SubExp::Var).zip(types);
            let primal = res.rebuild(&mut it);
            let second = seeds_of.rebuild(&mut it);
            Ok(Val::Rec(vec![("0".into(), primal), ("1".into(), second)]))
        }
        "with_vjp" => {
            let (f, res) = l.lambda_of(&args[0], &[args[2].clone()], span)?;
            let fadj = args[1].clone();
            let (adj, _) = l.lambda_with(&[res.clone(), res.clone()], span, |l, v| {
                l.apply_many(fadj, v, span)
            })?;
            let xs: Vec<SubExp> = l
                .leaves(&args[2], span)?
                .into_iter()
                .map(|(s, _)| s)
                .collect();
            let types = f.ret.clone();
            let outs = l.emit(&["wv"], Exp::WithVjp { f, adj, args: xs }, types.clone());
            Ok(res.rebuild(&mut outs.into_iter().map(SubExp::Var).zip(types)))
        }
        _ => return Ok(None),
    }?;
    Ok(Some(v))
}
