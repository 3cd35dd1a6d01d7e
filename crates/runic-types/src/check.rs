//! The checker proper: name resolution, inference of expressions and patterns, and the
//! per-definition solving steps of Section 6.1.

use crate::infer_ty::{
    map_sizes, numeric, show_prims, size_mentions, Cons, Subst, Sz, Tv, FLOATS, INTS, SIGNED, T,
};
use crate::intrinsics::{self, module_member, module_type_member};
use crate::ty::{canonical_field_order, Size, Type};
use crate::{EntryParam, EntryPoint, TypeInfo};
use runic_syntax::ast::*;
use runic_syntax::{Diagnostic, Span};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;

pub(crate) type R<X> = Result<X, Box<Diagnostic>>;

pub(crate) fn err<X>(span: Span, msg: impl Into<String>) -> R<X> {
    Err(Box::new(Diagnostic::error(span, msg)))
}

/// A (possibly) polymorphic type.
#[derive(Clone, Debug)]
pub(crate) struct Scheme {
    pub tparams: Vec<Name>,
    /// Size parameters reported in `TypeInfo::size_args`, in order.
    pub sparams: Vec<Name>,
    /// Size parameters instantiated freshly but not reported (anonymous parameter sizes).
    pub hidden: Vec<Name>,
    /// Existential sizes: a fresh rigid unknown per occurrence.
    pub exist: Vec<Name>,
    /// Rigid unknowns of the definition that stand for anonymous parameter sizes.
    pub implicit: Vec<u32>,
    /// False for monomorphic local bindings (used as is).
    pub poly: bool,
    pub ty: T,
}

impl Default for Scheme {
    fn default() -> Scheme {
        Scheme {
            tparams: vec![],
            sparams: vec![],
            hidden: vec![],
            exist: vec![],
            implicit: vec![],
            poly: false,
            ty: T::unit(),
        }
    }
}

impl Scheme {
    pub fn mono(ty: T) -> Scheme {
        Scheme {
            ty,
            ..Scheme::default()
        }
    }
}

enum Scope {
    Val(Name, Rc<Scheme>),
    Open(PrimType),
    TParam(Name),
}

struct TypeAbbr {
    params: Vec<TypeParam>,
    body: T,
}

/// How an anonymous size `[]` in a written type is read.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Anon {
    /// Inferred from context.
    Flex,
    /// A parameter of a definition: a rigid unknown, instantiated per use.
    Implicit,
    /// A result: existential.
    Exist,
}

struct Occurrence {
    id: NodeId,
    span: Span,
    name: String,
    sizes: Vec<(Name, Sz, bool)>,
}

struct LitCheck {
    ty: T,
    lit: Literal,
    negated: bool,
    span: Span,
}

/// What an unqualified or qualified name denotes.
enum Denot {
    Value(Rc<Scheme>),
    /// A member of a numeric module.
    Member(PrimType, Name),
    /// An overloaded built-in operator.
    Builtin(Name),
}

pub(crate) struct Checker {
    pub s: Subst,
    scopes: Vec<Scope>,
    top: HashMap<Name, Rc<Scheme>>,
    intrinsics: HashMap<Name, Rc<Scheme>>,
    types: HashMap<Name, Rc<TypeAbbr>>,
    pub next_id: u32,
    // Per top-level definition.
    var_start: usize,
    exp_rec: Vec<(NodeId, T, Span)>,
    pat_rec: Vec<(NodeId, T)>,
    occs: Vec<Occurrence>,
    lits: Vec<LitCheck>,
    eqs: Vec<(T, Span)>,
    matches: Vec<(Span, T, Vec<Pat>)>,
    irrefutable: Vec<(Span, T)>,
    origins: Vec<(Tv, Span)>,
    implicit: Vec<u32>,
    def_span: Span,
    flex_out: HashMap<u32, u32>,
    // Outputs.
    pub info: TypeInfo,
    pub errors: Vec<Diagnostic>,
    pub warnings: Vec<Diagnostic>,
    /// Names defined so far in the file being checked (for duplicate detection).
    file_values: HashSet<Name>,
    file_types: HashSet<Name>,
    /// Node ids below this belong to the prelude; seeing one in the user's file means the
    /// two id ranges collide.
    pub id_guard: u32,
    pub id_collision: bool,
}

fn ordinal(i: usize) -> String {
    match i {
        1 => "first".into(),
        2 => "second".into(),
        3 => "third".into(),
        4 => "fourth".into(),
        5 => "fifth".into(),
        6 => "sixth".into(),
        _ => format!("{i}th"),
    }
}

/// Levenshtein distance, for "did you mean" suggestions.
fn edit_distance(a: &str, b: &str) -> usize {
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

impl Checker {
    pub fn new(intrinsics: HashMap<Name, Rc<Scheme>>) -> Checker {
        Checker {
            s: Subst::default(),
            scopes: Vec::new(),
            top: HashMap::new(),
            intrinsics,
            types: HashMap::new(),
            next_id: 0,
            var_start: 0,
            exp_rec: Vec::new(),
            pat_rec: Vec::new(),
            occs: Vec::new(),
            lits: Vec::new(),
            eqs: Vec::new(),
            matches: Vec::new(),
            irrefutable: Vec::new(),
            origins: Vec::new(),
            implicit: Vec::new(),
            def_span: Span::default(),
            flex_out: HashMap::new(),
            info: TypeInfo::default(),
            errors: Vec::new(),
            warnings: Vec::new(),
            file_values: HashSet::new(),
            file_types: HashSet::new(),
            id_guard: 0,
            id_collision: false,
        }
    }

    /// Start a new file: duplicate detection is per file.
    pub fn start_file(&mut self) {
        self.file_values.clear();
        self.file_types.clear();
    }

    fn fresh_prims(&mut self, ps: Vec<PrimType>, span: Span) -> T {
        let t = self.s.fresh(Cons::Prims(ps));
        if let T::Var(v) = t {
            self.origins.push((v, span));
        }
        t
    }

    fn expect(&mut self, expected: &T, found: &T, span: Span, what: &str) -> R<()> {
        match self.s.unify(expected, found) {
            Ok(()) => Ok(()),
            Err(c) => {
                let mut d = Diagnostic::error(span, c.message);
                let informative = |t: &T| !matches!(self.s.shallow(t), T::Var(_));
                if !what.is_empty() && informative(expected) && informative(found) {
                    d = d.with_note(format!(
                        "Expected type \"{}\" but found \"{}\" in {what}.",
                        self.s.show(expected),
                        self.s.show(found)
                    ));
                }
                Err(Box::new(d))
            }
        }
    }

    // ----------------------------------------------------------------------------------
    // Names

    fn lookup_local(&self, name: &str) -> Option<Denot> {
        for sc in self.scopes.iter().rev() {
            match sc {
                Scope::Val(n, s) if n == name => return Some(Denot::Value(s.clone())),
                Scope::Open(m) if module_member(*m, name).is_some() => {
                    return Some(Denot::Member(*m, name.to_string()))
                }
                _ => {}
            }
        }
        None
    }

    fn lookup(&self, name: &str) -> Option<Denot> {
        if let Some(d) = self.lookup_local(name) {
            return Some(d);
        }
        if let Some(s) = self.top.get(name) {
            return Some(Denot::Value(s.clone()));
        }
        if let Some(s) = self.intrinsics.get(name) {
            return Some(Denot::Value(s.clone()));
        }
        if intrinsics::OVERLOADED_OPS.contains(&name) {
            return Some(Denot::Builtin(name.to_string()));
        }
        None
    }

    fn visible_names(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for sc in &self.scopes {
            if let Scope::Val(n, _) = sc {
                v.push(n.clone());
            }
        }
        v.extend(self.top.keys().cloned());
        v.extend(self.intrinsics.keys().cloned());
        v
    }

    fn unknown_name(&self, name: &str, span: Span) -> Box<Diagnostic> {
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

    fn module_of(name: &str) -> Option<PrimType> {
        PrimType::from_name(name)
    }

    /// Instantiate a scheme; returns the type and the reported size arguments.
    fn instantiate(&mut self, sc: &Scheme) -> (T, Vec<(Name, Sz, bool)>) {
        if !sc.poly {
            return (sc.ty.clone(), Vec::new());
        }
        let mut tmap: HashMap<Name, T> = HashMap::new();
        for p in &sc.tparams {
            let v = self.s.fresh_var();
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
        let readable = readable_sizes(&sc.ty);
        let sizes = sc
            .sparams
            .iter()
            .map(|n| (n.clone(), smap[n].clone(), readable.contains(n)))
            .collect();
        (ty, sizes)
    }

    fn inst_type(
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

    fn record_occurrence(
        &mut self,
        id: NodeId,
        span: Span,
        name: &str,
        sizes: Vec<(Name, Sz, bool)>,
    ) {
        if !sizes.is_empty() {
            self.occs.push(Occurrence {
                id,
                span,
                name: name.to_string(),
                sizes,
            });
        }
    }

    /// The type of an overloaded built-in operator used as a function.
    fn builtin_op_type(&mut self, op: &str, span: Span) -> T {
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
    fn op_type(&mut self, op: &mut BinOpName, node: NodeId) -> R<T> {
        let q = &op.name;
        if q.quals.is_empty() {
            match self.lookup(&q.name) {
                Some(Denot::Value(sc)) => {
                    let (t, sizes) = self.instantiate(&sc);
                    let name = q.name.clone();
                    self.record_occurrence(node, op.span, &name, sizes);
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
        } else {
            let (quals, name) = (q.quals.clone(), q.name.clone());
            match (quals.len(), Self::module_of(&quals[0])) {
                (1, Some(m))
                    if self
                        .lookup(&quals[0])
                        .is_none_or(|d| matches!(d, Denot::Builtin(_))) =>
                {
                    self.member_type(m, &name, node, op.span)
                }
                _ => err(op.span, format!("Unknown operator \"{}\".", op.name)),
            }
        }
    }

    fn member_type(&mut self, m: PrimType, name: &str, node: NodeId, span: Span) -> R<T> {
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

    // ----------------------------------------------------------------------------------
    // Types as written

    pub fn convert_type(&mut self, te: &mut TypeExp, mode: Anon) -> R<T> {
        match te {
            TypeExp::Var(q, span) => self.type_name(q, &[], *span),
            TypeExp::Apply(..) => {
                let span = te.span();
                let mut args: Vec<&mut TypeArg> = Vec::new();
                let mut head = te;
                while let TypeExp::Apply(f, a, _) = head {
                    args.push(a);
                    head = f;
                }
                args.reverse();
                let q = match head {
                    TypeExp::Var(q, _) => q.clone(),
                    _ => return err(span, "Only type abbreviations can be applied to arguments."),
                };
                let mut targs: Vec<Result<T, Sz>> = Vec::new();
                for a in args {
                    match a {
                        TypeArg::Type(t) => targs.push(Ok(self.convert_type(t, mode)?)),
                        TypeArg::Size(s) => targs.push(Err(self.convert_size(s, mode)?)),
                    }
                }
                self.type_name(&q, &targs, span)
            }
            TypeExp::Tuple(ts, _) => {
                let mut out = Vec::new();
                for t in ts {
                    out.push(self.convert_type(t, mode)?);
                }
                Ok(T::tuple(out))
            }
            TypeExp::Record(fs, span) => {
                let mut out = BTreeMap::new();
                for (n, t) in fs {
                    let ct = self.convert_type(t, mode)?;
                    if out.insert(n.clone(), ct).is_some() {
                        return err(
                            *span,
                            format!("Field \"{n}\" is given more than once in the record type."),
                        );
                    }
                }
                Ok(T::Record(out))
            }
            TypeExp::Array(size, elem, _) => {
                let sz = self.convert_size(size, mode)?;
                let et = self.convert_type(elem, mode)?;
                Ok(T::Array(sz, Box::new(et)))
            }
            TypeExp::Unique(t, _) => self.convert_type(t, mode),
            TypeExp::Arrow(name, a, b, _) => {
                let at = self.convert_type(a, mode)?;
                let bt = match name {
                    Some(n) => {
                        self.scopes
                            .push(Scope::Val(n.clone(), Rc::new(Scheme::mono(at.clone()))));
                        let r = self.convert_type(b, mode);
                        self.scopes.pop();
                        r?
                    }
                    None => self.convert_type(b, mode)?,
                };
                Ok(T::Arrow(name.clone(), Box::new(at), Box::new(bt)))
            }
            TypeExp::Sum(cs, span) => {
                let mut out = BTreeMap::new();
                for (c, ts) in cs {
                    let mut v = Vec::new();
                    for t in ts {
                        v.push(self.convert_type(t, mode)?);
                    }
                    if out.insert(c.clone(), v).is_some() {
                        return err(
                            *span,
                            format!("Constructor \"#{c}\" occurs more than once in the sum type."),
                        );
                    }
                }
                Ok(T::Sum(out))
            }
            TypeExp::Exists(names, t, _) => {
                for n in names.iter() {
                    self.scopes
                        .push(Scope::Val(n.clone(), Rc::new(Scheme::mono(T::i64()))));
                }
                let r = self.convert_type(t, mode);
                for _ in names.iter() {
                    self.scopes.pop();
                }
                let t = r?;
                let mut map: HashMap<Name, Sz> = HashMap::new();
                for n in names.iter() {
                    map.insert(n.clone(), self.s.fresh_unknown());
                }
                Ok(map_sizes(&t, &mut |s| rename_sizes(s, &map)))
            }
        }
    }

    fn convert_size(&mut self, s: &mut SizeExp, mode: Anon) -> R<Sz> {
        match s {
            SizeExp::Anon(_) => Ok(match mode {
                Anon::Flex => self.s.fresh_flex(),
                Anon::Implicit => {
                    let u = self.s.fresh_unknown();
                    if let Sz::Unknown(k) = u {
                        self.implicit.push(k);
                    }
                    u
                }
                Anon::Exist => self.s.fresh_unknown(),
            }),
            SizeExp::Exp(e) => {
                let t = self.infer(e)?;
                self.expect(&T::i64(), &t, e.span, "a size")?;
                Ok(self.size_term(e))
            }
        }
    }

    fn type_name(&mut self, q: &QualName, args: &[Result<T, Sz>], span: Span) -> R<T> {
        if q.is_qualified() {
            if q.quals.len() == 1 {
                if let Some(m) = Self::module_of(&q.quals[0]) {
                    if let Some(p) = module_type_member(m, &q.name) {
                        if !args.is_empty() {
                            return err(span, format!("Type \"{q}\" takes no arguments."));
                        }
                        return Ok(T::Prim(p));
                    }
                }
            }
            return err(span, format!("Unknown type \"{q}\"."));
        }
        let name = &q.name;
        for sc in self.scopes.iter().rev() {
            if let Scope::TParam(n) = sc {
                if n == name {
                    if !args.is_empty() {
                        return err(
                            span,
                            format!("Type parameter \"{name}\" cannot be applied to arguments."),
                        );
                    }
                    return Ok(T::Param(name.clone()));
                }
            }
        }
        if let Some(abbr) = self.types.get(name).cloned() {
            if abbr.params.len() != args.len() {
                return err(
                    span,
                    format!(
                        "Type \"{name}\" takes {} argument{} but is given {}.",
                        abbr.params.len(),
                        if abbr.params.len() == 1 { "" } else { "s" },
                        args.len()
                    ),
                );
            }
            let mut tmap = HashMap::new();
            let mut smap = HashMap::new();
            for (p, a) in abbr.params.iter().zip(args) {
                match (p, a) {
                    (TypeParam::Type(n, _, _), Ok(t)) => {
                        tmap.insert(n.clone(), t.clone());
                    }
                    (TypeParam::Size(n, _), Err(s)) => {
                        smap.insert(n.clone(), s.clone());
                    }
                    (TypeParam::Type(n, _, _), Err(_)) => {
                        return err(span, format!("Parameter \"{n}\" of type \"{name}\" expects a type, not a size."))
                    }
                    (TypeParam::Size(n, _), Ok(_)) => {
                        return err(span, format!("Parameter \"{n}\" of type \"{name}\" expects a size like [n], not a type."))
                    }
                }
            }
            let mut umap = HashMap::new();
            let mut fmap = HashMap::new();
            return Ok(self.inst_type(&abbr.body, &tmap, &smap, &[], &mut umap, &mut fmap));
        }
        if let Some(p) = PrimType::from_name(name) {
            if !args.is_empty() {
                return err(span, format!("Type \"{name}\" takes no arguments."));
            }
            return Ok(T::Prim(p));
        }
        err(span, format!("Unknown type \"{name}\"."))
    }

    /// The size term denoted by an `i64` expression (Section 6.6 rule 4).
    fn size_term(&mut self, e: &Exp) -> Sz {
        match &e.kind {
            ExpKind::Var(q) if q.quals.is_empty() => Sz::Name(q.name.clone()),
            ExpKind::Literal(Literal::Int { value, .. }) if *value <= i64::MAX as u128 => {
                Sz::Const(*value as i64)
            }
            ExpKind::BinOp { op, lhs, rhs }
                if matches!(op.name.name.as_str(), "+" | "-" | "*")
                    && (op.name.quals.is_empty() || op.name.quals == ["i64"]) =>
            {
                let o: &'static str = match op.name.name.as_str() {
                    "+" => "+",
                    "-" => "-",
                    _ => "*",
                };
                Sz::Op(
                    o,
                    Box::new(self.size_term(lhs)),
                    Box::new(self.size_term(rhs)),
                )
            }
            ExpKind::Attr(_, x) => self.size_term(x),
            _ if simple_exp(e) => Sz::Exp(Box::new(e.clone())),
            _ => self.s.fresh_unknown(),
        }
    }

    // ----------------------------------------------------------------------------------
    // Expressions

    pub fn infer(&mut self, e: &mut Exp) -> R<T> {
        let t = self.infer_kind(e)?;
        self.exp_rec.push((e.id, t.clone(), e.span));
        Ok(t)
    }

    fn literal_type(&mut self, lit: &Literal, span: Span) -> T {
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

    fn infer_kind(&mut self, e: &mut Exp) -> R<T> {
        let span = e.span;
        let id = e.id;
        match &mut e.kind {
            ExpKind::Literal(lit) => {
                let t = self.literal_type(lit, span);
                self.lits.push(LitCheck {
                    ty: t.clone(),
                    lit: lit.clone(),
                    negated: false,
                    span,
                });
                Ok(t)
            }
            ExpKind::Var(q) => {
                let q = q.clone();
                self.infer_var(e, q)
            }
            ExpKind::Tuple(es) => {
                let mut ts = Vec::new();
                for x in es {
                    ts.push(self.infer(x)?);
                }
                Ok(T::tuple(ts))
            }
            ExpKind::Record(fields) => {
                let mut out = BTreeMap::new();
                for f in fields {
                    let (name, t, fspan) = match f {
                        RecordField::Explicit(n, x) => {
                            let t = self.infer(x)?;
                            (n.clone(), t, x.span)
                        }
                        RecordField::Punned(n, s) => {
                            let t = match self.lookup(n) {
                                Some(Denot::Value(sc)) => self.instantiate(&sc).0,
                                Some(Denot::Member(m, x)) => self.member_type(m, &x, id, *s)?,
                                _ => return Err(self.unknown_name(n, *s)),
                            };
                            (n.clone(), t, *s)
                        }
                    };
                    if out.insert(name.clone(), t).is_some() {
                        return err(
                            fspan,
                            format!("Field \"{name}\" is given more than once in the record."),
                        );
                    }
                }
                Ok(T::Record(out))
            }
            ExpKind::ArrayLit(es) => {
                let elem = self.s.fresh_var();
                let n = es.len();
                for (i, x) in es.iter_mut().enumerate() {
                    let t = self.infer(x)?;
                    let what = format!("the {} element of the array literal", ordinal(i + 1));
                    self.expect(&elem, &t, x.span, &what)?;
                }
                Ok(T::Array(Sz::Const(n as i64), Box::new(elem)))
            }
            ExpKind::Range {
                start,
                second,
                end,
                kind,
            } => {
                let a = self.fresh_prims(INTS.to_vec(), span);
                let t = self.infer(start)?;
                self.expect(&a, &t, start.span, "the start of the range")?;
                if let Some(s2) = second {
                    let t = self.infer(s2)?;
                    self.expect(&a, &t, s2.span, "the second element of the range")?;
                }
                let t = self.infer(end)?;
                self.expect(&a, &t, end.span, "the end of the range")?;
                let size = self.range_size(start, second.as_deref(), end, kind);
                Ok(T::Array(size, Box::new(a)))
            }
            ExpKind::Project(x, f) => {
                let f = f.clone();
                let t = self.infer(x)?;
                self.field_of(&t, &f, span)
            }
            ExpKind::Index(x, idxs) => {
                let t = self.infer(x)?;
                self.index_type(&t, idxs, span)
            }
            ExpKind::Apply(f, args) => {
                let fname = callee_name(f);
                let ft = self.infer(f)?;
                self.apply_args(ft, args, &fname, f.span)
            }
            ExpKind::Negate(x) => {
                let t = self.infer(x)?;
                if matches!(
                    x.kind,
                    ExpKind::Literal(Literal::Int { .. } | Literal::Float { .. })
                ) {
                    if let Some(l) = self.lits.last_mut() {
                        l.negated = true;
                        l.span = span;
                    }
                }
                let a = self.fresh_prims(numeric(), span);
                self.expect(&a, &t, x.span, "the operand of prefix \"-\"")?;
                Ok(a)
            }
            ExpKind::Not(x) => {
                let t = self.infer(x)?;
                let mut ps = INTS.to_vec();
                ps.push(PrimType::Bool);
                let a = self.fresh_prims(ps, span);
                self.expect(&a, &t, x.span, "the operand of \"!\"")?;
                Ok(a)
            }
            ExpKind::BinOp { op, lhs, rhs } => {
                let opt = self.op_type(op, id)?;
                let name = format!("\"{}\"", op.name);
                let lt = self.infer(lhs)?;
                let rt = self.infer(rhs)?;
                let r1 = self.apply_one(opt, lt, lhs, 1, &name, op.span)?;
                self.apply_one(r1, rt, rhs, 2, &name, op.span)
            }
            ExpKind::OpSection(op) => self.op_type(op, id),
            ExpKind::LeftSection { op, lhs } => {
                let opt = self.op_type(op, id)?;
                let name = format!("\"{}\"", op.name);
                let lt = self.infer(lhs)?;
                self.apply_one(opt, lt, lhs, 1, &name, op.span)
            }
            ExpKind::RightSection { op, rhs } => {
                let opt = self.op_type(op, id)?;
                let name = format!("\"{}\"", op.name);
                let rt = self.infer(rhs)?;
                let a = self.s.fresh_var();
                let b = self.s.fresh_var();
                let r = self.s.fresh_var();
                let shape = T::arrow(a.clone(), T::arrow(b.clone(), r.clone()));
                self.expect(&shape, &opt, op.span, &format!("the operator {name}"))?;
                self.expect(&b, &rt, rhs.span, &format!("the second operand of {name}"))?;
                Ok(T::arrow(a, r))
            }
            ExpKind::ProjSection(steps) => {
                let arg = self.s.fresh_var();
                let mut t = arg.clone();
                for st in steps {
                    t = match st {
                        ProjStep::Field(f) => self.field_of(&t, f, span)?,
                        ProjStep::Index(idxs) => self.index_type(&t, idxs, span)?,
                    };
                }
                Ok(T::arrow(arg, t))
            }
            ExpKind::Lambda { params, ret, body } => {
                let depth = self.scopes.len();
                let r = self.infer_lambda(params, ret, body);
                self.scopes.truncate(depth);
                r
            }
            ExpKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                let ct = self.infer(cond)?;
                self.expect(&T::bool(), &ct, cond.span, "the condition of \"if\"")?;
                let t1 = self.infer(then_branch)?;
                let t2 = self.infer(else_branch)?;
                self.expect(
                    &t1,
                    &t2,
                    else_branch.span,
                    "the \"else\" branch (it must have the type of the \"then\" branch)",
                )?;
                Ok(self.join(&t1, &t2))
            }
            ExpKind::LetPat {
                sizes,
                pat,
                rhs,
                body,
            } => {
                let rt = self.infer(rhs)?;
                let depth = self.scopes.len();
                let r: R<T> = (|| {
                    let mut bound_names = Vec::new();
                    for (n, _) in sizes.iter() {
                        self.scopes
                            .push(Scope::Val(n.clone(), Rc::new(Scheme::mono(T::i64()))));
                        bound_names.push(n.clone());
                    }
                    let vars = self.bind_pattern(pat, &rt, Anon::Flex, false)?;
                    bound_names.extend(vars.iter().cloned());
                    let bt = self.infer(body)?;
                    Ok(self.escape(&bt, &bound_names))
                })();
                self.scopes.truncate(depth);
                r
            }
            ExpKind::LetFun {
                name,
                name_span: _,
                type_params,
                params,
                ret,
                rhs,
                body,
            } => {
                let depth = self.scopes.len();
                let sc = self.infer_function(type_params, params, ret, rhs, false);
                self.scopes.truncate(depth);
                let (sc, _) = sc?;
                self.scopes.push(Scope::Val(name.clone(), Rc::new(sc)));
                let r = self.infer(body);
                self.scopes.truncate(depth);
                let bt = r?;
                Ok(bt)
            }
            ExpKind::LetUpdate {
                name,
                name_span,
                steps,
                rhs,
                body,
            } => {
                let vt = match self.lookup_local(name) {
                    Some(Denot::Value(sc)) => sc.ty.clone(),
                    _ => {
                        return match self.lookup(name) {
                            Some(_) => err(*name_span, format!("\"{name}\" is not a local variable; only local variables can be updated in place.")),
                            None => Err(self.unknown_name(name, *name_span)),
                        }
                    }
                };
                let target = self.update_path(&vt, steps)?;
                let rt = self.infer(rhs)?;
                self.expect(
                    &target,
                    &rt,
                    rhs.span,
                    "the value written by the in-place update",
                )?;
                let depth = self.scopes.len();
                self.scopes
                    .push(Scope::Val(name.clone(), Rc::new(Scheme::mono(vt))));
                let r = self.infer(body);
                self.scopes.truncate(depth);
                r
            }
            ExpKind::Update {
                target,
                steps,
                value,
            } => {
                let tt = self.infer(target)?;
                let slot = self.update_path(&tt, steps)?;
                let vt = self.infer(value)?;
                self.expect(
                    &slot,
                    &vt,
                    value.span,
                    "the new value of the \"with\" update",
                )?;
                Ok(tt)
            }
            ExpKind::Loop {
                pat,
                init,
                form,
                body,
            } => {
                let depth = self.scopes.len();
                let r = self.infer_loop(pat, init, form, body, span);
                self.scopes.truncate(depth);
                r
            }
            ExpKind::Match { scrutinee, cases } => {
                let st = self.infer(scrutinee)?;
                let mut result: Option<T> = None;
                for case in cases.iter_mut() {
                    let depth = self.scopes.len();
                    let r: R<T> = (|| {
                        let vars = self.bind_pattern(&mut case.pat, &st, Anon::Flex, true)?;
                        let bt = self.infer(&mut case.body)?;
                        Ok(self.escape(&bt, &vars))
                    })();
                    self.scopes.truncate(depth);
                    let bt = r?;
                    result = Some(match result {
                        None => bt,
                        Some(prev) => {
                            self.expect(
                                &prev,
                                &bt,
                                case.body.span,
                                "this case (all cases must have the same type)",
                            )?;
                            self.join(&prev, &bt)
                        }
                    });
                }
                let pats = cases.iter().map(|c| c.pat.clone()).collect();
                self.matches.push((span, st, pats));
                match result {
                    Some(t) => Ok(t),
                    None => err(span, "A match needs at least one case."),
                }
            }
            ExpKind::Ascribe(x, te) => {
                let t = self.infer(x)?;
                let at = self.convert_type(te, Anon::Flex)?;
                self.expect(&at, &t, x.span, "the expression with a type ascription")?;
                Ok(at)
            }
            ExpKind::Coerce(x, te) => {
                let t = self.infer(x)?;
                let at = self.convert_type(te, Anon::Flex)?;
                // Only the shape of the types must agree; sizes are checked at run time.
                let loose = map_sizes(&at, &mut |_| Sz::Unknown(u32::MAX));
                let loose = self.refresh_sizes(&loose);
                self.expect(&loose, &t, x.span, "the expression being coerced")?;
                let _ = self.s.unify(&at, &t);
                Ok(at)
            }
            ExpKind::Assert { cond, body } => {
                let ct = self.infer(cond)?;
                self.expect(&T::bool(), &ct, cond.span, "the condition of \"assert\"")?;
                self.infer(body)
            }
            ExpKind::Attr(_, x) => self.infer(x),
            ExpKind::Constr(c, args) => {
                let mut ts = Vec::new();
                for a in args {
                    ts.push(self.infer(a)?);
                }
                let mut cs = BTreeMap::new();
                cs.insert(c.clone(), ts);
                let t = self.s.fresh(Cons::Constrs(cs));
                if let T::Var(v) = t {
                    self.origins.push((v, span));
                }
                Ok(t)
            }
            ExpKind::LocalOpen(q, inner) => {
                let m = match (q.is_qualified(), Self::module_of(&q.name)) {
                    (false, Some(m)) if self.lookup_local(&q.name).is_none() => m,
                    _ => return err(span, format!("\"{q}\" is not a module; only the numeric modules (f32, i64, ...) can be opened.")),
                };
                self.scopes.push(Scope::Open(m));
                let r = self.infer(inner);
                self.scopes.pop();
                let t = r?;
                // Replace the local open by its body, whose names are now qualified.
                let inner = std::mem::replace(
                    &mut **inner,
                    Exp {
                        id,
                        span,
                        kind: ExpKind::Hole,
                    },
                );
                *e = inner;
                Ok(t)
            }
            ExpKind::Hole => {
                self.warnings.push(Diagnostic::warning(
                    span,
                    "Typed hole \"???\" will fail if evaluated.",
                ));
                Ok(self.s.fresh_var())
            }
        }
    }

    fn refresh_sizes(&mut self, t: &T) -> T {
        let mut out = t.clone();
        out = map_sizes(&out, &mut |s| s.clone());
        let mut fresh = Vec::new();
        count_sizes(&out, &mut fresh);
        let mut it = fresh
            .into_iter()
            .map(|_| self.s.fresh_flex())
            .collect::<Vec<_>>()
            .into_iter();
        map_sizes(&out, &mut |_| it.next().unwrap_or(Sz::Const(0)))
    }

    fn infer_var(&mut self, e: &mut Exp, q: QualName) -> R<T> {
        let span = e.span;
        let id = e.id;
        if q.quals.is_empty() {
            return match self.lookup(&q.name) {
                Some(Denot::Value(sc)) => {
                    let (t, sizes) = self.instantiate(&sc);
                    self.record_occurrence(id, span, &q.name, sizes);
                    Ok(t)
                }
                Some(Denot::Member(m, n)) => {
                    e.kind = ExpKind::Var(QualName {
                        quals: vec![m.name().to_string()],
                        name: n.clone(),
                    });
                    self.member_type(m, &n, id, span)
                }
                Some(Denot::Builtin(n)) => Ok(self.builtin_op_type(&n, span)),
                None => Err(self.unknown_name(&q.name, span)),
            };
        }
        // A dotted name: module access or projection (Section 7.7).
        let mut parts: Vec<Name> = q.quals.clone();
        parts.push(q.name.clone());
        let head = &parts[0];
        let head_is_value = matches!(
            self.lookup(head),
            Some(Denot::Value(_)) | Some(Denot::Member(..))
        );
        let (consumed, base_kind) = if head_is_value {
            (1, ExpKind::Var(QualName::unqual(head.clone())))
        } else if let Some(m) = Self::module_of(head) {
            (
                2,
                ExpKind::Var(QualName {
                    quals: vec![m.name().to_string()],
                    name: parts[1].clone(),
                }),
            )
        } else {
            return Err(self.unknown_name(
                head,
                Span {
                    end: span.start + head.len() as u32,
                    ..span
                },
            ));
        };
        if consumed == parts.len() {
            // `M.x` stays a qualified variable.
            let m = Self::module_of(head).unwrap_or(PrimType::I32);
            return self.member_type(m, &parts[1], id, span);
        }
        // Build the projection chain; the outermost node keeps the original id.
        let prefix_len = |k: usize| parts[..k].iter().map(|p| p.len()).sum::<usize>() + k - 1;
        let mut cur = Exp {
            id: self.fresh_id(),
            span: Span {
                end: span.start + prefix_len(consumed) as u32,
                ..span
            },
            kind: base_kind,
        };
        for k in consumed..parts.len() {
            let last = k + 1 == parts.len();
            let pspan = Span {
                end: (span.start + prefix_len(k + 1) as u32).min(span.end),
                ..span
            };
            cur = Exp {
                id: if last { id } else { self.fresh_id() },
                span: if last { span } else { pspan },
                kind: ExpKind::Project(Box::new(cur), parts[k].clone()),
            };
        }
        // Infer the inner parts (records their types); the outer node's type is recorded by
        // the caller.
        let ExpKind::Project(inner, f) = &mut cur.kind else {
            unreachable!()
        };
        let it = self.infer(inner)?;
        let f = f.clone();
        let t = self.field_of(&it, &f, span)?;
        *e = cur;
        Ok(t)
    }

    pub fn fresh_id(&mut self) -> NodeId {
        self.next_id += 1;
        NodeId(self.next_id - 1)
    }

    fn apply_args(&mut self, mut ft: T, args: &mut [Exp], fname: &str, fspan: Span) -> R<T> {
        let total = args.len();
        for (i, arg) in args.iter_mut().enumerate() {
            let shallow = self.s.shallow(&ft);
            match shallow {
                T::Arrow(..) | T::Var(_) => {
                    let at = self.infer(arg)?;
                    ft = self.apply_one(shallow, at, arg, i + 1, fname, fspan)?;
                }
                other => {
                    let msg = if i == 0 {
                        format!("{fname} is not a function (it has type \"{}\") but is applied to {total} argument{}.", self.s.show(&other), if total == 1 { "" } else { "s" })
                    } else {
                        format!(
                            "{fname} takes {i} argument{} but is applied to {total}.",
                            if i == 1 { "" } else { "s" }
                        )
                    };
                    return err(arg.span.to(fspan), msg);
                }
            }
        }
        Ok(ft)
    }

    /// Apply a function type to one argument of type `at`.
    fn apply_one(&mut self, ft: T, at: T, arg: &Exp, pos: usize, fname: &str, fspan: Span) -> R<T> {
        match self.s.shallow(&ft) {
            T::Arrow(pn, p, r) => {
                self.expect(
                    &p,
                    &at,
                    arg.span,
                    &format!("the {} argument of {fname}", ordinal(pos)),
                )?;
                let r = *r;
                Ok(match pn {
                    Some(n) => {
                        let by = self.size_term(arg);
                        let r = self.s.zonk(&r);
                        map_sizes(&r, &mut |s| crate::infer_ty::subst_size(s, &n, &by))
                    }
                    None => r,
                })
            }
            T::Var(_) => {
                let r = self.s.fresh_var();
                let want = T::arrow(at.clone(), r.clone());
                self.expect(
                    &ft,
                    &want,
                    arg.span,
                    &format!("the {} argument of {fname}", ordinal(pos)),
                )?;
                Ok(r)
            }
            other => err(
                arg.span.to(fspan),
                format!(
                    "{fname} takes {} argument{} but is applied to more.",
                    pos - 1,
                    if pos == 2 { "" } else { "s" }
                ) + &format!(" (its result has type \"{}\")", self.s.show(&other)),
            ),
        }
    }

    fn field_of(&mut self, t: &T, f: &str, span: Span) -> R<T> {
        match self.s.shallow(t) {
            T::Record(fs) => match fs.get(f) {
                Some(ft) => Ok(ft.clone()),
                None => err(
                    span,
                    format!(
                        "Field \"{f}\" does not exist in type \"{}\".",
                        self.s.show(t)
                    ),
                ),
            },
            T::Var(v) => {
                let ft = self.s.fresh_var();
                let mut fs = BTreeMap::new();
                fs.insert(f.to_string(), ft.clone());
                let w = self.s.fresh(Cons::Fields(fs));
                if let T::Var(wv) = w {
                    self.origins.push((wv, span));
                }
                match self.s.unify(&T::Var(v), &w) {
                    Ok(()) => Ok(ft),
                    Err(c) => err(span, c.message),
                }
            }
            other => err(
                span,
                format!(
                    "Cannot access field \"{f}\" of a value of type \"{}\".",
                    self.s.show(&other)
                ),
            ),
        }
    }

    fn index_type(&mut self, t: &T, idxs: &mut [DimIndex], span: Span) -> R<T> {
        let k = idxs.len();
        // Check the index expressions first.
        let mut slices: Vec<bool> = Vec::new();
        for ix in idxs.iter_mut() {
            match ix {
                DimIndex::Index(x) => {
                    let it = self.infer(x)?;
                    let a = self.fresh_prims(SIGNED.to_vec(), x.span);
                    self.expect(&a, &it, x.span, "an index")?;
                    slices.push(false);
                }
                DimIndex::Slice { start, end, stride } => {
                    for x in [start, end, stride].into_iter().flatten() {
                        let it = self.infer(x)?;
                        self.expect(&T::i64(), &it, x.span, "a slice bound")?;
                    }
                    slices.push(true);
                }
            }
        }
        let z = self.s.zonk(t);
        if !matches!(z, T::Var(_) | T::Array(..)) && k > 0 {
            return err(
                span,
                format!("Cannot index into a value of type \"{}\".", self.s.show(&z)),
            );
        }
        if let T::Array(..) = z {
            let mut rank = 0;
            let mut cur = &z;
            while let T::Array(_, e) = cur {
                rank += 1;
                cur = e;
            }
            if rank < k && !matches!(cur, T::Var(_)) {
                return err(
                    span,
                    format!(
                        "Too many indices: {k} given for an array of rank {rank} (type \"{}\").",
                        self.s.show(&z)
                    ),
                );
            }
        }
        let elem = self.s.fresh_var();
        let dims: Vec<Sz> = (0..k).map(|_| self.s.fresh_flex()).collect();
        let mut arr = elem.clone();
        for d in dims.iter().rev() {
            arr = T::Array(d.clone(), Box::new(arr));
        }
        if let Err(c) = self.s.unify(&arr, t) {
            return err(span, c.message);
        }
        let mut result = elem;
        for (i, ix) in idxs.iter().enumerate().rev() {
            if let DimIndex::Slice { start, end, stride } = ix {
                let d = dims[i].clone();
                let sz = self.slice_size(&d, start.as_ref(), end.as_ref(), stride.as_ref());
                result = T::Array(sz, Box::new(result));
            }
        }
        Ok(result)
    }

    fn slice_size(
        &mut self,
        d: &Sz,
        start: Option<&Exp>,
        end: Option<&Exp>,
        stride: Option<&Exp>,
    ) -> Sz {
        let is_lit = |e: Option<&Exp>, v: u128| matches!(e.map(|e| &e.kind), Some(ExpKind::Literal(Literal::Int { value, .. })) if *value == v);
        let is_neg_one = |e: Option<&Exp>| match e.map(|e| &e.kind) {
            Some(ExpKind::Negate(x)) => {
                matches!(&x.kind, ExpKind::Literal(Literal::Int { value: 1, .. }))
            }
            _ => false,
        };
        let unit_stride = stride.is_none() || is_lit(stride, 1);
        let end_term = |me: &mut Self| match end {
            Some(j) => me.size_term(j),
            None => d.clone(),
        };
        if unit_stride && (start.is_none() || is_lit(start, 0)) {
            return end_term(self);
        }
        if unit_stride {
            let j = end_term(self);
            let i = self.size_term(start.expect("start present"));
            return Sz::Op("-", Box::new(j), Box::new(i));
        }
        if is_neg_one(stride) {
            match (start, end) {
                (None, None) => return d.clone(),
                (Some(i), Some(j)) => {
                    let i = self.size_term(i);
                    let j = self.size_term(j);
                    return Sz::Op("-", Box::new(i), Box::new(j));
                }
                _ => {}
            }
        }
        self.s.fresh_unknown()
    }

    fn range_size(&mut self, start: &Exp, second: Option<&Exp>, end: &Exp, kind: &RangeEnd) -> Sz {
        let lit = |e: &Exp, v: u128| matches!(&e.kind, ExpKind::Literal(Literal::Int { value, suffix }) if *value == v && suffix.is_none_or(|p| p == PrimType::I64));
        match (kind, second) {
            (RangeEnd::UpToExclusive, None) if lit(start, 0) => self.size_term(end),
            (RangeEnd::UpToExclusive, Some(s2)) if lit(start, 0) && lit(s2, 1) => {
                self.size_term(end)
            }
            (RangeEnd::UpToExclusive, None) => {
                let e = self.size_term(end);
                let s = self.size_term(start);
                Sz::Op("-", Box::new(e), Box::new(s))
            }
            (RangeEnd::Inclusive, None) => {
                let e = self.size_term(end);
                let s = self.size_term(start);
                Sz::Op(
                    "+",
                    Box::new(Sz::Op("-", Box::new(e), Box::new(s))),
                    Box::new(Sz::Const(1)),
                )
            }
            (RangeEnd::Inclusive, Some(s2)) if lit(start, 1) && lit(s2, 2) => self.size_term(end),
            _ => self.s.fresh_unknown(),
        }
    }

    /// The type at the end of an update path (`with [i].f = v`).
    fn update_path(&mut self, t: &T, steps: &mut [UpdateStep]) -> R<T> {
        let mut cur = t.clone();
        for st in steps {
            cur = match st {
                UpdateStep::Index(idxs, span) => {
                    let span = *span;
                    self.index_type(&cur, idxs, span)?
                }
                UpdateStep::Field(f, span) => {
                    let span = *span;
                    self.field_of(&cur, f, span)?
                }
            };
        }
        Ok(cur)
    }

    /// Where two branches have different sizes, the result has a rigid unknown.
    fn join(&mut self, a: &T, b: &T) -> T {
        let a = self.s.zonk(a);
        let b = self.s.zonk(b);
        self.join_z(&a, &b)
    }

    fn join_z(&mut self, a: &T, b: &T) -> T {
        match (a, b) {
            (T::Array(s1, e1), T::Array(s2, e2)) => {
                let s = if s1 == s2 {
                    s1.clone()
                } else {
                    self.s.fresh_unknown()
                };
                T::Array(s, Box::new(self.join_z(e1, e2)))
            }
            (T::Record(f1), T::Record(f2)) => T::Record(
                f1.iter()
                    .map(|(k, t)| {
                        (
                            k.clone(),
                            match f2.get(k) {
                                Some(u) => self.join_z(t, u),
                                None => t.clone(),
                            },
                        )
                    })
                    .collect(),
            ),
            _ => a.clone(),
        }
    }

    /// Sizes that mention names going out of scope become rigid unknowns.
    fn escape(&mut self, t: &T, names: &[Name]) -> T {
        if names.is_empty() {
            return t.clone();
        }
        let z = self.s.zonk(t);
        let mut needs = false;
        map_sizes(&z, &mut |s| {
            if names.iter().any(|n| size_mentions(s, n)) {
                needs = true;
            }
            s.clone()
        });
        if !needs {
            return t.clone();
        }
        let mut fresh: Vec<Sz> = Vec::new();
        count_sizes(&z, &mut fresh);
        let mut replacement: Vec<Sz> = Vec::new();
        for s in &fresh {
            if names.iter().any(|n| size_mentions(s, n)) {
                replacement.push(self.s.fresh_unknown());
            } else {
                replacement.push(s.clone());
            }
        }
        let mut it = replacement.into_iter();
        map_sizes(&z, &mut |s| it.next().unwrap_or_else(|| s.clone()))
    }

    fn infer_lambda(
        &mut self,
        params: &mut [Pat],
        ret: &mut Option<TypeExp>,
        body: &mut Exp,
    ) -> R<T> {
        let mut pts = Vec::new();
        let mut names = Vec::new();
        for p in params.iter_mut() {
            let t = self.s.fresh_var();
            names.extend(self.bind_pattern(p, &t, Anon::Flex, false)?);
            pts.push(t);
        }
        let bt = self.infer(body)?;
        let rt = match ret {
            Some(te) => {
                let rt = self.convert_type(te, Anon::Flex)?;
                self.expect(
                    &rt,
                    &bt,
                    body.span,
                    "the body of the lambda (its declared return type)",
                )?;
                rt
            }
            None => bt,
        };
        let rt = self.escape(&rt, &names);
        Ok(pts.into_iter().rev().fold(rt, |acc, p| T::arrow(p, acc)))
    }

    fn infer_loop(
        &mut self,
        pat: &mut Pat,
        init: &mut Option<Box<Exp>>,
        form: &mut LoopForm,
        body: &mut Exp,
        span: Span,
    ) -> R<T> {
        let pt = match init {
            Some(x) => self.infer(x)?,
            None => {
                // The initial values come from the variables of the same names.
                let t = self.s.fresh_var();
                let mut names = Vec::new();
                pattern_names(pat, &mut names);
                let depth = self.scopes.len();
                self.bind_pattern(pat, &t, Anon::Flex, false)?;
                let bound: Vec<(Name, T)> = self.scopes[depth..]
                    .iter()
                    .filter_map(|s| match s {
                        Scope::Val(n, sc) => Some((n.clone(), sc.ty.clone())),
                        _ => None,
                    })
                    .collect();
                self.scopes.truncate(depth);
                for (n, bt) in bound {
                    let outer = match self.lookup(&n) {
                        Some(Denot::Value(sc)) => self.instantiate(&sc).0,
                        _ => return Err(self.unknown_name(&n, pat.span)),
                    };
                    self.expect(
                        &bt,
                        &outer,
                        pat.span,
                        &format!("the initial value of loop variable \"{n}\""),
                    )?;
                }
                self.pat_rec.retain(|_| true);
                t
            }
        };
        let depth = self.scopes.len();
        // The loop parameter: the type of the initial value, or the annotation.
        let param_t = self.s.fresh_var();
        self.s
            .unify(&param_t, &pt)
            .map_err(|c| Box::new(Diagnostic::error(span, c.message)))?;
        let names = self.bind_pattern(pat, &param_t, Anon::Flex, false)?;
        let mut bound = names.clone();
        match form {
            LoopForm::For {
                var,
                var_span: _,
                bound: b,
            } => {
                let bt = self.infer(b)?;
                let a = self.fresh_prims(INTS.to_vec(), b.span);
                self.expect(&a, &bt, b.span, "the bound of a \"for\" loop")?;
                self.scopes
                    .push(Scope::Val(var.clone(), Rc::new(Scheme::mono(a))));
                bound.push(var.clone());
            }
            LoopForm::ForIn { pat: ip, array } => {
                let at = self.infer(array)?;
                let elem = self.s.fresh_var();
                let d = self.s.fresh_flex();
                let want = T::Array(d, Box::new(elem.clone()));
                self.expect(&want, &at, array.span, "the array of a \"for ... in\" loop")?;
                bound.extend(self.bind_pattern(ip, &elem, Anon::Flex, false)?);
            }
            LoopForm::While(c) => {
                let ct = self.infer(c)?;
                self.expect(&T::bool(), &ct, c.span, "the condition of a \"while\" loop")?;
            }
        }
        let bt = self.infer(body)?;
        self.expect(
            &param_t,
            &bt,
            body.span,
            "the body of the loop (it must have the type of the loop parameter)",
        )?;
        self.scopes.truncate(depth);
        let joined = self.join(&param_t, &bt);
        Ok(self.escape(&joined, &bound))
    }

    // ----------------------------------------------------------------------------------
    // Patterns

    /// Bind a pattern to type `t`, pushing its variables into scope; returns their names.
    fn bind_pattern(&mut self, p: &mut Pat, t: &T, mode: Anon, refutable: bool) -> R<Vec<Name>> {
        let mut vars: Vec<(Name, T, Span)> = Vec::new();
        self.pattern(p, t, mode, refutable, &mut vars)?;
        let names = vars.iter().map(|(n, _, _)| n.clone()).collect();
        for (n, ty, _) in vars {
            self.scopes.push(Scope::Val(n, Rc::new(Scheme::mono(ty))));
        }
        Ok(names)
    }

    fn pattern(
        &mut self,
        p: &mut Pat,
        t: &T,
        mode: Anon,
        refutable: bool,
        vars: &mut Vec<(Name, T, Span)>,
    ) -> R<()> {
        self.pat_rec.push((p.id, t.clone()));
        let span = p.span;
        match &mut p.kind {
            PatKind::Var(n) => {
                if vars.iter().any(|(m, _, _)| m == n) {
                    return err(
                        span,
                        format!("Variable \"{n}\" is bound twice in the same pattern."),
                    );
                }
                vars.push((n.clone(), t.clone(), span));
                Ok(())
            }
            PatKind::Wildcard => Ok(()),
            PatKind::Tuple(ps) => {
                let comps: Vec<T> = ps.iter().map(|_| self.s.fresh_var()).collect();
                let want = T::tuple(comps.clone());
                self.expect(&want, t, span, "a tuple pattern")?;
                for (sub, ct) in ps.iter_mut().zip(comps) {
                    self.pattern(sub, &ct, mode, refutable, vars)?;
                }
                Ok(())
            }
            PatKind::Record(fs) => {
                let mut want = BTreeMap::new();
                for (n, _) in fs.iter() {
                    let v = self.s.fresh_var();
                    if want.insert(n.clone(), v).is_some() {
                        return err(
                            span,
                            format!("Field \"{n}\" occurs more than once in the record pattern."),
                        );
                    }
                }
                let want_t = T::Record(want.clone());
                self.expect(&want_t, t, span, "a record pattern")?;
                for (n, sub) in fs.iter_mut() {
                    let ft = want[n].clone();
                    self.pattern(sub, &ft, mode, refutable, vars)?;
                }
                Ok(())
            }
            PatKind::Ascribe(sub, te) => {
                let at = self.convert_type(te, mode)?;
                self.expect(&at, t, span, "a pattern with a type annotation")?;
                self.pattern(sub, &at, mode, refutable, vars)
            }
            PatKind::Literal { lit, negated } => {
                if !refutable {
                    return err(span, "Refutable pattern not allowed here: a literal pattern can only be used in a \"case\".");
                }
                let lt = self.literal_type(lit, span);
                if *negated {
                    let a = self.fresh_prims(numeric(), span);
                    self.expect(&a, &lt, span, "a negated literal pattern")?;
                }
                self.lits.push(LitCheck {
                    ty: lt.clone(),
                    lit: lit.clone(),
                    negated: *negated,
                    span,
                });
                self.eqs.push((lt.clone(), span));
                self.expect(t, &lt, span, "a literal pattern")
            }
            PatKind::Constr(c, ps) => {
                let payload: Vec<T> = ps.iter().map(|_| self.s.fresh_var()).collect();
                let mut cs = BTreeMap::new();
                cs.insert(c.clone(), payload.clone());
                let w = self.s.fresh(Cons::Constrs(cs));
                if let T::Var(v) = w {
                    self.origins.push((v, span));
                }
                self.expect(t, &w, span, "a constructor pattern")?;
                if !refutable {
                    self.irrefutable.push((span, t.clone()));
                }
                for (sub, pt) in ps.iter_mut().zip(payload) {
                    self.pattern(sub, &pt, mode, refutable, vars)?;
                }
                Ok(())
            }
            PatKind::Attr(_, sub) => self.pattern(sub, t, mode, refutable, vars),
        }
    }

    // ----------------------------------------------------------------------------------
    // Functions and definitions

    /// Infer a function (top-level or local) with explicit type/size parameters; returns its
    /// scheme (polymorphic in the explicit parameters only) and its parameter types.
    fn infer_function(
        &mut self,
        type_params: &[TypeParam],
        params: &mut [Pat],
        ret: &mut Option<TypeExp>,
        body: &mut Exp,
        top: bool,
    ) -> R<(Scheme, Vec<T>)> {
        let mut tparams = Vec::new();
        let mut sparams = Vec::new();
        let mut seen = HashSet::new();
        for tp in type_params {
            if !seen.insert(tp.name().clone()) {
                return err(
                    tp.span(),
                    format!("Type parameter \"{}\" is given more than once.", tp.name()),
                );
            }
            match tp {
                TypeParam::Size(n, _) => {
                    self.scopes
                        .push(Scope::Val(n.clone(), Rc::new(Scheme::mono(T::i64()))));
                    sparams.push(n.clone());
                }
                TypeParam::Type(n, _, _) => {
                    self.scopes.push(Scope::TParam(n.clone()));
                    tparams.push(n.clone());
                }
            }
        }
        let implicit_start = self.implicit.len();
        let mut pts = Vec::new();
        let mut names: Vec<Option<Name>> = Vec::new();
        for p in params.iter_mut() {
            let t = self.s.fresh_var();
            self.bind_pattern(p, &t, Anon::Implicit, false)?;
            names.push(simple_pat_name(p));
            pts.push(t);
        }
        let bt = self.infer(body)?;
        let rt = match ret {
            Some(te) => {
                let rt = self.convert_type(te, Anon::Exist)?;
                self.expect(
                    &rt,
                    &bt,
                    body.span,
                    "the body of the function (its declared return type)",
                )?;
                rt
            }
            None => bt,
        };
        let implicit: Vec<u32> = self.implicit[implicit_start..].to_vec();
        if !top {
            self.implicit.truncate(implicit_start);
        }
        // Name the parameters that later types mention (size-dependent arrows).
        let zp: Vec<T> = pts.iter().map(|t| self.s.zonk(t)).collect();
        let zr = self.s.zonk(&rt);
        let mut ty = zr.clone();
        for (i, pt) in zp.iter().enumerate().rev() {
            let mut name = None;
            if let Some(n) = &names[i] {
                let later = zp[i + 1..]
                    .iter()
                    .chain(std::iter::once(&zr))
                    .any(|t| type_mentions_size(t, n));
                if later {
                    name = Some(n.clone());
                }
            }
            ty = T::Arrow(name, Box::new(pt.clone()), Box::new(ty));
        }
        let poly = !tparams.is_empty() || !sparams.is_empty() || !implicit.is_empty() || top;
        Ok((
            Scheme {
                tparams,
                sparams,
                hidden: vec![],
                exist: vec![],
                implicit,
                poly,
                ty,
            },
            pts,
        ))
    }

    fn begin_def(&mut self, span: Span) {
        self.var_start = self.s.vars.len();
        self.exp_rec.clear();
        self.pat_rec.clear();
        self.occs.clear();
        self.lits.clear();
        self.eqs.clear();
        self.matches.clear();
        self.irrefutable.clear();
        self.origins.clear();
        self.implicit.clear();
        self.def_span = span;
        self.scopes.clear();
    }

    /// Check a top-level value binding; records everything in `info`. Errors are pushed to
    /// `self.errors`; the name is bound regardless, so that later uses do not cascade.
    pub fn check_valbind(&mut self, vb: &mut ValBind, main_file: bool, dec_index: usize) {
        if !self.file_values.insert(vb.name.clone()) {
            self.errors.push(Diagnostic::error(
                vb.name_span,
                format!("Duplicate definition of \"{}\".", vb.name),
            ));
        }
        self.begin_def(vb.span);
        let r = self.check_valbind_inner(vb, main_file, dec_index);
        self.scopes.clear();
        match r {
            Ok(sc) => {
                self.top.insert(vb.name.clone(), Rc::new(sc));
            }
            Err(d) => {
                self.errors.push(*d);
                let sc = Scheme {
                    tparams: vec!["a".into()],
                    poly: true,
                    ty: T::Param("a".into()),
                    ..Scheme::default()
                };
                self.top.insert(vb.name.clone(), Rc::new(sc));
            }
        }
    }

    fn check_valbind_inner(
        &mut self,
        vb: &mut ValBind,
        main_file: bool,
        dec_index: usize,
    ) -> R<Scheme> {
        if vb.name == "&&" || vb.name == "||" || vb.name == "=" {
            return err(
                vb.name_span,
                format!("The operator \"{}\" cannot be redefined.", vb.name),
            );
        }
        let (mut sc, _pts) = self.infer_function(
            &vb.type_params,
            &mut vb.params,
            &mut vb.ret,
            &mut vb.body,
            true,
        )?;
        self.solve_def()?;
        // Generalise: remaining free type variables of the type become type parameters.
        let zty = self.s.zonk(&sc.ty);
        let mut free = Vec::new();
        free_vars(&zty, &mut free);
        let mut used: HashSet<Name> = sc.tparams.iter().cloned().collect();
        let mut letter = 0usize;
        for v in free {
            if self.s.vars[v as usize].bound.is_some() {
                continue;
            }
            let name = loop {
                let cand = if letter < 26 {
                    ((b'a' + letter as u8) as char).to_string()
                } else {
                    format!("t{letter}")
                };
                letter += 1;
                if !used.contains(&cand) {
                    break cand;
                }
            };
            used.insert(name.clone());
            self.s.vars[v as usize].bound = Some(T::Param(name.clone()));
            sc.tparams.push(name);
        }
        // Everything else still free is unit.
        for v in self.var_start..self.s.vars.len() {
            if self.s.vars[v].bound.is_none() {
                self.s.vars[v].bound = Some(T::unit());
            }
        }
        sc.ty = self.s.zonk(&sc.ty);
        self.post_checks()?;
        self.export_def();
        let is_entry = main_file && (vb.kind == ValKind::Entry || vb.name == "main");
        if is_entry {
            self.entry_point(vb, &sc, dec_index)?;
        }
        Ok(sc)
    }

    /// Defaulting (Section 6.4), literal range checks and ambiguity errors.
    fn solve_def(&mut self) -> R<()> {
        for v in self.var_start..self.s.vars.len() {
            if self.s.vars[v].bound.is_some() {
                continue;
            }
            if let Cons::Prims(ps) = &self.s.vars[v].cons {
                let pick = if ps.len() == 1 {
                    Some(ps[0])
                } else if ps.contains(&PrimType::I32) {
                    Some(PrimType::I32)
                } else if ps.contains(&PrimType::F64) {
                    Some(PrimType::F64)
                } else {
                    None
                };
                match pick {
                    Some(p) => {
                        self.s.vars[v].cons = Cons::Free;
                        self.s.vars[v].bound = Some(T::Prim(p));
                    }
                    None => {
                        let span = self.origin(v as Tv);
                        return err(
                            span,
                            format!("Type is ambiguous (could be one of {}).", show_prims(ps)),
                        );
                    }
                }
            }
        }
        for lc in std::mem::take(&mut self.lits) {
            if let T::Prim(p) = self.s.zonk(&lc.ty) {
                check_literal(&lc.lit, lc.negated, p, lc.span)?;
            }
        }
        for v in self.var_start..self.s.vars.len() {
            if self.s.vars[v].bound.is_some() {
                continue;
            }
            let msg = match &self.s.vars[v].cons {
                Cons::Fields(fs) => format!(
                    "Type is ambiguous: a record with field{} {} is used here, but its full type is not known. Add a type annotation.",
                    if fs.len() == 1 { "" } else { "s" },
                    fs.keys().map(|k| format!("\"{k}\"")).collect::<Vec<_>>().join(", ")
                ),
                Cons::Constrs(cs) => format!(
                    "Type is ambiguous: a sum type with constructor{} {} is used here, but its full type is not known. Add a type annotation.",
                    if cs.len() == 1 { "" } else { "s" },
                    cs.keys().map(|k| format!("\"#{k}\"")).collect::<Vec<_>>().join(", ")
                ),
                _ => continue,
            };
            let span = self.origin(v as Tv);
            return err(span, msg);
        }
        Ok(())
    }

    fn origin(&self, v: Tv) -> Span {
        // The variable may have been merged into another; find any origin bound to it.
        for (w, s) in &self.origins {
            if *w == v {
                return *s;
            }
        }
        for (w, s) in &self.origins {
            if let T::Var(x) = self.s.shallow(&T::Var(*w)) {
                if x == v {
                    return *s;
                }
            }
        }
        self.def_span
    }

    fn post_checks(&mut self) -> R<()> {
        for (t, span) in std::mem::take(&mut self.eqs) {
            let z = self.s.zonk(&t);
            if t_functional(&z) {
                return err(
                    span,
                    format!(
                        "Equality is not defined on functional type \"{}\".",
                        self.s.show(&z)
                    ),
                );
            }
        }
        for (span, t) in std::mem::take(&mut self.irrefutable) {
            if let T::Sum(cs) = self.s.zonk(&t) {
                if cs.len() > 1 {
                    return err(span, "Refutable pattern not allowed here: the sum type has several constructors; use \"match\".");
                }
            }
        }
        for (span, t, pats) in std::mem::take(&mut self.matches) {
            let z = self.s.zonk(&t);
            let rows: Vec<Vec<&Pat>> = pats.iter().map(|p| vec![p]).collect();
            if !crate::exhaustive::covers(&rows, &[z]) {
                return err(span, "Unmatched cases in match expression.");
            }
        }
        let recs: Vec<(T, Span)> = self
            .exp_rec
            .iter()
            .map(|(_, t, s)| (t.clone(), *s))
            .collect();
        for (t, span) in recs {
            let z = self.s.zonk(&t);
            if let Some(bad) = array_of_functions(&z) {
                let shown = self.s.show(&bad);
                return err(
                    span,
                    format!("Arrays of functions are not allowed (element type \"{shown}\")."),
                );
            }
        }
        for oc in &self.occs {
            for (n, sz, readable) in &oc.sizes {
                if matches!(self.s.size(sz), Sz::Flex(_)) && !*readable {
                    return err(
                        oc.span,
                        format!(
                            "Ambiguous size: the size parameter \"{n}\" of \"{}\" cannot be inferred here. Add a type annotation such as \":> [k]t\".",
                            oc.name
                        ),
                    );
                }
            }
        }
        Ok(())
    }

    /// Move the definition's node types into `info`.
    fn export_def(&mut self) {
        let exps = std::mem::take(&mut self.exp_rec);
        if exps.iter().any(|(id, _, _)| id.0 < self.id_guard) {
            self.id_collision = true;
        }
        for (id, t, _) in exps {
            let ty = self.export(&t);
            self.info.exp_types.insert(id, ty);
        }
        let pats = std::mem::take(&mut self.pat_rec);
        for (id, t) in pats {
            let ty = self.export(&t);
            self.info.pat_types.insert(id, ty);
        }
        let occs = std::mem::take(&mut self.occs);
        for oc in occs {
            let sizes = oc
                .sizes
                .iter()
                .map(|(n, s, _)| (n.clone(), self.export_size(s)))
                .collect();
            self.info.size_args.insert(oc.id, sizes);
        }
    }

    pub fn export(&mut self, t: &T) -> Type {
        match self.s.zonk(t) {
            T::Var(_) => Type::unit(),
            T::Prim(p) => Type::Prim(p),
            T::Param(n) => Type::Param(n),
            T::Array(s, e) => {
                let size = self.export_size(&s);
                self.export(&e).array_of(vec![size])
            }
            T::Record(fs) => {
                let mut v: Vec<(Name, Type)> = fs
                    .iter()
                    .map(|(n, t)| (n.clone(), self.export(t)))
                    .collect();
                v.sort_by(|a, b| canonical_field_order(&a.0, &b.0));
                Type::Record(v)
            }
            T::Sum(cs) => Type::Sum(
                cs.iter()
                    .map(|(n, ts)| (n.clone(), ts.iter().map(|t| self.export(t)).collect()))
                    .collect(),
            ),
            T::Arrow(n, a, b) => Type::Arrow {
                param_name: n,
                param: Box::new(self.export(&a)),
                ret: Box::new(self.export(&b)),
            },
        }
    }

    fn export_size(&mut self, s: &Sz) -> Size {
        match self.s.size(s) {
            Sz::Flex(k) => {
                let next = self.s.unknowns;
                let u = *self.flex_out.entry(k).or_insert(next);
                if u == next {
                    self.s.unknowns += 1;
                }
                Size::Unknown(u)
            }
            Sz::Name(n) => Size::Var(n),
            Sz::Const(c) => Size::Const(c),
            Sz::Unknown(u) => Size::Unknown(u),
            Sz::Exp(e) => Size::Exp(e),
            // A term with an unknown part (`k + <size of an if>`) is itself unknown: the
            // backends read it from the value instead of evaluating a partial term.
            op @ Sz::Op(..) if !self.size_fully_known(&op) => {
                let u = self.s.unknowns;
                self.s.unknowns += 1;
                Size::Unknown(u)
            }
            op @ Sz::Op(..) => Size::Exp(Box::new(self.size_exp(&op))),
        }
    }

    /// Whether a size term, with its solved variables substituted, has no flexible or rigid
    /// unknown part.
    fn size_fully_known(&self, s: &Sz) -> bool {
        match self.s.size(s) {
            Sz::Flex(_) | Sz::Unknown(_) => false,
            Sz::Name(_) | Sz::Const(_) | Sz::Exp(_) => true,
            Sz::Op(_, a, b) => self.size_fully_known(&a) && self.size_fully_known(&b),
        }
    }

    /// Build an `i64` expression for a size term (types recorded as `i64`).
    fn size_exp(&mut self, s: &Sz) -> Exp {
        let span = self.def_span;
        let id = self.fresh_id();
        let s = &self.s.size(s);
        let kind = match s {
            Sz::Name(n) => ExpKind::Var(QualName::unqual(n.clone())),
            Sz::Const(c) => ExpKind::Literal(Literal::Int {
                value: *c as u128,
                suffix: Some(PrimType::I64),
            }),
            Sz::Op(o, a, b) => ExpKind::BinOp {
                op: BinOpName {
                    name: QualName {
                        quals: vec!["i64".into()],
                        name: o.to_string(),
                    },
                    backtick: false,
                    span,
                },
                lhs: Box::new(self.size_exp(a)),
                rhs: Box::new(self.size_exp(b)),
            },
            Sz::Exp(e) => return (**e).clone(),
            Sz::Flex(_) | Sz::Unknown(_) => ExpKind::Hole,
        };
        self.info.exp_types.insert(id, Type::Prim(PrimType::I64));
        Exp { id, span, kind }
    }

    fn entry_point(&mut self, vb: &ValBind, sc: &Scheme, dec_index: usize) -> R<()> {
        if vb.name.contains('\'') {
            return err(
                vb.name_span,
                format!("Entry point names may not contain \"'\": \"{}\".", vb.name),
            );
        }
        let full = self.export(&sc.ty);
        let mut params = Vec::new();
        let mut cur = full;
        let mut i = 0;
        while let Type::Arrow { param, ret, .. } = cur {
            let name = vb.params.get(i).and_then(simple_pat_name);
            params.push(EntryParam { name, ty: *param });
            cur = *ret;
            i += 1;
        }
        let results = match cur.as_tuple() {
            Some(ts) => ts.into_iter().cloned().collect(),
            None => vec![cur],
        };
        for p in &params {
            if p.ty.is_functional() {
                return err(
                    vb.name_span,
                    "Entry point functions may not be higher-order.",
                );
            }
        }
        let poly = params
            .iter()
            .map(|p| &p.ty)
            .chain(results.iter())
            .any(type_has_param);
        if poly {
            return err(
                vb.name_span,
                "Entry point functions may not be polymorphic.",
            );
        }
        self.info.entries.push(EntryPoint {
            name: vb.name.clone(),
            dec_index,
            params,
            results,
            span: vb.span,
        });
        Ok(())
    }

    pub fn check_typebind(&mut self, tb: &mut TypeBind) {
        if !self.file_types.insert(tb.name.clone()) {
            self.errors.push(Diagnostic::error(
                tb.span,
                format!("Duplicate definition of type \"{}\".", tb.name),
            ));
        }
        self.begin_def(tb.span);
        for p in &tb.params {
            match p {
                TypeParam::Size(n, _) => self
                    .scopes
                    .push(Scope::Val(n.clone(), Rc::new(Scheme::mono(T::i64())))),
                TypeParam::Type(n, _, _) => self.scopes.push(Scope::TParam(n.clone())),
            }
        }
        let r = self.convert_type(&mut tb.def, Anon::Exist);
        self.scopes.clear();
        match r {
            Ok(t) => {
                let t = self.s.zonk(&t);
                self.export_def();
                self.types.insert(
                    tb.name.clone(),
                    Rc::new(TypeAbbr {
                        params: tb.params.clone(),
                        body: t,
                    }),
                );
            }
            Err(d) => {
                self.errors.push(*d);
                self.types.insert(
                    tb.name.clone(),
                    Rc::new(TypeAbbr {
                        params: tb.params.clone(),
                        body: T::unit(),
                    }),
                );
            }
        }
    }
}

fn rename_sizes(s: &Sz, map: &HashMap<Name, Sz>) -> Sz {
    match s {
        Sz::Name(n) => map.get(n).cloned().unwrap_or_else(|| s.clone()),
        Sz::Op(o, a, b) => Sz::Op(
            o,
            Box::new(rename_sizes(a, map)),
            Box::new(rename_sizes(b, map)),
        ),
        _ => s.clone(),
    }
}

fn count_sizes(t: &T, out: &mut Vec<Sz>) {
    map_sizes(t, &mut |s| {
        out.push(s.clone());
        s.clone()
    });
}

/// Size parameters that occur as a whole dimension of a parameter type, outside any arrow
/// (they can be read off argument values at run time, Section 6.7).
fn readable_sizes(t: &T) -> HashSet<Name> {
    let mut out = HashSet::new();
    let mut cur = t;
    while let T::Arrow(_, p, r) = cur {
        whole_dims(p, &mut out);
        cur = r;
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

fn type_mentions_size(t: &T, n: &str) -> bool {
    let mut found = false;
    map_sizes(t, &mut |s| {
        if size_mentions(s, n) {
            found = true;
        }
        s.clone()
    });
    found
}

fn free_vars(t: &T, out: &mut Vec<Tv>) {
    match t {
        T::Var(v) if !out.contains(v) => out.push(*v),
        T::Var(_) => {}
        T::Array(_, e) => free_vars(e, out),
        T::Record(fs) => fs.values().for_each(|t| free_vars(t, out)),
        T::Sum(cs) => cs.values().flatten().for_each(|t| free_vars(t, out)),
        T::Arrow(_, a, b) => {
            free_vars(a, out);
            free_vars(b, out)
        }
        _ => {}
    }
}

fn t_functional(t: &T) -> bool {
    match t {
        T::Arrow(..) => true,
        T::Array(_, e) => t_functional(e),
        T::Record(fs) => fs.values().any(t_functional),
        T::Sum(cs) => cs.values().flatten().any(t_functional),
        _ => false,
    }
}

fn array_of_functions(t: &T) -> Option<T> {
    match t {
        T::Array(_, e) if t_functional(e) => Some((**e).clone()),
        T::Array(_, e) => array_of_functions(e),
        T::Record(fs) => fs.values().find_map(array_of_functions),
        T::Sum(cs) => cs.values().flatten().find_map(array_of_functions),
        T::Arrow(_, a, b) => array_of_functions(a).or_else(|| array_of_functions(b)),
        _ => None,
    }
}

fn type_has_param(t: &Type) -> bool {
    match t {
        Type::Param(_) => true,
        Type::Prim(_) => false,
        Type::Array { elem, .. } => type_has_param(elem),
        Type::Record(fs) => fs.iter().any(|(_, t)| type_has_param(t)),
        Type::Sum(cs) => cs.iter().any(|(_, ts)| ts.iter().any(type_has_param)),
        Type::Arrow { param, ret, .. } => type_has_param(param) || type_has_param(ret),
    }
}

fn simple_pat_name(p: &Pat) -> Option<Name> {
    match &p.kind {
        PatKind::Var(n) => Some(n.clone()),
        PatKind::Ascribe(q, _) | PatKind::Attr(_, q) => simple_pat_name(q),
        _ => None,
    }
}

fn pattern_names(p: &Pat, out: &mut Vec<Name>) {
    match &p.kind {
        PatKind::Var(n) => out.push(n.clone()),
        PatKind::Tuple(ps) | PatKind::Constr(_, ps) => {
            ps.iter().for_each(|p| pattern_names(p, out))
        }
        PatKind::Record(fs) => fs.iter().for_each(|(_, p)| pattern_names(p, out)),
        PatKind::Ascribe(q, _) | PatKind::Attr(_, q) => pattern_names(q, out),
        PatKind::Wildcard | PatKind::Literal { .. } => {}
    }
}

fn callee_name(f: &Exp) -> String {
    match &f.kind {
        ExpKind::Var(q) => format!("\"{q}\""),
        _ => "the function".to_string(),
    }
}

/// An expression simple enough to stand in a size (no binding constructs).
fn simple_exp(e: &Exp) -> bool {
    match &e.kind {
        ExpKind::Var(_) | ExpKind::Literal(_) => true,
        ExpKind::BinOp { lhs, rhs, .. } => simple_exp(lhs) && simple_exp(rhs),
        ExpKind::Apply(f, args) => simple_exp(f) && args.iter().all(simple_exp),
        ExpKind::Negate(x) | ExpKind::Project(x, _) | ExpKind::Attr(_, x) => simple_exp(x),
        ExpKind::Index(x, idx) => {
            simple_exp(x)
                && idx.iter().all(|i| match i {
                    DimIndex::Index(e) => simple_exp(e),
                    DimIndex::Slice { .. } => false,
                })
        }
        _ => false,
    }
}

/// Section 6.3: literal range checks after defaulting.
fn check_literal(lit: &Literal, negated: bool, p: PrimType, span: Span) -> R<()> {
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
