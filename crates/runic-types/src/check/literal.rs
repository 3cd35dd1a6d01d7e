//! Literals: their types before defaulting, and the range checks of Section 6.3 after it.

use super::{err, Checker, R};
use crate::infer_ty::{numeric, Sz, FLOATS, T};
use runic_syntax::ast::*;
use runic_syntax::Span;

impl Checker {
    pub(super) fn literal_type(&mut self, lit: &Literal, span: Span) -> T {
        match lit {
            Literal::Int {
                suffix: Some(p), ..
            }
            | Literal::Float {
                suffix: Some(p), ..
            } => T::Prim(*p),
            Literal::Int { suffix: None, .. } | Literal::Char(_) => {
                self.fresh_prims(numeric(), span)
            }
            Literal::Float { suffix: None, .. } => self.fresh_prims(FLOATS.to_vec(), span),
            Literal::Bool(_) => T::bool(),
            Literal::String(bytes) => T::Array(
                Sz::Const(bytes.len() as i64),
                Box::new(T::Prim(PrimType::U8)),
            ),
        }
    }
}

/// Section 6.3: literal range checks after defaulting.
pub(super) fn check_literal(lit: &Literal, negated: bool, p: PrimType, span: Span) -> R<()> {
    match lit {
        // Suffixed literals wrap (`256u8` is 0); only unsuffixed ones are range-checked.
        Literal::Int {
            suffix: Some(_), ..
        }
        | Literal::Float {
            suffix: Some(_), ..
        } => Ok(()),
        Literal::Int { value, .. } => check_int(*value, negated, p, span, "integer literal"),
        Literal::Char(c) => check_int(*c as u128, negated, p, span, "character literal"),
        Literal::Float { text, .. } => {
            if p.is_int() {
                return err(
                    span,
                    format!("Float literal {text} cannot have integer type \"{p}\"."),
                );
            }
            let v: f64 = text.parse().unwrap_or(f64::INFINITY);
            let overflow = match p {
                PrimType::F16 => v.abs() > 65504.0,
                PrimType::F32 => (v as f32).is_infinite(),
                _ => v.is_infinite(),
            };
            if overflow {
                return err(
                    span,
                    format!("Float literal {text} is too large for type \"{p}\"."),
                );
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn check_int(value: u128, negated: bool, p: PrimType, span: Span, what: &str) -> R<()> {
    if p.is_float() || p == PrimType::Bool {
        return Ok(());
    }
    let bits = p.bits();
    let fits = if p.is_signed_int() {
        let max = 1u128 << (bits - 1);
        if negated {
            value <= max
        } else {
            value < max
        }
    } else if negated {
        // `-1u8` style: negation of an unsigned literal wraps; only the magnitude must fit.
        value < (1u128 << bits)
    } else {
        value < (1u128 << bits)
    };
    if fits {
        Ok(())
    } else {
        let shown = if negated {
            format!("-{value}")
        } else {
            value.to_string()
        };
        err(
            span,
            format!("The {what} {shown} does not fit in type \"{p}\"."),
        )
    }
}
