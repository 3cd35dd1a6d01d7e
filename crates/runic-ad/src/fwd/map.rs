//! `ys = map f xs`.
//!
//! - Scalar mode (and vector mode when `f` holds a loop): one map of `f` differentiated
//!   ([`Diff::lambda`]) over the arrays and the tangents of those that have one; the
//!   results are the primal rows and their tangents. Work and span: the map's, times a
//!   small constant.
//! - Vector mode, any SOAC without a loop inside ([`Diff::per_seed`]): the primal once,
//!   and a `map` over the seeds of its scalar-mode derivative (the tangents enter with the
//!   seeds outermost). Statements of that map that do not depend on the seed are hoisted
//!   out of it, and a map of straight-line code is linearised ([`Diff::split_map`]): a
//!   primal map, run once, also returns the scalars the tangent code reads, and only the
//!   tangent map runs per seed. Work: the primal's plus `k` times the tangent code's;
//!   span: the SOAC's.

use super::{copy_stm, Diff, R};
use crate::error::AdError;
use crate::scope::mentions;
use runic_ir::traverse::{Renamer, VisitorMut};
use runic_ir::*;
use std::collections::{HashMap, HashSet};

/// The array operands an expression updates in place (a loop may update the initial values
/// of its parameters).
fn consumed_mut(e: &mut Exp) -> Vec<&mut VName> {
    match e {
        Exp::Basic(BasicOp::Update(arr, _, _)) => vec![arr],
        Exp::Loop { params, .. } => params
            .iter_mut()
            .filter_map(|(_, init)| match init {
                SubExp::Var(v) => Some(v),
                SubExp::Const(_) => None,
            })
            .collect(),
        Exp::Soac(Soac::Scatter { dests, .. }) | Exp::Soac(Soac::Hist { dests, .. }) => {
            dests.iter_mut().collect()
        }
        _ => Vec::new(),
    }
}

impl Diff {
    /// `ys = map f xs`: a map of `f` differentiated (see [`Diff::lambda`]) over the
    /// arrays and the tangents of those that have one.
    pub(super) fn map(
        &mut self,
        b: &mut Builder,
        pat: Vec<Param>,
        src: SrcInfo,
        w: SubExp,
        lam: Lambda,
        arrs: Vec<VName>,
    ) -> R<()> {
        let active: Vec<bool> = arrs.iter().map(|a| self.tans.contains_key(a)).collect();
        let mut arrs2 = arrs.clone();
        arrs2.extend(
            arrs.iter()
                .filter_map(|a| self.tan_of_var(*a))
                .collect::<Vec<_>>(),
        );
        let (lam2, out) = self.lambda(b, lam, &active, false)?;
        let mut pat2 = pat.clone();
        pat2.extend(self.tangent_pat(b, &pat, &out));
        b.add(Stm {
            pat: pat2,
            exp: Exp::Soac(Soac::Map {
                w,
                lam: lam2,
                arrs: arrs2,
            }),
            src,
        });
        Ok(())
    }

    /// Vector mode, a SOAC without loops inside: the primal SOAC once, and a `map` over the
    /// seeds of its scalar-mode derivative (a renamed copy). On the executor, that keeps
    /// every SOAC on its fast paths over plain columns, where per-element arrays of seeds
    /// would not be (bench/ad_fwd.fut, `jmp_*`); a SOAC with a loop inside keeps vector
    /// tangents so that the loop runs once. The tangents cross into the map with the seed
    /// dimension outermost. Seed-invariant code is hoisted out of it, and a map of
    /// straight-line code is linearised ([`Diff::split_map`]), so its primal runs once;
    /// other SOACs (folds on (value, tangent) pairs) re-run their operator's primal per seed.
    pub(super) fn per_seed(&mut self, b: &mut Builder, s: Stm) -> R<()> {
        let Some(k) = self.seeds.clone() else {
            return Err(AdError::internal("per-seed rule outside vector mode"));
        };
        let mut used = HashSet::new();
        mentions(&s.exp, &mut used);
        let mut tracked: Vec<VName> = used
            .into_iter()
            .filter(|v| self.tans.contains_key(v))
            .collect();
        tracked.sort();
        if tracked.is_empty() {
            b.add(s);
            return Ok(());
        }
        // Each tracked value's tangents, seeds outermost, become an input of the map (no
        // accumulator gets here: see `uses_acc`).
        let mut params = Vec::new();
        let mut arrs = Vec::new();
        let mut inner_tans = HashMap::new();
        for v in tracked {
            let ty = b.type_of(&SubExp::Var(v))?;
            let t = self.tan_of_var(v).ok_or_else(|| {
                AdError::internal(format!("the vector tangent of {v} is a constant"))
            })?;
            let rank = ty.rank();
            let arr = if rank == 0 {
                t
            } else {
                let perm = [rank].into_iter().chain(0..rank).collect();
                let outer = ty.array_of(k.clone());
                self.bind(b, "dseeds", Exp::Basic(BasicOp::Rearrange(perm, t)), outer)
            };
            let hint = format!("d{}", b.names.hint(v));
            let row = self.fresh_param(b, &hint, &ty);
            inner_tans.insert(v, SubExp::Var(row.name));
            params.push(row);
            arrs.push(arr);
        }
        // The scalar-mode derivative of a renamed copy, one seed at a time.
        let mut copy = Body {
            stms: vec![s.clone()],
            result: Vec::new(),
        };
        Renamer {
            names: b.names,
            map: HashMap::new(),
        }
        .body(&mut copy);
        let mut inner = copy.stms.remove(0);
        let mut mb = Builder::new(b.names);
        mb.src = s.src.clone();
        let saved_tans = std::mem::replace(&mut self.tans, inner_tans);
        // The copy must not update the primal's arrays in place: it updates copies, which
        // have the same tangents.
        for v in consumed_mut(&mut inner.exp) {
            let Some(ty) = mb.names.type_of(*v).filter(|t| t.rank() > 0).cloned() else {
                continue;
            };
            let c = self.bind(&mut mb, "copy", Exp::Basic(BasicOp::Copy(*v)), ty);
            if let Some(t) = self.tans.get(v).cloned() {
                self.tans.insert(c, t);
            }
            *v = c;
        }
        let saved_seeds = self.seeds.take();
        let inner_pat = inner.pat.clone();
        let done = self.stm(&mut mb, inner);
        let mut result = Vec::new();
        let mut ret = Vec::new();
        let mut outs = Vec::new();
        if done.is_ok() {
            for (p, ip) in s.pat.iter().zip(&inner_pat) {
                if let Some(t) = self.tan_opt(&SubExp::Var(ip.name)) {
                    result.push(t);
                    ret.push(p.ty.clone());
                    outs.push(p.clone());
                }
            }
        }
        self.tans = saved_tans;
        self.seeds = saved_seeds;
        done?;
        let stms = mb.take_stms();
        drop(mb);
        let stms = self.hoist_seed_invariant(b, stms, &params);
        // A linearised map (see `split_map`) computed the primal results before the map over
        // the seeds: reuse them rather than running the primal again.
        let kept: HashSet<VName> = stms.iter().flat_map(|st| &st.pat).map(|p| p.name).collect();
        let reuse = matches!(s.exp, Exp::Soac(Soac::Map { .. }))
            && inner_pat.iter().all(|p| !kept.contains(&p.name));
        let lam = Lambda {
            id: runic_ir::LamId::fresh(),
            params,
            body: Body { stms, result },
            ret,
        };
        let map_pat: Vec<Param> = outs
            .iter()
            .map(|p| {
                let ty = p.ty.array_of(k.clone());
                let hint = format!("d{}", b.names.hint(p.name));
                self.fresh_param(b, &hint, &ty)
            })
            .collect();
        b.add(Stm {
            pat: map_pat.clone(),
            exp: Exp::Soac(Soac::Map { w: k, lam, arrs }),
            src: s.src.clone(),
        });
        // The primal after the map: it may update arrays the map reads.
        if reuse {
            for (p, ip) in s.pat.iter().zip(&inner_pat) {
                let exp = Exp::Basic(BasicOp::SubExp(SubExp::Var(ip.name)));
                b.add(copy_stm(p.clone(), exp, &s.src));
            }
        } else {
            b.add(s);
        }
        for (p, m) in outs.iter().zip(map_pat) {
            let rank = p.ty.rank();
            let t = if rank == 0 {
                m.name
            } else {
                let perm = (1..=rank).chain([0]).collect();
                let ty = self.tan_ty(&p.ty);
                self.bind(b, "d", Exp::Basic(BasicOp::Rearrange(perm, m.name)), ty)
            };
            self.tans.insert(p.name, SubExp::Var(t));
        }
        Ok(())
    }

    /// The statements of a per-seed lambda that do not depend on its parameters (such as
    /// the gradient of [`Diff::product_by_gradient`]) go before the map, once; the others
    /// stay. One that stays must not update a hoisted array in place (every seed would see
    /// the previous one's update): it updates a copy.
    pub(super) fn hoist_seed_invariant(
        &mut self,
        b: &mut Builder,
        stms: Vec<Stm>,
        params: &[Param],
    ) -> Vec<Stm> {
        let mut inside: HashSet<VName> = params.iter().map(|p| p.name).collect();
        let mut kept = Vec::new();
        for s in stms {
            let mut used = HashSet::new();
            mentions(&s.exp, &mut used);
            for p in &s.pat {
                mentions(&p.ty, &mut used);
            }
            if used.is_disjoint(&inside) {
                b.add(s);
            } else if let Some((primal, tangent)) = self.split_map(b.names, &s, &inside) {
                b.add(primal);
                inside.extend(tangent.pat.iter().map(|p| p.name));
                kept.push(tangent);
            } else {
                inside.extend(s.pat.iter().map(|p| p.name));
                kept.push(s);
            }
        }
        let mut out = Vec::with_capacity(kept.len());
        for mut s in kept {
            for v in consumed_mut(&mut s.exp) {
                if inside.contains(v) {
                    continue;
                }
                let Some(ty) = b.names.type_of(*v).filter(|t| t.rank() > 0).cloned() else {
                    continue;
                };
                let c = b.names.fresh("copy");
                b.names.set_type(c, ty.clone());
                out.push(Stm {
                    pat: vec![Param { name: c, ty }],
                    exp: Exp::Basic(BasicOp::Copy(*v)),
                    src: s.src.clone(),
                });
                *v = c;
            }
            out.push(s);
        }
        out
    }

    /// Linearise a map of straight-line code that depends on the seed (`inside`): a map of
    /// the statements that do not (the primal, run once), which also returns the scalars
    /// the others read (residuals), and a map of the others (the tangent code, per seed)
    /// over those residuals. `None` when there is nothing to split, or a residual is not a
    /// scalar.
    pub(super) fn split_map(
        &mut self,
        names: &mut NameSource,
        s: &Stm,
        inside: &HashSet<VName>,
    ) -> Option<(Stm, Stm)> {
        let Exp::Soac(Soac::Map { w, lam, arrs }) = &s.exp else {
            return None;
        };
        if !lam
            .body
            .stms
            .iter()
            .all(|st| matches!(st.exp, Exp::Basic(_)))
        {
            return None;
        }
        // What depends on the seed: rows of seed-dependent arrays, then what reads them.
        let mut dep: HashSet<VName> = inside.clone();
        for (p, a) in lam.params.iter().zip(arrs) {
            if inside.contains(a) {
                dep.insert(p.name);
            }
        }
        let reads_dep = |x: &Exp, dep: &HashSet<VName>| {
            let mut used = HashSet::new();
            mentions(x, &mut used);
            !used.is_disjoint(dep)
        };
        let (mut primal, mut tangent) = (Vec::new(), Vec::new());
        for st in &lam.body.stms {
            if reads_dep(&st.exp, &dep) {
                dep.extend(st.pat.iter().map(|p| p.name));
                tangent.push(st.clone());
            } else {
                primal.push(st.clone());
            }
        }
        if primal.is_empty() || tangent.is_empty() {
            return None;
        }
        let is_dep = |r: &SubExp| r.as_var().is_some_and(|v| dep.contains(&v));
        // Residuals: values of the primal part (statements or parameters) the tangent part
        // reads.
        let mut read = HashSet::new();
        for st in &tangent {
            mentions(&st.exp, &mut read);
        }
        for r in lam.body.result.iter().filter(|r| is_dep(r)) {
            mentions(r, &mut read);
        }
        let bound: Vec<&Param> = primal.iter().flat_map(|st| &st.pat).collect();
        let residuals: Vec<Param> = bound
            .iter()
            .filter(|p| read.contains(&p.name))
            .map(|p| (*p).clone())
            .collect();
        if residuals.iter().any(|p| !matches!(p.ty, Type::Prim(_))) {
            return None;
        }
        let (mut p_params, mut p_arrs, mut t_params, mut t_arrs) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (p, a) in lam.params.iter().zip(arrs) {
            if dep.contains(&p.name) {
                t_params.push(p.clone());
                t_arrs.push(*a);
            } else {
                p_params.push(p.clone());
                p_arrs.push(*a);
                if read.contains(&p.name) {
                    t_params.push(p.clone());
                    t_arrs.push(*a);
                }
            }
        }
        if t_arrs.is_empty() && residuals.is_empty() {
            // The tangent code reads nothing per element: not worth a map of no inputs.
            return None;
        }
        // The primal map: its own results, then the residuals (one array each).
        let (mut p_pat, mut p_res, mut p_ret) = (Vec::new(), Vec::new(), Vec::new());
        let (mut t_pat, mut t_res, mut t_ret) = (Vec::new(), Vec::new(), Vec::new());
        for ((r, pt), t) in lam.body.result.iter().zip(&s.pat).zip(&lam.ret) {
            let (pat, res, ret) = if is_dep(r) {
                (&mut t_pat, &mut t_res, &mut t_ret)
            } else {
                (&mut p_pat, &mut p_res, &mut p_ret)
            };
            pat.push(pt.clone());
            res.push(r.clone());
            ret.push(t.clone());
        }
        for r in &residuals {
            let ty = r.ty.array_of(w.clone());
            let arr = names.fresh(names.hint(r.name).to_string().as_str());
            names.set_type(arr, ty.clone());
            p_pat.push(Param { name: arr, ty });
            p_res.push(SubExp::Var(r.name));
            p_ret.push(r.ty.clone());
            t_params.push(r.clone());
            t_arrs.push(arr);
        }
        let primal_map = Stm {
            pat: p_pat,
            exp: Exp::Soac(Soac::Map {
                w: w.clone(),
                lam: Lambda {
                    id: runic_ir::LamId::fresh(),
                    params: p_params,
                    body: Body {
                        stms: primal,
                        result: p_res,
                    },
                    ret: p_ret,
                },
                arrs: p_arrs,
            }),
            src: s.src.clone(),
        };
        // The tangent map binds the residuals and primal parameters again: renamed.
        let mut t_lam = Lambda {
            id: runic_ir::LamId::fresh(),
            params: t_params,
            body: Body {
                stms: tangent,
                result: t_res,
            },
            ret: t_ret,
        };
        Renamer {
            names,
            map: HashMap::new(),
        }
        .lambda(&mut t_lam);
        names.record_types(&t_lam);
        let tangent_map = Stm {
            pat: t_pat,
            exp: Exp::Soac(Soac::Map {
                w: w.clone(),
                lam: t_lam,
                arrs: t_arrs,
            }),
            src: s.src.clone(),
        };
        Some((primal_map, tangent_map))
    }
}
