//! `with_acc` (from reverse mode, differentiated again: forward over reverse).
//!
//! Each accumulator gets a tangent accumulator over the tangents of its arrays, which
//! combines with the tangent half of the accumulator's operator; that must be linear (the
//! `+` reverse mode uses), so the tangent of a combination is the combination of the
//! tangents. Every `update_acc` also writes its values' tangents to the tangent
//! accumulator. In vector mode the tangent arrays end with the seed dimension, which is
//! the last index of the tangent accumulator, and each update becomes a `map` over the
//! seeds ([`Diff::update_seeded_acc`]). Work and span: the primal's, times a small
//! constant (times `k` for the updates' work in vector mode).

use super::vector::seeds_outermost;
use super::{Diff, R};
use crate::error::AdError;
use runic_ir::*;

impl Diff {
    /// `with_acc`: each accumulator gets a tangent accumulator over the tangents of its
    /// arrays, combining with the tangent half of its operator, which must be linear (the
    /// `+` that reverse mode uses): then the tangent of a combination is the combination of
    /// the tangents. Results: the arrays, their tangents, the other results and theirs.
    pub(super) fn with_acc(
        &mut self,
        b: &mut Builder,
        pat: Vec<Param>,
        inputs: Vec<AccInput>,
        lam: Lambda,
    ) -> R<()> {
        let tracked =
            inputs.iter().any(|i| self.any_tracked(&i.arrays)) || self.reads_tracked(&lam);
        if !tracked {
            b.let_pat(pat, Exp::WithAcc { inputs, lam });
            return Ok(());
        }
        let n_acc = inputs.len();
        let n_arrays: usize = inputs.iter().map(|i| i.arrays.len()).sum();
        // In vector mode, the tangent arrays end with the seed dimension, which becomes the
        // last index of the accumulator; its operator stays scalar.
        let mut dinputs = Vec::new();
        for inp in &inputs {
            let arrays = self.tans_of(b, &inp.arrays)?;
            let seeds = self.seeds.take();
            let op = match &inp.op {
                None => Ok(None),
                Some((l, ne)) => self.split_operator(b, l).and_then(|top| {
                    let top = top.ok_or_else(|| {
                        AdError::unsupported("jvp of an accumulator with a non-linear operator")
                    })?;
                    Ok(Some((top, self.zeros_of(b, ne)?)))
                }),
            };
            self.seeds = seeds;
            let shape = inp
                .shape
                .iter()
                .cloned()
                .chain(self.seeds.clone())
                .collect();
            dinputs.push(AccInput {
                shape,
                arrays,
                op: op?,
            });
        }
        // \accs daccs -> body, differentiated
        let mut dparams = Vec::new();
        for p in &lam.params {
            let dp = self.tangent_param(b, p);
            self.tans.insert(p.name, SubExp::Var(dp.name));
            dparams.push(dp);
        }
        let (mut body, dres) = self.sub_body(b, lam.body)?;
        let daccs = dres[..n_acc]
            .iter()
            .map(|t| {
                t.clone()
                    .ok_or_else(|| AdError::internal("an accumulator result lost its tangent"))
            })
            .collect::<R<Vec<_>>>()?;
        let active: Vec<bool> = dres[n_acc..].iter().map(Option::is_some).collect();
        // Results: accs, daccs, others, the others' tangents.
        let others = [vec![false; n_acc], active.clone()].concat();
        self.finish_tangents(b, &mut body, &dres, &others)?;
        body.result.splice(n_acc..n_acc, daccs);
        let (acc_ret, other_ret) = lam.ret.split_at(n_acc);
        let ret = acc_ret
            .iter()
            .cloned()
            .chain(acc_ret.iter().map(|t| self.tan_ty(t)))
            .chain(self.with_tangent_types(other_ret.to_vec(), &active))
            .collect();
        let params = lam.params.into_iter().chain(dparams).collect();
        let lam = Lambda::new(params, body, ret);
        let (arr_pat, other_pat) = pat.split_at(n_arrays);
        let mut pat2 = self.with_tangents(b, arr_pat.to_vec(), &vec![true; n_arrays]);
        pat2.extend(self.with_tangents(b, other_pat.to_vec(), &active));
        let inputs = inputs.into_iter().chain(dinputs).collect();
        b.let_pat(pat2, Exp::WithAcc { inputs, lam });
        Ok(())
    }

    /// A write of tangents `dvals` at `is` to a tangent accumulator made in vector mode (its
    /// last index is the seed): one write per seed,
    /// `map (\s dv.. -> update_acc dacc (is ++ [s]) dv..) (iota k) (dvals, seeds outermost)`.
    /// Accumulators are references, so the result is the same accumulator.
    pub(super) fn update_seeded_acc(
        &mut self,
        b: &mut Builder,
        dacc: VName,
        is: Vec<SubExp>,
        dvals: Vec<SubExp>,
    ) -> R<SubExp> {
        let Some(k) = self.seeds.clone() else {
            return Err(AdError::internal(
                "a seeded accumulator outside vector mode",
            ));
        };
        let range = BasicOp::Range {
            start: SubExp::i64(0),
            second: None,
            end: k.clone(),
            kind: RangeKind::UpToExclusive,
            elem: PrimType::I64,
        };
        // A range's size is computed at run time: its type is given.
        let iota_ty = Type::Prim(PrimType::I64).array_of(k.clone());
        let iota = b.bind1("seed", Exp::Basic(range), iota_ty.clone());
        let mut dvs = Vec::new();
        for dv in &dvals {
            let v = dv
                .as_var()
                .ok_or_else(|| AdError::internal("a vector tangent is a constant"))?;
            dvs.push(match b.type_of(dv)?.rank() {
                0 | 1 => v,
                rank => {
                    let perm = seeds_outermost(rank - 1);
                    b.let_exp("dseeds", Exp::Basic(BasicOp::Rearrange(perm, v)))?[0]
                }
            });
        }
        // One seed's index and values: rows of the arrays.
        let seed = b.param("seed", iota_ty.row());
        let mut params = vec![seed.clone()];
        for dv in &dvs {
            params.push(b.param("dv", b.type_of(&SubExp::Var(*dv))?.row()));
        }
        let is = is.into_iter().chain([SubExp::Var(seed.name)]).collect();
        let vals = params[1..].iter().map(|p| SubExp::Var(p.name)).collect();
        let lam = b.lam_over(params, |b| {
            b.let_basic(
                "dacc",
                BasicOp::UpdateAcc {
                    acc: dacc,
                    is,
                    vals,
                },
            )?;
            Ok::<_, AdError>(vec![])
        })?;
        b.map("dacc", k, lam, [iota].into_iter().chain(dvs).collect())?;
        Ok(SubExp::Var(dacc))
    }
}
