//! Sparse adjoints: a map over an array that is zero except at one index runs its lambda
//! at that index only.
//!
//! Reverse mode gives `reduce min`/`max` (and index reads) a *one-hot* adjoint: zeros with
//! the result's adjoint written at the position of the extremum, e.g.
//!
//! ```text
//! let r = if found then (replicate k 0 with [i] = ā) else replicate k 0
//! let c̄ = map (\c a -> map (\x -> -2·a·(p - x)) c) cs r        -- k rows, k - 1 of them zero
//! map (\j row -> map (\l e -> acc[j, l] += e) …) (iota k) c̄     -- k·d adds, most of zeros
//! ```
//!
//! When a map's lambda is *strict* in the parameter that reads the one-hot array (every
//! result is zero when that parameter is zero, and its only effects are accumulator `+`
//! updates of such zeros), every iteration but one computes zeros. The pass runs that one:
//!
//! ```text
//! let c̄ = if found then (let c = cs[i]; let a = r[i]; …; replicate k 0 with [i] = row)
//!         else replicate k 0
//! ```
//!
//! and the result is again one-hot, so a chain of such maps (the adjoint, then the
//! accumulator updates) becomes one branch that runs each lambda once, passing rows along
//! directly; a one-hot array only the chain reads is never built. For k-means' gradient this
//! is the difference between `k·d` and `d` work per point.
//!
//! Zero is treated as absorbing (`0·x = 0`, `0/x = 0`) as the adjoint's linearity says; an
//! iteration skipped here would have given NaN only if a primal value it multiplies were
//! infinite or NaN.

use crate::simplify::{is_zero_const, replicates_zero};
use runic_ir::traverse::{
    any_exp, binders, free_vars, iotas, is_update_acc, uses, walk_stm, walk_stm_mut, Visitor,
    VisitorMut, Walk,
};
use runic_ir::*;
use std::collections::{HashMap, HashSet};

pub fn sparse_adjoints(mut prog: Prog) -> Prog {
    prog.record_types();
    let mut ns = std::mem::take(&mut prog.names);
    for f in &mut prog.funs {
        let mut cx = Cx {
            zeros: zero_vars(&f.body),
            iotas: iotas(&f.body).into_keys().collect(),
            plus_accs: plus_accs(&f.body),
            facts: HashMap::new(),
            ns: &mut ns,
        };
        cx.body(&mut f.body);
    }
    prog.names = ns;
    crate::simplify(prog)
}

/// What is known of an array that is zero except at one index.
#[derive(Clone, Debug)]
struct OneHot {
    /// When false, the array is all zero (and `idx` may be out of bounds).
    cond: Option<SubExp>,
    /// The only index that may hold a non-zero row; in bounds when `cond` holds.
    idx: SubExp,
    /// The group that made the array, and its row at `idx` inside the group's branch.
    row: Option<(usize, SubExp)>,
    /// Its row at `idx` when a value bound outside the branch that wrote it (`z with [i] = v`
    /// with `v` from before the branch): a read of the array is then `v`.
    value: Option<SubExp>,
}

/// Maps run at one index, sharing a branch: `if cond then stms` (or `stms` alone).
struct Group {
    cond: Option<SubExp>,
    idx: SubExp,
    stms: Vec<Stm>,
    /// The one-hot results: the map's pattern variable and its row at `idx`.
    outs: Vec<(Param, SubExp)>,
    src: SrcInfo,
}

/// A body's statements while it is rewritten: groups stay open until the body ends.
enum Item {
    Stm(Box<Stm>),
    Group(usize),
}

struct Cx<'a> {
    /// Variables bound to `replicate … 0` anywhere in the function (names are unique).
    zeros: HashSet<VName>,
    /// Variables bound to `iota n` anywhere in the function: element `i` of one is `i`.
    iotas: HashSet<VName>,
    /// Accumulators whose operator is scalar `+` with neutral element zero.
    plus_accs: HashSet<VName>,
    facts: HashMap<VName, OneHot>,
    ns: &'a mut NameSource,
}

impl VisitorMut for Cx<'_> {
    fn body(&mut self, b: &mut Body) {
        self.rewrite(b);
    }
}

impl Cx<'_> {
    /// Rewrites one body, statement by statement: the bodies nested in a statement are
    /// rewritten first, knowing what the statements before it bind.
    fn rewrite(&mut self, b: &mut Body) {
        let mut items: Vec<Item> = Vec::new();
        let mut groups: Vec<Group> = Vec::new();
        for mut s in std::mem::take(&mut b.stms) {
            walk_stm_mut(self, &mut s);
            self.size_of_one_hot(&mut s);
            self.learn(&s);
            match self.one_hot_input(&s) {
                Some(fact) => self.run_at_index(s, fact, &mut items, &mut groups),
                None => items.push(Item::Stm(Box::new(s))),
            }
        }
        b.stms = self.emit(items, groups, &b.result);
    }

    /// `size(a, k)` of an array a group makes is its type's size: a read of the array
    /// would keep the group from joining the next one.
    fn size_of_one_hot(&self, s: &mut Stm) {
        if let Exp::Basic(BasicOp::ArraySize(a, k)) = &s.exp {
            let known = self.facts.get(a).is_some_and(|f| f.row.is_some());
            if let (true, Some(Type::Array { shape, .. })) = (known, self.ns.type_of(*a)) {
                if let Some(d) = shape.get(*k) {
                    s.exp = Exp::Basic(BasicOp::SubExp(d.clone()));
                }
            }
        }
    }

    /// Records the one-hot arrays that `s` binds without a group.
    fn learn(&mut self, s: &Stm) {
        match (&s.exp, s.pat.as_slice()) {
            (Exp::Basic(BasicOp::Update(z, is, v)), [p]) if self.zeros.contains(z) => {
                if let [DimIndex::Fix(i)] = is.as_slice() {
                    let fact = OneHot {
                        cond: None,
                        idx: i.clone(),
                        row: None,
                        value: Some(v.clone()),
                    };
                    self.facts.insert(p.name, fact);
                }
            }
            (
                Exp::If {
                    cond,
                    then_body,
                    else_body,
                    ..
                },
                pat,
            ) => {
                let local = binders(then_body);
                for (k, p) in pat.iter().enumerate() {
                    let then_fact = then_body.result[k]
                        .as_var()
                        .and_then(|v| self.facts.get(&v).cloned());
                    let else_zero = else_body.result[k]
                        .as_var()
                        .is_some_and(|v| self.zeros.contains(&v));
                    if let (Some(f), true) = (then_fact, else_zero) {
                        let inside = |x: &SubExp| x.as_var().is_some_and(|v| local.contains(&v));
                        if f.cond.is_none() && !inside(&f.idx) {
                            let fact = OneHot {
                                cond: Some(cond.clone()),
                                idx: f.idx,
                                row: None,
                                value: f.value.filter(|v| !inside(v)),
                            };
                            self.facts.insert(p.name, fact);
                        }
                    }
                }
            }
            (Exp::WithAcc { inputs, lam }, pat) => {
                // Results after the accumulators' arrays are the lambda's after its
                // accumulators.
                let arrays: usize = inputs.iter().map(|i| i.arrays.len()).sum();
                let inner = binders(lam);
                let outer = |x: &SubExp| x.as_var().is_none_or(|v| !inner.contains(&v));
                for (p, r) in pat[arrays..].iter().zip(&lam.body.result[inputs.len()..]) {
                    let Some(f) = r.as_var().and_then(|v| self.facts.get(&v)) else {
                        continue;
                    };
                    if outer(&f.idx) && f.cond.as_ref().is_none_or(outer) {
                        let fact = OneHot {
                            row: None,
                            value: f.value.clone().filter(outer),
                            ..f.clone()
                        };
                        self.facts.insert(p.name, fact);
                    }
                }
            }
            _ => {}
        }
    }

    /// A map whose lambda is strict in the parameters that read one-hot arrays of the same
    /// index and condition (all of them are zero at once in every other iteration).
    fn one_hot_input(&self, s: &Stm) -> Option<OneHot> {
        let Exp::Soac(Soac::Map { lam, arrs, .. }) = &s.exp else {
            return None;
        };
        if !lam.ret.iter().all(is_numeric) {
            return None;
        }
        arrs.iter().find_map(|a| {
            let fact = self.facts.get(a)?;
            let same: Vec<usize> = (0..arrs.len())
                .filter(|&q| {
                    self.facts
                        .get(&arrs[q])
                        .is_some_and(|f| f.cond == fact.cond && f.idx == fact.idx)
                })
                .collect();
            self.strict(lam, &same).then(|| fact.clone())
        })
    }

    /// Replaces the map `s` (strict in its parameters that read one-hot arrays like `fact`)
    /// by its lambda at the one index, in the group that made that array when it can
    /// join it, else in a new group.
    fn run_at_index(
        &mut self,
        s: Stm,
        fact: OneHot,
        items: &mut Vec<Item>,
        groups: &mut Vec<Group>,
    ) {
        let Exp::Soac(Soac::Map { lam, arrs, .. }) = s.exp else {
            unreachable!("one_hot_input accepts maps only")
        };
        let g = match fact.row {
            Some((g, _)) if self.can_join(g, items, groups) => {
                // The group moves to this statement's position.
                items.retain(|it| !matches!(it, Item::Group(h) if *h == g));
                g
            }
            _ => {
                groups.push(Group {
                    cond: fact.cond.clone(),
                    idx: fact.idx.clone(),
                    stms: Vec::new(),
                    outs: Vec::new(),
                    src: s.src.clone(),
                });
                groups.len() - 1
            }
        };
        items.push(Item::Group(g));
        let idx = groups[g].idx.clone();
        for (param, a) in lam.params.iter().zip(&arrs) {
            // (A one-hot array under another condition may be all zero where this runs.)
            let cond = &groups[g].cond;
            let fact = self
                .facts
                .get(a)
                .filter(|f| f.idx == idx && (f.cond.is_none() || f.cond == *cond));
            let row = match (
                fact.and_then(|f| f.row.clone()),
                fact.and_then(|f| f.value.clone()),
            ) {
                (Some((h, row)), _) if h == g => BasicOp::SubExp(row),
                // Zero elsewhere, and the group runs only where `idx` is the one index.
                (_, Some(v)) => BasicOp::SubExp(v),
                // In bounds when the group runs (the map reads its every element).
                _ if self.iotas.contains(a) => BasicOp::SubExp(idx.clone()),
                _ => BasicOp::Index(*a, vec![DimIndex::Fix(idx.clone())]),
            };
            groups[g].stms.push(Stm {
                pat: vec![param.clone()],
                exp: Exp::Basic(row),
                src: s.src.clone(),
            });
        }
        groups[g].stms.extend(lam.body.stms);
        for (out, row) in s.pat.into_iter().zip(lam.body.result) {
            let fact = OneHot {
                cond: groups[g].cond.clone(),
                idx: idx.clone(),
                row: Some((g, row.clone())),
                value: None,
            };
            self.facts.insert(out.name, fact);
            groups[g].outs.push((out, row));
        }
    }

    /// Whether a map can join group `g`: nothing after the group's place reads its results
    /// (the group moves down to the map).
    fn can_join(&self, g: usize, items: &[Item], groups: &[Group]) -> bool {
        let Some(at) = items
            .iter()
            .position(|it| matches!(it, Item::Group(h) if *h == g))
        else {
            return false;
        };
        let outs: HashSet<VName> = groups[g].outs.iter().map(|(p, _)| p.name).collect();
        items[at + 1..].iter().all(|it| match it {
            Item::Stm(s) => uses(&**s).is_disjoint(&outs),
            Item::Group(h) => groups[*h].stms.iter().all(|s| uses(s).is_disjoint(&outs)),
        })
    }

    /// The body's statements: each group as one branch (or inline, without a condition)
    /// that builds only the one-hot arrays read after it.
    fn emit(&mut self, items: Vec<Item>, groups: Vec<Group>, result: &[SubExp]) -> Vec<Stm> {
        let mut groups: Vec<Option<Group>> = groups.into_iter().map(Some).collect();
        // What each position's successors read, to drop one-hot arrays nobody reads.
        let mut live: HashSet<VName> = free_vars(result);
        let mut out_rev: Vec<Vec<Stm>> = Vec::new();
        for it in items.into_iter().rev() {
            match it {
                Item::Stm(s) => {
                    live.extend(uses(&*s));
                    out_rev.push(vec![*s]);
                }
                Item::Group(g) => {
                    // Each group is one item: taken once.
                    let Some(grp) = groups[g].take() else {
                        continue;
                    };
                    let stms = self.group_stms(grp, &live);
                    stms.iter().for_each(|s| live.extend(uses(s)));
                    out_rev.push(stms);
                }
            }
        }
        out_rev.into_iter().rev().flatten().collect()
    }

    /// One group's statements, building the outputs in `live`.
    fn group_stms(&mut self, g: Group, live: &HashSet<VName>) -> Vec<Stm> {
        let st = |pat: Vec<Param>, exp: Exp| Stm {
            pat,
            exp,
            src: g.src.clone(),
        };
        let outs: Vec<(Param, SubExp)> = g
            .outs
            .into_iter()
            .filter(|(p, _)| live.contains(&p.name))
            .collect();
        let zeros = |ns: &mut NameSource, p: &Param| {
            let z = ns.fresh_typed("zeros", p.ty.clone());
            let (elem, shape) = match &p.ty {
                Type::Array { elem, shape } => (*elem, shape.clone()),
                _ => unreachable!("map results are arrays"),
            };
            let zero = SubExp::Const(runic_prim::Prim::zero(elem));
            (z, Exp::Basic(BasicOp::Replicate(shape, zero)))
        };
        let mut then = g.stms;
        let mut then_res = Vec::new();
        let mut else_stms = Vec::new();
        let mut else_res = Vec::new();
        for (p, row) in &outs {
            let (z, rep) = zeros(self.ns, p);
            then.push(st(
                vec![Param {
                    name: z,
                    ty: p.ty.clone(),
                }],
                rep,
            ));
            let o = self.ns.fresh_typed("onehot", p.ty.clone());
            let upd = BasicOp::Update(z, vec![DimIndex::Fix(g.idx.clone())], row.clone());
            then.push(st(
                vec![Param {
                    name: o,
                    ty: p.ty.clone(),
                }],
                Exp::Basic(upd),
            ));
            then_res.push(SubExp::Var(o));
            let (z, rep) = zeros(self.ns, p);
            else_stms.push(st(
                vec![Param {
                    name: z,
                    ty: p.ty.clone(),
                }],
                rep,
            ));
            else_res.push(SubExp::Var(z));
        }
        let pat: Vec<Param> = outs.iter().map(|(p, _)| p.clone()).collect();
        match g.cond {
            None => {
                let mut stms = then;
                for (p, r) in pat.into_iter().zip(then_res) {
                    stms.push(st(vec![p], Exp::Basic(BasicOp::SubExp(r))));
                }
                stms
            }
            Some(c) => {
                let ret = pat.iter().map(|p| p.ty.clone()).collect();
                vec![st(
                    pat,
                    Exp::If {
                        cond: c,
                        then_body: Body {
                            stms: then,
                            result: then_res,
                        },
                        else_body: Body {
                            stms: else_stms,
                            result: else_res,
                        },
                        ret,
                    },
                )]
            }
        }
    }

    /// Whether every result of `lam` is zero, and its only effects are `+` updates of zeros,
    /// when its parameters `ps` are zero.
    fn strict(&self, lam: &Lambda, ps: &[usize]) -> bool {
        let mut z: HashSet<VName> = self.zeros.clone();
        z.extend(ps.iter().map(|&p| lam.params[p].name));
        self.zero_body(&lam.body, &mut z)
            .is_some_and(|r| r.iter().all(|&b| b))
    }

    /// Which results of `b` are zero given the zero variables `z` (extended with the
    /// body's own); `None` when the body has another effect.
    fn zero_body(&self, b: &Body, z: &mut HashSet<VName>) -> Option<Vec<bool>> {
        for s in &b.stms {
            let zs = self.zero_stm(s, z)?;
            for (p, is_zero) in s.pat.iter().zip(zs) {
                if is_zero {
                    z.insert(p.name);
                }
            }
        }
        Some(b.result.iter().map(|r| is_zero(r, z)).collect())
    }

    /// Which results of `s` are zero; `None` when `s` has an effect other than adding zeros
    /// to a `+` accumulator.
    fn zero_stm(&self, s: &Stm, z: &mut HashSet<VName>) -> Option<Vec<bool>> {
        let zero = |x: &SubExp| is_zero(x, z);
        let one = |b: bool| Some(vec![b]);
        match &s.exp {
            Exp::Basic(op) => match op {
                BasicOp::BinOp(BinOp::Mul, a, c) => one(zero(a) || zero(c)),
                BasicOp::BinOp(BinOp::Div, a, _) => one(zero(a)),
                BasicOp::BinOp(BinOp::Add | BinOp::Sub, a, c) => one(zero(a) && zero(c)),
                BasicOp::UnOp(UnOp::Neg, a) | BasicOp::Convert(_, a) | BasicOp::SubExp(a) => {
                    one(zero(a))
                }
                BasicOp::Replicate(_, a) => one(zero(a)),
                BasicOp::Update(a, _, v) => one(z.contains(a) && zero(v)),
                BasicOp::Index(a, _) | BasicOp::Copy(a) | BasicOp::Rearrange(_, a) => {
                    one(z.contains(a))
                }
                BasicOp::UpdateAcc { acc, vals, .. } => {
                    (self.plus_accs.contains(acc) && vals.iter().all(zero)).then(|| vec![false])
                }
                _ => Some(vec![false; s.pat.len()]),
            },
            Exp::If {
                then_body,
                else_body,
                ..
            } => {
                let t = self.zero_body(then_body, z)?;
                let e = self.zero_body(else_body, z)?;
                Some(t.iter().zip(&e).map(|(a, b)| *a && *b).collect())
            }
            Exp::Soac(Soac::Map { lam, arrs, .. }) => {
                let mut inner = z.clone();
                for (prm, a) in lam.params.iter().zip(arrs) {
                    if z.contains(a) {
                        inner.insert(prm.name);
                    }
                }
                let r = self.zero_body(&lam.body, &mut inner)?;
                z.extend(inner);
                Some(r)
            }
            Exp::Soac(Soac::Reduce {
                pre: None,
                lam,
                neutral,
                arrs,
                ..
            }) if crate::accs::is_add_lambda(lam) => Some(
                neutral
                    .iter()
                    .map(|n| zero(n) && arrs.iter().all(|a| z.contains(a)))
                    .collect(),
            ),
            e if any_exp(e, is_update_acc) => None,
            _ => Some(vec![false; s.pat.len()]),
        }
    }
}

/// Calls `f` on every statement of `b`, at every depth.
fn for_each_stm(b: &Body, f: &mut dyn FnMut(&Stm)) {
    struct Stms<'a>(&'a mut dyn FnMut(&Stm));
    impl Visitor for Stms<'_> {
        fn stm(&mut self, s: &Stm) {
            (self.0)(s);
            walk_stm(self, s)
        }
    }
    b.walk_with(&mut Stms(f))
}

fn is_zero(x: &SubExp, z: &HashSet<VName>) -> bool {
    is_zero_const(x) || x.as_var().is_some_and(|v| z.contains(&v))
}

/// Whether a map result type is an array of numbers (whose zero `replicate` can build).
fn is_numeric(t: &Type) -> bool {
    matches!(t, Type::Prim(p) | Type::Array { elem: p, .. } if *p != PrimType::Bool)
}

/// Variables bound to `replicate … 0` anywhere in `b`.
fn zero_vars(b: &Body) -> HashSet<VName> {
    let mut out = HashSet::new();
    for_each_stm(b, &mut |s: &Stm| {
        if let (true, [p]) = (replicates_zero(&s.exp), s.pat.as_slice()) {
            out.insert(p.name);
        }
    });
    out
}

/// The accumulator parameters of every `with_acc` in `b` whose operator is scalar `+` with
/// neutral element zero (adding zero to them does nothing).
fn plus_accs(b: &Body) -> HashSet<VName> {
    let mut out = HashSet::new();
    for_each_stm(b, &mut |s: &Stm| {
        if let Exp::WithAcc { inputs, lam } = &s.exp {
            for (inp, p) in inputs.iter().zip(&lam.params) {
                if let Some((op, ne)) = &inp.op {
                    if crate::accs::is_add_lambda(op) && ne.iter().all(is_zero_const) {
                        out.insert(p.name);
                    }
                }
            }
        }
    });
    out
}
