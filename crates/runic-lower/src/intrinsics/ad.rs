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
        "jvp2" | "vjp2" | "jmp2" | "mjp2" => {
            // `jmp2`/`mjp2`: many tangents (cotangents) at once, each with an extra outer
            // dimension, as are the derivatives.
            let vector = matches!(name, "jmp2" | "mjp2");
            let (lam, res) = l.lambda_of(&args[0], &[args[1].clone()], span)?;
            let xs = operands(l, &args[1], span)?;
            let seeds = operands(l, &args[2], span)?;
            let (exp, derivs) = if matches!(name, "jvp2" | "jmp2") {
                let jvp = Exp::Jvp {
                    lam,
                    args: xs,
                    tangents: seeds,
                    vector,
                };
                (jvp, res.clone())
            } else {
                let vjp = Exp::Vjp {
                    lam,
                    args: xs,
                    cotangents: seeds,
                    vector,
                };
                (vjp, args[1].clone())
            };
            let pair = Val::Rec(vec![("0".into(), res), ("1".into(), derivs)]);
            l.let_val("ad", exp, &pair)
        }
        "with_vjp" => {
            let (f, res) = l.lambda_of(&args[0], &[args[2].clone()], span)?;
            let fadj = args[1].clone();
            let (adj, _) = l.lambda_with(&[res.clone(), res.clone()], span, |l, v| {
                l.apply_many(fadj, v, span)
            })?;
            let xs = operands(l, &args[2], span)?;
            l.let_val("wv", Exp::WithVjp { f, adj, args: xs }, &res)
        }
        _ => return Ok(None),
    }?;
    Ok(Some(v))
}

/// The IR operands of a value.
fn operands<'a>(l: &Lower<'a>, v: &Val<'a>, span: Span) -> R<Vec<SubExp>> {
    Ok(l.leaves(v, span)?.into_iter().map(|(s, _)| s).collect())
}
