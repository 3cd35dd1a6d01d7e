//! Accumulators updated at one fixed index of their outer dimension. `w[g]`, one matrix
//! of a stack read by every iteration of a map (an LSTM's gate `g` written with its
//! index), gets from reverse mode the adjoint
//!
//! ```text
//! with_acc (dest, +) \acc -> map (\x… -> …; acc[g, j, k] += V[j, k] for all j, k) xs
//! ```
//!
//! whose updates all fall in row `g` of `dest`. When `g` is in bounds that is
//!
//! ```text
//! let part = with_acc (dest[g], +) \acc -> map (\x… -> …; acc[j, k] += V[j, k]) xs
//! in dest with [g] = part
//! ```
//!
//! an accumulator of the matrix alone, which the accumulator optimisation turns into a
//! sum over the iterations (a matrix product) as it does for a free matrix. The narrowed
//! form is kept only when that rewrite applies to it. It runs under an `if` on the bounds
//! of `g`: out of bounds, the original ignores every update of that accumulator, so the
//! other branch runs the `with_acc` as it was.

use super::rewrite_with_acc;
use runic_ir::traverse::{
    binders, uses, walk_body_mut, walk_stm, walk_stm_mut, Renamer, Visitor, VisitorMut,
};
use runic_ir::*;
use std::collections::{HashMap, HashSet};

/// The statements replacing the `with_acc` `s` when some of its accumulators are updated
/// at one fixed outer index each and the accumulator optimisation rewrites the
/// `with_acc` narrowed to those rows.
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
    let rows: Vec<Option<SubExp>> = (lam.params.iter().zip(inputs))
        .map(|(p, inp)| fixed_row(lam, p, inp, &inside))
        .collect();
    if rows.iter().all(Option::is_none) {
        return None;
    }
    let mut b = Builder::new(ns);
    // In bounds: every fixed row.
    let mut in_bounds = SubExp::Const(Prim::Bool(true));
    for (row, inp) in rows.iter().zip(inputs) {
        let Some(g) = row else { continue };
        let low = b.binop(BinOp::Le, SubExp::i64(0), g.clone(), PrimType::I64);
        let high = b.binop(BinOp::Lt, g.clone(), inp.shape[0].clone(), PrimType::I64);
        let both = b.binop(BinOp::LogAnd, low, high, PrimType::Bool);
        in_bounds = b.binop(BinOp::LogAnd, in_bounds, both, PrimType::Bool);
    }
    let then_body = narrowed_branch(&mut b, s, &rows, ranges, zeros)?;
    // The other branch: the statement as it was, under fresh names, without the updates
    // out of bounds (which the accumulators ignore; left in, the next round of the pass
    // would narrow this copy again). Simplification drops what is left of it when nothing
    // else was computed.
    let mut original = s.clone();
    walk_stm_mut(&mut Renamer::new(b.names), &mut original);
    if let Exp::WithAcc { lam, .. } = &mut original.exp {
        for (p, row) in lam.params.iter().zip(&rows) {
            if row.is_some() {
                DropUpdates(p.name).body(&mut lam.body);
            }
        }
    }
    let else_body = Body {
        result: original.pat.iter().map(|p| SubExp::Var(p.name)).collect(),
        stms: vec![original],
    };
    b.let_pat(
        s.pat.clone(),
        Exp::If {
            cond: in_bounds,
            then_body,
            else_body,
            ret: s.pat.iter().map(|p| p.ty.clone()).collect(),
        },
    );
    let mut out = b.take_stms();
    for st in &mut out {
        st.src = s.src.clone();
    }
    Some(out)
}

/// The branch that runs `s` narrowed to its fixed `rows`: the rows of the destinations
/// (fresh zeros where a destination is zeros), the rewritten `with_acc` over them, and each
/// destination with its row replaced by the sum.
fn narrowed_branch(
    b: &mut Builder,
    s: &Stm,
    rows: &[Option<SubExp>],
    ranges: &HashMap<VName, SubExp>,
    zeros: &HashSet<VName>,
) -> Option<Body> {
    let Exp::WithAcc { inputs, lam } = &s.exp else {
        return None;
    };
    let mut stms = Vec::new();
    let mut narrow_inputs = Vec::new();
    let mut narrow_zeros = zeros.clone();
    let mut pat = Vec::new();
    let mut at = 0;
    // (destination, row, the sum's name) for each narrowed array.
    let mut replaced = Vec::new();
    for (inp, row) in inputs.iter().zip(rows) {
        let n = inp.arrays.len();
        let Some(g) = row else {
            narrow_inputs.push(inp.clone());
            pat.extend(
                s.pat[at..at + n]
                    .iter()
                    .map(|p| b.param("acc_res", p.ty.clone())),
            );
            at += n;
            continue;
        };
        let mut arrays = Vec::new();
        for &dest in &inp.arrays {
            let ty = b.names.type_of(dest)?.clone();
            let Type::Array { elem, shape } = ty else {
                return None;
            };
            let row_ty = Type::Array {
                elem,
                shape: shape[1..].to_vec(),
            };
            let part = b.param("row", row_ty.clone());
            let exp = if zeros.contains(&dest) {
                narrow_zeros.insert(part.name);
                BasicOp::Replicate(shape[1..].to_vec(), SubExp::Const(Prim::float(elem, 0.0)))
            } else {
                let view = b.param("row_of", row_ty.clone());
                stms.push(index_stm(view.clone(), dest, g.clone()));
                BasicOp::Copy(view.name)
            };
            stms.push(Stm {
                pat: vec![part.clone()],
                exp: Exp::Basic(exp),
                src: s.src.clone(),
            });
            arrays.push(part.name);
            let sum = b.param("row_sum", row_ty);
            replaced.push((dest, g.clone(), sum.name, s.pat[at].ty.clone()));
            pat.push(sum);
            at += 1;
        }
        narrow_inputs.push(AccInput {
            shape: inp.shape[1..].to_vec(),
            arrays,
            op: inp.op.clone(),
        });
    }
    pat.extend(s.pat[at..].iter().map(|p| b.param("acc_res", p.ty.clone())));
    let mut narrow_lam = lam.clone();
    let Lambda {
        params, body, ret, ..
    } = &mut narrow_lam;
    for ((p, r), row) in params.iter_mut().zip(ret).zip(rows) {
        if row.is_some() {
            drop_outer_index(body, p);
            *r = p.ty.clone();
        }
    }
    let narrow = Stm {
        pat: pat.clone(),
        exp: Exp::WithAcc {
            inputs: narrow_inputs,
            lam: narrow_lam,
        },
        src: s.src.clone(),
    };
    b.names.record_types(&narrow);
    stms.extend(rewrite_with_acc(&narrow, ranges, &narrow_zeros, b.names)?);
    // The destinations with their rows replaced, in the order of the statement's results.
    let mut result: Vec<SubExp> = pat.iter().map(|p| SubExp::Var(p.name)).collect();
    for (dest, g, sum, ty) in replaced {
        let whole = b.param("with_row", ty);
        stms.push(Stm {
            pat: vec![whole.clone()],
            exp: Exp::Basic(BasicOp::Update(
                dest,
                vec![DimIndex::Fix(g)],
                SubExp::Var(sum),
            )),
            src: s.src.clone(),
        });
        let k = pat.iter().position(|p| p.name == sum)?;
        result[k] = SubExp::Var(whole.name);
    }
    Some(Body { stms, result })
}

/// Removes the updates of one accumulator (whose results nothing reads).
struct DropUpdates(VName);

impl VisitorMut for DropUpdates {
    fn body(&mut self, b: &mut Body) {
        b.stms.retain(
            |s| !matches!(&s.exp, Exp::Basic(BasicOp::UpdateAcc { acc, .. }) if *acc == self.0),
        );
        walk_body_mut(self, b)
    }
}

fn index_stm(p: Param, arr: VName, g: SubExp) -> Stm {
    Stm {
        pat: vec![p],
        exp: Exp::Basic(BasicOp::Index(arr, vec![DimIndex::Fix(g)])),
        src: SrcInfo::default(),
    }
}

/// The outer index at which every update of the accumulator `acc` of `lam` falls, if
/// there is one: the same operand in every update, bound outside the lambda, the
/// accumulator used by nothing but those updates (whose results nothing reads) and
/// returned, and updates of single elements of an array of rank two or more.
fn fixed_row(lam: &Lambda, acc: &Param, inp: &AccInput, inside: &HashSet<VName>) -> Option<SubExp> {
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
        return None;
    };
    let mut scan = Scan {
        acc: acc.name,
        reads: 0,
        rows: Vec::new(),
        full: true,
        results: Vec::new(),
    };
    scan.body(&lam.body);
    let g = scan.rows.first()?.clone();
    let returned = lam
        .body
        .result
        .iter()
        .filter(|r| r.as_var() == Some(acc.name))
        .count();
    let read = uses(&lam.body);
    let outside = match &g {
        SubExp::Var(v) => !inside.contains(v),
        SubExp::Const(_) => true,
    };
    (scan.full
        && outside
        && shape.len() >= 2
        && inp.shape.len() == shape.len()
        && scan.rows.iter().all(|r| *r == g)
        && returned == 1
        && scan.reads == scan.rows.len() + 1
        && scan.results.iter().all(|v| !read.contains(v)))
    .then_some(g)
}

/// Narrows the accumulator parameter `acc` to its rows: its type loses the outer
/// dimension, and so do its updates' indices (all at the fixed row) and their results.
fn drop_outer_index(body: &mut Body, acc: &mut Param) {
    let Type::Acc { shape, elems } = &acc.ty else {
        return;
    };
    let row_ty = Type::Acc {
        shape: shape[1..].to_vec(),
        elems: elems.clone(),
    };
    struct Narrow(VName, Type);
    impl VisitorMut for Narrow {
        fn stm(&mut self, s: &mut Stm) {
            if let Exp::Basic(BasicOp::UpdateAcc { acc, is, .. }) = &mut s.exp {
                if *acc == self.0 {
                    is.remove(0);
                    for p in &mut s.pat {
                        p.ty = self.1.clone();
                    }
                }
            }
            walk_stm_mut(self, s)
        }
    }
    Narrow(acc.name, row_ty.clone()).body(body);
    acc.ty = row_ty;
}
