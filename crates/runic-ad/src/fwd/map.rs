//! `ys = map f xs`.
//!
//! - Scalar mode (and vector mode when `f` holds a loop): one map of `f` differentiated
//!   ([`Diff::lambda`]) over the arrays and the tangents of those that have one; the
//!   results are the primal rows and their tangents. Work and span: the map's, times a
//!   small constant.
//! - Vector mode, any SOAC without a loop inside ([`Diff::per_seed`]): the primal once,
//!   and a `map` over the seeds of its scalar-mode derivative (the tangents enter with the
//!   seeds outermost). Statements of that map that do not depend on the seed are hoisted
//!   out of it, and a map of straight-line code is linearised ([`split_map`]): a
//!   primal map, run once, also returns the scalars the tangent code reads, and only the
//!   tangent map runs per seed. Work: the primal's plus `k` times the tangent code's;
//!   span: the SOAC's.

use super::vector::{seeds_innermost, seeds_outermost};
use super::{Diff, R};
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

/// Whether `v` is an array (only arrays are copied before an in-place update).
fn is_array(names: &NameSource, v: VName) -> bool {
    names.type_of(v).is_some_and(|t| t.rank() > 0)
}

/// Whether `x` reads (or binds) one of `vs`.
fn touches<T: runic_ir::traverse::Walk + ?Sized>(x: &T, vs: &HashSet<VName>) -> bool {
    let mut used = HashSet::new();
    mentions(x, &mut used);
    !used.is_disjoint(vs)
}

impl Diff {
    /// `ys, dys = map (f, its derivative) xs dxs`, the tangents of the arrays that have one.
    pub(super) fn map(
        &mut self,
        b: &mut Builder,
        pat: Vec<Param>,
        w: SubExp,
        lam: Lambda,
        arrs: Vec<VName>,
    ) -> R<()> {
        let active: Vec<bool> = arrs.iter().map(|a| self.tans.contains_key(a)).collect();
        let darrs: Vec<VName> = arrs.iter().filter_map(|a| self.tan_of_var(*a)).collect();
        let (lam, dout) = self.lambda(b, lam, &active, false)?;
        let pat = self.with_tangents(b, pat, &dout);
        let arrs = arrs.into_iter().chain(darrs).collect();
        b.let_pat(pat, Exp::Soac(Soac::Map { w, lam, arrs }));
        Ok(())
    }

    /// Differentiate a lambda whose parameters marked in `active_in` get tangent parameters
    /// (appended after the original ones, in order). Results: the original results followed
    /// by the tangents of those marked active in the returned mask (`force_out` forces all).
    pub(super) fn lambda(
        &mut self,
        b: &mut Builder,
        lam: Lambda,
        active_in: &[bool],
        force_out: bool,
    ) -> R<(Lambda, Vec<bool>)> {
        let mut tparams = Vec::new();
        for (p, a) in lam.params.iter().zip(active_in) {
            if *a {
                let dp = self.tangent_param(b, p);
                self.tans.insert(p.name, SubExp::Var(dp.name));
                tparams.push(dp);
            } else {
                self.tans.remove(&p.name);
            }
        }
        let (mut body, tres) = self.sub_body(b, lam.body)?;
        let active: Vec<bool> = tres.iter().map(|t| force_out || t.is_some()).collect();
        self.finish_tangents(b, &mut body, &tres, &active)?;
        let ret = self.with_tangent_types(lam.ret, &active);
        let params = lam.params.into_iter().chain(tparams).collect();
        Ok((Lambda::new(params, body, ret), active))
    }

    /// Vector mode, a SOAC without loops inside: the primal SOAC once, and a `map` over the
    /// seeds of its scalar-mode derivative (a renamed copy). On the executor, that keeps
    /// every SOAC on its fast paths over plain columns, where per-element arrays of seeds
    /// would not be (bench/ad_fwd.fut, `jmp_*`); a SOAC with a loop inside keeps vector
    /// tangents so that the loop runs once. The tangents cross into the map with the seed
    /// dimension outermost. Seed-invariant code is hoisted out of it, and a map of
    /// straight-line code is linearised ([`split_map`]), so its primal runs once; other
    /// SOACs (folds on (value, tangent) pairs) re-run their operator's primal per seed.
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
        // accumulator gets here: see `uses_acc`); the parameter is one seed's tangent.
        let mut params = Vec::new();
        let mut arrs = Vec::new();
        let mut inner_tans = HashMap::new();
        for v in tracked {
            let ty = b.type_of(&SubExp::Var(v))?;
            let t = self.tan_of_var(v).ok_or_else(|| {
                AdError::internal(format!("the vector tangent of {v} is a constant"))
            })?;
            let arr = match ty.rank() {
                0 => t,
                rank => {
                    let exp = Exp::Basic(BasicOp::Rearrange(seeds_outermost(rank), t));
                    b.let_exp("dseeds", exp)?[0]
                }
            };
            let hint = format!("d{}", b.names.hint(v));
            let row = b.param(&hint, ty);
            inner_tans.insert(v, SubExp::Var(row.name));
            params.push(row);
            arrs.push(arr);
        }
        // The scalar-mode derivative of a renamed copy, one seed at a time.
        let mut inner = s.clone();
        Renamer::new(b.names).stm(&mut inner);
        let mut mb = Builder::new(b.names);
        mb.src = s.src.clone();
        let saved_tans = std::mem::replace(&mut self.tans, inner_tans);
        // The copy must not update the primal's arrays in place: it updates copies, which
        // have the same tangents.
        for v in consumed_mut(&mut inner.exp) {
            if !is_array(mb.names, *v) {
                continue;
            }
            let c = mb.let_exp("copy", Exp::Basic(BasicOp::Copy(*v)))?[0];
            if let Some(t) = self.tans.get(v).cloned() {
                self.tans.insert(c, t);
            }
            *v = c;
        }
        let saved_seeds = self.seeds.take();
        let inner_pat = inner.pat.clone();
        let done = self.stm(&mut mb, inner);
        // The results with a tangent, and those tangents (of the primal's types).
        let mut outs = Vec::new();
        let mut result = Vec::new();
        if done.is_ok() {
            for (p, ip) in s.pat.iter().zip(&inner_pat) {
                if let Some(t) = self.tan_opt(&SubExp::Var(ip.name)) {
                    result.push(t);
                    outs.push(p.clone());
                }
            }
        }
        self.tans = saved_tans;
        self.seeds = saved_seeds;
        done?;
        let stms = mb.take_stms();
        let stms = hoist_seed_invariant(b, stms, &params)?;
        // A linearised map (see `split_map`) computed the primal results before the map over
        // the seeds: reuse them rather than running the primal again.
        let kept: HashSet<VName> = stms.iter().flat_map(|st| &st.pat).map(|p| p.name).collect();
        let reuse = matches!(s.exp, Exp::Soac(Soac::Map { .. }))
            && inner_pat.iter().all(|p| !kept.contains(&p.name));
        let ret = outs.iter().map(|p| p.ty.clone()).collect();
        let lam = Lambda::new(params, Body { stms, result }, ret);
        let hints: Vec<String> = outs
            .iter()
            .map(|p| format!("d{}", b.names.hint(p.name)))
            .collect();
        let hints: Vec<&str> = hints.iter().map(String::as_str).collect();
        let dts = b.let_named(&hints, Exp::Soac(Soac::Map { w: k, lam, arrs }))?;
        // The primal after the map: it may update arrays the map reads.
        if reuse {
            for (p, ip) in s.pat.iter().zip(&inner_pat) {
                let exp = Exp::Basic(BasicOp::SubExp(SubExp::Var(ip.name)));
                b.let_pat(vec![p.clone()], exp);
            }
        } else {
            b.add(s);
        }
        // The tangents, seeds innermost again.
        for (p, dt) in outs.iter().zip(dts) {
            let t = match p.ty.rank() {
                0 => SubExp::Var(dt),
                rank => b.let_basic("d", BasicOp::Rearrange(seeds_innermost(rank), dt))?,
            };
            self.tans.insert(p.name, t);
        }
        Ok(())
    }
}

/// The statements of a per-seed lambda that do not depend on its parameters (such as
/// the gradient of [`Diff::product_by_gradient`]) go before the map, once; the others
/// stay. One that stays must not update a hoisted array in place (every seed would see
/// the previous one's update): it updates a copy.
fn hoist_seed_invariant(b: &mut Builder, stms: Vec<Stm>, params: &[Param]) -> R<Vec<Stm>> {
    let mut inside: HashSet<VName> = params.iter().map(|p| p.name).collect();
    let mut kept = Vec::new();
    for s in stms {
        if !touches(&s, &inside) {
            b.add(s);
        } else if let Some((primal, tangent)) = split_map(b.names, &s, &inside) {
            b.add(primal);
            inside.extend(tangent.pat.iter().map(|p| p.name));
            kept.push(tangent);
        } else {
            inside.extend(s.pat.iter().map(|p| p.name));
            kept.push(s);
        }
    }
    let mut lb = Builder::new(b.names);
    for mut s in kept {
        lb.src = s.src.clone();
        for v in consumed_mut(&mut s.exp) {
            if inside.contains(v) || !is_array(lb.names, *v) {
                continue;
            }
            *v = lb.let_exp("copy", Exp::Basic(BasicOp::Copy(*v)))?[0];
        }
        lb.add(s);
    }
    Ok(lb.take_stms())
}

/// Linearise a map of straight-line code that depends on the seed (`inside`): a map of
/// the statements that do not (the primal, run once), which also returns the scalars
/// the others read (residuals), and a map of the others (the tangent code, per seed)
/// over those residuals. `None` when there is nothing to split, or a residual is not a
/// scalar.
fn split_map(names: &mut NameSource, s: &Stm, inside: &HashSet<VName>) -> Option<(Stm, Stm)> {
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
    let (mut primal, mut tangent) = (Vec::new(), Vec::new());
    for st in &lam.body.stms {
        if touches(&st.exp, &dep) {
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
    let residuals: Vec<Param> = primal
        .iter()
        .flat_map(|st| &st.pat)
        .filter(|p| read.contains(&p.name))
        .cloned()
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
        let hint = names.hint(r.name).to_string();
        let arr = names.fresh_typed(&hint, ty.clone());
        p_pat.push(Param { name: arr, ty });
        p_res.push(SubExp::Var(r.name));
        p_ret.push(r.ty.clone());
        t_params.push(r.clone());
        t_arrs.push(arr);
    }
    let p_lam = Lambda::new(
        p_params,
        Body {
            stms: primal,
            result: p_res,
        },
        p_ret,
    );
    let primal_map = Stm {
        pat: p_pat,
        exp: Exp::Soac(Soac::Map {
            w: w.clone(),
            lam: p_lam,
            arrs: p_arrs,
        }),
        src: s.src.clone(),
    };
    // The tangent map binds the residuals and primal parameters again: renamed.
    let mut t_lam = Lambda::new(
        t_params,
        Body {
            stms: tangent,
            result: t_res,
        },
        t_ret,
    );
    Renamer::new(names).lambda(&mut t_lam);
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
