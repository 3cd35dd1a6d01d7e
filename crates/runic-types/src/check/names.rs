//! Names: scope lookup, instantiation at occurrences, operators and numeric-module members.

use super::modules::{ModVal, ValRef};
use super::{err, Checker, Denot, Occurrence, Scheme, Scope, R};
use crate::infer_ty::{numeric, Sz, INTS, T};
use crate::intrinsics::{self, module_member};
use runic_syntax::ast::*;
use runic_syntax::{Diagnostic, Span};
use std::collections::{HashMap, HashSet};

impl Checker {
    pub(super) fn lookup_local(&self, name: &str) -> Option<Denot> {
        for sc in self.scopes.iter().rev() {
            match sc {
                Scope::Val(n, s) if n == name => return Some(Denot::Value(s.clone(), None)),
                Scope::Open(m) if module_member(*m, name).is_some() => {
                    return Some(Denot::Member(*m, name.to_string()))
                }
                Scope::OpenEnv(env) => {
                    if let Some(v) = env.vals.get(name) {
                        return Some(denot_of(v));
                    }
                }
                _ => {}
            }
        }
        None
    }

    pub(super) fn lookup(&self, name: &str) -> Option<Denot> {
        if let Some(d) = self.lookup_local(name) {
            return Some(d);
        }
        if let Some(v) = self.find_val(name) {
            return Some(denot_of(&v));
        }
        if let Some(s) = self.intrinsics.get(name) {
            return Some(Denot::Value(s.clone(), None));
        }
        if intrinsics::OVERLOADED_OPS.contains(&name) {
            return Some(Denot::Builtin(name.to_string()));
        }
        // A use already rewritten to a flat name (checked again, e.g. inside a projection).
        if let Some(s) = self.flat.get(name) {
            return Some(Denot::Value(s.clone(), None));
        }
        None
    }

    /// The error for a name that is not in scope because it is the function being defined
    /// (recursion) or a definition further down (a forward reference, as mutual recursion
    /// needs); neither is part of the language (language.md §4.10).
    fn recursive_use(&self, name: &str, span: Span) -> Option<Box<Diagnostic>> {
        if let Some((_, def)) = self.defining.iter().rev().find(|(n, _)| n == name) {
            let d = Diagnostic::error(
                span,
                format!("\"{name}\" is used in its own definition: recursive functions are not supported."),
            )
            .with_related(*def, format!("\"{name}\" is defined here"));
            return Some(Box::new(d));
        }
        let (names, next) = self.later.last()?;
        let (_, def) = names[*next..].iter().find(|(n, _)| n == name)?;
        let d = Diagnostic::error(
            span,
            format!("Unknown name \"{name}\": it is defined further down, and a definition can only use those before it (recursion and mutual recursion are not supported)."),
        )
        .with_related(*def, format!("\"{name}\" is defined here"));
        Some(Box::new(d))
    }

    fn visible_names(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for sc in &self.scopes {
            if let Scope::Val(n, _) = sc {
                v.push(n.clone());
            }
        }
        for f in &self.frames {
            v.extend(f.vis.vals.keys().cloned());
        }
        v.extend(self.intrinsics.keys().cloned());
        v
    }

    pub(super) fn unknown_name(&self, name: &str, span: Span) -> Box<Diagnostic> {
        if let Some(d) = self.recursive_use(name, span) {
            return d;
        }
        let mut best: Option<(usize, String)> = None;
        for cand in self.visible_names() {
            let d = edit_distance(name, &cand);
            if d <= 2.max(name.len() / 3)
                && d < name.len().max(1)
                && best.as_ref().is_none_or(|(bd, _)| d < *bd)
            {
                best = Some((d, cand));
            }
        }
        let msg = match best {
            Some((_, c)) => format!("Unknown name \"{name}\"; did you mean \"{c}\"?"),
            None => format!("Unknown name \"{name}\"."),
        };
        Box::new(Diagnostic::error(span, msg))
    }

    /// Instantiate a scheme; returns the type and the reported size arguments.
    pub(super) fn instantiate(&mut self, sc: &Scheme) -> (T, Vec<(Name, Sz, bool)>) {
        if !sc.poly {
            return (sc.ty.clone(), Vec::new());
        }
        let mut tmap: HashMap<Name, T> = HashMap::new();
        for p in &sc.tparams {
            let v = self.s.fresh_var();
            if sc.no_fun.contains(p) {
                self.unlifted.push((v.clone(), p.clone(), Span::default()));
            }
            if sc.strict.contains(p) {
                self.strict_unlifted
                    .push((v.clone(), p.clone(), Span::default()));
            }
            tmap.insert(p.clone(), v);
        }
        let mut smap: HashMap<Name, Sz> = HashMap::new();
        for n in sc.sparams.iter().chain(&sc.hidden) {
            let f = self.s.fresh_flex();
            smap.insert(n.clone(), f);
        }
        for n in &sc.exist {
            let u = self.s.fresh_unknown();
            smap.insert(n.clone(), u);
        }
        let mut umap: HashMap<u32, Sz> = HashMap::new();
        let mut fmap: HashMap<u32, Sz> = HashMap::new();
        let ty = self.inst_type(&sc.ty, &tmap, &smap, &sc.implicit, &mut umap, &mut fmap);
        let readable = readable_sizes(&sc.ty, sc.arity);
        let sizes = sc
            .sparams
            .iter()
            .map(|n| (n.clone(), smap[n].clone(), readable.contains(n)))
            .collect();
        (ty, sizes)
    }

    pub(super) fn inst_type(
        &mut self,
        t: &T,
        tmap: &HashMap<Name, T>,
        smap: &HashMap<Name, Sz>,
        implicit: &[u32],
        umap: &mut HashMap<u32, Sz>,
        fmap: &mut HashMap<u32, Sz>,
    ) -> T {
        match t {
            T::Param(p) => tmap.get(p).cloned().unwrap_or_else(|| t.clone()),
            T::Var(_) | T::Prim(_) => t.clone(),
            T::Array(s, e) => {
                let s = self.inst_size(s, smap, implicit, umap, fmap);
                T::Array(
                    s,
                    Box::new(self.inst_type(e, tmap, smap, implicit, umap, fmap)),
                )
            }
            T::Record(fs) => T::Record(
                fs.iter()
                    .map(|(n, t)| {
                        (
                            n.clone(),
                            self.inst_type(t, tmap, smap, implicit, umap, fmap),
                        )
                    })
                    .collect(),
            ),
            T::Sum(cs) => T::Sum(
                cs.iter()
                    .map(|(n, ts)| {
                        (
                            n.clone(),
                            ts.iter()
                                .map(|t| self.inst_type(t, tmap, smap, implicit, umap, fmap))
                                .collect(),
                        )
                    })
                    .collect(),
            ),
            T::Arrow(n, a, b) => {
                // A named parameter shadows a size parameter of the same name.
                let a = self.inst_type(a, tmap, smap, implicit, umap, fmap);
                let b = match n {
                    Some(n) if smap.contains_key(n) => {
                        let mut inner = smap.clone();
                        inner.remove(n);
                        self.inst_type(b, tmap, &inner, implicit, umap, fmap)
                    }
                    _ => self.inst_type(b, tmap, smap, implicit, umap, fmap),
                };
                T::Arrow(n.clone(), Box::new(a), Box::new(b))
            }
        }
    }

    fn inst_size(
        &mut self,
        s: &Sz,
        smap: &HashMap<Name, Sz>,
        implicit: &[u32],
        umap: &mut HashMap<u32, Sz>,
        fmap: &mut HashMap<u32, Sz>,
    ) -> Sz {
        match s {
            Sz::Name(n) => smap.get(n).cloned().unwrap_or_else(|| s.clone()),
            Sz::Unknown(k) => {
                if let Some(x) = umap.get(k) {
                    return x.clone();
                }
                let x = if implicit.contains(k) {
                    self.s.fresh_flex()
                } else {
                    self.s.fresh_unknown()
                };
                umap.insert(*k, x.clone());
                x
            }
            Sz::Flex(k) => {
                if let Some(x) = fmap.get(k) {
                    return x.clone();
                }
                let x = self.s.fresh_flex();
                fmap.insert(*k, x.clone());
                x
            }
            Sz::Op(o, a, b) => Sz::Op(
                o,
                Box::new(self.inst_size(a, smap, implicit, umap, fmap)),
                Box::new(self.inst_size(b, smap, implicit, umap, fmap)),
            ),
            Sz::Const(_) | Sz::Exp(_) => s.clone(),
        }
    }

    pub(super) fn record_occurrence(
        &mut self,
        id: NodeId,
        span: Span,
        name: &str,
        sizes: Vec<(Name, Sz, bool)>,
    ) {
        // The instances just made belong to this use.
        for list in [&mut self.unlifted, &mut self.strict_unlifted] {
            for u in list.iter_mut().rev() {
                if u.2 != Span::default() {
                    break;
                }
                u.2 = span;
            }
        }
        if !sizes.is_empty() {
            self.occs.push(Occurrence {
                id,
                span,
                name: name.to_string(),
                sizes,
                named: self.named_unknowns.clone(),
            });
        }
    }

    /// The type of an overloaded built-in operator used as a function.
    pub(super) fn builtin_op_type(&mut self, op: &str, span: Span) -> T {
        let class = op_class(op).unwrap_or("arith");
        let a = match class {
            "arith" => self.fresh_prims(numeric(), span),
            "int" => self.fresh_prims(INTS.to_vec(), span),
            "cmp" => self.fresh_prims(PrimType::ALL.to_vec(), span),
            "bool" => T::bool(),
            _ => self.s.fresh_var(),
        };
        if class == "eq" {
            self.eqs.push((a.clone(), span));
        }
        let r = if matches!(class, "eq" | "cmp" | "bool") {
            T::bool()
        } else {
            a.clone()
        };
        T::arrow(a.clone(), T::arrow(a, r))
    }

    /// The type of an operator name in a binary operation or section; may rewrite the name
    /// to its qualified form inside a local open.
    pub(super) fn op_type(&mut self, op: &mut BinOpName, node: NodeId) -> R<T> {
        let q = op.name.clone();
        let denot = if q.quals.is_empty() {
            self.lookup(&q.name)
        } else {
            match self.qualified_member(&q.quals, &q.name, op.span)? {
                Some(d) => Some(d),
                None => return err(op.span, format!("Unknown operator \"{}\".", op.name)),
            }
        };
        match denot {
            Some(Denot::Value(sc, flat)) => {
                if let Some(f) = flat {
                    op.name = QualName::unqual(f);
                }
                let (t, sizes) = self.instantiate(&sc);
                self.record_occurrence(node, op.span, &q.to_string(), sizes);
                Ok(t)
            }
            Some(Denot::Member(m, n)) => {
                op.name = QualName {
                    quals: vec![m.name().to_string()],
                    name: n.clone(),
                };
                self.member_type(m, &n, node, op.span)
            }
            Some(Denot::Builtin(n)) => Ok(self.builtin_op_type(&n, op.span)),
            None => Err(self.unknown_name(&q.name, op.span)),
        }
    }

    /// The member `name` of the module at `path` (`None` when `path` is not a module).
    pub(super) fn qualified_member(
        &mut self,
        path: &[Name],
        name: &str,
        span: Span,
    ) -> R<Option<Denot>> {
        if path.len() == 1 && self.lookup_local(&path[0]).is_some() {
            return Ok(None);
        }
        let m = match self.module_path(path) {
            Ok(m) => m,
            Err(_) => return Ok(None),
        };
        let shown = path.join(".");
        match m {
            ModVal::Prim(p) => Ok(Some(Denot::Member(p, name.to_string()))),
            // Its error is already reported: the member fits any use.
            ModVal::Broken => Ok(Some(Denot::Value(
                std::rc::Rc::new(Scheme {
                    tparams: vec!["a".into()],
                    poly: true,
                    ty: T::Param("a".into()),
                    ..Scheme::default()
                }),
                None,
            ))),
            ModVal::Struct(env) => match env.vals.get(name) {
                Some(v) => Ok(Some(denot_of(v))),
                None => {
                    let best = env
                        .vals
                        .keys()
                        .filter(|c| edit_distance(name, c) <= 2)
                        .min_by_key(|c| edit_distance(name, c));
                    let msg = match best {
                        Some(c) => format!(
                            "Module \"{shown}\" has no member \"{name}\"; did you mean \"{shown}.{c}\"?"
                        ),
                        None => format!("Module \"{shown}\" has no member \"{name}\"."),
                    };
                    err(span, msg)
                }
            },
            ModVal::Functor(_) => err(
                span,
                format!("\"{shown}\" is a parametric module: apply it to a module before using its members."),
            ),
        }
    }

    pub(super) fn member_type(
        &mut self,
        m: PrimType,
        name: &str,
        node: NodeId,
        span: Span,
    ) -> R<T> {
        match module_member(m, name) {
            Some((t, sp)) => {
                if !sp.is_empty() {
                    let sc = Scheme {
                        sparams: sp.iter().map(|s| s.to_string()).collect(),
                        poly: true,
                        ty: t,
                        ..Scheme::default()
                    };
                    let (t, sizes) = self.instantiate(&sc);
                    self.record_occurrence(node, span, &format!("{m}.{name}"), sizes);
                    Ok(t)
                } else {
                    Ok(t)
                }
            }
            None => {
                let names = intrinsics::module_member_names(m);
                let best = names
                    .iter()
                    .filter(|c| edit_distance(name, c) <= 2)
                    .min_by_key(|c| edit_distance(name, c));
                let msg = match best {
                    Some(c) => format!(
                        "Module \"{m}\" has no member \"{name}\"; did you mean \"{m}.{c}\"?"
                    ),
                    None => format!("Module \"{m}\" has no member \"{name}\"."),
                };
                err(span, msg)
            }
        }
    }
}

fn denot_of(v: &ValRef) -> Denot {
    match v {
        ValRef::Def(flat, sc) => Denot::Value(sc.clone(), Some(flat.clone())),
        ValRef::Member(p, n) => Denot::Member(*p, n.clone()),
    }
}

/// Levenshtein distance, for "did you mean" suggestions.
pub(super) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        prev = cur;
    }
    prev[b.len()]
}

fn op_class(op: &str) -> Option<&'static str> {
    Some(match op {
        "+" | "-" | "*" | "/" | "%" | "**" => "arith",
        "//" | "%%" | "&" | "|" | "^" | "<<" | ">>" => "int",
        "==" | "!=" => "eq",
        "<" | "<=" | ">" | ">=" => "cmp",
        "&&" | "||" => "bool",
        _ => return None,
    })
}

/// Size parameters that occur as a whole dimension of a parameter type, outside any arrow
/// (they can be read off argument values at run time, Section 6.7). Only the definition's
/// own parameters count: the parameters of a function it returns are given after its body
/// has run.
fn readable_sizes(t: &T, arity: Option<usize>) -> HashSet<Name> {
    let mut out = HashSet::new();
    let mut cur = t;
    let mut left = arity.unwrap_or(usize::MAX);
    while let (T::Arrow(_, p, r), true) = (cur, left > 0) {
        whole_dims(p, &mut out);
        cur = r;
        left -= 1;
    }
    out
}

fn whole_dims(t: &T, out: &mut HashSet<Name>) {
    match t {
        T::Array(s, e) => {
            if let Sz::Name(n) = s {
                out.insert(n.clone());
            }
            whole_dims(e, out);
        }
        T::Record(fs) => fs.values().for_each(|t| whole_dims(t, out)),
        T::Sum(cs) => cs.values().flatten().for_each(|t| whole_dims(t, out)),
        _ => {}
    }
}
