//! Vertical fusion: a `map` whose results are read only by one later `map`, `reduce` or
//! `scan` (as its input arrays) is merged into that consumer, so the intermediate arrays
//! are never built. map∘map composes the lambdas; a map feeding a reduce/scan becomes (or
//! extends) its `pre` lambda. A map whose results are also read after its first reader,
//! when that reader is a map, merges into it all the same, the fused map returning those
//! results too: one pass over the inputs instead of two (the MLP's gradient keeps the
//! hidden layer before its ReLU for the ReLU's adjoint; fused, the bias and the ReLU are
//! one kernel, as in the primal).
//!
//! A producer that cannot fail whose only reader is an `if` moves into the branches that
//! read it (and fuses there).
//!
//! Error order is kept: when the producer can fail, the statements between producer and
//! consumer must be pure and infallible, and the consumer's lambdas must not fail
//! (otherwise interleaving element by element could report a different error first); a
//! producer that cannot fail may move past anything.

use crate::checks::Equal;
use crate::dce::{known_sizes, removable_given};
use runic_ir::traverse::{add_uses, any_exp, for_each_body_mut, uses, Substitute, VisitorMut};
use runic_ir::*;
use std::collections::{HashMap, HashSet};

pub fn fuse(mut prog: Prog) -> Prog {
    let mut ns = std::mem::take(&mut prog.names);
    for f in &mut prog.funs {
        let sizes = known_sizes(f);
        // Widths the entry point's own checks equate (`d_36 == d_39`) fuse like one width.
        let eq = crate::checks::prologue_equalities(f, &ns);
        // Innermost bodies first, so a lambda is fused inside before it is composed; again
        // while anything fused, since composing two maps puts their inner maps side by
        // side in one lambda, whose body was visited before (a bias map and a ReLU map
        // over rows become one map over rows with two inner maps, then one).
        loop {
            let mut fused = false;
            for_each_body_mut(&mut f.body, |b| {
                while fuse_once(b, &mut ns, &sizes, &eq) {
                    fused = true;
                }
            });
            if !fused {
                break;
            }
        }
    }
    prog.names = ns;
    prog
}

/// Whether a lambda's body cannot fail (only pure, infallible statements).
fn infallible(l: &Lambda, sizes: &HashSet<VName>) -> bool {
    l.body.stms.iter().all(|s| removable_given(&s.exp, sizes))
}

/// Fuse one producer into its consumer; false when nothing fuses.
fn fuse_once(b: &mut Body, ns: &mut NameSource, sizes: &HashSet<VName>, eq: &Equal) -> bool {
    let uses_of: Vec<HashSet<VName>> = b.stms.iter().map(uses).collect();
    for p in 0..b.stms.len() {
        let Exp::Soac(Soac::Map { w, lam: f, arrs }) = &b.stms[p].exp else {
            continue;
        };
        let outs: Vec<VName> = b.stms[p].pat.iter().map(|x| x.name).collect();
        let in_result = b
            .result
            .iter()
            .any(|r| matches!(r, SubExp::Var(v) if outs.contains(v)));
        if in_result {
            continue;
        }
        let readers: Vec<usize> = (p + 1..b.stms.len())
            .filter(|&k| outs.iter().any(|o| uses_of[k].contains(o)))
            .collect();
        let Some(&c) = readers.first() else { continue };
        // Outputs read again after the consumer: the fused map returns them too (only a
        // map can: a reduction or scan has no per-element results).
        let keep: Vec<usize> = (0..outs.len())
            .filter(|&j| readers[1..].iter().any(|&k| uses_of[k].contains(&outs[j])))
            .collect();
        if !keep.is_empty() && !matches!(b.stms[c].exp, Exp::Soac(Soac::Map { .. })) {
            continue;
        }
        // The producer moves past the statements between: if it can fail, they must not
        // (an error would change); if it cannot, it may pass anything.
        let producer_fails = !infallible(f, sizes);
        if producer_fails && !(p + 1..c).all(|k| removable_given(&b.stms[k].exp, sizes)) {
            continue;
        }
        if matches!(b.stms[c].exp, Exp::If { .. }) && !producer_fails {
            if sink_into_branches(b, p, c, &outs, ns, sizes, eq) {
                return true;
            }
            continue;
        }
        let consumer = &b.stms[c].exp;
        if let Some(fused) = fuse_pair(ns, w, f, arrs, &outs, &keep, consumer, sizes, eq) {
            let kept: Vec<Param> = keep.iter().map(|&j| b.stms[p].pat[j].clone()).collect();
            let consumer = &mut b.stms[c];
            consumer.exp = fused;
            consumer.pat.extend(kept);
            b.stms.remove(p);
            return true;
        }
    }
    false
}

/// A producer map `p` whose only reader is the `if` at `c` (not its condition) moves into
/// the branches that read it, a renamed copy in the second, and fuses there with its
/// consumer (accumulator optimisation chooses between two forms of a sum at run time this
/// way). It cannot fail, so not running it in the other branch changes nothing.
fn sink_into_branches(
    b: &mut Body,
    p: usize,
    c: usize,
    outs: &[VName],
    ns: &mut NameSource,
    sizes: &HashSet<VName>,
    eq: &Equal,
) -> bool {
    let producer = b.stms[p].clone();
    let Exp::If {
        cond,
        then_body,
        else_body,
        ..
    } = &mut b.stms[c].exp
    else {
        return false;
    };
    if matches!(cond, SubExp::Var(v) if outs.contains(v)) {
        return false;
    }
    let mut first = true;
    for branch in [then_body, else_body] {
        if !outs.iter().any(|o| uses(&*branch).contains(o)) {
            continue;
        }
        let mut moved = Body {
            stms: [vec![producer.clone()], std::mem::take(&mut branch.stms)].concat(),
            result: std::mem::take(&mut branch.result),
        };
        if !first {
            runic_ir::traverse::walk_body_mut(
                &mut runic_ir::traverse::Renamer::new(ns),
                &mut moved,
            );
            ns.record_types(&moved);
        }
        first = false;
        while fuse_once(&mut moved, ns, sizes, eq) {}
        *branch = moved;
    }
    b.stms.remove(p);
    true
}

/// The consumer with the producer map (`outs = map w f arrs`) merged in, if it qualifies;
/// a map consumer also returns the producer's outputs `keep` (indices into `outs`), after
/// its own.
#[allow(clippy::too_many_arguments)]
fn fuse_pair(
    ns: &mut NameSource,
    w: &SubExp,
    f: &Lambda,
    prod_arrs: &[VName],
    outs: &[VName],
    keep: &[usize],
    consumer: &Exp,
    sizes: &HashSet<VName>,
    eq: &Equal,
) -> Option<Exp> {
    let producer_fails = !infallible(f, sizes);
    let Exp::Soac(soac) = consumer else {
        return None;
    };
    let (cw, arrs) = match soac {
        Soac::Map { w, arrs, .. } | Soac::Reduce { w, arrs, .. } | Soac::Scan { w, arrs, .. } => {
            (w, arrs)
        }
        _ => return None,
    };
    // A contraction (a map of dot products) stays apart from its producers and consumers:
    // the executor runs it as a matrix product, where fused it would be one dot product
    // per element.
    let contraction = |l: &Lambda| crate::contract::contraction_nest(l);
    if !eq.same(cw, w)
        || contraction(f)
        || matches!(soac, Soac::Map { lam, .. } if contraction(lam))
    {
        return None;
    }
    // A producer that reduces per element (an inner reduction, scan or loop) stays out
    // of a reduction or scan: fusing would save only an array of one value per element,
    // and the fold kernel it would join runs it no faster (measured: the k-means gradient's
    // distances fused into its argmin cost 15% more). Inner maps (elementwise work on
    // rows) do fuse.
    let reduces = |e: &Exp| {
        matches!(
            e,
            Exp::Soac(Soac::Reduce { .. } | Soac::Scan { .. }) | Exp::Loop { .. }
        )
    };
    let inner_loops = f.body.stms.iter().any(|s| any_exp(&s.exp, reduces));
    if inner_loops && !matches!(soac, Soac::Map { .. }) {
        return None;
    }
    // The producer's results may only be read as the consumer's input arrays.
    let mut inner = HashSet::new();
    let lams: Vec<&Lambda> = match soac {
        Soac::Map { lam, .. } => vec![lam],
        Soac::Reduce { pre, lam, .. } | Soac::Scan { pre, lam, .. } => {
            pre.iter().chain(std::iter::once(lam)).collect()
        }
        _ => return None,
    };
    for l in &lams {
        add_uses(*l, &mut inner);
        if producer_fails && !infallible(l, sizes) {
            return None;
        }
    }
    if outs.iter().any(|o| inner.contains(o)) {
        return None;
    }
    // The element function of the consumer: one parameter per input array.
    let elem = match soac {
        Soac::Map { lam, .. } => lam.clone(),
        Soac::Reduce { pre: Some(p), .. } | Soac::Scan { pre: Some(p), .. } => p.clone(),
        Soac::Reduce {
            pre: None,
            lam,
            neutral,
            ..
        }
        | Soac::Scan {
            pre: None,
            lam,
            neutral,
            ..
        } => {
            // No `pre`: the identity on the operator's element types (typed by its
            // parameters, so building it cannot fail).
            let elems = &lam.params[neutral.len()..];
            if elems.len() != arrs.len() {
                return None;
            }
            let params = elems.iter().map(|q| ("elem", q.ty.clone())).collect();
            Builder::new(ns)
                .lam::<TypeError>(params, |_, xs| Ok(xs.to_vec()))
                .ok()?
        }
        _ => return None,
    };
    if elem.params.len() != arrs.len() {
        return None;
    }
    let (composed, new_arrs) = compose(f, prod_arrs, outs, keep, elem, arrs);
    let mut fused = soac.clone();
    match &mut fused {
        Soac::Map { lam, arrs, .. } => {
            *lam = composed;
            *arrs = new_arrs;
        }
        Soac::Reduce { pre, arrs, .. } | Soac::Scan { pre, arrs, .. } => {
            *pre = Some(composed);
            *arrs = new_arrs;
        }
        _ => return None,
    }
    Some(Exp::Soac(fused))
}

/// The element function `g` (over `g_arrs`) after the producer `f` (over `f_arrs`, giving
/// `outs`): `f`'s body, then `g`'s with its parameters for produced arrays replaced by
/// `f`'s results; `g`'s results, then `f`'s results `keep`. Returns it with its input
/// arrays: `f`'s, then those `g` reads besides `outs`.
fn compose(
    f: &Lambda,
    f_arrs: &[VName],
    outs: &[VName],
    keep: &[usize],
    g: Lambda,
    g_arrs: &[VName],
) -> (Lambda, Vec<VName>) {
    let mut subst = HashMap::new();
    let mut params = f.params.clone();
    let mut arrs = f_arrs.to_vec();
    for (q, a) in g.params.into_iter().zip(g_arrs) {
        if let Some(j) = outs.iter().position(|o| o == a) {
            subst.insert(q.name, f.body.result[j].clone());
        } else {
            params.push(q);
            arrs.push(*a);
        }
    }
    let mut rest = g.body;
    Substitute(&subst).body(&mut rest);
    let mut stms = f.body.stms.clone();
    stms.extend(rest.stms);
    let mut result = rest.result;
    result.extend(keep.iter().map(|&j| f.body.result[j].clone()));
    let mut ret = g.ret;
    ret.extend(keep.iter().map(|&j| f.ret[j].clone()));
    let body = Body { stms, result };
    // The consumer's result types: fusion changes how elements are computed, not what.
    // A fresh id, not the consumer's: the id names the code (executors cache compiled
    // lambdas by it), and this is new code; keeping the consumer's id would let a cache
    // built for the unfused program hand back the consumer's plan.
    let mut lam = Lambda::new(params, body, ret);
    // What the producer computed only for the results the consumer read is dead now; the
    // inputs nothing reads any more are dropped, keeping one so the SOAC still has an
    // input: an unread row would still be passed to every element (and keep the kernel
    // from running in SIMD lanes).
    crate::dce::dce_lambda(&mut lam);
    crate::checks::drop_unread_params(&mut lam, &mut arrs);
    (lam, arrs)
}
