//! Reuse of per-iteration values that an earlier map already stored. Reverse mode runs a
//! map's body twice (the forward sweep, then a renamed copy before the return sweep), and
//! after fission and hoisting (`contract`) both copies are maps over the same iterations
//! at one level, e.g. the GMM's `x_i − μ_k` for every point and component, and the matrix
//! products of it:
//!
//! ```text
//! let (B, D) = map (\x… -> …; let d = map (\μ… -> x − μ) …; (…, d)) xs…
//! let (R, E) = map (\x… b d … -> …; let e = map (\μ… r -> x − μ) … rs; (…, e)) xs… B D …
//! ```
//!
//! Two rewrites, each only where the computations are equal up to the names they bind:
//!
//! - **inside a later map:** a statement that computes what an earlier map over the same
//!   inputs returned, and that the later map receives as a parameter (`e` above is `d`),
//!   becomes that parameter;
//! - **at the same level:** a map equal to an earlier one becomes a copy of its result.
//!
//! "Equal" compares the expressions after both are *pruned* (map inputs a lambda does not
//! read are dropped, at every depth, and for a statement inside the earlier map, only the
//! result that is reused is kept) and *canonically renamed* (every binder numbered in
//! order of appearance; source locations and lambda identities ignored). Free variables
//! must be the same variables, so equal expressions compute equal values (every operation
//! is deterministic). Copies (`let y = x`) are resolved first.

use runic_ir::traverse::{uses, walk_stm_mut, Substitute, VisitorMut};
use runic_ir::*;
use std::collections::{HashMap, HashSet};

/// Applies both rewrites to the statements of `body` (not to nested bodies).
pub(crate) fn reuse_stored(body: &mut Body) {
    resolve_copies(body);
    for b in 1..body.stms.len() {
        for a in 0..b {
            reuse_inside(body, a, b);
        }
    }
    for b in 1..body.stms.len() {
        if !matches!(body.stms[b].exp, Exp::Soac(Soac::Map { .. }))
            || body.stms[b].pat.is_empty()
            || has_effects(&body.stms[b].exp)
        {
            continue;
        }
        let later = canonical(&pruned(&body.stms[b].exp));
        let earlier = (0..b).find(|&a| {
            body.stms[a].pat.len() == body.stms[b].pat.len()
                && body.stms[a]
                    .pat
                    .iter()
                    .zip(&body.stms[b].pat)
                    .all(|(x, y)| x.ty == y.ty)
                && matches!(body.stms[a].exp, Exp::Soac(Soac::Map { .. }))
                && canonical(&pruned(&body.stms[a].exp)) == later
        });
        if let Some(a) = earlier {
            let copies = copy_of(&body.stms[a].pat, &body.stms[b].pat, &body.stms[b].src);
            body.stms.splice(b..=b, copies);
            resolve_copies(body);
        }
    }
}

/// Whether `e` updates an accumulator (running it twice is not running it once).
fn has_effects(e: &Exp) -> bool {
    runic_ir::traverse::any_exp(e, |x| {
        matches!(
            x,
            Exp::Basic(BasicOp::UpdateAcc { .. }) | Exp::WithAcc { .. }
        )
    })
}

/// `let y = x` for each binder pair (the later statement's binders become copies).
fn copy_of(from: &[Param], to: &[Param], src: &SrcInfo) -> Vec<Stm> {
    from.iter()
        .zip(to)
        .map(|(x, y)| Stm {
            pat: vec![y.clone()],
            exp: Exp::Basic(BasicOp::SubExp(SubExp::Var(x.name))),
            src: src.clone(),
        })
        .collect()
}

/// Replaces the uses of variables bound to copies of others by the originals, in the
/// statements after each copy.
fn resolve_copies(body: &mut Body) {
    let mut subst: HashMap<VName, SubExp> = HashMap::new();
    for st in &mut body.stms {
        Substitute(&subst).stm(st);
        if let (Exp::Basic(BasicOp::SubExp(SubExp::Var(x))), [y]) = (&st.exp, st.pat.as_slice()) {
            subst.insert(y.name, SubExp::Var(*x));
        }
    }
    Substitute(&subst).body(body);
}

/// The first rewrite for the earlier map at `a` and the later SOAC at `b`.
fn reuse_inside(body: &mut Body, a: usize, b: usize) {
    let (head, tail) = body.stms.split_at_mut(b);
    let (m1, m2) = (&head[a], &mut tail[0]);
    let Exp::Soac(Soac::Map {
        w: w1,
        lam: l1,
        arrs: a1,
    }) = &m1.exp
    else {
        return;
    };
    let Some((w2, l2, a2)) = crate::contract::element_lambda(&mut m2.exp) else {
        return;
    };
    if w1 != w2 || l1.body.result.len() != m1.pat.len() {
        return;
    }
    // The later lambda's parameter for each input of the earlier map.
    let mut phi: HashMap<VName, SubExp> = HashMap::new();
    for (p, x) in l1.params.iter().zip(a1) {
        if let Some(k) = a2.iter().position(|y| y == x) {
            phi.insert(p.name, SubExp::Var(l2.params[k].name));
        }
    }
    let locals: HashSet<VName> = runic_ir::traverse::binders(&l1.body);
    for (r, out) in m1.pat.iter().enumerate() {
        // The later map receives this result as a parameter.
        let Some(k) = a2.iter().position(|y| *y == out.name) else {
            continue;
        };
        let q = l2.params[k].name;
        let Some(v) = l1.body.result[r].as_var() else {
            continue;
        };
        let Some(def) = l1
            .body
            .stms
            .iter()
            .find(|s| s.pat.iter().any(|p| p.name == v))
        else {
            continue;
        };
        let Some(mut want) = projected(def, v) else {
            continue;
        };
        // Reads only the earlier lambda's parameters (all passed on) and outer values.
        let reads = runic_ir::traverse::free_vars(&want);
        if reads.iter().any(|x| {
            locals.contains(x) || (l1.params.iter().any(|p| p.name == *x) && !phi.contains_key(x))
        }) {
            continue;
        }
        Substitute(&phi).stm(&mut want);
        // The earlier map's shape checks have passed: the later computation need not
        // repeat them to be the same (but it may not have checks the earlier lacks).
        runic_ir::traverse::for_each_body_mut(&mut want, |b| {
            b.stms
                .retain(|s| !matches!(s.exp, Exp::Basic(BasicOp::ShapeCheck { .. })))
        });
        let want = canonical(&pruned(&want.exp));
        for st in &mut l2.body.stms {
            let [y] = st.pat.as_slice() else { continue };
            if has_effects(&st.exp) {
                continue;
            }
            if y.ty == l2.params[k].ty && canonical(&pruned(&st.exp)) == want {
                st.exp = Exp::Basic(BasicOp::SubExp(SubExp::Var(q)));
            }
        }
    }
}

/// The statement `def` computing only its result `v` (for a map, the other results of
/// its lambda dropped); `None` for other multi-result statements.
fn projected(def: &Stm, v: VName) -> Option<Stm> {
    let k = def.pat.iter().position(|p| p.name == v)?;
    if def.pat.len() == 1 {
        return Some(def.clone());
    }
    let Exp::Soac(Soac::Map { w, lam, arrs }) = &def.exp else {
        return None;
    };
    if lam.body.result.len() != def.pat.len() {
        return None;
    }
    let mut lam = lam.clone();
    lam.body.result = vec![lam.body.result[k].clone()];
    lam.ret = vec![lam.ret[k].clone()];
    // What the dropped results alone needed goes too.
    crate::dce::dce_lambda(&mut lam);
    Some(Stm {
        pat: vec![def.pat[k].clone()],
        exp: Exp::Soac(Soac::Map {
            w: w.clone(),
            lam,
            arrs: arrs.clone(),
        }),
        src: def.src.clone(),
    })
}

/// A copy of `e` whose maps (at every depth) take only the inputs their lambdas read
/// (at least one, which gives the map its width).
fn pruned(e: &Exp) -> Exp {
    struct Prune;
    impl VisitorMut for Prune {
        fn exp(&mut self, e: &mut Exp) {
            runic_ir::traverse::walk_exp_mut(self, e);
            if let Exp::Soac(Soac::Map { lam, arrs, .. }) = e {
                let read = uses(&lam.body);
                let keep: Vec<bool> = lam.params.iter().map(|p| read.contains(&p.name)).collect();
                if keep.iter().any(|k| *k) {
                    let mut it = keep.iter();
                    lam.params.retain(|_| *it.next().unwrap());
                    let mut it = keep.iter();
                    arrs.retain(|_| *it.next().unwrap());
                }
            }
        }
    }
    let mut e = e.clone();
    Prune.exp(&mut e);
    e
}

/// `e` with its binders numbered in order of appearance (from a range no program uses)
/// and without source locations: equal for two expressions that differ only in the names
/// they bind and where they came from.
fn canonical(e: &Exp) -> Exp {
    struct Canon(HashMap<VName, VName>);
    impl VisitorMut for Canon {
        fn bind_var(&mut self, v: &mut VName, _: Option<&Type>) {
            let c = VName(u32::MAX - self.0.len() as u32);
            self.0.insert(*v, c);
            *v = c;
        }
        fn use_var(&mut self, v: &mut VName) {
            if let Some(c) = self.0.get(v) {
                *v = *c;
            }
        }
        fn stm(&mut self, s: &mut Stm) {
            s.src = SrcInfo::default();
            walk_stm_mut(self, s)
        }
    }
    let mut e = e.clone();
    Canon(HashMap::new()).exp(&mut e);
    e
}

/// The third rewrite, for what a later map computes again without the earlier map
/// returning it (reverse mode's second copy of a softmax: the scores, their maximum, the
/// exps and their sum, where the forward map returned only the probabilities): across
/// every pair of maps over the same iterations at one level, the statements of the later
/// lambda equal to statements of the earlier one are matched in order; the values of
/// those with a transcendental function in them that the rest of the later lambda reads
/// are returned by the earlier map as well and passed to the later one, whose copies DCE
/// then removes (the exps and their sum). Cheap matched statements are computed again
/// (the scores and their maximum): storing an array per iteration costs a write and a
/// read, as dear as a few arithmetic operations.
pub(crate) fn export_recomputed(body: &mut Body, ns: &mut NameSource) {
    for b in 1..body.stms.len() {
        for a in 0..b {
            export_between(body, a, b, ns);
        }
    }
}

/// The third rewrite for the earlier map at `a` and the later one at `b`.
fn export_between(body: &mut Body, a: usize, b: usize, ns: &mut NameSource) {
    let (head, tail) = body.stms.split_at_mut(b);
    let (m1, m2) = (&mut head[a], &mut tail[0]);
    if has_effects(&m1.exp) || has_effects(&m2.exp) {
        return;
    }
    let (
        Exp::Soac(Soac::Map {
            w: w1,
            lam: l1,
            arrs: a1,
        }),
        Exp::Soac(Soac::Map {
            w: w2,
            lam: l2,
            arrs: a2,
        }),
    ) = (&mut m1.exp, &mut m2.exp)
    else {
        return;
    };
    if w1 != w2 || l1.body.result.len() != m1.pat.len() || !(dear(l1) && dear(l2)) {
        return;
    }
    let pairs = matching_stms(l1, a1, l2, a2);
    let exported = exported_values(l1, l2, &pairs);
    if exported.is_empty() {
        return;
    }
    let mut to_param: HashMap<VName, SubExp> = HashMap::new();
    for (x, y, ty) in exported {
        // A value the earlier map returns already is passed as it is.
        let stored = match l1.body.result.iter().position(|r| *r == SubExp::Var(x)) {
            Some(r) => m1.pat[r].name,
            None => {
                let stored = ns.fresh_typed("kept", ty.array_of(w1.clone()));
                l1.body.result.push(SubExp::Var(x));
                l1.ret.push(ty.clone());
                m1.pat.push(Param {
                    name: stored,
                    ty: ty.array_of(w1.clone()),
                });
                stored
            }
        };
        let q = ns.fresh_typed("kept", ty.clone());
        l2.params.push(Param { name: q, ty });
        a2.push(stored);
        to_param.insert(y, SubExp::Var(q));
    }
    Substitute(&to_param).body(&mut l2.body);
    // New code: fresh identities (executors cache compiled lambdas by them).
    l1.id = LamId::fresh();
    l2.id = LamId::fresh();
}

/// Whether `x` computes a transcendental function: only those are worth exporting, and
/// looking costs less than matching statements (which canonicalises every one of them).
fn dear<T: runic_ir::traverse::Walk + ?Sized>(x: &T) -> bool {
    runic_ir::traverse::any_exp(x, |e| matches!(e, Exp::Basic(op) if op.is_transcendental()))
}

/// The statements of `l2` (positions) equal to statements of `l1` (positions), in order:
/// each `l1` statement with its free variables renamed — `l1`'s parameters to `l2`'s for
/// the same input arrays, the binders of matched statements to their matches' — compared
/// with `l2`'s statements not matched yet, after pruning and canonical renaming.
fn matching_stms(l1: &Lambda, a1: &[VName], l2: &Lambda, a2: &[VName]) -> Vec<(usize, usize)> {
    let mut sigma: HashMap<VName, SubExp> = HashMap::new();
    for (p, x) in l1.params.iter().zip(a1) {
        if let Some(k) = a2.iter().position(|y| y == x) {
            sigma.insert(p.name, SubExp::Var(l2.params[k].name));
        }
    }
    let own: HashSet<VName> = runic_ir::traverse::binders(&l1.body)
        .into_iter()
        .chain(l1.params.iter().map(|p| p.name))
        .collect();
    let later: Vec<Option<Exp>> = l2
        .body
        .stms
        .iter()
        .map(|s| (!has_effects(&s.exp)).then(|| canonical(&pruned(&s.exp))))
        .collect();
    let mut taken = vec![false; later.len()];
    let mut pairs = Vec::new();
    for (i, s) in l1.body.stms.iter().enumerate() {
        let mut c = s.clone();
        Substitute(&sigma).stm(&mut c);
        if runic_ir::traverse::free_vars(&c)
            .iter()
            .any(|v| own.contains(v))
        {
            continue; // reads something of l1's that l2 does not have
        }
        let want = Some(canonical(&pruned(&c.exp)));
        let found = (0..later.len()).find(|&k| {
            !taken[k]
                && later[k] == want
                && l2.body.stms[k].pat.len() == c.pat.len()
                && l2.body.stms[k]
                    .pat
                    .iter()
                    .zip(&c.pat)
                    .all(|(p, q)| p.ty == q.ty)
        });
        if let Some(k) = found {
            taken[k] = true;
            pairs.push((i, k));
            for (p, q) in s.pat.iter().zip(&l2.body.stms[k].pat) {
                sigma.insert(p.name, SubExp::Var(q.name));
            }
        }
    }
    pairs
}

/// The values `l2` stops computing, as (`l1`'s binder, `l2`'s binder, type): those of its
/// matched statements with a transcendental function in them that the rest of `l2` reads —
/// its unmatched statements, its results, and its cheap matched statements, which stay
/// (computing them again is cheaper than storing them). Only types whose sizes are known
/// outside the lambdas (a row of a fixed size per iteration). An in-place update in `l2`
/// of such a value updates a copy of the new parameter, never the stored row: lowering
/// copies what `with` consumes, and `elide-copies` gives no lambda its parameters.
fn exported_values(
    l1: &Lambda,
    l2: &Lambda,
    pairs: &[(usize, usize)],
) -> Vec<(VName, VName, Type)> {
    let dear: HashSet<usize> = pairs
        .iter()
        .map(|&(_, k)| k)
        .filter(|&k| dear(&l2.body.stms[k]))
        .collect();
    let mut read = uses(&l2.body.result);
    for (k, s) in l2.body.stms.iter().enumerate() {
        if !dear.contains(&k) {
            read.extend(uses(s));
        }
    }
    let inside: HashSet<VName> = runic_ir::traverse::binders(&l2.body)
        .into_iter()
        .chain(l2.params.iter().map(|p| p.name))
        .collect();
    let mut out = Vec::new();
    for &(i, k) in pairs.iter().filter(|(_, k)| dear.contains(k)) {
        for (x, y) in l1.body.stms[i].pat.iter().zip(&l2.body.stms[k].pat) {
            let sized_outside = uses(&y.ty).is_disjoint(&inside);
            if read.contains(&y.name) && sized_outside && !matches!(y.ty, Type::Acc { .. }) {
                out.push((x.name, y.name, y.ty.clone()));
            }
        }
    }
    out
}
