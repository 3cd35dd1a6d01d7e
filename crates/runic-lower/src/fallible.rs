//! Whether statements can fail at run time. Top-level constants are hoisted to the start of
//! an entry point only when they cannot fail: the interpreter computes a constant when it is
//! first used, so an unused (or not-yet-used) failing constant must not fail early.

use runic_ir::traverse::any_exp;
use runic_ir::*;

/// True if running these statements may raise a run-time error (conservative).
pub fn can_fail(stms: &[Stm]) -> bool {
    any_exp(stms, fails_itself)
}

/// Whether evaluating `e` may fail, not counting the bodies and lambdas nested in it (which
/// the traversal visits on its own).
fn fails_itself(e: &Exp) -> bool {
    match e {
        Exp::Basic(op) => basic_can_fail(op),
        // A loop's bound may be negative only for `for`; its body decides the rest.
        Exp::If { .. } | Exp::Loop { .. } => false,
        // Length mismatches of indices and values fail.
        Exp::Soac(Soac::Hist { .. } | Soac::Scatter { .. }) => true,
        Exp::Soac(Soac::Map { .. } | Soac::Reduce { .. } | Soac::Scan { .. }) => false,
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
