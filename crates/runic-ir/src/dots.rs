//! Dot products out of branches: in `if c then (let m = map2 (*) a b; let s = reduce (+) 0 m;
//! …) else …`, where `a`, `b` and their length come from outside the `if`, the dot product
//! is computed before the `if`. It cannot fail and costs what the branch would; computed
//! for every element of an enclosing map, the dot products form a matrix product (causal
//! attention's masked scores `if j <= i then q_i·k_j else -inf` are `Q·Kᵀ` under a mask),
//! and reverse mode's adjoints of them no longer sit in a branch, where accumulators
//! cannot become sums. Shared by reverse mode's normalisation and `runic-opt`'s hoisting.
//!
//! The price: a branch taken for few elements (a sparse mask) now computes its dot
//! product for all of them. As a matrix product that still costs less than the branch's
//! scalar loop unless the branch is taken for a few per cent of the elements; a dot
//! product that cannot become one (rows gathered by index) is pure extra work.

use crate::traverse::binders;
use crate::*;
use std::collections::HashSet;

/// Takes out of the branches of the `if` `s` the dot products they compute from values
/// bound outside it (the statements to put before `s`, in order).
pub fn take_dots_out_of_branches(s: &mut Stm, names: &NameSource) -> Vec<Stm> {
    let Exp::If {
        then_body,
        else_body,
        ..
    } = &mut s.exp
    else {
        return Vec::new();
    };
    let mut out = take_dots(then_body, names);
    out.extend(take_dots(else_body, names));
    out
}

fn take_dots(body: &mut Body, names: &NameSource) -> Vec<Stm> {
    let inside = binders(&*body);
    let mut out = Vec::new();
    let mut k = 0;
    while k + 1 < body.stms.len() {
        if is_dot(&body.stms[k], &body.stms[k + 1], &inside, names) {
            out.extend(body.stms.drain(k..k + 2));
        } else {
            k += 1;
        }
    }
    out
}

/// Whether `m; r` is `m = map2 (*) a b; r = reduce (+) 0 m` with `a`, `b` of the map's
/// length (so that the map cannot fail) and everything they read bound outside `inside`.
fn is_dot(m: &Stm, r: &Stm, inside: &HashSet<VName>, names: &NameSource) -> bool {
    let (Exp::Soac(Soac::Map { w, lam, arrs }), [mp]) = (&m.exp, m.pat.as_slice()) else {
        return false;
    };
    let (
        Exp::Soac(Soac::Reduce {
            w: w2,
            arrs: rarrs,
            pre: None,
            lam: plus,
            neutral,
            ..
        }),
        [_],
    ) = (&r.exp, r.pat.as_slice())
    else {
        return false;
    };
    let [a, b] = arrs.as_slice() else {
        return false;
    };
    let outside = |v: &VName| !inside.contains(v);
    let of_length_w = |v: &VName| {
        names
            .type_of(*v)
            .is_some_and(|t| matches!(t, Type::Array { shape, .. } if shape.first() == Some(w)))
    };
    let zero = matches!(neutral.as_slice(), [SubExp::Const(c)] if *c == Prim::zero(c.ty()));
    w == w2
        && *rarrs == [mp.name]
        && zero
        && outside(a)
        && outside(b)
        && w.as_var().is_none_or(|v| outside(&v))
        && of_length_w(a)
        && of_length_w(b)
        && matches!(lam.binop_either_order(), Some((BinOp::Mul, _)))
        && matches!(plus.binop_either_order(), Some((BinOp::Add, _)))
}
