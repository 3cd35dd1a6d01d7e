//! `with_acc` and `update_acc`: reverse mode of the code reverse mode builds (`vjp` of a
//! function whose inner `vjp` adjoins free arrays through accumulators).
//!
//! `ys = with_acc (xs, +) (\acc -> … update_acc acc i v …)` leaves each destination plus
//! every contribution added at its index. So `x̄s += ȳs`, and each contribution gets
//! `v̄ += ȳs[i]` (zero where `i` is out of bounds: that write was ignored). The return
//! sweep re-executes the lambda's body (renamed) without its updates — there is no
//! accumulator to write to, and an update has no other result — then runs the body's
//! return sweep, seeding its other results; every update, at any depth of maps, loops and
//! branches, reads the read-only `ȳs` at its index. Only `+` (the operator reverse mode
//! builds) is handled; any other operator, or none (last write wins), is an unsupported
//! error. Work: the lambda's primal and return sweep plus one guarded read per update;
//! span: the lambda's.

use super::{Rev, R};
use crate::error::AdError;
use runic_ir::traverse::{uses, walk_body_mut, VisitorMut};
use runic_ir::*;
use std::collections::HashMap;

pub fn reverse(
    rev: &mut Rev,
    b: &mut Builder,
    pat: &[Param],
    inputs: Vec<AccInput>,
    lam: Lambda,
) -> R<()> {
    for inp in &inputs {
        if !is_plus(inp) {
            return Err(AdError::unsupported(
                "vjp of an accumulator whose operator is not + (only the + of reverse mode)",
            ));
        }
    }
    let n_arrays: usize = inputs.iter().map(|i| i.arrays.len()).sum();
    if pat.len() < n_arrays || lam.params.len() != inputs.len() {
        return Err(AdError::internal(
            "with_acc pattern does not match its inputs",
        ));
    }
    let copy = b.renamed(&lam);
    // The adjoint of each accumulator: those of its destination arrays (None: all zero).
    let mut dests = Vec::new();
    let mut k = 0;
    for (inp, acc) in inputs.iter().zip(&copy.params) {
        let outs = &pat[k..k + inp.arrays.len()];
        k += inp.arrays.len();
        let cots = if outs.iter().any(|p| rev.adjs.contains_key(&p.name)) {
            let mut cs = Vec::new();
            for p in outs {
                let a = rev.adj(b, p.name)?;
                cs.push(a.as_var().ok_or_else(|| {
                    AdError::internal("the adjoint of an accumulated array is a scalar")
                })?);
            }
            Some(cs)
        } else {
            None
        };
        rev.acc_cots.insert(acc.name, cots.clone());
        dests.push((inp.arrays.clone(), cots));
    }
    let mut seeds: Vec<Option<SubExp>> = vec![None; inputs.len()];
    seeds.extend(
        pat[n_arrays..]
            .iter()
            .map(|p| rev.adjs.get(&p.name).cloned()),
    );
    rev.sweep(b, copy.body, seeds)?;
    // `x̄s += ȳs` once every read of `ȳs` is emitted (the sum may then update it in place).
    for (arrays, cots) in dests {
        for (x, y) in arrays.iter().zip(cots.into_iter().flatten()) {
            rev.add_adj(b, &SubExp::Var(*x), SubExp::Var(y))?;
        }
    }
    for acc in &copy.params {
        rev.acc_cots.remove(&acc.name);
    }
    Ok(())
}

/// `update_acc acc is vals` (inside a `with_acc` being differentiated): `v̄ += ȳ[is]` for
/// each value and its destination's adjoint `ȳ`.
pub fn update_reverse(
    rev: &mut Rev,
    b: &mut Builder,
    acc: VName,
    is: Vec<SubExp>,
    vals: Vec<SubExp>,
) -> R<()> {
    let Some(cots) = rev.acc_cots.get(&acc).cloned() else {
        return Err(AdError::internal(
            "an accumulator update outside the with_acc being differentiated",
        ));
    };
    let Some(cots) = cots else { return Ok(()) };
    for (v, y) in vals.iter().zip(cots) {
        if !rev.is_active(v) {
            continue;
        }
        let vt = b.type_of(v)?;
        let c = read_in_bounds(b, y, &is, &vt)?;
        rev.add_adj(b, v, c)?;
    }
    Ok(())
}

/// `if is in bounds of y then y[is] else 0`, of type `vt` (an element or a row).
fn read_in_bounds(b: &mut Builder, y: VName, is: &[SubExp], vt: &Type) -> R<SubExp> {
    let mut inside: Option<SubExp> = None;
    for (d, i) in is.iter().enumerate() {
        let w = b.array_size(y, d);
        let lo = b.op2(BinOp::Le, SubExp::i64(0), i.clone())?;
        let hi = b.op2(BinOp::Lt, i.clone(), w)?;
        let both = b.op2(BinOp::LogAnd, lo, hi)?;
        inside = Some(match inside {
            None => both,
            Some(prev) => b.op2(BinOp::LogAnd, prev, both)?,
        });
    }
    let idx: Vec<DimIndex> = is.iter().cloned().map(DimIndex::Fix).collect();
    let read = BasicOp::Index(y, idx);
    let Some(inside) = inside else {
        return Ok(b.basic("adj", read, vt.clone()));
    };
    let r = b.let_if(
        "adj",
        inside,
        |b| -> R<_> { Ok(vec![b.basic("adj", read, vt.clone())]) },
        |b| -> R<_> { Ok(vec![b.zeros(vt)?]) },
    )?;
    Ok(r[0].clone())
}

/// Whether an accumulator combines with `+` on each of its arrays: an operator
/// `\x1..xk y1..yk -> (x1 + y1, .., xk + yk)`.
fn is_plus(inp: &AccInput) -> bool {
    let Some((lam, _)) = &inp.op else {
        return false;
    };
    let k = inp.arrays.len();
    if lam.params.len() != 2 * k || lam.body.result.len() != k {
        return false;
    }
    let defs: HashMap<VName, &Exp> = lam
        .body
        .stms
        .iter()
        .filter_map(|s| match s.pat.as_slice() {
            [p] => Some((p.name, &s.exp)),
            _ => None,
        })
        .collect();
    (0..k).all(|j| {
        let (x, y) = (&lam.params[j], &lam.params[k + j]);
        let Some(r) = lam.body.result[j].as_var() else {
            return false;
        };
        match defs.get(&r) {
            Some(Exp::Basic(BasicOp::BinOp(BinOp::Add, a, c))) => {
                let (xv, yv) = (SubExp::Var(x.name), SubExp::Var(y.name));
                (*a == xv && *c == yv) || (*a == yv && *c == xv)
            }
            _ => false,
        }
    })
}

/// `s` without the updates of the accumulators being differentiated, at any depth (for the
/// re-executed primal of the return sweep); `None` when `s` is such an update. The result
/// of an update names the same accumulator. Any other use of such an accumulator (passed
/// through a loop or returned by a map) is unsupported.
pub fn strip_updates(rev: &mut Rev, mut s: Stm) -> R<Option<Stm>> {
    let mut strip = Strip {
        accs: &mut rev.acc_cots,
    };
    if strip.drop(&s) {
        return Ok(None);
    }
    strip.stm(&mut s);
    if uses(&s).iter().any(|v| rev.acc_cots.contains_key(v)) {
        return Err(AdError::unsupported(
            "vjp of an accumulator used other than by update_acc",
        ));
    }
    Ok(Some(s))
}

struct Strip<'a> {
    accs: &'a mut HashMap<VName, Option<Vec<VName>>>,
}

impl Strip<'_> {
    /// Whether `s` updates an accumulator being differentiated (recording its result as
    /// the same accumulator).
    fn drop(&mut self, s: &Stm) -> bool {
        let Exp::Basic(BasicOp::UpdateAcc { acc, .. }) = &s.exp else {
            return false;
        };
        let Some(cots) = self.accs.get(acc).cloned() else {
            return false;
        };
        for p in &s.pat {
            self.accs.insert(p.name, cots.clone());
        }
        true
    }
}

impl VisitorMut for Strip<'_> {
    fn body(&mut self, b: &mut Body) {
        let stms = std::mem::take(&mut b.stms);
        b.stms = stms.into_iter().filter(|s| !self.drop(s)).collect();
        walk_body_mut(self, b)
    }
}
