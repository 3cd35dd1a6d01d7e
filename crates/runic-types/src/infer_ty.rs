//! Types during inference: type variables with constraints (Section 6.2), flexible size
//! variables (Section 6.6), and unification of both.

use runic_syntax::ast::{Exp, Name, PrimType};
use std::collections::{BTreeMap, HashMap};

pub(crate) type Tv = u32;

/// A type under inference. Arrays are nested one dimension at a time so that indexing an
/// array of not-yet-known rank can peel dimensions off.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum T {
    Var(Tv),
    Prim(PrimType),
    Array(Sz, Box<T>),
    Record(BTreeMap<Name, T>),
    Sum(BTreeMap<Name, Vec<T>>),
    Arrow(Option<Name>, Box<T>, Box<T>),
    /// A rigid type parameter (explicit `'a`, or generalised).
    Param(Name),
}

/// A size term under inference.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Sz {
    /// A flexible size variable, solved by unification.
    Flex(u32),
    /// An `i64` name in scope.
    Name(Name),
    Const(i64),
    /// `a op b` for `+`, `-`, `*`.
    Op(&'static str, Box<Sz>, Box<Sz>),
    /// Any other `i64` expression.
    Exp(Box<Exp>),
    /// A rigid unknown.
    Unknown(u32),
}

impl T {
    pub fn unit() -> T {
        T::Record(BTreeMap::new())
    }
    pub fn tuple(items: Vec<T>) -> T {
        T::Record(
            items
                .into_iter()
                .enumerate()
                .map(|(i, t)| (i.to_string(), t))
                .collect(),
        )
    }
    pub fn arrow(a: T, b: T) -> T {
        T::Arrow(None, Box::new(a), Box::new(b))
    }
    pub fn i64() -> T {
        T::Prim(PrimType::I64)
    }
    pub fn bool() -> T {
        T::Prim(PrimType::Bool)
    }
}

/// What a type variable is known to be (Section 6.2).
#[derive(Clone, Debug)]
pub(crate) enum Cons {
    Free,
    Prims(Vec<PrimType>),
    Fields(BTreeMap<Name, T>),
    Constrs(BTreeMap<Name, Vec<T>>),
}

#[derive(Clone, Debug)]
pub(crate) struct VarInfo {
    pub bound: Option<T>,
    pub cons: Cons,
}

/// Why two types failed to unify: the innermost pair that clashed, already printed.
#[derive(Clone, Debug)]
pub(crate) struct Clash {
    pub message: String,
}

pub(crate) const INTS: [PrimType; 8] = [
    PrimType::I8,
    PrimType::I16,
    PrimType::I32,
    PrimType::I64,
    PrimType::U8,
    PrimType::U16,
    PrimType::U32,
    PrimType::U64,
];
pub(crate) const FLOATS: [PrimType; 3] = [PrimType::F16, PrimType::F32, PrimType::F64];
pub(crate) const SIGNED: [PrimType; 4] =
    [PrimType::I8, PrimType::I16, PrimType::I32, PrimType::I64];

pub(crate) fn numeric() -> Vec<PrimType> {
    INTS.iter().chain(FLOATS.iter()).copied().collect()
}

/// The substitution: type variables and flexible sizes.
#[derive(Default)]
pub(crate) struct Subst {
    pub vars: Vec<VarInfo>,
    pub flex: Vec<Option<Sz>>,
    pub unknowns: u32,
    /// Set while unifying the types of branches (or of a loop's parameter and its body),
    /// where different sizes are allowed: the join gives them a rigid unknown.
    pub joining: bool,
    /// Flexible sizes and type variables in the order they were solved or constrained,
    /// for the scope check (a solution made inside a scope is checked when it closes).
    pub flex_log: Vec<u32>,
    pub var_log: Vec<Tv>,
    /// Pairs of sizes accepted without being equal yet (a flexible size against a term
    /// that mentions it, say), with where: compared again once the definition is solved.
    pub deferred: Vec<(Sz, Sz, Option<runic_syntax::Span>)>,
    /// Where the unification under way comes from, when the checker said.
    pub at: Option<runic_syntax::Span>,
    /// The rigid unknowns that are anonymous sizes of a definition's parameters (`[]i32`).
    pub param_unknowns: std::collections::HashSet<u32>,
    /// Set while a body is compared with its declared return type: there a size built from
    /// the parameters' anonymous sizes cannot equal a known one (the caller chooses them).
    pub strict_params: bool,
    /// Rigid unknowns that stand for a size term naming something a scope bound, made as
    /// the scope closed (`\n -> ... [n+1]`), with the term and the scope (its first
    /// unknown): two of one scope with different terms are different sizes.
    pub escaped: std::collections::HashMap<u32, (Sz, u32)>,
}

impl Subst {
    pub fn fresh(&mut self, cons: Cons) -> T {
        self.vars.push(VarInfo { bound: None, cons });
        T::Var(self.vars.len() as u32 - 1)
    }
    pub fn fresh_var(&mut self) -> T {
        self.fresh(Cons::Free)
    }
    pub fn fresh_flex(&mut self) -> Sz {
        self.flex.push(None);
        Sz::Flex(self.flex.len() as u32 - 1)
    }
    pub fn fresh_unknown(&mut self) -> Sz {
        self.unknowns += 1;
        Sz::Unknown(self.unknowns - 1)
    }

    /// Follow bindings at the top of a type.
    pub fn shallow(&self, t: &T) -> T {
        let mut t = t.clone();
        while let T::Var(v) = t {
            match &self.vars[v as usize].bound {
                Some(b) => t = b.clone(),
                None => return T::Var(v),
            }
        }
        t
    }

    pub fn size(&self, s: &Sz) -> Sz {
        match s {
            Sz::Flex(k) => match &self.flex[*k as usize] {
                Some(b) => self.size(b),
                None => s.clone(),
            },
            Sz::Op(o, a, b) => Sz::Op(o, Box::new(self.size(a)), Box::new(self.size(b))),
            _ => s.clone(),
        }
    }

    /// Apply the substitution everywhere.
    pub fn zonk(&self, t: &T) -> T {
        match self.shallow(t) {
            T::Array(s, e) => T::Array(self.size(&s), Box::new(self.zonk(&e))),
            T::Record(fs) => T::Record(fs.iter().map(|(n, t)| (n.clone(), self.zonk(t))).collect()),
            T::Sum(cs) => T::Sum(
                cs.iter()
                    .map(|(n, ts)| (n.clone(), ts.iter().map(|t| self.zonk(t)).collect()))
                    .collect(),
            ),
            T::Arrow(n, a, b) => T::Arrow(n, Box::new(self.zonk(&a)), Box::new(self.zonk(&b))),
            t => t,
        }
    }

    fn occurs(&self, v: Tv, t: &T) -> bool {
        match self.shallow(t) {
            T::Var(w) => {
                if v == w {
                    return true;
                }
                match &self.vars[w as usize].cons {
                    Cons::Fields(fs) => fs.values().any(|t| self.occurs(v, t)),
                    Cons::Constrs(cs) => cs.values().flatten().any(|t| self.occurs(v, t)),
                    _ => false,
                }
            }
            T::Array(_, e) => self.occurs(v, &e),
            T::Record(fs) => fs.values().any(|t| self.occurs(v, t)),
            T::Sum(cs) => cs.values().flatten().any(|t| self.occurs(v, t)),
            T::Arrow(_, a, b) => self.occurs(v, &a) || self.occurs(v, &b),
            T::Prim(_) | T::Param(_) => false,
        }
    }

    pub fn unify(&mut self, a: &T, b: &T) -> Result<(), Clash> {
        let a = self.shallow(a);
        let b = self.shallow(b);
        match (&a, &b) {
            (T::Var(x), T::Var(y)) if x == y => Ok(()),
            (T::Var(x), _) => self.bind(*x, &b),
            (_, T::Var(y)) => self.bind(*y, &a),
            (T::Prim(p), T::Prim(q)) if p == q => Ok(()),
            (T::Param(p), T::Param(q)) if p == q => Ok(()),
            (T::Array(s1, e1), T::Array(s2, e2)) => {
                self.unify_size(s1, s2)
                    .map_err(|c| self.context(c, &a, &b))?;
                self.unify(e1, e2).map_err(|c| self.context(c, &a, &b))
            }
            (T::Record(f1), T::Record(f2)) => {
                if f1.len() != f2.len() || f1.keys().any(|k| !f2.contains_key(k)) {
                    return Err(self.clash(&a, &b));
                }
                for (k, t1) in f1 {
                    self.unify(t1, &f2[k])
                        .map_err(|c| self.context(c, &a, &b))?;
                }
                Ok(())
            }
            (T::Sum(c1), T::Sum(c2)) => {
                if c1.len() != c2.len() || c1.keys().any(|k| !c2.contains_key(k)) {
                    return Err(self.clash(&a, &b));
                }
                for (k, ts1) in c1 {
                    let ts2 = &c2[k];
                    if ts1.len() != ts2.len() {
                        return Err(self.clash(&a, &b));
                    }
                    for (t1, t2) in ts1.iter().zip(ts2) {
                        self.unify(t1, t2).map_err(|c| self.context(c, &a, &b))?;
                    }
                }
                Ok(())
            }
            (T::Arrow(n1, p1, r1), T::Arrow(n2, p2, r2)) => {
                // A name the other side already uses is its own, not a lost one.
                let own1 = n2
                    .as_ref()
                    .is_some_and(|n| type_mentions_size_name(&self.zonk(r1), n));
                let own2 = n1
                    .as_ref()
                    .is_some_and(|n| type_mentions_size_name(&self.zonk(r2), n));
                self.unify(p1, p2).map_err(|c| self.context(c, &a, &b))?;
                self.unify(r1, r2).map_err(|c| self.context(c, &a, &b))?;
                let lost = |named, rest, other, other_rest, own: bool| {
                    if own {
                        None
                    } else {
                        self.lost_size_parameter(named, rest, other, other_rest)
                    }
                };
                match lost(n1, r1, n2, r2, own2) {
                    Some(c) => Err(c),
                    None => lost(n2, r2, n1, r1, own1).map_or(Ok(()), Err),
                }
            }
            _ => Err(self.clash(&a, &b)),
        }
    }

    /// The lost name `n` is a size only inside a constructor's payload where the function
    /// is used (`genelm: i64 -> opt elm` given `(k: i64) -> opt ([k]t)`): no value shows it.
    fn size_hidden_in_sum(&self, n: &str, other_rest: &T) -> Option<Clash> {
        let z = self.zonk(other_rest);
        if !in_sum_payload(&z, n) || visible_size(&z, n) {
            return None;
        }
        Some(Clash {
            message: format!(
                "The function's parameter \"{n}\" is used as size in its result, and it is lost where the function is used at type \"{}\": a size inside a sum type's payload cannot be known from the value.",
                self.show(other_rest)
            ),
        })
    }

    /// A function whose parameter `n` is a size in the rest of its type (`(n: i64) -> [n]t`)
    /// met a function type that does not name that parameter, and whose rest, now solved,
    /// mentions `n` (`uncurry f` solves `c` in `a -> b -> c` to `bool -> [n]bool`): there
    /// `n` means nothing.
    fn lost_size_parameter(
        &self,
        named: &Option<Name>,
        rest: &T,
        other: &Option<Name>,
        other_rest: &T,
    ) -> Option<Clash> {
        let n = named.as_ref()?;
        if other.as_ref() == Some(n) || !type_mentions_size_name(&self.zonk(rest), n) {
            return None;
        }
        // The name is lost into a type variable of the other side (`c` in `a -> b -> c`):
        // if its solution is an array, the size there is one known at run time (`apply iota
        // n`); inside a function type it would have to be hidden in the function, unless an
        // array beside it tells the size.
        let mut vars = Vec::new();
        vars_of(other_rest, &mut vars);
        let lost = vars
            .into_iter()
            .map(|v| self.zonk(&T::Var(v)))
            .find(|sol| under_arrow(sol, n) && !outside_arrows(sol, n));
        let lost = match lost {
            Some(lost) => lost,
            None => return self.size_hidden_in_sum(n, other_rest),
        };
        let message = if in_parameter_position(&lost, n) {
            format!(
                "Existential size would appear in function parameter: the function's parameter \"{n}\" is a size of a later parameter, and it is lost where the function is used at type \"{}\".",
                self.show(other_rest)
            )
        } else {
            format!(
                "The function's parameter \"{n}\" is used as size in its result, and it is lost where the function is used at type \"{}\"; call the function directly instead.",
                self.show(other_rest)
            )
        };
        Some(Clash { message })
    }

    fn clash(&self, a: &T, b: &T) -> Clash {
        Clash {
            message: format!(
                "Cannot unify \"{}\" with \"{}\".",
                self.show(a),
                self.show(b)
            ),
        }
    }

    fn context(&self, c: Clash, _a: &T, _b: &T) -> Clash {
        c
    }

    fn bind(&mut self, v: Tv, t: &T) -> Result<(), Clash> {
        self.var_log.push(v);
        if self.occurs(v, t) {
            return Err(Clash {
                message: format!(
                    "Occurs check: cannot construct the infinite type \"{}\" = \"{}\".",
                    self.show(&T::Var(v)),
                    self.show(t)
                ),
            });
        }
        let cons = std::mem::replace(&mut self.vars[v as usize].cons, Cons::Free);
        let result = self.bind_with(v, &cons, t);
        if result.is_err() {
            self.vars[v as usize].cons = cons;
        }
        result
    }

    fn bind_with(&mut self, v: Tv, cons: &Cons, t: &T) -> Result<(), Clash> {
        match (cons, t) {
            (Cons::Free, _) => {
                self.vars[v as usize].bound = Some(t.clone());
                Ok(())
            }
            (_, T::Var(w)) => {
                // Merge the constraint into the other variable.
                let other = std::mem::replace(&mut self.vars[*w as usize].cons, Cons::Free);
                let merged = self.merge(cons, &other);
                match merged {
                    Ok(m) => {
                        self.vars[*w as usize].cons = m;
                        self.vars[v as usize].bound = Some(t.clone());
                        Ok(())
                    }
                    Err(e) => {
                        self.vars[*w as usize].cons = other;
                        Err(e)
                    }
                }
            }
            (Cons::Prims(ps), T::Prim(p)) if ps.contains(p) => {
                self.vars[v as usize].bound = Some(t.clone());
                Ok(())
            }
            (Cons::Prims(ps), _) => Err(Clash {
                message: format!("Cannot unify \"{}\" with {}.", self.show(t), show_prims(ps)),
            }),
            (Cons::Fields(fs), T::Record(have)) => {
                for (f, ft) in fs {
                    match have.get(f) {
                        Some(ht) => self.unify(ft, ht)?,
                        None => {
                            return Err(Clash {
                                message: format!(
                                    "Field \"{f}\" does not exist in type \"{}\".",
                                    self.show(t)
                                ),
                            })
                        }
                    }
                }
                self.vars[v as usize].bound = Some(t.clone());
                Ok(())
            }
            (Cons::Fields(fs), _) => Err(Clash {
                message: format!(
                    "Cannot unify \"{}\" with a record type with field{} {}.",
                    self.show(t),
                    if fs.len() == 1 { "" } else { "s" },
                    fs.keys()
                        .map(|k| format!("\"{k}\""))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }),
            (Cons::Constrs(cs), T::Sum(have)) => {
                for (c, ts) in cs {
                    match have.get(c) {
                        Some(hs) if hs.len() == ts.len() => {
                            for (a, b) in ts.iter().zip(hs) {
                                self.unify(a, b)?;
                            }
                        }
                        _ => {
                            return Err(Clash {
                                message: format!(
                                    "Constructor \"#{c}\" with {} payload(s) does not exist in type \"{}\".",
                                    ts.len(),
                                    self.show(t)
                                ),
                            })
                        }
                    }
                }
                self.vars[v as usize].bound = Some(t.clone());
                Ok(())
            }
            (Cons::Constrs(cs), _) => Err(Clash {
                message: format!(
                    "Cannot unify \"{}\" with a sum type with constructor{} {}.",
                    self.show(t),
                    if cs.len() == 1 { "" } else { "s" },
                    cs.keys()
                        .map(|k| format!("\"#{k}\""))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }),
        }
    }

    fn merge(&mut self, a: &Cons, b: &Cons) -> Result<Cons, Clash> {
        match (a, b) {
            (Cons::Free, c) | (c, Cons::Free) => Ok(c.clone()),
            (Cons::Prims(x), Cons::Prims(y)) => {
                let both: Vec<PrimType> = x.iter().filter(|p| y.contains(p)).copied().collect();
                if both.is_empty() {
                    Err(Clash {
                        message: format!("Cannot unify {} with {}.", show_prims(x), show_prims(y)),
                    })
                } else {
                    Ok(Cons::Prims(both))
                }
            }
            (Cons::Fields(x), Cons::Fields(y)) => {
                let mut out = x.clone();
                for (k, t) in y {
                    match x.get(k) {
                        Some(t0) => self.unify(t0, t)?,
                        None => {
                            out.insert(k.clone(), t.clone());
                        }
                    }
                }
                Ok(Cons::Fields(out))
            }
            (Cons::Constrs(x), Cons::Constrs(y)) => {
                let mut out = x.clone();
                for (k, ts) in y {
                    match x.get(k) {
                        Some(ts0) if ts0.len() == ts.len() => {
                            for (a, b) in ts0.iter().zip(ts) {
                                self.unify(a, b)?;
                            }
                        }
                        Some(_) => {
                            return Err(Clash {
                                message: format!(
                                "Constructor \"#{k}\" is used with different numbers of payloads."
                            ),
                            })
                        }
                        None => {
                            out.insert(k.clone(), ts.clone());
                        }
                    }
                }
                Ok(Cons::Constrs(out))
            }
            (x, y) => Err(Clash {
                message: format!(
                    "Cannot unify {} with {}.",
                    describe_cons(x),
                    describe_cons(y)
                ),
            }),
        }
    }

    /// Unify two sizes. Flexible variables bind. Two sizes that are certainly different —
    /// distinct terms over names in scope and constants — clash (the reference's static
    /// size check); other rigid mismatches (rigid unknowns and general size expressions,
    /// which level-1 inference may have approximated) are accepted and checked at run time.
    pub fn unify_size(&mut self, a: &Sz, b: &Sz) -> Result<(), Clash> {
        let a = self.size(a);
        let b = self.size(b);
        match (&a, &b) {
            (Sz::Flex(x), Sz::Flex(y)) if x == y => Ok(()),
            (Sz::Flex(x), _) if !mentions_flex(&b, *x) => {
                self.flex_log.push(*x);
                self.flex[*x as usize] = Some(b.clone());
                Ok(())
            }
            (_, Sz::Flex(y)) if !mentions_flex(&a, *y) => {
                self.flex_log.push(*y);
                self.flex[*y as usize] = Some(a.clone());
                Ok(())
            }
            _ if definite(&a) && definite(&b) => {
                let same = a == b || matches!((value(&a), value(&b)), (Some(x), Some(y)) if x == y);
                if same || self.joining {
                    Ok(())
                } else {
                    Err(size_clash(&a, &b))
                }
            }
            (Sz::Op(o1, a1, b1), Sz::Op(o2, a2, b2)) if o1 == o2 => {
                self.unify_size(a1, a2)?;
                self.unify_size(b1, b2)
            }
            _ => {
                if !self.joining {
                    if let Some(clash) = self.param_size_clash(&a, &b) {
                        return Err(clash);
                    }
                    if let Some(clash) = self.second_equation(&a, &b) {
                        return Err(clash);
                    }
                    if let Some(clash) = self.escaped_clash(&a, &b) {
                        return Err(clash);
                    }
                    self.deferred.push((a.clone(), b.clone(), self.at));
                }
                Ok(())
            }
        }
    }

    /// A declared return size against a body size computed from the parameters' anonymous
    /// sizes (`(xs: []i32) (ys: []i32) : [10]i32 = xs ++ ys`). A bare anonymous size may be
    /// inferred to be the declared one (`(xs: []i32) : [2]i32 = xs`); a computed one cannot.
    fn param_size_clash(&self, a: &Sz, b: &Sz) -> Option<Clash> {
        if !self.strict_params {
            return None;
        }
        let (d, _) = [(a, b), (b, a)]
            .into_iter()
            .find(|(d, p)| definite(d) && matches!(p, Sz::Op(..)) && self.of_param_unknowns(p))?;
        Some(Clash {
            message: format!(
                "Sizes \"{}\" and the size of the body do not match: the body's size is made of the anonymous sizes of the parameters (\"[]\"), which the caller chooses.",
                show_size(d)
            ),
        })
    }

    /// Whether a size term is made of parameters' anonymous sizes (and constants or names).
    fn of_param_unknowns(&self, s: &Sz) -> bool {
        fn walk(sub: &Subst, s: &Sz, seen: &mut bool) -> bool {
            match s {
                Sz::Unknown(u) => {
                    *seen = true;
                    sub.param_unknowns.contains(u)
                }
                Sz::Op(_, a, b) => walk(sub, a, seen) && walk(sub, b, seen),
                Sz::Name(_) | Sz::Const(_) => true,
                Sz::Flex(_) | Sz::Exp(_) => false,
            }
        }
        let mut seen = false;
        walk(self, s, &mut seen) && seen
    }

    /// A rigid unknown equated with a definite size, when an earlier equation already gave
    /// it a different one (`n+1` and then `n+2`): one size cannot be both.
    fn second_equation(&self, a: &Sz, b: &Sz) -> Option<Clash> {
        let (u, d) = match (a, b) {
            (Sz::Unknown(u), d) | (d, Sz::Unknown(u)) if definite(d) => (*u, d),
            _ => return None,
        };
        self.deferred.iter().find_map(|(x, y, _)| {
            let (x, y) = (self.size(x), self.size(y));
            let earlier = match (&x, &y) {
                (Sz::Unknown(v), e) | (e, Sz::Unknown(v)) if *v == u && definite(e) => e,
                _ => return None,
            };
            let same =
                earlier == d || matches!((value(earlier), value(d)), (Some(p), Some(q)) if p == q);
            (!same).then(|| size_clash(earlier, d))
        })
    }

    /// Two sizes of one scope's result that escaped it as different terms (`n+1`, `n+2` of
    /// `\n -> tabulate_2d (n+1) (n+2) f`) made equal, directly or through one size outside
    /// (`[k][k]` of a declared type): `k` would have to be both, and depends on `n`.
    fn escaped_clash(&self, a: &Sz, b: &Sz) -> Option<Clash> {
        if let Some(c) = self.escaped_against_term(a, b) {
            return Some(c);
        }
        let (Sz::Unknown(x), Sz::Unknown(y)) = (a, b) else {
            return None;
        };
        let differ = |p: u32, q: u32| {
            let ((tp, gp), (tq, gq)) = (self.escaped.get(&p)?, self.escaped.get(&q)?);
            (gp == gq && tp != tq).then(|| Clash {
                message: format!(
                    "Sizes \"{}\" and \"{}\" do not match: one size from outside would have to be both, and they depend on a name bound inside the expression (a scope violation, see docs/TYPE-CHECKS.md#scope-violation).",
                    show_size(tp),
                    show_size(tq)
                ),
            })
        };
        if let Some(c) = differ(*x, *y) {
            return Some(c);
        }
        // One side from outside: compare with what it was equated with before.
        let (k, e) = if self.escaped.contains_key(y) {
            (*x, *y)
        } else {
            (*y, *x)
        };
        self.escaped.get(&e)?;
        self.deferred.iter().find_map(|(p, q, _)| {
            let other = match (self.size(p), self.size(q)) {
                (Sz::Unknown(v), Sz::Unknown(o)) | (Sz::Unknown(o), Sz::Unknown(v))
                    if v == k && o != e =>
                {
                    o
                }
                _ => return None,
            };
            differ(other, e)
        })
    }

    /// One size from outside equated with a size that escaped a scope (`x'` of `let x' = x
    /// + 1 in ...`) and with a term in scope (`x`): the escaped term names what the scope
    /// bound, so the two differ, as in the reference (`?[n].([n]bool, bool -> [n]bool)`
    /// given `([x']bool, \b -> [x]bool)`).
    fn escaped_against_term(&self, a: &Sz, b: &Sz) -> Option<Clash> {
        let escaped = |s: &Sz| match s {
            Sz::Unknown(e) => self.escaped.get(e).map(|(t, _)| t.clone()),
            _ => None,
        };
        let (k, new) = match (a, b) {
            (Sz::Unknown(k), o) | (o, Sz::Unknown(k)) if !self.escaped.contains_key(k) => {
                (*k, o.clone())
            }
            _ => return None,
        };
        let new_escaped = escaped(&new);
        if new_escaped.is_none() && !definite(&new) {
            return None;
        }
        self.deferred.iter().find_map(|(p, q, _)| {
            let other = match (self.size(p), self.size(q)) {
                (Sz::Unknown(v), o) | (o, Sz::Unknown(v)) if v == k && o != new => o,
                _ => return None,
            };
            let (esc, term) = match (&new_escaped, escaped(&other)) {
                (Some(t), None) if definite(&other) => (t.clone(), other),
                (None, Some(t)) => (t, new.clone()),
                _ => return None,
            };
            Some(size_clash(&esc, &term))
        })
    }

    /// The first deferred pair that, now solved, is two certainly different sizes.
    pub fn deferred_clash(&self) -> Option<(Clash, Option<runic_syntax::Span>)> {
        self.deferred.iter().find_map(|(a, b, at)| {
            let (a, b) = (self.size(a), self.size(b));
            let same = a == b || matches!((value(&a), value(&b)), (Some(x), Some(y)) if x == y);
            (definite(&a) && definite(&b) && !same).then(|| (size_clash(&a, &b), *at))
        })
    }

    pub fn show(&self, t: &T) -> String {
        let mut names = HashMap::new();
        self.show_in(&self.zonk(t), &mut names)
    }

    fn show_in(&self, t: &T, names: &mut HashMap<Tv, String>) -> String {
        match t {
            T::Var(v) => match &self.vars[*v as usize].cons {
                Cons::Prims(ps) if ps.len() == 1 => ps[0].to_string(),
                Cons::Fields(fs) => {
                    let inner: Vec<String> = fs
                        .iter()
                        .map(|(k, t)| format!("{k}: {}", self.show_in(t, names)))
                        .collect();
                    format!("{{{}, ...}}", inner.join(", "))
                }
                _ => {
                    let n = names.len();
                    names.entry(*v).or_insert_with(|| var_name(n)).clone()
                }
            },
            T::Prim(p) => p.to_string(),
            T::Param(n) => n.clone(),
            T::Array(s, e) => {
                let inner = self.show_in(e, names);
                let inner = if matches!(**e, T::Arrow(..) | T::Sum(_)) {
                    format!("({inner})")
                } else {
                    inner
                };
                format!("[{}]{inner}", show_size(s))
            }
            T::Record(fs) => {
                let is_tuple =
                    fs.len() >= 2 && (0..fs.len()).all(|i| fs.contains_key(&i.to_string()));
                if is_tuple {
                    let items: Vec<String> = (0..fs.len())
                        .map(|i| self.show_in(&fs[&i.to_string()], names))
                        .collect();
                    format!("({})", items.join(", "))
                } else if fs.is_empty() {
                    "()".to_string()
                } else {
                    let mut keys: Vec<&Name> = fs.keys().collect();
                    keys.sort_by(|a, b| crate::ty::canonical_field_order(a, b));
                    let items: Vec<String> = keys
                        .iter()
                        .map(|k| format!("{k}: {}", self.show_in(&fs[*k], names)))
                        .collect();
                    format!("{{{}}}", items.join(", "))
                }
            }
            T::Sum(cs) if cs.len() == 1 && cs.keys().all(|c| c.starts_with('\u{1}')) => {
                // An abstract type: its name, then its arguments.
                let (c, args) = cs
                    .iter()
                    .next()
                    .map(|(c, a)| (c.as_str(), a.as_slice()))
                    .unwrap_or_default();
                let mut s = c.split('\u{1}').nth(1).unwrap_or("").to_string();
                for a in args {
                    match a {
                        T::Array(sz, e) if **e == T::unit() => {
                            s.push_str(&format!(" [{}]", show_size(sz)))
                        }
                        T::Prim(_) | T::Param(_) | T::Var(_) => {
                            s.push_str(&format!(" {}", self.show_in(a, names)))
                        }
                        _ => s.push_str(&format!(" ({})", self.show_in(a, names))),
                    }
                }
                s
            }
            T::Sum(cs) => {
                let items: Vec<String> = cs
                    .iter()
                    .map(|(c, ts)| {
                        let mut s = format!("#{c}");
                        for t in ts {
                            let x = self.show_in(t, names);
                            if matches!(t, T::Prim(_) | T::Param(_) | T::Record(_) | T::Var(_)) {
                                s.push_str(&format!(" {x}"));
                            } else {
                                s.push_str(&format!(" ({x})"));
                            }
                        }
                        s
                    })
                    .collect();
                items.join(" | ")
            }
            T::Arrow(n, a, b) => {
                let pa = self.show_in(a, names);
                let pb = self.show_in(b, names);
                match n {
                    Some(n) => format!("({n}: {pa}) -> {pb}"),
                    None if matches!(**a, T::Arrow(..) | T::Sum(_)) => format!("({pa}) -> {pb}"),
                    None => format!("{pa} -> {pb}"),
                }
            }
        }
    }
}

fn var_name(n: usize) -> String {
    let letters = "abcdefghijklmnopqrstuvwxyz".as_bytes();
    if n < 26 {
        format!("{}", letters[n] as char)
    } else {
        format!("t{n}")
    }
}

/// A size term made of names in scope, constants and `+ - *` only: two such terms that
/// differ are different sizes (sizes compare syntactically, as in the reference).
fn definite(s: &Sz) -> bool {
    match s {
        Sz::Name(_) | Sz::Const(_) => true,
        Sz::Op(_, a, b) => definite(a) && definite(b),
        Sz::Flex(_) | Sz::Exp(_) | Sz::Unknown(_) => false,
    }
}

/// The value of a size term made of constants only (`3-1` is the size `2`).
fn value(s: &Sz) -> Option<i64> {
    match s {
        Sz::Const(k) => Some(*k),
        Sz::Op(o, a, b) => {
            let (x, y) = (value(a)?, value(b)?);
            match *o {
                "+" => x.checked_add(y),
                "-" => x.checked_sub(y),
                "*" => x.checked_mul(y),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Two sizes that are certainly different.
fn size_clash(a: &Sz, b: &Sz) -> Clash {
    Clash {
        message: format!(
            "Sizes \"{}\" and \"{}\" do not match.",
            show_size(a),
            show_size(b)
        ),
    }
}

pub(crate) fn show_size(s: &Sz) -> String {
    match s {
        Sz::Flex(_) | Sz::Unknown(_) | Sz::Exp(_) => String::new(),
        Sz::Name(n) => n.clone(),
        Sz::Const(k) => k.to_string(),
        Sz::Op(o, a, b) => format!("{}{o}{}", show_size(a), show_size(b)),
    }
}

pub(crate) fn show_prims(ps: &[PrimType]) -> String {
    let mut v: Vec<PrimType> = ps.to_vec();
    v.sort();
    if v == numeric() {
        return "a numeric type".to_string();
    }
    if v == INTS.to_vec() {
        return "an integer type".to_string();
    }
    if v == FLOATS.to_vec() {
        return "a float type (f16, f32 or f64)".to_string();
    }
    if v == SIGNED.to_vec() {
        return "a signed integer type (i8, i16, i32 or i64)".to_string();
    }
    format!(
        "one of {}",
        v.iter().map(|p| p.name()).collect::<Vec<_>>().join(", ")
    )
}

fn describe_cons(c: &Cons) -> String {
    match c {
        Cons::Free => "any type".to_string(),
        Cons::Prims(ps) => show_prims(ps),
        Cons::Fields(fs) => format!(
            "a record with fields {}",
            fs.keys()
                .map(|k| format!("\"{k}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Cons::Constrs(cs) => format!(
            "a sum type with constructors {}",
            cs.keys()
                .map(|k| format!("\"#{k}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn mentions_flex(s: &Sz, k: u32) -> bool {
    match s {
        Sz::Flex(j) => *j == k,
        Sz::Op(_, a, b) => mentions_flex(a, k) || mentions_flex(b, k),
        _ => false,
    }
}

/// Does the size term mention the name?
pub(crate) fn size_mentions(s: &Sz, name: &str) -> bool {
    match s {
        Sz::Name(n) => n == name,
        Sz::Op(_, a, b) => size_mentions(a, name) || size_mentions(b, name),
        Sz::Exp(e) => exp_mentions(e, name),
        _ => false,
    }
}

/// Conservative: does the expression's debug form mention the variable? Size expressions
/// are small, so a structural walk over the few forms they take is enough.
fn exp_mentions(e: &Exp, name: &str) -> bool {
    use runic_syntax::ast::ExpKind as K;
    match &e.kind {
        K::Var(q) => {
            q.quals.is_empty() && q.name == name || q.quals.first().is_some_and(|h| h == name)
        }
        K::Literal(_) => false,
        K::BinOp { lhs, rhs, .. } => exp_mentions(lhs, name) || exp_mentions(rhs, name),
        K::Apply(f, args) => exp_mentions(f, name) || args.iter().any(|a| exp_mentions(a, name)),
        K::Negate(x) | K::Not(x) | K::Project(x, _) => exp_mentions(x, name),
        _ => true,
    }
}

/// Replace sizes throughout a type.
pub(crate) fn map_sizes(t: &T, f: &mut dyn FnMut(&Sz) -> Sz) -> T {
    match t {
        T::Array(s, e) => T::Array(f(s), Box::new(map_sizes(e, f))),
        T::Record(fs) => T::Record(
            fs.iter()
                .map(|(n, t)| (n.clone(), map_sizes(t, f)))
                .collect(),
        ),
        T::Sum(cs) => T::Sum(
            cs.iter()
                .map(|(n, ts)| (n.clone(), ts.iter().map(|t| map_sizes(t, f)).collect()))
                .collect(),
        ),
        T::Arrow(n, a, b) => T::Arrow(
            n.clone(),
            Box::new(map_sizes(a, f)),
            Box::new(map_sizes(b, f)),
        ),
        t => t.clone(),
    }
}

/// Substitute a size term for a name inside a size term.
pub(crate) fn subst_size(s: &Sz, name: &str, by: &Sz) -> Sz {
    match s {
        Sz::Name(n) if n == name => by.clone(),
        Sz::Op(o, a, b) => Sz::Op(
            o,
            Box::new(subst_size(a, name, by)),
            Box::new(subst_size(b, name, by)),
        ),
        s => s.clone(),
    }
}

/// Whether a size of `t` mentions the name `n`.
pub(crate) fn type_mentions_size_name(t: &T, n: &str) -> bool {
    let mut found = false;
    map_sizes(t, &mut |s| {
        found |= size_mentions(s, n);
        s.clone()
    });
    found
}

/// Whether `n` is a size in the parameter type of a function type in `t`.
fn in_parameter_position(t: &T, n: &str) -> bool {
    match t {
        T::Arrow(_, p, r) => type_mentions_size_name(p, n) || in_parameter_position(r, n),
        T::Array(_, e) => in_parameter_position(e, n),
        T::Record(fs) => fs.values().any(|t| in_parameter_position(t, n)),
        T::Sum(cs) => cs.values().flatten().any(|t| in_parameter_position(t, n)),
        T::Var(_) | T::Prim(_) | T::Param(_) => false,
    }
}

/// Whether `n` is a size inside a function type in `t`.
fn under_arrow(t: &T, n: &str) -> bool {
    match t {
        T::Arrow(..) => type_mentions_size_name(t, n),
        T::Array(_, e) => under_arrow(e, n),
        T::Record(fs) => fs.values().any(|t| under_arrow(t, n)),
        T::Sum(cs) => cs.values().flatten().any(|t| under_arrow(t, n)),
        T::Var(_) | T::Prim(_) | T::Param(_) => false,
    }
}

/// Whether `n` is a size in a constructor's payload in `t`, outside function types.
/// An abstract type's arguments (`M.arr [n]`) are part of the type, not a payload.
fn in_sum_payload(t: &T, n: &str) -> bool {
    match t {
        T::Sum(cs) if is_abstract(cs) => false,
        T::Sum(cs) => cs.values().flatten().any(|t| type_mentions_size_name(t, n)),
        T::Array(_, e) => in_sum_payload(e, n),
        T::Record(fs) => fs.values().any(|t| in_sum_payload(t, n)),
        T::Arrow(..) | T::Var(_) | T::Prim(_) | T::Param(_) => false,
    }
}

/// An abstract type from a module (see `fresh_abstract`): a one-constructor sum whose
/// constructor name is marked.
fn is_abstract(cs: &BTreeMap<Name, Vec<T>>) -> bool {
    cs.len() == 1
        && cs
            .keys()
            .all(|c| c.starts_with(crate::check::modules::ABSTRACT))
}

/// Whether `n` is the size of an array outside every function and sum type in `t`: one a
/// value of type `t` shows (a constructor's payload is there only for that constructor).
fn visible_size(t: &T, n: &str) -> bool {
    match t {
        T::Array(s, e) => size_mentions(s, n) || visible_size(e, n),
        T::Record(fs) => fs.values().any(|t| visible_size(t, n)),
        T::Arrow(..) | T::Sum(_) | T::Var(_) | T::Prim(_) | T::Param(_) => false,
    }
}

/// Whether `n` is the size of an array outside every function type in `t`.
pub(crate) fn outside_arrows(t: &T, n: &str) -> bool {
    match t {
        T::Arrow(..) => false,
        T::Array(s, e) => size_mentions(s, n) || outside_arrows(e, n),
        T::Record(fs) => fs.values().any(|t| outside_arrows(t, n)),
        T::Sum(cs) => cs.values().flatten().any(|t| outside_arrows(t, n)),
        T::Var(_) | T::Prim(_) | T::Param(_) => false,
    }
}

/// The type variables written in `t` (not following their solutions).
fn vars_of(t: &T, out: &mut Vec<Tv>) {
    match t {
        T::Var(v) => out.push(*v),
        T::Array(_, e) => vars_of(e, out),
        T::Record(fs) => fs.values().for_each(|t| vars_of(t, out)),
        T::Sum(cs) => cs.values().flatten().for_each(|t| vars_of(t, out)),
        T::Arrow(_, a, b) => {
            vars_of(a, out);
            vars_of(b, out);
        }
        T::Prim(_) | T::Param(_) => {}
    }
}
