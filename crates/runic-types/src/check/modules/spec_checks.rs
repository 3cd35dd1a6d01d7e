//! Checks of a module against a module type beyond "the types unify": uniqueness and the
//! liftedness of type parameters in value specs, sizes a module fixes behind a size-lifted
//! abstract type, and sizes an abstract type's definition uses non-constructively.

use super::sig::ABSTRACT;
use super::ValRef;
use crate::check::{Checker, Scheme, TypeAbbr};
use crate::infer_ty::{Sz, T};
use runic_syntax::ast::*;
use runic_syntax::pretty::print_type;
use std::collections::HashSet;

/// A failed check: the message, reported at the module with a note at the spec.
pub(super) type Failed = Option<String>;

impl Checker {
    /// A value spec may not promise to leave a parameter alone that the module's definition
    /// consumes, nor a unique result the definition does not give.
    pub(super) fn spec_uniqueness(&self, name: &str, v: &ValRef, spec: &TypeExp) -> Failed {
        let ValRef::Def(flat, _) = v else {
            return None;
        };
        let vb = self.out.iter().rev().find_map(|d| match d {
            Dec::Val(vb) if vb.name == *flat => Some(vb),
            _ => None,
        })?;
        let (spec_params, spec_result) = arrow_parts(spec);
        for (p, s) in vb.params.iter().zip(&spec_params) {
            if let Some((pt, st)) = pat_consumes_unlike(p, s) {
                return Some(format!(
                    "Value \"{name}\" consumes its parameter of type \"{}\" in the module, but the module type specifies a parameter of type \"{}\", which its callers may keep using.",
                    print_type(pt),
                    print_type(st)
                ));
            }
        }
        let ret = vb.ret.as_ref()?;
        if vb.params.len() == spec_params.len() {
            if let Some((st, rt)) = unique_unlike(spec_result, ret) {
                return Some(format!(
                    "Value \"{name}\" returns the non-unique type \"{}\" in the module, but the module type requires the unique type \"{}\".",
                    print_type(rt),
                    print_type(st)
                ));
            }
        }
        None
    }

    /// A type parameter the spec declares lifted (`'^a`) may not be unlifted in the module:
    /// users may instantiate it with a function type. `unlifted` are the fresh type variables
    /// standing for the definition's unlifted parameters, after unifying with the spec.
    pub(super) fn spec_lifted_params(
        &mut self,
        name: &str,
        type_params: &[TypeParam],
        unlifted: &[(T, Name)],
    ) -> Failed {
        let lifted: Vec<&Name> = type_params
            .iter()
            .filter_map(|p| match p {
                TypeParam::Type(n, Liftedness::Lifted, _) => Some(n),
                _ => None,
            })
            .collect();
        for (v, own) in unlifted {
            let t = self.s.zonk(v);
            if let Some(p) = lifted.iter().find(|p| mentions_param(&t, p)) {
                return Some(format!(
                    "Module type specifies \"{name}\" with the lifted type parameter \"'^{p}\", but the module defines it with the non-lifted \"'{own}\", which may not stand for a function type."
                ));
            }
        }
        None
    }

    /// Where a value spec's type mentions a size-lifted abstract type made by this matching
    /// (outside function results), the value must work at every size that type may have:
    /// its definition may fix no size there, nor tie two such sizes together.
    pub(super) fn spec_size_lifted(
        &mut self,
        name: &str,
        spec_t: &T,
        actual: &Scheme,
        created: &HashSet<Name>,
    ) -> Failed {
        let actual_t = self.s.zonk(&actual.ty);
        let mut seen: Vec<Name> = Vec::new();
        let mut fixed = false;
        free_positions(spec_t, &actual_t, created, &mut |t| {
            each_dim(t, &mut |s| match s {
                Sz::Name(n) if actual.exist.contains(n) => {}
                Sz::Name(n) if actual.sparams.contains(n) || actual.hidden.contains(n) => {
                    if seen.contains(n) {
                        fixed = true;
                    }
                    seen.push(n.clone());
                }
                Sz::Unknown(_) | Sz::Flex(_) => {}
                _ => fixed = true,
            })
        });
        fixed.then(|| {
            format!(
                "Value \"{name}\" has type \"{}\" in the module, but the module type requires \"{}\": a size-lifted abstract type stands for arrays of any size, and the module's value fixes or relates that size.",
                self.s.show(&actual_t),
                self.s.show(spec_t)
            )
        })
    }

    /// An abstract type's size parameters must each be a whole dimension of its definition
    /// somewhere (used constructively), so that they can be read back from its values.
    pub(super) fn spec_constructive(&self, name: &str, a: &TypeAbbr) -> Failed {
        let mut whole = HashSet::new();
        each_dim(&a.body, &mut |s| {
            if let Sz::Name(n) = s {
                whole.insert(n.clone());
            }
        });
        a.params.iter().find_map(|p| match p {
            TypeParam::Size(n, _) if !whole.contains(n) => Some(format!(
                "Type \"{name}\" uses its size parameter \"{n}\" non-constructively in the module (not as a whole dimension \"[{n}]\" anywhere in its definition), so it cannot be made abstract."
            )),
            _ => None,
        })
    }
}

/// The parameter types and the final result of a written function type.
fn arrow_parts(t: &TypeExp) -> (Vec<&TypeExp>, &TypeExp) {
    let mut params = Vec::new();
    let mut t = t;
    while let TypeExp::Arrow(_, a, b, _) = t {
        params.push(&**a);
        t = b;
    }
    (params, t)
}

/// The first part of `a` (at the top, or a tuple component or record field at any depth)
/// that is unique where the same part of `b` is not.
fn unique_unlike<'a>(a: &'a TypeExp, b: &'a TypeExp) -> Option<(&'a TypeExp, &'a TypeExp)> {
    if unique(a) && !unique(b) {
        return Some((a, b));
    }
    match (strip(a), strip(b)) {
        (TypeExp::Tuple(xs, _), TypeExp::Tuple(ys, _)) if xs.len() == ys.len() => {
            xs.iter().zip(ys).find_map(|(x, y)| unique_unlike(x, y))
        }
        (TypeExp::Record(xs, _), TypeExp::Record(ys, _)) => xs.iter().find_map(|(n, x)| {
            let (_, y) = ys.iter().find(|(m, _)| m == n)?;
            unique_unlike(x, y)
        }),
        _ => None,
    }
}

/// The part of a parameter the definition consumes (written in its pattern's types, at any
/// depth of tuple and record patterns) where the spec's parameter type does not.
fn pat_consumes_unlike<'a>(p: &'a Pat, spec: &'a TypeExp) -> Option<(&'a TypeExp, &'a TypeExp)> {
    match (&p.kind, strip(spec)) {
        (PatKind::Ascribe(q, t), _) => {
            unique_unlike(t, spec).or_else(|| pat_consumes_unlike(q, spec))
        }
        (PatKind::Attr(_, q), _) => pat_consumes_unlike(q, spec),
        (PatKind::Tuple(ps), TypeExp::Tuple(ts, _)) if ps.len() == ts.len() => ps
            .iter()
            .zip(ts)
            .find_map(|(p, t)| pat_consumes_unlike(p, t)),
        (PatKind::Record(fs), TypeExp::Record(ts, _)) => fs.iter().find_map(|(n, p)| {
            let (_, t) = ts.iter().find(|(m, _)| m == n)?;
            pat_consumes_unlike(p, t)
        }),
        _ => None,
    }
}

/// `t` without its uniqueness and existential sizes.
fn strip(t: &TypeExp) -> &TypeExp {
    match t {
        TypeExp::Unique(e, _) | TypeExp::Exists(_, e, _) => strip(e),
        _ => t,
    }
}

fn unique(t: &TypeExp) -> bool {
    match t {
        TypeExp::Unique(..) => true,
        TypeExp::Exists(_, e, _) => unique(e),
        _ => false,
    }
}

fn mentions_param(t: &T, p: &str) -> bool {
    match t {
        T::Param(q) => q == p,
        T::Array(_, e) => mentions_param(e, p),
        T::Record(fs) => fs.values().any(|x| mentions_param(x, p)),
        T::Sum(cs) => cs.values().flatten().any(|x| mentions_param(x, p)),
        T::Arrow(_, a, b) => mentions_param(a, p) || mentions_param(b, p),
        T::Var(_) | T::Prim(_) => false,
    }
}

/// Calls `k` on the parts of `actual` that sit where `spec` has a size-lifted abstract type
/// from `created`, outside function results.
fn free_positions(spec: &T, actual: &T, created: &HashSet<Name>, k: &mut dyn FnMut(&T)) {
    match (spec, actual) {
        (T::Sum(cs), _) if cs.len() == 1 => {
            let c = cs.keys().next().map(String::as_str).unwrap_or_default();
            if c.starts_with(ABSTRACT) && c.ends_with('~') && created.contains(c) {
                k(actual);
            }
        }
        (T::Array(_, s), T::Array(_, a)) => free_positions(s, a, created, k),
        (T::Record(s), T::Record(a)) => {
            for (f, st) in s {
                if let Some(at) = a.get(f) {
                    free_positions(st, at, created, k);
                }
            }
        }
        // A function's result may have sizes of its own (they are existential there).
        (T::Arrow(_, s, sr), T::Arrow(_, a, ar)) => {
            free_positions(s, a, created, k);
            if matches!(**sr, T::Arrow(..)) {
                free_positions(sr, ar, created, k);
            }
        }
        _ => {}
    }
}

/// Calls `k` on every array dimension of `t`.
fn each_dim(t: &T, k: &mut dyn FnMut(&Sz)) {
    match t {
        T::Array(s, e) => {
            k(s);
            each_dim(e, k)
        }
        T::Record(fs) => fs.values().for_each(|x| each_dim(x, k)),
        T::Sum(cs) => cs.values().flatten().for_each(|x| each_dim(x, k)),
        T::Arrow(_, a, b) => {
            each_dim(a, k);
            each_dim(b, k)
        }
        T::Var(_) | T::Param(_) | T::Prim(_) => {}
    }
}

impl Checker {
    /// Where a value spec names a size, the module's value may not have a size of its own
    /// (an existential or unknown size, `[]` in a constant's type): nothing says the two are
    /// equal.
    pub(super) fn spec_exist_sizes(&mut self, name: &str, spec_t: &T, actual: &Scheme) -> Failed {
        let actual_t = self.s.zonk(&actual.ty);
        let mut clash = None;
        same_dims(spec_t, &actual_t, &mut |s, a| match (s, a) {
            (Sz::Name(x), Sz::Name(k)) if clash.is_none() && actual.exist.contains(k) => {
                clash = Some((x.clone(), k.clone()))
            }
            (Sz::Name(x), Sz::Unknown(u)) if clash.is_none() && !actual.implicit.contains(u) => {
                clash = Some((x.clone(), "[]".into()))
            }
            _ => {}
        });
        let (x, k) = clash?;
        // Flat names end in the name as written.
        let shown = x.rsplit('.').next().unwrap_or(&x).to_string();
        Some(format!(
            "Sizes \"{shown}\" and \"{k}\" do not match: the module type requires \"{name}\" to have size \"{shown}\" there, but the module's value has a size of its own."
        ))
    }
}

/// Calls `k` on the dimensions at the same places of two types of the same shape.
fn same_dims(s: &T, a: &T, k: &mut dyn FnMut(&Sz, &Sz)) {
    match (s, a) {
        (T::Array(ds, es), T::Array(da, ea)) => {
            k(ds, da);
            same_dims(es, ea, k)
        }
        (T::Record(fs), T::Record(fa)) => {
            for (f, st) in fs {
                if let Some(at) = fa.get(f) {
                    same_dims(st, at, k);
                }
            }
        }
        (T::Arrow(_, s1, s2), T::Arrow(_, a1, a2)) => {
            same_dims(s1, a1, k);
            same_dims(s2, a2, k)
        }
        _ => {}
    }
}
