//! Shape checks that the function's own assertions already prove, and the map inputs they
//! alone read. An entry point asserts the equalities between its parameters' sizes
//! (`assert(d_196 == d_205, "entry point arguments have invalid sizes.")`), and a
//! top-level `shape_check(x, [n, m])` that passed equates `x`'s dimensions with `n` and
//! `m` for the rest of the function. A later check whose array's type has dimensions equal
//! to the wanted ones under those equalities cannot fail, and goes. Such checks sit in the
//! innermost lambdas of kernels (a row of `U` checked against `[h]` once per element, the
//! row passed to the kernel for that check alone): without them, and without the inputs
//! nothing else reads, the kernel is a flat map that runs in SIMD lanes.

use runic_ir::traverse::{for_each_body_mut, uses, walk_stm_mut, VisitorMut};
use runic_ir::*;
use std::collections::HashMap;

/// Drops the checks of `prog` that its top-level assertions prove, then the map inputs no
/// lambda reads any more.
pub fn drop_proven_checks(mut prog: Prog) -> Prog {
    prog.record_types();
    for f in &mut prog.funs {
        let mut eq = Equal::default();
        // The comparisons that assertions may name.
        let mut defs: HashMap<VName, (SubExp, SubExp)> = HashMap::new();
        for s in &mut f.body.stms {
            let mut proven = Proven {
                eq: &eq,
                names: &prog.names,
            };
            proven.stm(s);
            learn(&mut eq, &mut defs, s, &prog.names);
        }
        // A proven check whose result nothing reads goes altogether (the matchers of
        // contractions look past checks, not past constants).
        let read = uses(&f.body);
        for_each_body_mut(&mut f.body, |b| {
            b.stms
                .retain(|s| !(is_true(&s.exp) && s.pat.iter().all(|p| !read.contains(&p.name))))
        });
        for_each_body_mut(&mut f.body, |b| {
            b.stms.iter_mut().for_each(drop_unread_inputs)
        });
    }
    prog
}

/// A map's inputs whose lambda parameters nothing reads are not passed.
pub(crate) fn drop_unread_inputs(s: &mut Stm) {
    if let Exp::Soac(Soac::Map { lam, arrs, .. }) = &mut s.exp {
        if drop_unread_params(lam, arrs) {
            // New code: a fresh identity (executors cache compiled lambdas by it).
            lam.id = LamId::fresh();
        }
    }
}

/// Drops the parameters `lam` does not read, with their input arrays in `arrs`, keeping
/// one so the SOAC still has an input. Whether any went.
pub(crate) fn drop_unread_params(lam: &mut Lambda, arrs: &mut Vec<VName>) -> bool {
    let read = uses(&lam.body);
    let keep: Vec<bool> = lam.params.iter().map(|p| read.contains(&p.name)).collect();
    if !keep.iter().any(|k| *k) || keep.iter().all(|k| *k) {
        return false;
    }
    let mut k = keep.iter();
    lam.params.retain(|_| *k.next().unwrap_or(&true));
    let mut k = keep.iter();
    arrs.retain(|_| *k.next().unwrap_or(&true));
    true
}

/// The constant `true`, which a proven check became.
fn is_true(e: &Exp) -> bool {
    matches!(
        e,
        Exp::Basic(BasicOp::SubExp(SubExp::Const(runic_prim::Prim::Bool(true))))
    )
}

/// Sizes known equal: a union-find over size variables.
#[derive(Default)]
pub(crate) struct Equal(HashMap<VName, VName>);

impl Equal {
    fn root(&self, mut v: VName) -> VName {
        while let Some(&p) = self.0.get(&v) {
            v = p;
        }
        v
    }
    fn union(&mut self, a: VName, b: VName) {
        let (ra, rb) = (self.root(a), self.root(b));
        if ra != rb {
            self.0.insert(ra, rb);
        }
    }
    pub(crate) fn same(&self, a: &SubExp, b: &SubExp) -> bool {
        match (a, b) {
            (SubExp::Var(x), SubExp::Var(y)) => self.root(*x) == self.root(*y),
            _ => a == b,
        }
    }
}

/// The size equalities `f`'s prologue asserts (an entry point's checks of its arguments'
/// sizes, before any other statement): they hold everywhere in the function after it.
pub(crate) fn prologue_equalities(f: &FunDef, names: &NameSource) -> Equal {
    let mut eq = Equal::default();
    let mut defs = HashMap::new();
    for s in &f.body.stms {
        let prologue = matches!(
            s.exp,
            Exp::Basic(
                BasicOp::ArraySize(..) | BasicOp::BinOp(BinOp::Eq, ..) | BasicOp::Assert { .. }
            )
        );
        if !prologue {
            break;
        }
        learn(&mut eq, &mut defs, s, names);
    }
    eq
}

/// What a top-level statement proves for the statements after it.
fn learn(eq: &mut Equal, defs: &mut HashMap<VName, (SubExp, SubExp)>, s: &Stm, names: &NameSource) {
    match (&s.exp, s.pat.as_slice()) {
        (Exp::Basic(BasicOp::BinOp(BinOp::Eq, a, b)), [p]) => {
            defs.insert(p.name, (a.clone(), b.clone()));
        }
        (
            Exp::Basic(BasicOp::Assert {
                cond: SubExp::Var(c),
                ..
            }),
            _,
        ) => {
            if let Some((SubExp::Var(a), SubExp::Var(b))) = defs.get(c) {
                eq.union(*a, *b);
            }
        }
        (Exp::Basic(BasicOp::ShapeCheck { arr, shape, .. }), _) => {
            if let Some(Type::Array { shape: have, .. }) = names.type_of(*arr) {
                for (h, w) in have.iter().zip(shape) {
                    if let (SubExp::Var(h), SubExp::Var(w)) = (h, w) {
                        eq.union(*h, *w);
                    }
                }
            }
        }
        _ => {}
    }
}

/// Replaces proven checks by `true` in a statement and everything nested in it.
struct Proven<'e> {
    eq: &'e Equal,
    names: &'e NameSource,
}

impl Proven<'_> {
    fn check(&self, s: &mut Stm) {
        let Exp::Basic(BasicOp::ShapeCheck { arr, shape, .. }) = &s.exp else {
            return;
        };
        let Some(Type::Array { shape: have, .. }) = self.names.type_of(*arr) else {
            return;
        };
        let proven =
            have.len() == shape.len() && have.iter().zip(shape).all(|(h, w)| self.eq.same(h, w));
        if proven {
            s.exp = Exp::Basic(BasicOp::SubExp(SubExp::Const(runic_prim::Prim::Bool(true))));
        }
    }
}

impl VisitorMut for Proven<'_> {
    fn stm(&mut self, s: &mut Stm) {
        walk_stm_mut(self, s);
        self.check(s);
    }
}
