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
use crate::scope::{mentions, simple_binop};
use runic_ir::traverse::{Renamer, VisitorMut};
use runic_ir::*;
use std::collections::{HashMap, HashSet};

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
    let results = pair.body.result[m..].to_vec();
    let mut live = HashSet::new();
    mentions(&results, &mut live);
    let mut kept = Vec::new();
    for s in pair.body.stms.iter().rev() {
        if s.pat.iter().any(|p| live.contains(&p.name)) {
            mentions(&s.exp, &mut live);
            for p in &s.pat {
                mentions(&p.ty, &mut live);
            }
            kept.push(s.clone());
        }
    }
    if !live.is_disjoint(&primal) {
        return None;
    }
    kept.reverse();
    let mut lam = Lambda {
        id: runic_ir::LamId::fresh(),
        params: ps[m..2 * m].iter().chain(&ps[3 * m..]).cloned().collect(),
        body: Body {
            stms: kept,
            result: results,
        },
        ret: pair.ret[m..].to_vec(),
    };
    Renamer {
        names,
        map: HashMap::new(),
    }
    .lambda(&mut lam);
    Some(lam)
}

impl Diff {
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

    /// The forward rule shared by `reduce` and `scan` (`make` rebuilds the SOAC from its
    /// parts). Untracked: unchanged. A linear operator (`+`): the primal SOAC plus the same
    /// simple SOAC over the tangents. Otherwise: one SOAC of the operator differentiated on
    /// (value, tangent) pairs, with zero tangents for the neutral elements.
    pub(super) fn reduce_or_scan(
        &mut self,
        b: &mut Builder,
        pat: Vec<Param>,
        src: SrcInfo,
        f: Fold,
        make: impl Fn(Fold) -> Soac,
    ) -> R<()> {
        let tracked = self.any_tracked(&f.arrs)
            || f.pre.as_ref().is_some_and(|p| self.reads_tracked(p))
            || self.reads_tracked(&f.lam);
        if !tracked {
            self.emit_unchanged(b, pat, src, make(f));
            return Ok(());
        }
        if f.pre.is_none() {
            if let Some(top) = self.split_operator(b, &f.lam)? {
                let dt = self.tans_of(b, &f.arrs)?;
                let dn = self.zeros_of(b, &f.neutral)?;
                let dpat = self.tangent_pat(b, &pat, &vec![true; pat.len()]);
                let w = f.w.clone();
                self.emit_unchanged(b, pat, src.clone(), make(f));
                let tangent = Fold {
                    w,
                    arrs: dt,
                    pre: None,
                    lam: top,
                    neutral: dn,
                };
                self.emit_unchanged(b, dpat, src, make(tangent));
                return Ok(());
            }
        }
        let (arrs, pre) = self.pre_inputs(b, f.arrs, f.pre)?;
        let lam = self.pair_operator(b, f.lam)?;
        let mut neutral = f.neutral.clone();
        neutral.extend(self.zeros_of(b, &f.neutral)?);
        let mut pat2 = pat.clone();
        pat2.extend(self.tangent_pat(b, &pat, &vec![true; pat.len()]));
        let paired = Fold {
            w: f.w,
            arrs,
            pre,
            lam,
            neutral,
        };
        b.add(Stm {
            pat: pat2,
            exp: Exp::Soac(make(paired)),
            src,
        });
        Ok(())
    }

    pub(super) fn soac(
        &mut self,
        b: &mut Builder,
        pat: Vec<Param>,
        src: SrcInfo,
        soac: Soac,
    ) -> R<()> {
        match soac {
            Soac::Map { w, lam, arrs } => self.map(b, pat, src, w, lam, arrs),
            Soac::Reduce {
                w,
                arrs,
                pre,
                lam,
                neutral,
                commutative,
            } => {
                if let (Some((BinOp::Mul, t)), None, [x], [ne], [p]) =
                    (simple_binop(&lam), &pre, &arrs[..], &neutral[..], &pat[..])
                {
                    if t.is_float() && !self.differentiated_again && self.tans.contains_key(x) {
                        let (x, ne, p) = (*x, ne.clone(), p.clone());
                        let primal = Soac::Reduce {
                            w: w.clone(),
                            arrs,
                            pre,
                            lam: lam.clone(),
                            neutral,
                            commutative,
                        };
                        self.emit_unchanged(b, pat, src.clone(), primal);
                        return self.product_by_gradient(b, p, src, w, x, lam, ne);
                    }
                }
                let fold = Fold {
                    w,
                    arrs,
                    pre,
                    lam,
                    neutral,
                };
                self.reduce_or_scan(b, pat, src, fold, |f| Soac::Reduce {
                    w: f.w,
                    arrs: f.arrs,
                    pre: f.pre,
                    lam: f.lam,
                    neutral: f.neutral,
                    commutative,
                })
            }
            Soac::Scan {
                w,
                arrs,
                pre,
                lam,
                neutral,
            } => {
                let fold = Fold {
                    w,
                    arrs,
                    pre,
                    lam,
                    neutral,
                };
                self.reduce_or_scan(b, pat, src, fold, |f| Soac::Scan {
                    w: f.w,
                    arrs: f.arrs,
                    pre: f.pre,
                    lam: f.lam,
                    neutral: f.neutral,
                })
            }
            Soac::Hist {
                w,
                dests,
                lam,
                neutral,
                is,
                vals,
            } => {
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
                    self.emit_unchanged(b, pat, src, soac);
                    return Ok(());
                }
                if let Some(top) = self.split_operator(b, &lam)? {
                    let dd = self.tans_of(b, &dests)?;
                    let dv = self.tans_of(b, &vals)?;
                    let dn = self.zeros_of(b, &neutral)?;
                    let dpat = self.tangent_pat(b, &pat, &vec![true; pat.len()]);
                    let primal = Soac::Hist {
                        w: w.clone(),
                        dests,
                        lam,
                        neutral,
                        is: is.clone(),
                        vals,
                    };
                    self.emit_unchanged(b, pat, src.clone(), primal);
                    let tangent = Soac::Hist {
                        w,
                        dests: dd,
                        lam: top,
                        neutral: dn,
                        is,
                        vals: dv,
                    };
                    self.emit_unchanged(b, dpat, src, tangent);
                    return Ok(());
                }
                let mut dests2 = dests.clone();
                dests2.extend(self.tans_of(b, &dests)?);
                let mut vals2 = vals.clone();
                vals2.extend(self.tans_of(b, &vals)?);
                let lam2 = self.pair_operator(b, lam)?;
                let mut neutral2 = neutral.clone();
                neutral2.extend(self.zeros_of(b, &neutral)?);
                let mut pat2 = pat.clone();
                pat2.extend(self.tangent_pat(b, &pat, &vec![true; pat.len()]));
                b.add(Stm {
                    pat: pat2,
                    exp: Exp::Soac(Soac::Hist {
                        w,
                        dests: dests2,
                        lam: lam2,
                        neutral: neutral2,
                        is,
                        vals: vals2,
                    }),
                    src,
                });
                Ok(())
            }
            Soac::Scatter { w, dests, is, vals } => {
                if !self.any_tracked(&dests) && !self.any_tracked(&vals) {
                    let soac = Soac::Scatter { w, dests, is, vals };
                    self.emit_unchanged(b, pat, src, soac);
                    return Ok(());
                }
                let mut dests2 = dests.clone();
                dests2.extend(self.tans_of(b, &dests)?);
                let mut vals2 = vals.clone();
                vals2.extend(self.tans_of(b, &vals)?);
                let mut pat2 = pat.clone();
                pat2.extend(self.tangent_pat(b, &pat, &vec![true; pat.len()]));
                b.add(Stm {
                    pat: pat2,
                    exp: Exp::Soac(Soac::Scatter {
                        w,
                        dests: dests2,
                        is,
                        vals: vals2,
                    }),
                    src,
                });
                Ok(())
            }
        }
    }

    /// Inputs of a reduce/scan on (value, tangent) pairs: with a producer lambda, the
    /// tracked arrays' tangents are extra inputs and the lambda returns every result's
    /// tangent; without one, every input array comes with its (materialised) tangent.
    pub(super) fn pre_inputs(
        &mut self,
        b: &mut Builder,
        arrs: Vec<VName>,
        pre: Option<Lambda>,
    ) -> R<(Vec<VName>, Option<Lambda>)> {
        match pre {
            Some(p) => {
                let active: Vec<bool> = arrs.iter().map(|a| self.tans.contains_key(a)).collect();
                let mut arrs2 = arrs.clone();
                arrs2.extend(
                    arrs.iter()
                        .filter_map(|a| self.tan_of_var(*a))
                        .collect::<Vec<_>>(),
                );
                let (p2, _) = self.lambda(b, p, &active, true)?;
                Ok((arrs2, Some(p2)))
            }
            None => {
                let mut arrs2 = arrs.clone();
                arrs2.extend(self.tans_of(b, &arrs)?);
                Ok((arrs2, None))
            }
        }
    }
}

/// The parts `reduce` and `scan` share.
pub(super) struct Fold {
    pub(super) w: SubExp,
    pub(super) arrs: Vec<VName>,
    pub(super) pre: Option<Lambda>,
    pub(super) lam: Lambda,
    pub(super) neutral: Vec<SubExp>,
}
