//! How a declaration uses the parameters it introduces: a type or size parameter is given
//! once and used; the type parameters of a function are used by its parameters. These are
//! syntactic checks of the written declaration, made before inference.

use super::{err, R};
use runic_syntax::ast::*;
use runic_syntax::{Diagnostic, Span};

/// Each parameter given once: the second occurrence is reported, with the first.
pub(super) fn distinct_type_params(params: &[TypeParam]) -> R<()> {
    for (i, p) in params.iter().enumerate() {
        if let Some(first) = params[..i].iter().find(|q| q.name() == p.name()) {
            let d = Diagnostic::error(
                p.span(),
                format!(
                    "Type parameter \"{}\" is given more than once; it was previously given here.",
                    p.name()
                ),
            )
            .with_related(first.span(), "previously given here");
            return Err(Box::new(d));
        }
    }
    Ok(())
}

/// A type abbreviation uses every size parameter in its definition.
pub(super) fn abbreviation_uses_sizes(tb: &TypeBind) -> R<()> {
    for p in &tb.params {
        if let TypeParam::Size(n, span) = p {
            if !type_exp_mentions(&tb.def, n) {
                return err(
                    *span,
                    format!(
                        "Size parameter \"[{n}]\" is not used in the definition of \"{}\".",
                        tb.name
                    ),
                );
            }
        }
    }
    Ok(())
}

/// A function's type and size parameters are used in the types of its parameters or in its
/// return type (checked when every parameter's type is written).
pub(super) fn function_uses_params(
    name: &str,
    type_params: &[TypeParam],
    params: &[Pat],
    ret: Option<&TypeExp>,
) -> R<()> {
    let mut written = Vec::new();
    for p in params {
        match written_type(p) {
            Some(t) => written.push(t),
            None => return Ok(()),
        }
    }
    for tp in type_params {
        let used = written.iter().any(|t| type_exp_mentions(t, tp.name()))
            || ret.is_some_and(|r| type_exp_mentions(r, tp.name()));
        if used {
            continue;
        }
        let (what, shown) = match tp {
            TypeParam::Type(n, _, _) => ("Type", n.clone()),
            TypeParam::Size(n, _) => ("Size", format!("[{n}]")),
        };
        return err(
            tp.span(),
            format!("{what} parameter \"{shown}\" of \"{name}\" is not used in the type of any parameter or of the result, so what it stands for at a use is ambiguous."),
        );
    }
    Ok(())
}

/// The written type of a parameter pattern, if it has one as a whole.
fn written_type(p: &Pat) -> Option<&TypeExp> {
    match &p.kind {
        PatKind::Ascribe(_, t) => Some(t),
        PatKind::Attr(_, q) => written_type(q),
        _ => None,
    }
}

/// Whether a written type mentions `name`, as a type or inside a size.
pub(super) fn type_exp_mentions(t: &TypeExp, name: &str) -> bool {
    match t {
        TypeExp::Var(q, _) => q.quals.is_empty() && q.name == name,
        TypeExp::Apply(f, a, _) => {
            type_exp_mentions(f, name)
                || match &**a {
                    TypeArg::Size(s) => size_exp_mentions(s, name),
                    TypeArg::Type(t) => type_exp_mentions(t, name),
                }
        }
        TypeExp::Tuple(ts, _) => ts.iter().any(|t| type_exp_mentions(t, name)),
        TypeExp::Record(fs, _) => fs.iter().any(|(_, t)| type_exp_mentions(t, name)),
        TypeExp::Array(s, e, _) => size_exp_mentions(s, name) || type_exp_mentions(e, name),
        TypeExp::Unique(e, _) => type_exp_mentions(e, name),
        TypeExp::Arrow(_, a, b, _) => type_exp_mentions(a, name) || type_exp_mentions(b, name),
        TypeExp::Sum(cs, _) => cs
            .iter()
            .flat_map(|(_, ts)| ts)
            .any(|t| type_exp_mentions(t, name)),
        TypeExp::Exists(ns, e, _) => !ns.iter().any(|n| n == name) && type_exp_mentions(e, name),
    }
}

/// Size expressions are short: a word-level look at their printed form is enough.
fn size_exp_mentions(s: &SizeExp, name: &str) -> bool {
    match s {
        SizeExp::Anon(_) => false,
        SizeExp::Exp(e) => runic_syntax::pretty::print_exp(e)
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '\''))
            .any(|w| w == name),
    }
}

/// `*t` needs a type that can hold arrays.
pub(super) fn unique_non_array(shown: &str, span: Span) -> Box<Diagnostic> {
    Box::new(Diagnostic::error(
        span,
        format!("Only arrays (and types holding them) can be unique, but \"*{shown}\" is a non-array type."),
    ))
}
