//! Uniqueness and consumption (language.md §5.6): an alias analysis of one checked value
//! definition, run after its types are known, that rejects
//! - using a value after it (or something it may alias) was consumed, also within one
//!   expression whose parts are held while later parts are evaluated;
//! - consuming a value that is not consumable: a parameter not declared unique (`*`), a
//!   top-level definition, the result of a function that may return one, or the result of a
//!   functional parameter;
//! - consuming, inside a loop body, a while condition, or an anonymous/local function, a
//!   variable bound outside it;
//! - a result declared unique that aliases something not consumable, or whose unique
//!   components alias each other;
//! - a loop whose result for a consumed parameter aliases a variable bound outside the loop;
//! - passing consuming functions where they may be called more than once.
//!
//! Consumption happens at in-place updates (`let a[i] = v`, `a with [i] = v`), at arguments
//! for unique parameters (user functions with `*` parameters, `scatter`, `reduce_by_index`),
//! and at the initial value of a loop parameter that the loop body consumes.
//!
//! Aliasing is tracked per variable binding as the set of bindings whose memory it may share
//! (itself included), per component for tuples; only values whose type holds arrays (or an
//! unknown type parameter) can alias. A call of a user function whose return type is not
//! unique returns a value that aliases its arguments and a fresh name for the result.

mod cx;
mod exp;
mod loops;

use crate::ty::Type;
use crate::TypeInfo;
use cx::{Al, Cx};
use runic_syntax::ast::*;
use runic_syntax::{Diagnostic, SourceMap};
use std::collections::{BTreeSet, HashMap};

type Set = BTreeSet<usize>;

/// Which curried parameters of a function consume their argument, and whether its result is
/// unique (aliases nothing).
#[derive(Clone, Debug, Default)]
pub(crate) struct UniqSig {
    pub params: Vec<bool>,
    pub ret_unique: bool,
    /// Parameters whose (functional) type admits a function that consumes its argument.
    pub params_take_consumer: Vec<bool>,
    /// The result may alias a top-level definition, so it is not consumable.
    pub ret_global: bool,
    /// A user definition (its results get a fresh name of their own).
    pub user: bool,
    /// For a tuple result: which components are unique (declared `*`, or found fresh
    /// when the return type is not declared).
    pub ret_parts: Option<Vec<bool>>,
}

/// The signature of a definition as written.
pub(crate) fn sig_of(vb: &ValBind) -> UniqSig {
    UniqSig {
        params: vb.params.iter().map(pat_unique).collect(),
        ret_unique: vb.ret.as_ref().is_some_and(type_unique),
        params_take_consumer: vb.params.iter().map(pat_mentions_unique_deep).collect(),
        ret_global: false,
        user: true,
        ret_parts: match &vb.ret {
            Some(TypeExp::Tuple(ts, _)) if ts.len() >= 2 => {
                Some(ts.iter().map(type_mentions_unique).collect())
            }
            _ => None,
        },
    }
}

/// The signature of an intrinsic from its type text, where `*` marks unique types.
pub(crate) fn sig_of_text(ty: &str) -> UniqSig {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    let b = ty.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'-' if depth == 0 && b.get(i + 1) == Some(&b'>') => {
                parts.push(ty[start..i].trim());
                start = i + 2;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    parts.push(ty[start..].trim());
    let unique = |p: &str| p.starts_with('*');
    let ret = parts.pop().unwrap_or("");
    UniqSig {
        params: parts.iter().map(|p| unique(p)).collect(),
        ret_unique: unique(ret),
        params_take_consumer: parts
            .iter()
            .map(|p| p.contains('*') && p.contains("->"))
            .collect(),
        ret_global: false,
        user: false,
        ret_parts: None,
    }
}

fn type_unique(t: &TypeExp) -> bool {
    match t {
        TypeExp::Unique(..) => true,
        TypeExp::Tuple(ts, _) => !ts.is_empty() && ts.iter().all(type_unique),
        _ => false,
    }
}

/// Does a `*` occur anywhere in the type, also inside function types?
fn type_mentions_unique_deep(t: &TypeExp) -> bool {
    match t {
        TypeExp::Unique(..) => true,
        TypeExp::Tuple(ts, _) => ts.iter().any(type_mentions_unique_deep),
        TypeExp::Record(fs, _) => fs.iter().any(|(_, t)| type_mentions_unique_deep(t)),
        TypeExp::Arrow(_, a, b, _) => type_mentions_unique_deep(a) || type_mentions_unique_deep(b),
        TypeExp::Array(_, t, _) | TypeExp::Exists(_, t, _) => type_mentions_unique_deep(t),
        _ => false,
    }
}

fn pat_mentions_unique_deep(p: &Pat) -> bool {
    match &p.kind {
        PatKind::Ascribe(inner, t) => {
            type_mentions_unique_deep(t) || pat_mentions_unique_deep(inner)
        }
        PatKind::Tuple(ps) => ps.iter().any(pat_mentions_unique_deep),
        PatKind::Record(fs) => fs.iter().any(|(_, p)| pat_mentions_unique_deep(p)),
        PatKind::Attr(_, p) => pat_mentions_unique_deep(p),
        _ => false,
    }
}

fn type_mentions_unique(t: &TypeExp) -> bool {
    match t {
        TypeExp::Unique(..) => true,
        TypeExp::Tuple(ts, _) => ts.iter().any(type_mentions_unique),
        TypeExp::Record(fs, _) => fs.iter().any(|(_, t)| type_mentions_unique(t)),
        _ => false,
    }
}

/// Does the pattern declare (part of) its value unique?
fn pat_unique(p: &Pat) -> bool {
    match &p.kind {
        PatKind::Ascribe(inner, t) => type_mentions_unique(t) || pat_unique(inner),
        PatKind::Tuple(ps) => ps.iter().any(pat_unique),
        PatKind::Record(fs) => fs.iter().any(|(_, p)| pat_unique(p)),
        PatKind::Attr(_, p) => pat_unique(p),
        _ => false,
    }
}

/// Can a value of this type share memory with another?
fn may_alias(t: Option<&Type>) -> bool {
    match t {
        None => true,
        Some(Type::Prim(_)) | Some(Type::Arrow { .. }) => false,
        Some(Type::Array { .. }) | Some(Type::Param(_)) => true,
        Some(Type::Record(fs)) => fs.iter().any(|(_, t)| may_alias(Some(t))),
        Some(Type::Sum(cs)) => cs.iter().flat_map(|(_, ts)| ts).any(|t| may_alias(Some(t))),
    }
}

/// The uniqueness errors of the user's definitions in a checked program.
pub(crate) fn check_program(c: &crate::Checked, sm: &SourceMap) -> Vec<Diagnostic> {
    let mut sigs: HashMap<Name, UniqSig> = crate::intrinsics::INTRINSICS
        .iter()
        .map(|(n, _, t)| (n.to_string(), sig_of_text(t)))
        .collect();
    let mut errors = Vec::new();
    for (k, d) in c.program.decs.iter().enumerate() {
        if let Dec::Val(vb) = d {
            let mut sig = sig_of(vb);
            if k >= c.prelude_decs && !sm.is_prelude(vb.span.file) {
                let (errs, ret_global, fresh) = check_def(vb, &c.info, &sigs, sm);
                errors.extend(errs);
                sig.ret_global = ret_global;
                // Without a declared return type, what the body returns fresh is unique.
                if vb.ret.is_none() {
                    match fresh {
                        Fresh::All => sig.ret_unique = true,
                        Fresh::Parts(ps) => sig.ret_parts = Some(ps),
                        Fresh::No => {}
                    }
                }
            } else {
                sig.user = false;
            }
            sigs.insert(vb.name.clone(), sig);
        }
    }
    errors
}

/// The last component of a flat module name (`M.tl` is `tl` to the user).
fn display_name(name: &str) -> &str {
    match name.rfind('.') {
        Some(k) if k + 1 < name.len() => &name[k + 1..],
        _ => name,
    }
}

/// How much of a definition's result is fresh (aliases no parameter or top-level value).
enum Fresh {
    All,
    Parts(Vec<bool>),
    No,
}

/// Checks one definition; its errors, located, whether its result may alias a top-level
/// definition, and how much of it is fresh.
fn check_def(
    vb: &ValBind,
    info: &TypeInfo,
    sigs: &HashMap<Name, UniqSig>,
    sm: &SourceMap,
) -> (Vec<Diagnostic>, bool, Fresh) {
    let mut cx = Cx::new(info, sigs, sm);
    for p in &vb.params {
        let unique = pat_unique(p);
        cx.bind_pat(p, &Al::default(), unique, &mut Vec::new());
        cx.pat_sizes(p);
    }
    let params_end = cx.vars.len();
    let r = cx.exp(&vb.body);
    let is_fresh = |s: &Set, cx: &Cx| {
        s.iter().all(|v| {
            let var = &cx.vars[*v];
            *v >= params_end && var.consumable && var.kind != cx::Kind::Global && !var.global_like
        })
    };
    let fresh = if vb.params.is_empty() || !may_alias(info.exp_types.get(&vb.body.id)) {
        Fresh::No
    } else if is_fresh(&r.all, &cx) {
        Fresh::All
    } else {
        match &r.parts {
            Some(ps) if ps.iter().any(|p| is_fresh(&p.all, &cx)) => {
                Fresh::Parts(ps.iter().map(|p| is_fresh(&p.all, &cx)).collect())
            }
            _ => Fresh::No,
        }
    };
    let what = format!("\"{}\"", display_name(&vb.name));
    let functional = matches!(info.exp_types.get(&vb.body.id), Some(Type::Arrow { .. }));
    if let Some(ret) = &vb.ret {
        cx.check_unique_return(ret, &r, 0, &vb.body, &what);
        if vb.params.is_empty() {
            check_constant_type(&mut cx, vb, ret, &what);
        }
    }
    if vb.params.is_empty() && cx.n_consumptions > 0 && functional {
        cx.errors.push(Diagnostic::error(
            vb.body.span,
            format!("Top-level constant of higher-order type {what} may not perform consumption."),
        ));
    }
    let mut ret_global = r.all.iter().any(|v| cx.vars[*v].is_global_like());
    // A function value returned: what its own results may alias.
    if let (true, Some((_, c))) = (functional, cx.last_fn.clone()) {
        if let Some(g) = c.ret.iter().find(|v| cx.vars[**v].kind == cx::Kind::Global) {
            cx.errors.push(Diagnostic::error(
                vb.body.span,
                format!(
                    "The function returned by {what} aliases the free variable \"{}\" in its result.",
                    cx.vars[*g].name
                ),
            ));
        }
        ret_global |= c.ret.iter().any(|v| cx.vars[*v].is_global_like());
    }
    (cx.errors, ret_global, fresh)
}

/// A top-level constant: it is not unique (it is shared by every use), and a function it
/// names does not consume where its declared type says it does not.
fn check_constant_type(cx: &mut Cx, vb: &ValBind, ret: &TypeExp, what: &str) {
    if type_mentions_unique(ret) && !matches!(ret, TypeExp::Arrow(..)) {
        cx.errors.push(Diagnostic::error(
            ret.span(),
            format!("Top-level constant {what} may not have a unique type."),
        ));
    }
    let ExpKind::Var(q) = &vb.body.kind else {
        return;
    };
    let Some(sig) = cx.sigs.get(&q.name) else {
        return;
    };
    let mut t = ret;
    for consumes in &sig.params {
        let TypeExp::Arrow(_, a, b, _) = t else {
            return;
        };
        if *consumes && !type_mentions_unique(a) {
            let msg = format!(
                "\"{}\" does not have expected type {}: it consumes an argument that the type does not declare unique (*).",
                display_name(&q.name),
                cx.text(ret.span())
            );
            cx.errors.push(Diagnostic::error(vb.body.span, msg));
            return;
        }
        t = b;
    }
}

#[cfg(test)]
mod tests {
    use super::sig_of_text;

    #[test]
    fn intrinsic_signatures_mark_unique_positions() {
        let s = sig_of_text("*[k]t -> [n]i64 -> [n]t -> *[k]t");
        assert_eq!(s.params, vec![true, false, false]);
        assert!(s.ret_unique);
        let m = sig_of_text("(a -> x) -> [n]a -> *[n]x");
        assert_eq!(m.params, vec![false, false]);
        assert!(m.ret_unique);
        let f = sig_of_text("[n][m]t -> [n*m]t");
        assert_eq!(f.params, vec![false]);
        assert!(!f.ret_unique);
    }
}
