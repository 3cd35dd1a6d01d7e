//! Copy propagation and constant folding: `let x = y` and `let x = 3` are substituted
//! into later uses, and scalar operations on constants are evaluated (unless they would
//! fail at run time, which must still happen at its place). Chains of `rearrange` become
//! one.

use runic_ir::traverse::{walk_stm_mut, VisitorMut};
use runic_ir::*;
use std::collections::HashMap;

pub fn copy_prop(mut prog: Prog) -> Prog {
    for f in &mut prog.funs {
        CopyProp::default().body(&mut f.body);
    }
    prog
}

fn fold(op: &BasicOp) -> Option<SubExp> {
    match op {
        BasicOp::SubExp(s) => Some(s.clone()),
        BasicOp::BinOp(o, SubExp::Const(a), SubExp::Const(b)) => {
            runic_prim::binop(*o, *a, *b).ok().map(SubExp::Const)
        }
        BasicOp::UnOp(o, SubExp::Const(a)) => Some(SubExp::Const(runic_prim::unop(*o, *a))),
        BasicOp::Convert(t, SubExp::Const(a)) => Some(SubExp::Const(runic_prim::convert(*a, *t))),
        _ => None,
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
fn consumed(e: &Exp) -> Vec<VName> {
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
        for mut s in std::mem::take(&mut b.stms) {
            // Substitutes into the statement and simplifies its nested bodies.
            walk_stm_mut(self, &mut s);
            compose_rearranges(&mut s, &mut rearranged);
            for v in consumed(&s.exp) {
                rearranged.retain(|_, (_, z)| *z != v);
            }
            // What a nested body consumes is not tracked: forget everything.
            if matches!(
                s.exp,
                Exp::If { .. } | Exp::Loop { .. } | Exp::Apply { .. } | Exp::WithAcc { .. }
            ) {
                rearranged.clear();
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
