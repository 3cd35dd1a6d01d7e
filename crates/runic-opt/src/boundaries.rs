//! Boundaries split off a map's interior: a map over `iota w` (beside other inputs, which
//! are sliced likewise) whose body ends in a branch on a condition of the index, one side
//! of which reads arrays at offsets from the index (`a[i - 1]`, `a[i + k]`: a stencil) and
//! the other does not (its boundary), is split into three maps over the ranges where the
//! boundary holds and where it does not:
//!
//! ```text
//! map (\i -> … if i == 0 || i == w-1 then t else e) (iota w)
//!   ⇒  concat (map (\i -> … if … then t else e) (0 ..< lo))
//!             (map (\i -> … e) (lo ..< hi))
//!             (map (\i -> … if … then t else e) (hi ..< w))
//! ```
//!
//! With the stencil in the `else` branch, the condition is a disjunction (`||`, or its
//! short-circuit `if`) of comparisons of `i` with values from outside the map (`i < k`,
//! `i >= w - k`, `i == 0`, `i == w - 1`, …) and of conditions that do not depend on `i`;
//! with it in the `then` branch (`if i > 0 && i < w - 1 then …`), a conjunction, whose
//! negation is such a disjunction. The bounds are computed before the maps, at run time:
//! the boundary holds on `0..lo` and `hi..w` and nowhere in between. An `i == k` that is
//! at neither end, or a condition independent of `i` that puts every element on the
//! boundary, leaves them all to the first map (the original map's results, more slowly).
//! The interior's map no longer branches, so `stencil-rows` takes its reads as slices and
//! it runs in SIMD lanes (a three-point average with its ends copied, 2^20 `f32`s: 2.46 →
//! 0.80 ms; docs/PERFORMANCE.md, session 26).
//!
//! The ends still run the original body, so every element computes what it did and fails
//! where it did; the maps run in index order, so the first failure is the same one.

use runic_ir::traverse::{
    any_exp, binders, iota_width, walk_stm, walk_stm_mut, Substitute, Visitor,
};
use runic_ir::*;
use std::collections::{HashMap, HashSet};

pub fn split_boundaries(prog: Prog) -> Prog {
    crate::rewrite_bodies(prog, rewrite_body)
}

/// Splits the maps among the statements of `body` and of the branches and loops in it.
fn rewrite_body(body: &mut Body, ns: &mut NameSource) {
    let mut iotas: HashMap<VName, SubExp> = HashMap::new();
    let mut out = Vec::with_capacity(body.stms.len());
    for mut s in std::mem::take(&mut body.stms) {
        crate::rewrite_nested_bodies(&mut s, ns, &mut rewrite_body);
        if let (Some(w), [p]) = (iota_width(&s.exp), s.pat.as_slice()) {
            iotas.insert(p.name, w);
        }
        match split(&s, &iotas, ns) {
            Some(stms) => out.extend(stms),
            None => out.push(s),
        }
    }
    body.stms = out;
}

/// How `i` compares with a value from outside the map: the condition holds on a prefix
/// (`i < v`, `i <= v`), on a suffix (`i > v`, `i >= v`), at one point (`i == v`) or at all
/// but one.
#[derive(Clone, Copy)]
enum Side {
    Below,
    AtMost,
    Above,
    AtLeast,
    At,
    /// `i != v`: everywhere but a point, never a boundary.
    NotAt,
}

impl Side {
    /// Where `i` is when the comparison does not hold.
    fn negated(self) -> Side {
        match self {
            Side::Below => Side::AtLeast,
            Side::AtLeast => Side::Below,
            Side::AtMost => Side::Above,
            Side::Above => Side::AtMost,
            Side::At => Side::NotAt,
            Side::NotAt => Side::At,
        }
    }
}

/// The disjunction a boundary is: comparisons of the index, and conditions independent of
/// it; with the statements of the lambda that compute their operands.
#[derive(Default)]
struct Cond {
    atoms: Vec<(Side, SubExp)>,
    /// Terms independent of the index, each negated or not.
    uniform: Vec<(SubExp, bool)>,
    /// Scalar statements of the lambda that do not depend on the index, in order.
    copies: Vec<Stm>,
}

/// The statements that replace map `s`, split at its boundaries, if it is such a map.
fn split(s: &Stm, iotas: &HashMap<VName, SubExp>, ns: &mut NameSource) -> Option<Vec<Stm>> {
    let Exp::Soac(Soac::Map { w, lam, arrs }) = &s.exp else {
        return None;
    };
    // The index: the parameter whose input is `iota w`; the other inputs are sliced at the
    // same bounds as the index's range.
    let at = arrs.iter().position(|a| iotas.get(a) == Some(w))?;
    let i = &lam.params[at];
    if i.ty != Type::Prim(PrimType::I64) {
        return None;
    }
    let (last, before) = lam.body.stms.split_last()?;
    let Exp::If {
        cond: SubExp::Var(c),
        then_body,
        else_body,
        ..
    } = &last.exp
    else {
        return None;
    };
    let branch_results: Vec<SubExp> = last.pat.iter().map(|p| SubExp::Var(p.name)).collect();
    let prim_results = lam.ret.iter().all(|t| matches!(t, Type::Prim(_)));
    if lam.body.result != branch_results || !prim_results {
        return None;
    }
    // The interior is the branch that reads at offsets from the index; the condition
    // (`else`) or its negation (`then`) is the boundary.
    let interior_is_then = match (
        reads_at_offsets(then_body, i.name),
        reads_at_offsets(else_body, i.name),
    ) {
        (false, true) => false,
        (true, false) => true,
        _ => return None,
    };
    let inside = binders(&lam.body);
    let mut scope: HashMap<VName, &Stm> = HashMap::new();
    for st in before {
        for p in &st.pat {
            scope.insert(p.name, st);
        }
    }
    let mut cond = Cond::default();
    let walk = Walk {
        index: i.name,
        inside: &inside,
    };
    walk.boundary(*c, interior_is_then, &scope, &mut cond)?;

    let mut b = Builder::new(ns);
    b.src = s.src.clone();
    let (lo, hi) = bounds(&mut b, w, &cond);
    let range = |b: &mut Builder, start: SubExp, end: SubExp| {
        let len = b.sub_i64(end.clone(), start.clone());
        let op = BasicOp::Range {
            start,
            second: None,
            end,
            kind: RangeKind::UpToExclusive,
            elem: PrimType::I64,
        };
        let ty = Type::Prim(PrimType::I64).array_of(len.clone());
        (len, b.bind1("range", Exp::Basic(op), ty))
    };
    let interior = interior(b.renamed(lam), interior_is_then);
    let parts = [
        (SubExp::i64(0), lo.clone(), b.renamed(lam)),
        (lo, hi.clone(), interior),
        (hi, w.clone(), b.renamed(lam)),
    ];
    let mut outs: Vec<Vec<VName>> = vec![Vec::new(); lam.ret.len()];
    for (start, end, l) in parts {
        let (len, is) = range(&mut b, start.clone(), end.clone());
        let mut inputs = Vec::with_capacity(arrs.len());
        for (k, a) in arrs.iter().enumerate() {
            inputs.push(match k == at {
                true => is,
                false => rows(&mut b, *a, &start, &end, &len)?,
            });
        }
        let tys = lam.ret.iter().map(|t| t.array_of(len.clone())).collect();
        let rs = b.bind(
            Exp::Soac(Soac::Map {
                w: len,
                lam: l,
                arrs: inputs,
            }),
            tys,
        );
        for (o, r) in outs.iter_mut().zip(rs) {
            o.push(r);
        }
    }
    for (p, parts) in s.pat.iter().zip(outs) {
        b.let_pat(vec![p.clone()], Exp::Basic(BasicOp::Concat(0, parts)));
    }
    Some(b.take_stms())
}

/// `a[start : end]`, `len` rows (a view of them).
fn rows(b: &mut Builder, a: VName, start: &SubExp, end: &SubExp, len: &SubExp) -> Option<VName> {
    let Ok(Type::Array { elem, mut shape }) = b.type_of(&SubExp::Var(a)) else {
        return None;
    };
    *shape.first_mut()? = len.clone();
    let v = b.fresh("rows");
    let src = b.src.clone();
    b.add(crate::stencils::slice_stm(
        v,
        Type::Array { elem, shape },
        a,
        start,
        end,
        &src,
    ));
    Some(v)
}

/// `lam` with its final branch replaced by its interior branch (`then` or `else`).
fn interior(mut lam: Lambda, then: bool) -> Lambda {
    let Some(Stm {
        exp: Exp::If {
            then_body,
            else_body,
            ..
        },
        ..
    }) = lam.body.stms.pop()
    else {
        return lam;
    };
    let body = if then { then_body } else { else_body };
    lam.body.stms.extend(body.stms);
    lam.body.result = body.result;
    lam
}

/// Whether `body` reads an array at the index plus or minus something (`a[i - 1]`): what a
/// boundary condition guards. (Without such a read, splitting would only add the
/// concatenation's copy.)
fn reads_at_offsets(body: &Body, i: VName) -> bool {
    /// The variables bound to `i ± x` or `x ± i`, at any depth.
    struct Offsets {
        i: SubExp,
        names: HashSet<VName>,
    }
    impl Visitor for Offsets {
        fn stm(&mut self, s: &Stm) {
            if let (Exp::Basic(BasicOp::BinOp(BinOp::Add | BinOp::Sub, a, b)), [p]) =
                (&s.exp, s.pat.as_slice())
            {
                if *a == self.i || *b == self.i {
                    self.names.insert(p.name);
                }
            }
            walk_stm(self, s)
        }
    }
    let mut offsets = Offsets {
        i: SubExp::Var(i),
        names: HashSet::new(),
    };
    offsets.body(body);
    let at_offset =
        |d: &DimIndex| matches!(d, DimIndex::Fix(SubExp::Var(v)) if offsets.names.contains(v));
    any_exp(
        body,
        |e| matches!(e, Exp::Basic(BasicOp::Index(_, idx)) if idx.iter().any(at_offset)),
    )
}

/// The lambda a condition is read from: its index parameter and what it binds.
struct Walk<'a> {
    index: VName,
    inside: &'a HashSet<VName>,
}

impl Walk<'_> {
    /// Adds to `cond` the terms of the boundary that condition `v` (bound in `scope`)
    /// describes: `v` itself, a disjunction, or with `negated`, the negation of `v`, a
    /// conjunction. `None` if a term is neither a comparison of the index with an
    /// invariant nor invariant.
    fn boundary(
        &self,
        v: VName,
        negated: bool,
        scope: &HashMap<VName, &Stm>,
        cond: &mut Cond,
    ) -> Option<()> {
        let Some(&s) = scope.get(&v) else {
            // From outside the lambda: independent of the index.
            return self.uniform(v, negated, scope, cond);
        };
        // The connective whose terms the boundary's disjunction collects: `||`, or `&&`
        // under the negation (`!(a && b)` is `!a || !b`).
        let (connective, short_circuit) = if negated {
            (BinOp::LogAnd, false)
        } else {
            (BinOp::LogOr, true)
        };
        match &s.exp {
            Exp::Basic(BasicOp::BinOp(op, SubExp::Var(a), SubExp::Var(b))) if *op == connective => {
                self.boundary(*a, negated, scope, cond)?;
                self.boundary(*b, negated, scope, cond)
            }
            // `a || b` as the front end writes it: `if a then true else b`; `a && b` is
            // `if a then b else false`.
            Exp::If {
                cond: SubExp::Var(a),
                then_body,
                else_body,
                ..
            } if s.pat.len() == 1 => {
                let (constant, rest) = if short_circuit {
                    (then_body, else_body)
                } else {
                    (else_body, then_body)
                };
                let is_constant = constant.stms.is_empty()
                    && constant.result == [SubExp::Const(Prim::Bool(short_circuit))];
                let [SubExp::Var(b)] = rest.result.as_slice() else {
                    return None;
                };
                if !is_constant {
                    return None;
                }
                self.boundary(*a, negated, scope, cond)?;
                let mut inner = scope.clone();
                for st in &rest.stms {
                    for p in &st.pat {
                        inner.insert(p.name, st);
                    }
                }
                self.boundary(*b, negated, &inner, cond)
            }
            Exp::Basic(BasicOp::BinOp(op, x, y)) if self.is_index(x) || self.is_index(y) => {
                let (other, flipped) = if self.is_index(x) {
                    (y, false)
                } else {
                    (x, true)
                };
                let mut side = side(*op, flipped)?;
                if negated {
                    side = side.negated();
                }
                if matches!(side, Side::NotAt) {
                    return None;
                }
                self.invariant(other, scope, cond)?;
                cond.atoms.push((side, other.clone()));
                Some(())
            }
            _ => self.uniform(v, negated, scope, cond),
        }
    }

    /// A term independent of the index (`v`, or `!v` with `negated`).
    fn uniform(
        &self,
        v: VName,
        negated: bool,
        scope: &HashMap<VName, &Stm>,
        cond: &mut Cond,
    ) -> Option<()> {
        self.invariant(&SubExp::Var(v), scope, cond)?;
        cond.uniform.push((SubExp::Var(v), negated));
        Some(())
    }

    fn is_index(&self, s: &SubExp) -> bool {
        *s == SubExp::Var(self.index)
    }

    /// Whether `s` does not depend on the index and can be computed before the map:
    /// a constant, a variable from outside the lambda, or one the lambda computes from such
    /// by scalar operations that cannot fail (recorded in `cond.copies`).
    fn invariant(&self, s: &SubExp, scope: &HashMap<VName, &Stm>, cond: &mut Cond) -> Option<()> {
        let SubExp::Var(v) = s else { return Some(()) };
        if !self.inside.contains(v) {
            return (*v != self.index).then_some(());
        }
        let st = *scope.get(v)?;
        let Exp::Basic(op) = &st.exp else { return None };
        let operands: Vec<&SubExp> = match op {
            BasicOp::SubExp(a) | BasicOp::Convert(_, a) | BasicOp::UnOp(UnOp::Not, a) => vec![a],
            BasicOp::BinOp(o, a, b) if cannot_fail(*o) => vec![a, b],
            _ => return None,
        };
        for a in operands {
            self.invariant(a, scope, cond)?;
        }
        if !cond.copies.iter().any(|c| c.pat == st.pat) {
            cond.copies.push(st.clone());
        }
        Some(())
    }
}

/// Integer and logical operations that cannot fail at run time.
fn cannot_fail(op: BinOp) -> bool {
    use BinOp::*;
    matches!(
        op,
        Add | Sub | Mul | Min | Max | Eq | Neq | Lt | Le | Gt | Ge | LogAnd | LogOr
    )
}

/// What `i op v` (or `v op i`, `flipped`) says of `i`.
fn side(op: BinOp, flipped: bool) -> Option<Side> {
    use BinOp::*;
    Some(match (op, flipped) {
        (Eq, _) => Side::At,
        (Neq, _) => Side::NotAt,
        (Lt, false) | (Gt, true) => Side::Below,
        (Le, false) | (Ge, true) => Side::AtMost,
        (Gt, false) | (Lt, true) => Side::Above,
        (Ge, false) | (Le, true) => Side::AtLeast,
        _ => return None,
    })
}

/// `(lo, hi)`, `0 ≤ lo ≤ hi ≤ w`, such that the condition holds on `0..lo` and `hi..w`
/// and not in between; `(w, w)` when it cannot be said (a point inside, or a condition
/// independent of the index that holds). The lambda's invariant statements are copied
/// first, renamed.
fn bounds(b: &mut Builder, w: &SubExp, cond: &Cond) -> (SubExp, SubExp) {
    let i64t = PrimType::I64;
    let mut rename: HashMap<VName, SubExp> = HashMap::new();
    for st in &cond.copies {
        let mut st = st.clone();
        walk_stm_mut(&mut Substitute(&rename), &mut st);
        for p in &mut st.pat {
            let fresh = b.fresh("bound");
            rename.insert(p.name, SubExp::Var(fresh));
            p.name = fresh;
        }
        b.add(st);
    }
    let at = |s: &SubExp| match s {
        SubExp::Var(v) => rename.get(v).cloned().unwrap_or(s.clone()),
        _ => s.clone(),
    };
    let (mut lo, mut hi) = (SubExp::i64(0), w.clone());
    let mut whole = SubExp::Const(Prim::Bool(false));
    // `v + 1`, except that `i64::MAX + 1` stays `i64::MAX` (no index is above it).
    let next = |b: &mut Builder, v: SubExp| {
        let v1 = b.add_i64(v.clone(), SubExp::i64(1));
        b.binop(BinOp::Max, v, v1, i64t)
    };
    for (side, v) in &cond.atoms {
        let v = at(v);
        match side {
            Side::Below => lo = b.binop(BinOp::Max, lo, v, i64t),
            Side::AtMost => {
                let p = next(b, v);
                lo = b.binop(BinOp::Max, lo, p, i64t);
            }
            Side::Above => {
                let q = next(b, v);
                hi = b.binop(BinOp::Min, hi, q, i64t);
            }
            Side::AtLeast => hi = b.binop(BinOp::Min, hi, v, i64t),
            // (Not a boundary term; were one here, every element would be on it.)
            Side::NotAt => whole = SubExp::Const(Prim::Bool(true)),
            Side::At => {
                let first = b.binop(BinOp::Eq, v.clone(), SubExp::i64(0), i64t);
                let w1 = b.sub_i64(w.clone(), SubExp::i64(1));
                let last = b.binop(BinOp::Eq, v, w1, i64t);
                let p = b.convert(i64t, first.clone());
                lo = b.binop(BinOp::Max, lo, p, i64t);
                let q = b.convert(i64t, last.clone());
                let q = b.sub_i64(w.clone(), q);
                hi = b.binop(BinOp::Min, hi, q, i64t);
                let edge = b.binop(BinOp::LogOr, first, last, PrimType::Bool);
                let inside = b.unop(UnOp::Not, edge, PrimType::Bool);
                whole = b.binop(BinOp::LogOr, whole, inside, PrimType::Bool);
            }
        }
    }
    for (u, negated) in &cond.uniform {
        let mut u = at(u);
        if *negated {
            u = b.unop(UnOp::Not, u, PrimType::Bool);
        }
        whole = b.binop(BinOp::LogOr, whole, u, PrimType::Bool);
    }
    // lo, hi clamped to 0 ≤ lo ≤ hi ≤ w; both w when the whole range is boundary.
    let lo = b.binop(BinOp::Max, lo, SubExp::i64(0), i64t);
    let lo = b.binop(BinOp::Min, lo, w.clone(), i64t);
    let hi = b.binop(BinOp::Min, hi, w.clone(), i64t);
    let hi = b.binop(BinOp::Max, hi, lo.clone(), i64t);
    let all = b.convert(i64t, whole);
    let to_end = |b: &mut Builder, x: SubExp| {
        let gap = b.sub_i64(w.clone(), x.clone());
        let gap = b.mul_i64(all.clone(), gap);
        b.add_i64(x, gap)
    };
    let lo = to_end(b, lo);
    let hi = to_end(b, hi);
    (lo, hi)
}
