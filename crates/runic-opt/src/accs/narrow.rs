//! Accumulators updated at a few fixed indices of their outer dimension. `w[g]`, one
//! matrix of a stack read by every iteration of a map (an LSTM's gate `g` written with
//! its index), gets from reverse mode the adjoint
//!
//! ```text
//! with_acc (dest, +) \acc -> map (\x… -> …; acc[g, j, k] += V[j, k] for all j, k) xs
//! ```
//!
//! whose updates all fall in row `g` of `dest`. That is
//!
//! ```text
//! let part = with_acc (zeros, +) \acc -> map (\x… -> …; acc[j, k] += V[j, k]) xs
//! in if 0 <= g < n then dest with [g] = dest[g] + part else dest
//! ```
//!
//! an accumulator of the matrix alone, which the accumulator optimisation turns into a
//! sum over the iterations (a matrix product) as it does for a free matrix; out of bounds
//! the accumulator would have ignored the updates. Several matrices of the stack read in
//! one map (`w[0]` … `w[3]`, the four gates) give updates at several fixed rows: one row
//! accumulator each, added into its row one after another (so equal rows add up, as
//! they did). The narrowed form is kept only when that rewrite applies to it.

use super::{is_scalar_add, rewrite_with_acc};
use runic_ir::traverse::{binders, uses, walk_stm, walk_stm_mut, Visitor, VisitorMut};
use runic_ir::typing::{TResult, TypeError};
use runic_ir::*;
use std::collections::{HashMap, HashSet};

/// The statements replacing the `with_acc` `s` when some of its accumulators are updated
/// at a few fixed outer indices each and the accumulator optimisation rewrites the
/// `with_acc` narrowed to those rows: one accumulator per row, starting from zeros, and
/// each row's sum added into its destination's row where that row is in bounds.
pub(super) fn narrowed(
    s: &Stm,
    ranges: &HashMap<VName, SubExp>,
    zeros: &HashSet<VName>,
    ns: &mut NameSource,
) -> Option<Vec<Stm>> {
    let Exp::WithAcc { inputs, lam } = &s.exp else {
        return None;
    };
    let inside = binders(lam);
    let rows: Vec<Vec<SubExp>> = (lam.params.iter().zip(inputs))
        .map(|(p, inp)| fixed_rows(lam, p, inp, &inside))
        .collect();
    if rows.iter().all(Vec::is_empty) {
        return None;
    }
    let mut b = Builder::new(ns);
    let mut narrow_inputs = Vec::new();
    let mut narrow_zeros = zeros.clone();
    // The narrowed statement's pattern, and the values of `s`'s results.
    let mut pat = Vec::new();
    let mut result = Vec::new();
    // Per narrowed array: its destination, its (row, sum) pairs, its place in `result`.
    let mut writes = Vec::new();
    let mut at = 0;
    for (inp, gs) in inputs.iter().zip(&rows) {
        let n = inp.arrays.len();
        if gs.is_empty() {
            narrow_inputs.push(inp.clone());
            for p in &s.pat[at..at + n] {
                result.push(SubExp::Var(p.name));
                pat.push(p.clone());
            }
            at += n;
            continue;
        }
        let mut sums = vec![Vec::new(); n];
        for g in gs {
            let mut arrays = Vec::new();
            for (k, &dest) in inp.arrays.iter().enumerate() {
                let Type::Array { elem, shape } = b.names.type_of(dest)?.clone() else {
                    return None;
                };
                let row_ty = Type::Array {
                    elem,
                    shape: shape[1..].to_vec(),
                };
                let part = b.zeros(&row_ty).ok()?.as_var()?;
                narrow_zeros.insert(part);
                arrays.push(part);
                let sum = b.param("row_sum", row_ty);
                sums[k].push((g.clone(), sum.name));
                pat.push(sum);
            }
            narrow_inputs.push(AccInput {
                shape: inp.shape[1..].to_vec(),
                arrays,
                op: inp.op.clone(),
            });
        }
        for (k, (&dest, sums)) in inp.arrays.iter().zip(sums).enumerate() {
            writes.push((dest, sums, result.len(), s.pat[at + k].ty.clone()));
            result.push(SubExp::Var(dest));
        }
        at += n;
    }
    for p in &s.pat[at..] {
        result.push(SubExp::Var(p.name));
        pat.push(p.clone());
    }
    let mut narrow_lam = lam.clone();
    split_accs(&mut b, &mut narrow_lam, &rows)?;
    let narrow = Stm {
        pat,
        exp: Exp::WithAcc {
            inputs: narrow_inputs,
            lam: narrow_lam,
        },
        src: s.src.clone(),
    };
    b.names.record_types(&narrow);
    for st in rewrite_with_acc(&narrow, ranges, &narrow_zeros, b.names)? {
        b.add(st);
    }
    for (dest, sums, k, ty) in writes {
        let mut whole = dest;
        for (g, sum) in sums {
            whole = add_row(&mut b, whole, &ty, g, sum).ok()?;
        }
        result[k] = SubExp::Var(whole);
    }
    // `s`'s names for the results.
    for (p, r) in s.pat.iter().zip(result) {
        if r != SubExp::Var(p.name) {
            b.let_pat(vec![p.clone()], Exp::Basic(BasicOp::SubExp(r)));
        }
    }
    let mut out = b.take_stms();
    for st in &mut out {
        st.src = s.src.clone();
    }
    Some(out)
}

/// `whole` (of type `ty`) with `sum` added into its row `g` when `g` is in bounds, as an
/// accumulator adds updates (and ignores those out of bounds).
fn add_row(b: &mut Builder, whole: VName, ty: &Type, g: SubExp, sum: VName) -> TResult<VName> {
    let Type::Array { shape, .. } = ty else {
        return Err(TypeError("a row of a non-array".into()));
    };
    let low = b.binop(BinOp::Le, SubExp::i64(0), g.clone(), PrimType::I64);
    let high = b.binop(BinOp::Lt, g.clone(), shape[0].clone(), PrimType::I64);
    let inside = b.binop(BinOp::LogAnd, low, high, PrimType::Bool);
    let r = b.let_if(
        "with_row",
        inside,
        |b| {
            let old = b.index1(whole, g.clone())?;
            let new = b.add_values(&ty.row(), old, SubExp::Var(sum))?;
            let upd = BasicOp::Update(whole, vec![DimIndex::Fix(g.clone())], new);
            Ok::<_, TypeError>(vec![b.basic("with_row", upd, ty.clone())])
        },
        |_| Ok(vec![SubExp::Var(whole)]),
    )?;
    r[0].as_var()
        .ok_or_else(|| TypeError("a row update".into()))
}

/// The outer indices at which the updates of the accumulator `acc` of `lam` fall, when
/// they are a few operands bound outside the lambda (none otherwise): an accumulator of
/// scalar `+`, used by nothing but those updates (whose results nothing reads) and
/// returned, and updates of single elements of an array of rank two or more.
fn fixed_rows(lam: &Lambda, acc: &Param, inp: &AccInput, inside: &HashSet<VName>) -> Vec<SubExp> {
    struct Scan {
        acc: VName,
        reads: usize,
        rows: Vec<SubExp>,
        full: bool,
        results: Vec<VName>,
    }
    impl Visitor for Scan {
        fn use_var(&mut self, v: VName) {
            self.reads += usize::from(v == self.acc);
        }
        fn stm(&mut self, s: &Stm) {
            if let Exp::Basic(BasicOp::UpdateAcc { acc, is, .. }) = &s.exp {
                if *acc == self.acc {
                    self.full &= is.len() >= 2;
                    self.rows.extend(is.first().cloned());
                    self.results.extend(s.pat.iter().map(|p| p.name));
                }
            }
            walk_stm(self, s)
        }
    }
    let Type::Acc { shape, .. } = &acc.ty else {
        return Vec::new();
    };
    let mut scan = Scan {
        acc: acc.name,
        reads: 0,
        rows: Vec::new(),
        full: true,
        results: Vec::new(),
    };
    scan.body(&lam.body);
    let mut rows: Vec<SubExp> = Vec::new();
    for g in &scan.rows {
        if !rows.contains(g) {
            rows.push(g.clone());
        }
    }
    let returned = lam
        .body
        .result
        .iter()
        .filter(|r| r.as_var() == Some(acc.name))
        .count();
    let read = uses(&lam.body);
    let outside = |g: &SubExp| match g {
        SubExp::Var(v) => !inside.contains(v),
        SubExp::Const(_) => true,
    };
    // Rows are added into the destination afterwards: only for `+`.
    let fits = scan.full
        && inp.op.as_ref().is_some_and(is_scalar_add)
        && (1..=MAX_ROWS).contains(&rows.len())
        && rows.iter().all(outside)
        && shape.len() >= 2
        && inp.shape.len() == shape.len()
        && returned == 1
        && scan.reads == scan.rows.len() + 1
        && scan.results.iter().all(|v| !read.contains(v));
    if fits {
        rows
    } else {
        Vec::new()
    }
}

/// The most fixed rows one accumulator is narrowed to (an LSTM's four gates; each row is
/// a product of its own).
const MAX_ROWS: usize = 8;

/// Splits each accumulator parameter of `lam` with fixed `rows` into one per row, of the
/// row's type: its updates go to the parameter of their row without the outer index, and
/// the lambda returns the row accumulators where it returned the whole one.
fn split_accs(b: &mut Builder, lam: &mut Lambda, rows: &[Vec<SubExp>]) -> Option<()> {
    let mut params = Vec::new();
    let mut ret = Vec::new();
    let mut routes: HashMap<VName, Vec<(SubExp, VName, Type)>> = HashMap::new();
    for ((p, r), gs) in lam.params.iter().zip(&lam.ret).zip(rows) {
        if gs.is_empty() {
            params.push(p.clone());
            ret.push(r.clone());
            continue;
        }
        let Type::Acc { shape, elems } = &p.ty else {
            return None;
        };
        let row_ty = Type::Acc {
            shape: shape[1..].to_vec(),
            elems: elems.clone(),
        };
        let mut route = Vec::new();
        for g in gs {
            let q = b.param("acc_row", row_ty.clone());
            route.push((g.clone(), q.name, row_ty.clone()));
            params.push(q);
            ret.push(row_ty.clone());
        }
        routes.insert(p.name, route);
    }
    ret.extend(lam.ret[lam.params.len()..].iter().cloned());
    let mut router = Route {
        routes: &routes,
        lost: false,
    };
    router.body(&mut lam.body);
    if router.lost {
        return None;
    }
    lam.body.result = (lam.body.result.iter())
        .flat_map(|r| match r.as_var().and_then(|v| routes.get(&v)) {
            Some(route) => route.iter().map(|(_, q, _)| SubExp::Var(*q)).collect(),
            None => vec![r.clone()],
        })
        .collect();
    lam.params = params;
    lam.ret = ret;
    Some(())
}

/// Sends each update of a split accumulator to the accumulator of its row (`lost` if an
/// update's row is none of them).
struct Route<'a> {
    routes: &'a HashMap<VName, Vec<(SubExp, VName, Type)>>,
    lost: bool,
}

impl VisitorMut for Route<'_> {
    fn stm(&mut self, s: &mut Stm) {
        if let Exp::Basic(BasicOp::UpdateAcc { acc, is, .. }) = &mut s.exp {
            if let Some(route) = self.routes.get(acc) {
                match route.iter().find(|(g, _, _)| Some(g) == is.first()) {
                    Some((_, q, ty)) => {
                        *acc = *q;
                        is.remove(0);
                        for p in &mut s.pat {
                            p.ty = ty.clone();
                        }
                    }
                    None => self.lost = true,
                }
            }
        }
        walk_stm_mut(self, s)
    }
}
