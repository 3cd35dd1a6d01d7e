//! Vertical fusion: a `map` whose results are read only by one later `map`, `reduce` or
//! `scan` (as its input arrays) is merged into that consumer, so the intermediate arrays
//! are never built. map∘map composes the lambdas; a map feeding a reduce/scan becomes (or
//! extends) its `pre` lambda.
//!
//! Error order is kept: statements between producer and consumer must be pure and
//! infallible, and when the producer can fail the consumer's lambdas must not (otherwise
//! interleaving element by element could report a different error first).

use crate::dce::removable;
use runic_ir::traverse::{add_uses, for_each_body_mut, uses, Substitute, VisitorMut};
use runic_ir::*;
use std::collections::{HashMap, HashSet};

pub fn fuse(mut prog: Prog) -> Prog {
    let mut ns = std::mem::take(&mut prog.names);
    for f in &mut prog.funs {
        // Innermost bodies first, so a lambda is fused inside before it is composed.
        for_each_body_mut(&mut f.body, |b| while fuse_once(b, &mut ns) {});
    }
    prog.names = ns;
    prog
}

/// Whether a lambda's body cannot fail (only pure, infallible statements).
fn infallible(l: &Lambda) -> bool {
    l.body.stms.iter().all(|s| removable(&s.exp))
}

/// Fuse one producer into its consumer; false when nothing fuses.
fn fuse_once(b: &mut Body, ns: &mut NameSource) -> bool {
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
        let [c] = readers.as_slice() else { continue };
        let c = *c;
        if !(p + 1..c).all(|k| removable(&b.stms[k].exp)) {
            continue;
        }
        let producer_fails = !infallible(f);
        if let Some(fused) = fuse_pair(ns, w, f, arrs, &outs, &b.stms[c].exp, producer_fails) {
            let consumer = &mut b.stms[c];
            consumer.exp = fused;
            b.stms.remove(p);
            return true;
        }
    }
    false
}

/// The consumer with the producer map (`outs = map w f arrs`) merged in, if it qualifies.
fn fuse_pair(
    ns: &mut NameSource,
    w: &SubExp,
    f: &Lambda,
    prod_arrs: &[VName],
    outs: &[VName],
    consumer: &Exp,
    producer_fails: bool,
) -> Option<Exp> {
    let Exp::Soac(soac) = consumer else {
        return None;
    };
    let (cw, arrs) = match soac {
        Soac::Map { w, arrs, .. } | Soac::Reduce { w, arrs, .. } | Soac::Scan { w, arrs, .. } => {
            (w, arrs)
        }
        _ => return None,
    };
    if cw != w {
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
        if producer_fails && !infallible(l) {
            return None;
        }
    }
    if outs.iter().any(|o| inner.contains(o)) {
        return None;
    }
    // The element function of the consumer: its params (one per input array) and body.
    let (elem_params, elem_body, elem_ret): (Vec<Param>, Body, Vec<Type>) = match soac {
        Soac::Map { lam, .. } => (lam.params.clone(), lam.body.clone(), lam.ret.clone()),
        Soac::Reduce { pre: Some(p), .. } | Soac::Scan { pre: Some(p), .. } => {
            (p.params.clone(), p.body.clone(), p.ret.clone())
        }
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
            // No `pre`: the identity on the operator's element types.
            let tys: Vec<Type> = lam.params[neutral.len()..]
                .iter()
                .map(|q| q.ty.clone())
                .collect();
            if tys.len() != arrs.len() {
                return None;
            }
            let params: Vec<Param> = tys
                .iter()
                .map(|t| Param {
                    name: ns.fresh("elem"),
                    ty: t.clone(),
                })
                .collect();
            let result = params.iter().map(|q| SubExp::Var(q.name)).collect();
            (
                params,
                Body {
                    stms: vec![],
                    result,
                },
                tys,
            )
        }
        _ => return None,
    };
    if elem_params.len() != arrs.len() {
        return None;
    }
    // Compose: the producer's body, then the consumer's with the produced inputs replaced.
    let mut subst = HashMap::new();
    let mut params = f.params.clone();
    let mut new_arrs: Vec<VName> = prod_arrs.to_vec();
    for (q, a) in elem_params.iter().zip(arrs) {
        if let Some(j) = outs.iter().position(|o| o == a) {
            subst.insert(q.name, f.body.result[j].clone());
        } else {
            params.push(q.clone());
            new_arrs.push(*a);
        }
    }
    let mut stms = f.body.stms.clone();
    let mut rest = elem_body;
    Substitute(&subst).body(&mut rest);
    stms.extend(rest.stms);
    let composed = Lambda {
        id: runic_ir::LamId::fresh(),
        params,
        body: Body {
            stms,
            result: rest.result,
        },
        ret: elem_ret,
    };
    Some(Exp::Soac(match soac {
        Soac::Map { .. } => Soac::Map {
            w: w.clone(),
            lam: composed,
            arrs: vec![],
        },
        Soac::Reduce {
            lam,
            neutral,
            commutative,
            ..
        } => Soac::Reduce {
            w: w.clone(),
            arrs: vec![],
            pre: Some(composed),
            lam: lam.clone(),
            neutral: neutral.clone(),
            commutative: *commutative,
        },
        Soac::Scan { lam, neutral, .. } => Soac::Scan {
            w: w.clone(),
            arrs: vec![],
            pre: Some(composed),
            lam: lam.clone(),
            neutral: neutral.clone(),
        },
        _ => return None,
    }))
    .map(|e| with_arrs(e, new_arrs))
}

fn with_arrs(mut e: Exp, kept: Vec<VName>) -> Exp {
    if let Exp::Soac(Soac::Map { arrs, .. } | Soac::Reduce { arrs, .. } | Soac::Scan { arrs, .. }) =
        &mut e
    {
        *arrs = kept;
    }
    e
}
