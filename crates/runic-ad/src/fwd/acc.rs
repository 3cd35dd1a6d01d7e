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
        src: SrcInfo,
        inputs: Vec<AccInput>,
        lam: Lambda,
    ) -> R<()> {
        let tracked =
            inputs.iter().any(|i| self.any_tracked(&i.arrays)) || self.reads_tracked(&lam);
        if !tracked {
            b.add(Stm {
                pat,
                exp: Exp::WithAcc { inputs, lam },
                src,
            });
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
            dinputs.push(AccInput {
                shape: inp
                    .shape
                    .iter()
                    .cloned()
                    .chain(self.seeds.clone())
                    .collect(),
                arrays,
                op: op?,
            });
        }
        let mut dparams = Vec::new();
        for p in &lam.params {
            b.names.set_type(p.name, p.ty.clone());
            let dp = self.tangent_param(b, p);
            self.tans.insert(p.name, SubExp::Var(dp.name));
            dparams.push(dp);
        }
        let (mut stms, res, tres) = self.sub_body(b, lam.body)?;
        let dacc_res = tres[..n_acc]
            .iter()
            .map(|t| {
                t.clone()
                    .ok_or_else(|| AdError::internal("an accumulator result lost its tangent"))
            })
            .collect::<R<Vec<_>>>()?;
        let active: Vec<bool> = tres[n_acc..].iter().map(Option::is_some).collect();
        let extra = self.finish_tangents(b, &mut stms, &res[n_acc..], &tres[n_acc..], &active)?;
        let (acc_ret, other_ret) = lam.ret.split_at(n_acc);
        let ret = acc_ret
            .iter()
            .cloned()
            .chain(acc_ret.iter().map(|t| self.tan_ty(t)))
            .chain(other_ret.iter().cloned())
            .chain(
                other_ret
                    .iter()
                    .zip(&active)
                    .filter(|(_, a)| **a)
                    .map(|(t, _)| self.tan_ty(t)),
            )
            .collect();
        let result = res[..n_acc]
            .iter()
            .cloned()
            .chain(dacc_res)
            .chain(res[n_acc..].iter().cloned())
            .chain(extra)
            .collect();
        let mut params = lam.params;
        params.extend(dparams);
        let (arr_pat, other_pat) = pat.split_at(n_arrays);
        let mut pat2 = arr_pat.to_vec();
        pat2.extend(self.tangent_pat(b, arr_pat, &vec![true; n_arrays]));
        pat2.extend(other_pat.iter().cloned());
        pat2.extend(self.tangent_pat(b, other_pat, &active));
        let mut inputs2 = inputs;
        inputs2.extend(dinputs);
        b.add(Stm {
            pat: pat2,
            exp: Exp::WithAcc {
                inputs: inputs2,
                lam: Lambda {
                    id: runic_ir::LamId::fresh(),
                    params,
                    body: Body { stms, result },
                    ret,
                },
            },
            src,
        });
        Ok(())
    }

    /// A write of tangents `dvals` at `is` to a tangent accumulator made in vector mode (its
    /// last index is the seed): one write per seed. Accumulators are references, so the
    /// result is the same accumulator.
    pub(super) fn update_seeded_acc(
        &mut self,
        b: &mut Builder,
        dacc: VName,
        is: Vec<SubExp>,
        dvals: Vec<SubExp>,
    ) -> R<SubExp> {
        let acc_ty = b.type_of(&SubExp::Var(dacc))?;
        let Some(k) = self.seeds.clone() else {
            return Err(AdError::internal(
                "a seeded accumulator outside vector mode",
            ));
        };
        let i64t = PrimType::I64;
        let range = BasicOp::Range {
            start: SubExp::i64(0),
            second: None,
            end: k.clone(),
            kind: RangeKind::UpToExclusive,
            elem: i64t,
        };
        let iota = self.bind(
            b,
            "seed",
            Exp::Basic(range),
            Type::Prim(i64t).array_of(k.clone()),
        );
        // Seeds innermost → outermost, so that the map's rows are one seed's values.
        let mut arrs = vec![iota];
        for dv in &dvals {
            let v = dv
                .as_var()
                .ok_or_else(|| AdError::internal("a vector tangent is a constant"))?;
            let ty = b.type_of(dv)?;
            let rank = ty.rank();
            arrs.push(if rank <= 1 {
                v
            } else {
                let perm = [rank - 1].into_iter().chain(0..rank - 1).collect();
                let Type::Array { elem, shape } = &ty else {
                    return Err(AdError::internal("a vector tangent is not an array"));
                };
                let outer = Type::Array {
                    elem: *elem,
                    shape: [shape[rank - 1].clone()]
                        .into_iter()
                        .chain(shape[..rank - 1].iter().cloned())
                        .collect(),
                };
                self.bind(b, "dseeds", Exp::Basic(BasicOp::Rearrange(perm, v)), outer)
            });
        }
        let mut mb = Builder::new(b.names);
        mb.src = b.src.clone();
        let kk = self.fresh_param(&mut mb, "seed", &Type::Prim(i64t));
        let mut params = vec![kk.clone()];
        let mut vals = Vec::new();
        for arr in &arrs[1..] {
            let row_ty = mb.type_of(&SubExp::Var(*arr))?.row();
            let p = self.fresh_param(&mut mb, "dv", &row_ty);
            vals.push(SubExp::Var(p.name));
            params.push(p);
        }
        let op = BasicOp::UpdateAcc {
            acc: dacc,
            is: is.into_iter().chain([SubExp::Var(kk.name)]).collect(),
            vals,
        };
        self.bind(&mut mb, "dacc", Exp::Basic(op), acc_ty);
        let lam = Lambda {
            id: runic_ir::LamId::fresh(),
            params,
            body: Body {
                stms: mb.take_stms(),
                result: Vec::new(),
            },
            ret: Vec::new(),
        };
        drop(mb);
        b.add(Stm {
            pat: Vec::new(),
            exp: Exp::Soac(Soac::Map { w: k, lam, arrs }),
            src: b.src.clone(),
        });
        Ok(SubExp::Var(dacc))
    }
}
