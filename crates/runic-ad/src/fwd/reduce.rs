//! `reduce`, `scan` and `reduce_by_index` (histograms) with an operator `⊙`, and `scatter`.
//!
//! - Untracked (no input, and nothing the operator reads, has a tangent): unchanged.
//! - Linear `⊙` (the tangent half of `⊙` on pairs reads no primal operand, e.g. `+`): the
//!   primal SOAC, and the same kind of SOAC of that tangent half over the tangents
//!   ([`tangent_only`]). Work and span: twice the primal's.
//! - Otherwise: one SOAC of `⊙` differentiated on (value, tangent) pairs
//!   ([`Diff::pair_operator`]), with zero tangents for the neutral elements. Work and
//!   span: the primal's, times a small constant.
//! - `scatter d is vs`: the same scatter of the tangents `dvs` into `dd` beside the
//!   primal one. Work and span: the primal's, twice.
//!
//! A float `reduce (*)` uses its gradient instead (see [`super::product`]).

use super::{Diff, R};
use crate::error::AdError;
use crate::scope::mentions;
use runic_ir::traverse::{Renamer, VisitorMut};
use runic_ir::*;
use std::collections::HashSet;

/// The parts `reduce` and `scan` share, and which of the two it is.
#[derive(Clone)]
pub(super) struct Fold {
    pub(super) w: SubExp,
    pub(super) arrs: Vec<VName>,
    pub(super) pre: Option<Lambda>,
    pub(super) lam: Lambda,
    pub(super) neutral: Vec<SubExp>,
    pub(super) kind: FoldKind,
}

#[derive(Clone, Copy)]
pub(super) enum FoldKind {
    Reduce { commutative: bool },
    Scan,
}

impl Fold {
    pub(super) fn soac(self) -> Soac {
        let Fold {
            w,
            arrs,
            pre,
            lam,
            neutral,
            kind,
        } = self;
        match kind {
            FoldKind::Reduce { commutative } => Soac::Reduce {
                w,
                arrs,
                pre,
                lam,
                neutral,
                commutative,
            },
            FoldKind::Scan => Soac::Scan {
                w,
                arrs,
                pre,
                lam,
                neutral,
            },
        }
    }
}

/// The tangent half of a pair operator (see [`Diff::pair_operator`]) when it reads no
/// primal operand — a linear operator such as `+`: parameters `dx₁..dxₘ, dy₁..dyₘ`, results
/// `dr₁..drₘ`, binders renamed. Then the tangents reduce separately with the same kind of
/// simple operator as the primal, which the executor runs at full speed.
fn tangent_only(names: &mut NameSource, pair: &Lambda, m: usize) -> Option<Lambda> {
    let ps = &pair.params;
    let primal: HashSet<VName> = ps[..m]
        .iter()
        .chain(&ps[2 * m..3 * m])
        .map(|p| p.name)
        .collect();
    // The statements the tangent results depend on, and what they read.
    let results = pair.body.result[m..].to_vec();
    let mut live = HashSet::new();
    mentions(&results, &mut live);
    let mut kept = Vec::new();
    for s in pair.body.stms.iter().rev() {
        if s.pat.iter().any(|p| live.contains(&p.name)) {
            mentions(s, &mut live);
            kept.push(s.clone());
        }
    }
    if !live.is_disjoint(&primal) {
        return None;
    }
    kept.reverse();
    let params = ps[m..2 * m].iter().chain(&ps[3 * m..]).cloned().collect();
    let body = Body {
        stms: kept,
        result: results,
    };
    let mut lam = Lambda::new(params, body, pair.ret[m..].to_vec());
    Renamer::new(names).lambda(&mut lam);
    Some(lam)
}

impl Diff {
    /// `reduce`, `scan`, `reduce_by_index` and `scatter`.
    pub(super) fn fold(&mut self, b: &mut Builder, pat: Vec<Param>, soac: Soac) -> R<()> {
        let (f, kind) = match soac {
            Soac::Reduce {
                w,
                arrs,
                pre,
                lam,
                neutral,
                commutative,
            } => (
                (w, arrs, pre, lam, neutral),
                FoldKind::Reduce { commutative },
            ),
            Soac::Scan {
                w,
                arrs,
                pre,
                lam,
                neutral,
            } => ((w, arrs, pre, lam, neutral), FoldKind::Scan),
            hist @ Soac::Hist { .. } => return self.hist(b, pat, hist),
            Soac::Scatter { w, dests, is, vals } => {
                return self.scatter(b, pat, w, dests, is, vals)
            }
            Soac::Map { .. } => return Err(AdError::internal("a map is not a fold")),
        };
        let (w, arrs, pre, lam, neutral) = f;
        let f = Fold {
            w,
            arrs,
            pre,
            lam,
            neutral,
            kind,
        };
        if pat.len() == 1 && self.is_float_product(&f) {
            let p = pat[0].clone();
            return self.product_by_gradient(b, p, f);
        }
        self.reduce_or_scan(b, pat, f)
    }

    /// `scatter (d, dd) is (vs, dvs)`.
    fn scatter(
        &mut self,
        b: &mut Builder,
        pat: Vec<Param>,
        w: SubExp,
        dests: Vec<VName>,
        is: Vec<VName>,
        vals: Vec<VName>,
    ) -> R<()> {
        if !self.any_tracked(&dests) && !self.any_tracked(&vals) {
            b.let_pat(pat, Exp::Soac(Soac::Scatter { w, dests, is, vals }));
            return Ok(());
        }
        let dests = [dests.clone(), self.tans_of(b, &dests)?].concat();
        let vals = [vals.clone(), self.tans_of(b, &vals)?].concat();
        let all = vec![true; pat.len()];
        let pat = self.with_tangents(b, pat, &all);
        b.let_pat(pat, Exp::Soac(Soac::Scatter { w, dests, is, vals }));
        Ok(())
    }

    /// An associative operator of `m` results on (value, tangent) pairs: parameters
    /// `x₁..xₘ, dx₁..dxₘ, y₁..yₘ, dy₁..dyₘ`, results `r₁..rₘ, dr₁..drₘ`.
    pub(super) fn pair_operator(&mut self, b: &mut Builder, op: Lambda) -> R<Lambda> {
        let m = op.ret.len();
        if op.params.len() != 2 * m {
            return Err(AdError::internal("operator arity does not match"));
        }
        let (mut l, _) = self.lambda(b, op, &vec![true; 2 * m], true)?;
        let ps = std::mem::take(&mut l.params);
        let (orig, tans) = ps.split_at(2 * m);
        l.params = orig[..m]
            .iter()
            .chain(&tans[..m])
            .chain(&orig[m..])
            .chain(&tans[m..])
            .cloned()
            .collect();
        Ok(l)
    }

    /// The tangent-only operator of `op` when its tangent half is independent of the
    /// primal operands (see [`tangent_only`]); differentiates a copy, so `op` stays usable.
    pub(super) fn split_operator(&mut self, b: &mut Builder, op: &Lambda) -> R<Option<Lambda>> {
        let m = op.ret.len();
        let pair = self.pair_operator(b, op.clone())?;
        Ok(tangent_only(b.names, &pair, m))
    }

    /// The forward rule shared by `reduce` and `scan`. Untracked: unchanged. A linear
    /// operator (`+`): the primal SOAC plus the same simple SOAC over the tangents.
    /// Otherwise: one SOAC of the operator differentiated on (value, tangent) pairs, with
    /// zero tangents for the neutral elements.
    pub(super) fn reduce_or_scan(&mut self, b: &mut Builder, pat: Vec<Param>, f: Fold) -> R<()> {
        let tracked = self.any_tracked(&f.arrs)
            || f.pre.as_ref().is_some_and(|p| self.reads_tracked(p))
            || self.reads_tracked(&f.lam);
        if !tracked {
            b.let_pat(pat, Exp::Soac(f.soac()));
            return Ok(());
        }
        let all = vec![true; pat.len()];
        if f.pre.is_none() {
            if let Some(top) = self.split_operator(b, &f.lam)? {
                // ys = fold ⊙ e xs;  dys = fold ⊙' 0 dxs
                let tangent = Fold {
                    w: f.w.clone(),
                    arrs: self.tans_of(b, &f.arrs)?,
                    pre: None,
                    lam: top,
                    neutral: self.zeros_of(b, &f.neutral)?,
                    kind: f.kind,
                };
                let dpat = self.tangent_pat(b, &pat, &all);
                b.let_pat(pat, Exp::Soac(f.soac()));
                b.let_pat(dpat, Exp::Soac(tangent.soac()));
                return Ok(());
            }
        }
        // (ys, dys) = fold ⊙ᴾ (e, 0) (xs, dxs), ⊙ᴾ the operator on pairs
        let (arrs, pre) = self.pre_inputs(b, f.arrs, f.pre)?;
        let lam = self.pair_operator(b, f.lam)?;
        let neutral = [f.neutral.clone(), self.zeros_of(b, &f.neutral)?].concat();
        let pat = self.with_tangents(b, pat, &all);
        let paired = Fold {
            w: f.w,
            arrs,
            pre,
            lam,
            neutral,
            kind: f.kind,
        };
        b.let_pat(pat, Exp::Soac(paired.soac()));
        Ok(())
    }

    /// `reduce_by_index`: the rule of [`Diff::reduce_or_scan`], with the destinations'
    /// tangents as the tangent histogram's destinations.
    fn hist(&mut self, b: &mut Builder, pat: Vec<Param>, hist: Soac) -> R<()> {
        let Soac::Hist {
            w,
            dests,
            lam,
            neutral,
            is,
            vals,
        } = hist
        else {
            return Err(AdError::internal("not a histogram"));
        };
        let tracked =
            self.any_tracked(&dests) || self.any_tracked(&vals) || self.reads_tracked(&lam);
        if !tracked {
            let soac = Soac::Hist {
                w,
                dests,
                lam,
                neutral,
                is,
                vals,
            };
            b.let_pat(pat, Exp::Soac(soac));
            return Ok(());
        }
        let all = vec![true; pat.len()];
        if let Some(top) = self.split_operator(b, &lam)? {
            // hs = hist ⊙ e d is vs;  dhs = hist ⊙' 0 dd is dvs
            let tangent = Soac::Hist {
                w: w.clone(),
                dests: self.tans_of(b, &dests)?,
                lam: top,
                vals: self.tans_of(b, &vals)?,
                neutral: self.zeros_of(b, &neutral)?,
                is: is.clone(),
            };
            let dpat = self.tangent_pat(b, &pat, &all);
            let primal = Soac::Hist {
                w,
                dests,
                lam,
                neutral,
                is,
                vals,
            };
            b.let_pat(pat, Exp::Soac(primal));
            b.let_pat(dpat, Exp::Soac(tangent));
            return Ok(());
        }
        // (hs, dhs) = hist ⊙ᴾ (e, 0) (d, dd) is (vs, dvs)
        let dests = [dests.clone(), self.tans_of(b, &dests)?].concat();
        let vals = [vals.clone(), self.tans_of(b, &vals)?].concat();
        let lam = self.pair_operator(b, lam)?;
        let neutral = [neutral.clone(), self.zeros_of(b, &neutral)?].concat();
        let pat = self.with_tangents(b, pat, &all);
        let soac = Soac::Hist {
            w,
            dests,
            lam,
            neutral,
            is,
            vals,
        };
        b.let_pat(pat, Exp::Soac(soac));
        Ok(())
    }

    /// Inputs of a reduce/scan on (value, tangent) pairs: with a producer lambda, the
    /// tracked arrays' tangents are extra inputs and the lambda returns every result's
    /// tangent; without one, every input array comes with its (materialised) tangent.
    fn pre_inputs(
        &mut self,
        b: &mut Builder,
        arrs: Vec<VName>,
        pre: Option<Lambda>,
    ) -> R<(Vec<VName>, Option<Lambda>)> {
        match pre {
            Some(p) => {
                let active: Vec<bool> = arrs.iter().map(|a| self.tans.contains_key(a)).collect();
                let darrs: Vec<VName> = arrs.iter().filter_map(|a| self.tan_of_var(*a)).collect();
                let (p, _) = self.lambda(b, p, &active, true)?;
                Ok(([arrs, darrs].concat(), Some(p)))
            }
            None => {
                let darrs = self.tans_of(b, &arrs)?;
                Ok(([arrs, darrs].concat(), None))
            }
        }
    }
}
