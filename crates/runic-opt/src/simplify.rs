//! Copy propagation and constant folding: `let x = y` and `let x = 3` are substituted
//! into later uses, and scalar operations on constants are evaluated (unless they would
//! fail at run time, which must still happen at its place). Chains of `rearrange` become
//! one, and so do nested concatenations along one dimension. An elementwise sum with an
//! array of zeros (reverse mode adds each contribution to a fresh zero adjoint) is the
//! other operand.

use runic_ir::traverse::{walk_stm_mut, VisitorMut};
use runic_ir::*;
use std::collections::HashMap;

pub fn copy_prop(mut prog: Prog) -> Prog {
    for f in &mut prog.funs {
        CopyProp::default().body(&mut f.body);
    }
    prog
}

/// Whether `s` is the constant zero of its type.
pub(crate) fn is_zero_const(s: &SubExp) -> bool {
    matches!(s, SubExp::Const(c) if *c == Prim::zero(c.ty()))
}

/// Whether `e` is `replicate shape 0` (an array of zeros).
pub(crate) fn replicates_zero(e: &Exp) -> bool {
    matches!(e, Exp::Basic(BasicOp::Replicate(_, s)) if is_zero_const(s))
}

fn fold(op: &BasicOp) -> Option<SubExp> {
    match op {
        BasicOp::SubExp(s) => Some(s.clone()),
        BasicOp::BinOp(o, SubExp::Const(a), SubExp::Const(b)) => {
            runic_prim::binop(*o, *a, *b).ok().map(SubExp::Const)
        }
        BasicOp::BinOp(o, a, b) => integer_identity(*o, a, b),
        BasicOp::UnOp(o, SubExp::Const(a)) => Some(SubExp::Const(runic_prim::unop(*o, *a))),
        BasicOp::Convert(t, SubExp::Const(a)) => Some(SubExp::Const(runic_prim::convert(*a, *t))),
        _ => None,
    }
}

/// `x + 0`, `0 + x`, `x - 0`, `x * 1` and `1 * x` are `x` on integers (reverse mode's
/// index arithmetic leaves them: an adjoint at `[t, 0 + j * 1]`). Not on floats, where
/// `-0 + 0` is `0`.
fn integer_identity(o: BinOp, a: &SubExp, b: &SubExp) -> Option<SubExp> {
    let is = |s: &SubExp, k: fn(PrimType) -> Prim| matches!(s, SubExp::Const(c) if c.ty().is_int() && *c == k(c.ty()));
    match o {
        BinOp::Add | BinOp::Sub if is(b, Prim::zero) => Some(a.clone()),
        BinOp::Add if is(a, Prim::zero) => Some(b.clone()),
        BinOp::Mul if is(b, Prim::one) => Some(a.clone()),
        BinOp::Mul if is(a, Prim::one) => Some(b.clone()),
        _ => None,
    }
}

/// `concat (concat a b) c` along one dimension is `concat a b c`: the parts are copied
/// once into the result instead of into each partial concatenation (`[x] ++ ys ++ [z]`
/// copied `ys` twice). `defs` holds the concatenations bound so far whose parts are still
/// readable; the inner one stays for its other uses, if any.
fn flatten_concats(s: &mut Stm, defs: &mut HashMap<VName, (usize, Vec<VName>)>) {
    let Exp::Basic(BasicOp::Concat(d, parts)) = &mut s.exp else {
        return;
    };
    let flat: Vec<VName> = parts
        .iter()
        .flat_map(|v| match defs.get(v) {
            Some((inner, ps)) if inner == d => ps.clone(),
            _ => vec![*v],
        })
        .collect();
    *parts = flat;
    if let [p] = s.pat.as_slice() {
        defs.insert(p.name, (*d, parts.clone()));
    }
}

/// `rearrange p₂ (rearrange p₁ z)` is `rearrange (p₁∘p₂) z`, a copy of `z` when that is the
/// identity (as when a value's dimensions are moved and moved back).
/// (A rearrange makes a fresh array, so it may read through a copy.)
fn compose_rearranges(s: &mut Stm, defs: &mut HashMap<VName, (Vec<usize>, VName)>) {
    if let (Exp::Basic(BasicOp::Copy(z)), [p]) = (&s.exp, s.pat.as_slice()) {
        defs.insert(p.name, ((0..p.ty.rank()).collect(), *z));
        return;
    }
    let (Exp::Basic(BasicOp::Rearrange(p2, x)), [p]) = (&s.exp, s.pat.as_slice()) else {
        return;
    };
    let (perm, z) = match defs.get(x) {
        Some((p1, z)) if p1.len() == p2.len() => (p2.iter().map(|&k| p1[k]).collect(), *z),
        _ => (p2.clone(), *x),
    };
    if perm.iter().enumerate().all(|(i, &k)| i == k) {
        s.exp = Exp::Basic(BasicOp::Copy(z));
    } else {
        defs.insert(p.name, (perm.clone(), z));
        s.exp = Exp::Basic(BasicOp::Rearrange(perm, z));
    }
}

/// The arrays an expression may update in place (after it, they cannot be read).
pub(crate) fn consumed(e: &Exp) -> Vec<VName> {
    match e {
        Exp::Basic(BasicOp::Update(a, _, _)) => vec![*a],
        Exp::Soac(Soac::Scatter { dests, .. }) | Exp::Soac(Soac::Hist { dests, .. }) => {
            dests.clone()
        }
        Exp::Loop { params, .. } => params.iter().filter_map(|(_, i)| i.as_var()).collect(),
        Exp::WithAcc { inputs, .. } => inputs.iter().flat_map(|i| i.arrays.clone()).collect(),
        _ => Vec::new(),
    }
}

/// Each body is visited with the substitution of the bodies around it, which it extends
/// with its own copies and constants while its statements are rewritten; the extension is
/// forgotten when the body ends.
#[derive(Default)]
struct CopyProp {
    subst: HashMap<VName, SubExp>,
    /// Arrays known to hold only zeros, except in the rows at the listed constant indices
    /// (names are unique, so this is never forgotten).
    zeros: HashMap<VName, Vec<i64>>,
    /// The dimensions of the arrays bound so far, as their types give them.
    dims: HashMap<VName, Vec<SubExp>>,
}

impl CopyProp {
    /// `size(a, k)` is the `k`-th dimension of `a`'s type, which is in scope wherever `a`
    /// is (reverse mode sizes its adjoints so: a map over `iota (size adj 0)` does not
    /// fuse with the map that built `adj`).
    fn known_size(&self, e: &Exp) -> Option<SubExp> {
        let Exp::Basic(BasicOp::ArraySize(a, k)) = e else {
            return None;
        };
        self.dims.get(a)?.get(*k).cloned()
    }

    fn learn_dims(&mut self, s: &Stm) {
        for p in &s.pat {
            if let Type::Array { shape, .. } = &p.ty {
                let mut shape = shape.clone();
                shape.iter_mut().for_each(|d| self.subexp(d));
                self.dims.insert(p.name, shape);
            }
        }
    }

    /// Records `s`'s result when it is an array of zeros (`replicate … 0`, or a zero row of
    /// one) or one whose rows are zero but for some written at constant indices.
    fn learn_zeros(&mut self, s: &Stm) {
        let [p] = s.pat.as_slice() else {
            return;
        };
        let zero_row = |zs: &HashMap<VName, Vec<i64>>, a: &VName, is: &[DimIndex]| {
            let written = zs.get(a)?;
            let outer = match is.first() {
                Some(DimIndex::Fix(SubExp::Const(c))) => c.as_int(),
                _ => None,
            };
            match outer {
                Some(k) if !written.contains(&(k as i64)) => Some(()),
                _ if written.is_empty() => Some(()),
                _ => None,
            }
        };
        let known = match &s.exp {
            e if replicates_zero(e) => Some(vec![]),
            Exp::Basic(BasicOp::Replicate(_, SubExp::Var(r))) => {
                self.zeros.get(r).filter(|w| w.is_empty()).cloned()
            }
            Exp::Basic(BasicOp::Copy(a)) => self.zeros.get(a).cloned(),
            Exp::Basic(BasicOp::Index(a, is)) => zero_row(&self.zeros, a, is).map(|()| vec![]),
            Exp::Basic(BasicOp::Update(a, is, _)) => match (self.zeros.get(a), is.as_slice()) {
                (Some(w), [DimIndex::Fix(SubExp::Const(c))]) => c.as_int().map(|k| {
                    let mut w = w.clone();
                    w.push(k as i64);
                    w
                }),
                _ => None,
            },
            _ => None,
        };
        if let (Some(w), true) = (known, p.ty.rank() > 0) {
            self.zeros.insert(p.name, w);
        }
    }

    /// `map (+) zeros ys` (at any depth of nesting) is `ys` (up to the sign of a zero:
    /// `-0 + 0` is `+0`, which compares equal).
    fn drop_zero_add(&self, s: &mut Stm) {
        let Exp::Soac(Soac::Map { lam, arrs, .. }) = &s.exp else {
            return;
        };
        let ([a, b], [_]) = (arrs.as_slice(), s.pat.as_slice()) else {
            return;
        };
        if !is_add_nest(lam) {
            return;
        }
        let all_zero = |v: &VName| self.zeros.get(v).is_some_and(Vec::is_empty);
        let other = if all_zero(a) {
            *b
        } else if all_zero(b) {
            *a
        } else {
            return;
        };
        s.exp = Exp::Basic(BasicOp::SubExp(SubExp::Var(other)));
    }
}

/// `\x y -> x + y`, or `\x y -> map (\u v -> …) x y` of such a lambda: elementwise `+`.
fn is_add_nest(lam: &Lambda) -> bool {
    let [x, y] = lam.params.as_slice() else {
        return false;
    };
    let ([st], [SubExp::Var(r)]) = (lam.body.stms.as_slice(), lam.body.result.as_slice()) else {
        return false;
    };
    if st.pat.len() != 1 || st.pat[0].name != *r {
        return false;
    }
    match &st.exp {
        Exp::Basic(BasicOp::BinOp(BinOp::Add, SubExp::Var(a), SubExp::Var(c))) => {
            matches!(x.ty, Type::Prim(_))
                && ((*a, *c) == (x.name, y.name) || (*a, *c) == (y.name, x.name))
        }
        Exp::Soac(Soac::Map {
            lam: inner, arrs, ..
        }) => arrs.as_slice() == [x.name, y.name] && is_add_nest(inner),
        _ => false,
    }
}

impl VisitorMut for CopyProp {
    fn subexp(&mut self, s: &mut SubExp) {
        if let SubExp::Var(v) = s {
            if let Some(r) = self.subst.get(v) {
                *s = r.clone();
            }
        }
    }

    /// Where only a variable is allowed, a variable bound to a constant stays.
    fn use_var(&mut self, v: &mut VName) {
        if let Some(SubExp::Var(r)) = self.subst.get(v) {
            *v = *r;
        }
    }

    fn body(&mut self, b: &mut Body) {
        let outer = self.subst.clone();
        let mut out = Vec::new();
        let mut rearranged: HashMap<VName, (Vec<usize>, VName)> = HashMap::new();
        let mut concatenated: HashMap<VName, (usize, Vec<VName>)> = HashMap::new();
        for mut s in std::mem::take(&mut b.stms) {
            // Substitutes into the statement and simplifies its nested bodies.
            walk_stm_mut(self, &mut s);
            self.drop_zero_add(&mut s);
            self.learn_zeros(&s);
            compose_rearranges(&mut s, &mut rearranged);
            flatten_concats(&mut s, &mut concatenated);
            for v in consumed(&s.exp) {
                rearranged.retain(|_, (_, z)| *z != v);
                concatenated.retain(|_, (_, parts)| !parts.contains(&v));
            }
            // What a nested body consumes is not tracked: forget everything.
            if matches!(
                s.exp,
                Exp::If { .. } | Exp::Loop { .. } | Exp::Apply { .. } | Exp::WithAcc { .. }
            ) {
                rearranged.clear();
                concatenated.clear();
            }
            self.learn_dims(&s);
            if let (Some(d), [p]) = (self.known_size(&s.exp), s.pat.as_slice()) {
                self.subst.insert(p.name, d);
                continue;
            }
            if let (Exp::Basic(op), [p]) = (&s.exp, s.pat.as_slice()) {
                if let Some(r) = fold(op) {
                    // Arrays are only renamed (never replaced by constants).
                    if matches!(p.ty, Type::Prim(_)) || matches!(r, SubExp::Var(_)) {
                        self.subst.insert(p.name, r);
                        continue;
                    }
                }
            }
            out.push(s);
        }
        b.stms = out;
        b.result.iter_mut().for_each(|r| self.subexp(r));
        self.subst = outer;
    }
}

/// Broadcast scalars as free variables: an elementwise map (a lambda of scalar operations
/// only) over `replicate w x` — of its own width `w`, `x` a scalar — binds its parameter to
/// `x` inside the lambda instead of reading an array of copies. Reverse mode broadcasts
/// adjoints so; a kernel would fill the copies element by element and read them back in
/// SIMD lanes (a store-forwarding stall per group of lanes: k-means' gradient ran 1.8×
/// slower than with the scalar). Late in the pipeline, once the accumulator optimisation
/// and the contractions have matched their forms (an earlier run hides both from them).
pub fn inline_replicates(mut prog: Prog) -> Prog {
    for f in &mut prog.funs {
        let mut r = Replicates {
            arrays: HashMap::new(),
            eq: crate::checks::prologue_equalities(f, &prog.names),
        };
        r.body(&mut f.body);
    }
    prog
}

/// Arrays `replicate [n] x` (names are unique): their length and element (a scalar, or a
/// row); and the widths the function's prologue equates.
struct Replicates {
    arrays: HashMap<VName, (SubExp, SubExp)>,
    eq: crate::checks::Equal,
}

impl VisitorMut for Replicates {
    fn stm(&mut self, s: &mut Stm) {
        if let (Exp::Basic(BasicOp::Replicate(shape, x)), [p]) = (&s.exp, s.pat.as_slice()) {
            if let [n] = shape.as_slice() {
                self.arrays.insert(p.name, (n.clone(), x.clone()));
            }
        }
        // Rows first, so that the maps nested in the lambda see the replicated rows.
        self.inline_rows(s);
        walk_stm_mut(self, s);
        self.inline_scalars(s);
    }
}

impl Replicates {
    /// `x` when `a` is `replicate w x` of the map's width `w`.
    fn element_of(&self, a: &VName, w: &SubExp) -> Option<SubExp> {
        match self.arrays.get(a) {
            Some((n, x)) if self.eq.same(n, w) => Some(x.clone()),
            _ => None,
        }
    }

    /// A map over `replicate w row` reads `row` itself, free in its lambda.
    fn inline_rows(&self, s: &mut Stm) {
        let Exp::Soac(Soac::Map { w, lam, arrs }) = &mut s.exp else {
            return;
        };
        let rows: Vec<Option<SubExp>> = arrs
            .iter()
            .zip(&lam.params)
            .map(|(a, p)| {
                let x = self.element_of(a, w).filter(|x| x.as_var().is_some());
                x.filter(|_| p.ty.rank() > 0)
            })
            .collect();
        let subst: HashMap<VName, SubExp> = drop_inputs(lam, arrs, rows)
            .into_iter()
            .map(|(p, x)| (p.name, x))
            .collect();
        runic_ir::traverse::walk_body_mut(
            &mut runic_ir::traverse::Substitute(&subst),
            &mut lam.body,
        );
    }

    /// An elementwise map over `replicate w x` of a scalar binds its parameter to `x`.
    fn inline_scalars(&self, s: &mut Stm) {
        let src = s.src.clone();
        let Exp::Soac(Soac::Map { w, lam, arrs }) = &mut s.exp else {
            return;
        };
        // (Accumulator updates included: the adjoint written straight into an accumulator.)
        let scalar_ops = lam.body.stms.iter().all(|t| {
            matches!(t.exp, Exp::Basic(_))
                && t.pat
                    .iter()
                    .all(|p| matches!(p.ty, Type::Prim(_) | Type::Acc { .. }))
        });
        if !scalar_ops {
            return;
        }
        let scalars: Vec<Option<SubExp>> = arrs
            .iter()
            .zip(&lam.params)
            .map(|(a, p)| self.element_of(a, w).filter(|_| p.ty.rank() == 0))
            .collect();
        let mut binds: Vec<Stm> = drop_inputs(lam, arrs, scalars)
            .into_iter()
            .map(|(p, x)| Stm {
                pat: vec![p],
                exp: Exp::Basic(BasicOp::SubExp(x)),
                src: src.clone(),
            })
            .collect();
        binds.append(&mut lam.body.stms);
        lam.body.stms = binds;
    }
}

/// Removes from a map the inputs given a value in `values` (and their parameters), and
/// returns those parameters with their values; nothing when no input or every input has one
/// (a map keeps one input: its width is checked against it).
fn drop_inputs(
    lam: &mut Lambda,
    arrs: &mut Vec<VName>,
    values: Vec<Option<SubExp>>,
) -> Vec<(Param, SubExp)> {
    if values.iter().all(Option::is_none) || values.iter().all(Option::is_some) {
        return Vec::new();
    }
    let mut dropped = Vec::new();
    let (mut params, mut inputs) = (Vec::new(), Vec::new());
    for ((p, a), v) in lam.params.drain(..).zip(arrs.drain(..)).zip(values) {
        match v {
            Some(x) => dropped.push((p, x)),
            None => {
                params.push(p);
                inputs.push(a);
            }
        }
    }
    lam.params = params;
    *arrs = inputs;
    dropped
}
