//! Whether statements can fail at run time. Top-level constants are hoisted to the start of
//! an entry point only when they cannot fail: the interpreter computes a constant when it is
//! first used, so an unused (or not-yet-used) failing constant must not fail early.

use runic_ir::*;

/// True if running these statements may raise a run-time error (conservative).
pub fn can_fail(stms: &[Stm]) -> bool {
    stms.iter().any(|s| exp_can_fail(&s.exp))
}

fn body_can_fail(b: &Body) -> bool {
    can_fail(&b.stms)
}

fn lambda_can_fail(l: &Lambda) -> bool {
    body_can_fail(&l.body)
}

fn exp_can_fail(e: &Exp) -> bool {
    match e {
        Exp::Basic(op) => basic_can_fail(op),
        Exp::If {
            then_body,
            else_body,
            ..
        } => body_can_fail(then_body) || body_can_fail(else_body),
        // A loop's bound may be negative only for `for`; its body decides the rest.
        Exp::Loop { body, .. } => body_can_fail(body),
        Exp::Soac(s) => match s {
            Soac::Map { lam, .. } => lambda_can_fail(lam),
            Soac::Reduce { pre, lam, .. } | Soac::Scan { pre, lam, .. } => {
                pre.as_ref().is_some_and(lambda_can_fail) || lambda_can_fail(lam)
            }
            // Length mismatches of indices and values fail.
            Soac::Hist { .. } | Soac::Scatter { .. } => true,
        },
        Exp::Apply { .. }
        | Exp::WithAcc { .. }
        | Exp::Jvp { .. }
        | Exp::Vjp { .. }
        | Exp::WithVjp { .. } => true,
    }
}

fn non_negative(s: &SubExp) -> bool {
    matches!(s, SubExp::Const(p) if p.to_i64().is_some_and(|v| v >= 0))
}

pub fn basic_can_fail(op: &BasicOp) -> bool {
    match op {
        BasicOp::SubExp(_)
        | BasicOp::UnOp(..)
        | BasicOp::Convert(..)
        | BasicOp::Copy(_)
        | BasicOp::ArraySize(..)
        | BasicOp::Rearrange(..)
        | BasicOp::ArrayLit(..) => false,
        BasicOp::BinOp(op, _, b) => match op {
            BinOp::Div | BinOp::Mod | BinOp::Quot | BinOp::Rem | BinOp::Pow => {
                // Division by a non-zero constant (or a float) and powers with a
                // non-negative constant exponent cannot fail.
                match b {
                    SubExp::Const(p) if p.ty().is_float() => false,
                    SubExp::Const(p) => match p.to_i64() {
                        Some(v) if *op == BinOp::Pow => v < 0,
                        Some(v) => v == 0,
                        None => true,
                    },
                    SubExp::Var(_) => true,
                }
            }
            _ => false,
        },
        BasicOp::TernOp(..) => false,
        // `iota n` (0..1..<n) with a constant n ≥ 0 is valid.
        BasicOp::Range {
            start,
            second,
            end,
            kind: RangeKind::UpToExclusive,
            ..
        } => {
            !(start == &SubExp::i64(0)
                && matches!(second, Some(s) if *s == SubExp::i64(1))
                && non_negative(end))
        }
        BasicOp::Range { .. } => true,
        BasicOp::Replicate(shape, _) | BasicOp::Scratch(_, shape) => {
            !shape.iter().all(non_negative)
        }
        BasicOp::Index(..)
        | BasicOp::Update(..)
        | BasicOp::Reshape { .. }
        | BasicOp::Concat(..)
        | BasicOp::Assert { .. }
        | BasicOp::ShapeCheck { .. }
        | BasicOp::UpdateAcc { .. } => true,
    }
}
