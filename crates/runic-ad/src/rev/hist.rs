//! `h = reduce_by_index d ⊙ e is vs` (seed 001 §4). Out-of-range indices contribute
//! nothing; the forward sweep histogrammed into a copy of `d`.
//!
//! - `+`: `d̄ += h̄` and `v̄ⱼ += h̄[isⱼ]` (a gather). Work O(n + bins), span O(1).
//! - `min`/`max`: per bin, the destination wins ties (it comes first), else the smallest
//!   position `j` with `vⱼ = h[isⱼ]` (a `min` histogram of positions); only the winner's
//!   adjoint grows by `h̄`. Work O(n + bins), span O(log n).
//! - `*` (floats): per bin, the product of the non-zero values and the number of zeros (a
//!   histogram of pairs); then the three cases of the `*` reduce, with the destination as
//!   one more factor. Work O(n + bins).
//! - A tuple operator that combines each component on its own by one of these
//!   (`\(a, b) (c, d) -> (a + c, b + d)`): each component is its own histogram, with its
//!   own rule ([`componentwise`]).
//! - `+` over rows (`map2 (+)`, at any depth): `d̄ += h̄` and `v̄ⱼ += h̄[isⱼ]`, a gather of
//!   whole rows ([`sums_of_rows`]; other vectorised operators are transposed into maps of
//!   scalar histograms before differentiation). Work O((n + bins)·row), span O(1).
//! - Any other operator: the general rule (see [`general`]).
//! - Several index dimensions (`reduce_by_index_2d`, `_3d`): `+` gathers at the index
//!   tuple; every other rule runs on the histogram with its bins flattened (see
//!   [`flattened`]).

use super::build::at;
use super::{common, map, sort, Rev, R};
use crate::alg::prim_of;
use crate::error::AdError;
use runic_ir::*;

#[allow(clippy::too_many_arguments)]
pub fn reverse(
    rev: &mut Rev,
    b: &mut Builder,
    pat: &[Param],
    w: SubExp,
    dests: Vec<VName>,
    lam: Lambda,
    neutral: Vec<SubExp>,
    is: Vec<VName>,
    vals: Vec<VName>,
) -> R<()> {
    if let Some(ops) = componentwise(&lam) {
        for (j, (op, t)) in ops.into_iter().enumerate() {
            let one = b.lambda(
                vec![("x", Type::Prim(t)), ("y", Type::Prim(t))],
                vec![Type::Prim(t)],
                |b, ps| vec![b.binop(op, SubExp::Var(ps[0]), SubExp::Var(ps[1]), t)],
            );
            let (d, ne, v) = (vec![dests[j]], vec![neutral[j].clone()], vec![vals[j]]);
            reverse(rev, b, &pat[j..=j], w.clone(), d, one, ne, is.clone(), v)?;
        }
        return Ok(());
    }
    if let ([d], [v], [p], [i], true) = (&dests[..], &vals[..], pat, &is[..], sums_rows(&lam)) {
        return sums_of_rows(rev, b, w, *d, *v, p.name, *i);
    }
    let simple = lam.binop_either_order();
    let plus = matches!(simple, Some((BinOp::Add, _)));
    if is.len() > 1 && !plus {
        return flattened(rev, b, pat, w, dests, lam, neutral, is, vals);
    }
    let (Some((op, t)), [d], [v], [p]) = (simple, &dests[..], &vals[..], pat) else {
        return general(rev, b, pat, w, dests, lam, neutral, is, vals);
    };
    let Some(hbar) = rev.adjs.get(&p.name).cloned() else {
        return Ok(());
    };
    let hbar = hbar
        .as_var()
        .ok_or_else(|| AdError::internal("histogram adjoint is a scalar"))?;
    let Type::Array { shape, .. } = b.type_of(&SubExp::Var(*d))? else {
        return Err(AdError::internal("histogram into a non-array"));
    };
    let hist = Hist {
        w,
        is: &is,
        dims: &shape[..is.len()],
        hbar,
    };
    match op {
        BinOp::Add => {
            rev.add_adj(b, &SubExp::Var(*d), SubExp::Var(hbar))?;
            if rev.active.contains(v) {
                let vbar = hist.gather(rev, b, t, |b, bin, _| {
                    Ok(b.let_basic("adj", BasicOp::Index(hbar, bin))?)
                })?;
                rev.add_adj(b, &SubExp::Var(*v), SubExp::Var(vbar))?;
            }
            Ok(())
        }
        BinOp::Min | BinOp::Max => extremum(rev, b, &hist, *d, *v, p.name, &neutral[0]),
        BinOp::Mul if t.is_float() && !rev.differentiated_again => {
            product(rev, b, &hist, *d, *v, &neutral[0])
        }
        _ => general(rev, b, pat, hist.w, dests, lam, neutral, is, vals),
    }
}

/// Whether `lam` adds two arrays elementwise (`map2 (+)`, nested to any depth), so that a
/// histogram with it sums whole rows per bin.
pub(crate) fn sums_rows(lam: &Lambda) -> bool {
    fn adds(lam: &Lambda) -> bool {
        if matches!(lam.binop_either_order(), Some((BinOp::Add, _))) {
            return true;
        }
        let ([x, y], [s]) = (lam.params.as_slice(), lam.body.stms.as_slice()) else {
            return false;
        };
        let (
            Exp::Soac(Soac::Map {
                lam: inner, arrs, ..
            }),
            [r],
        ) = (&s.exp, s.pat.as_slice())
        else {
            return false;
        };
        let both = *arrs == [x.name, y.name] || *arrs == [y.name, x.name];
        both && x.ty == y.ty && lam.body.result == [SubExp::Var(r.name)] && adds(inner)
    }
    lam.params.first().is_some_and(|p| p.ty.rank() > 0) && adds(lam)
}

/// `+` over rows: `d̄ += h̄`, and each value's adjoint is its bin's row of `h̄` (zeros for
/// an index out of range), a gather of rows where the per-column rule would read `h̄`
/// down its columns.
fn sums_of_rows(
    rev: &mut Rev,
    b: &mut Builder,
    w: SubExp,
    d: VName,
    v: VName,
    h: VName,
    i: VName,
) -> R<()> {
    let Some(hbar) = rev.adjs.get(&h).cloned() else {
        return Ok(());
    };
    let hbar = hbar
        .as_var()
        .ok_or_else(|| AdError::internal("histogram adjoint is a scalar"))?;
    rev.add_adj(b, &SubExp::Var(d), SubExp::Var(hbar))?;
    if !rev.active.contains(&v) {
        return Ok(());
    }
    let dt = b.type_of(&SubExp::Var(d))?;
    let (Type::Array { shape, .. }, row) = (&dt, dt.row()) else {
        return Err(AdError::internal("histogram into a non-array"));
    };
    let bins = shape[0].clone();
    let vbar = b.map_fn("adj", w, vec![i], |b, ps| -> R<_> {
        let ok = common::in_range(b, &ps[..1], &[bins])?;
        let at = ps[0].clone();
        b.let_if(
            "row",
            ok,
            |b| -> R<_> {
                Ok(vec![b.let_basic(
                    "adj",
                    BasicOp::Index(hbar, vec![DimIndex::Fix(at)]),
                )?])
            },
            |b| -> R<_> { Ok(vec![b.zeros(&row)?]) },
        )
    })?;
    rev.owned.insert(vbar[0]);
    rev.add_adj(b, &SubExp::Var(v), SubExp::Var(vbar[0]))
}

/// The operation and type of each component of a tuple operator (of two or more
/// components) whose every result is one binary operation of the two values of its own
/// component (`\(a, b) (c, d) -> (a + c, b * d)`): such a histogram is one histogram per
/// component, each differentiated by its own rule. `None` for any other operator.
fn componentwise(lam: &Lambda) -> Option<Vec<(BinOp, PrimType)>> {
    let k = lam.body.result.len();
    if k < 2 || lam.params.len() != 2 * k || lam.body.stms.len() != k {
        return None;
    }
    (0..k)
        .map(|j| {
            let (x, y) = (&lam.params[j], &lam.params[k + j]);
            let Type::Prim(t) = x.ty else { return None };
            let SubExp::Var(r) = lam.body.result[j] else {
                return None;
            };
            let s = lam.body.stms.iter().find(|s| s.binds(r))?;
            let op = s.binop_of(x.name, y.name, true)?;
            (s.pat.len() == 1 && y.ty == x.ty).then_some((op, t))
        })
        .collect()
}

/// What the specialised rules share: the histogram's width, indices, the leading shape of
/// its destination (the bins) and the adjoint of its result.
struct Hist<'a> {
    w: SubExp,
    is: &'a [VName],
    dims: &'a [SubExp],
    hbar: VName,
}

impl Hist<'_> {
    /// `map (λj. if isⱼ in range then f(isⱼ, j) else 0) (iota n)` for scalar adjoints of
    /// type `t` (owned by this scope).
    fn gather(
        &self,
        rev: &mut Rev,
        b: &mut Builder,
        t: PrimType,
        f: impl FnOnce(&mut Builder, Vec<DimIndex>, SubExp) -> R<SubExp>,
    ) -> R<VName> {
        let zero = vec![Prim::zero(t)];
        let out = common::bin_map(
            b,
            &self.w,
            vec![],
            self.is,
            self.dims,
            zero,
            |b, bin, j, _| Ok(vec![f(b, bin, j)?]),
        )?;
        rev.owned.insert(out[0]);
        Ok(out[0])
    }
}

/// `min`/`max`: `h̄` flows to the destination where it wins its bin, else to the first
/// value that equals the result.
fn extremum(
    rev: &mut Rev,
    b: &mut Builder,
    hist: &Hist,
    d: VName,
    v: VName,
    h: VName,
    ne: &SubExp,
) -> R<()> {
    let (hbar, dims) = (hist.hbar, hist.dims);
    let t = prim_of(b.names, &SubExp::Var(v))?;
    let zero = SubExp::Const(Prim::zero(t));
    // The destination wins its bin when it equals the result.
    let dest_wins = b.map_fn("m", dims[0].clone(), vec![d, h], |b, dh| -> R<_> {
        Ok(vec![b.op2(BinOp::Eq, dh[0].clone(), dh[1].clone())?])
    });
    // Rank > 1 histograms compare rows; only the 1-D case is specialised.
    if dims.len() != 1 || b.type_of(&SubExp::Var(d))?.rank() != 1 {
        return Err(AdError::unsupported(
            "vjp of a multi-dimensional min/max histogram",
        ));
    }
    let dest_wins = dest_wins?[0];
    if rev.active.contains(&d) {
        let dbar = b.map_fn(
            "m",
            dims[0].clone(),
            vec![dest_wins, hbar],
            |b, wg| -> R<_> {
                Ok(vec![b.select(
                    wg[0].clone(),
                    wg[1].clone(),
                    zero.clone(),
                )?])
            },
        )?;
        rev.owned.insert(dbar[0]);
        rev.add_adj(b, &SubExp::Var(d), SubExp::Var(dbar[0]))?;
    }
    if !rev.active.contains(&v) {
        return Ok(());
    }
    // Per bin, the smallest position whose value equals the result.
    let none = SubExp::i64(i64::MAX);
    let cand = common::bin_map(
        b,
        &hist.w,
        vec![v],
        hist.is,
        dims,
        vec![Prim::I64(i64::MAX)],
        |b, bin, j, e| {
            let hv = b.let_basic("h", BasicOp::Index(h, bin))?;
            let eq = b.op2(BinOp::Eq, e[0].clone(), hv)?;
            Ok(vec![b.select(eq, j, none.clone())?])
        },
    )?;
    let init = b.let_exp(
        "first",
        Exp::Basic(BasicOp::Replicate(dims.to_vec(), none.clone())),
    )?;
    let min = b.binop_lam(BinOp::Min, PrimType::I64);
    let first = Soac::Hist {
        w: hist.w.clone(),
        dests: init,
        lam: min,
        neutral: vec![none],
        is: hist.is.to_vec(),
        vals: cand,
    };
    let first = b.let_exp("first", Exp::Soac(first))?[0];
    let vbar = hist.gather(rev, b, t, |b, bin, j| {
        let f = b.let_basic("first", BasicOp::Index(first, bin.clone()))?;
        let dw = b.let_basic("dw", BasicOp::Index(dest_wins, bin.clone()))?;
        let g = b.let_basic("adj", BasicOp::Index(hbar, bin.clone()))?;
        let mine = b.op2(BinOp::Eq, f, j)?;
        let lost = b.op2(BinOp::Eq, dw, SubExp::Const(Prim::Bool(false)))?;
        let take = b.op2(BinOp::LogAnd, mine, lost)?;
        // The neutral element comes before the values: a result equal to it is its own.
        let hv = b.let_basic("h", BasicOp::Index(h, bin))?;
        let not_ne = b.op2(BinOp::Neq, hv, ne.clone())?;
        let take = b.op2(BinOp::LogAnd, take, not_ne)?;
        Ok(b.select(take, g, zero)?)
    })?;
    rev.add_adj(b, &SubExp::Var(v), SubExp::Var(vbar))
}

/// `*` on floats: per bin the product of the non-zero values and the number of zeros,
/// then the three cases of the `*` reduce.
fn product(rev: &mut Rev, b: &mut Builder, hist: &Hist, d: VName, v: VName, ne: &SubExp) -> R<()> {
    let (hbar, dims) = (hist.hbar, hist.dims);
    let t = prim_of(b.names, &SubExp::Var(v))?;
    let (zero, one) = (SubExp::Const(Prim::zero(t)), SubExp::Const(Prim::one(t)));
    // The neutral element is one more factor of every bin (`d ⊙ (ne ⊙ v…)`).
    let ne_zero = b.op2(BinOp::Eq, ne.clone(), zero.clone())?;
    let ne_factor = b.select(ne_zero.clone(), one.clone(), ne.clone())?;
    let ne_count = b.select(ne_zero, SubExp::i64(1), SubExp::i64(0))?;
    if dims.len() != 1 {
        return Err(AdError::unsupported(
            "vjp of a multi-dimensional product histogram",
        ));
    }
    // Per bin: (product of the non-zero values, number of zeros).
    let pairs = common::nonzero_pairs(b, &hist.w, v)?;
    let bins = dims[0].clone();
    let p0 = b.let_exp(
        "p",
        Exp::Basic(BasicOp::Replicate(vec![bins.clone()], one.clone())),
    )?;
    let c0 = b.let_exp(
        "c",
        Exp::Basic(BasicOp::Replicate(vec![bins.clone()], SubExp::i64(0))),
    )?;
    // Two histograms with simple operators (the executor's native path) rather than one
    // of pairs.
    let mut pc = Vec::new();
    for (dests, arr, op, ne) in [
        (p0, pairs[0], BinOp::Mul, one.clone()),
        (c0, pairs[1], BinOp::Add, SubExp::i64(0)),
    ] {
        let lam = b.binop_lam(op, b.prim_of(&ne)?);
        let nz = Soac::Hist {
            w: hist.w.clone(),
            dests,
            lam,
            neutral: vec![ne],
            is: hist.is.to_vec(),
            vals: vec![arr],
        };
        pc.push(b.let_exp("nz", Exp::Soac(nz))?[0]);
    }
    let (prods, zeros) = (pc[0], pc[1]);
    if rev.active.contains(&d) {
        // d̄ = h̄ · (product of the values) per bin.
        let dbar = b.map_fn("m", bins, vec![hbar, prods, zeros], |b, gpc| -> R<_> {
            let none = b.op2(BinOp::Eq, gpc[2].clone(), SubExp::i64(0))?;
            let p = b.select(none, gpc[1].clone(), zero.clone())?;
            Ok(vec![b.mul_(gpc[0].clone(), p)?])
        })?;
        rev.owned.insert(dbar[0]);
        rev.add_adj(b, &SubExp::Var(d), SubExp::Var(dbar[0]))?;
    }
    if !rev.active.contains(&v) {
        return Ok(());
    }
    let vbar = common::bin_map(
        b,
        &hist.w,
        vec![v],
        hist.is,
        dims,
        vec![Prim::zero(t)],
        |b, bin, _j, e| {
            let x = e[0].clone();
            let mut get = |a: VName| b.let_basic("g", BasicOp::Index(a, bin.clone()));
            let (g, p, c, dv) = (get(hbar)?, get(prods)?, get(zeros)?, get(d)?);
            // The destination and the neutral element are two more factors.
            let dz = b.op2(BinOp::Eq, dv.clone(), zero.clone())?;
            let df = b.select(dz.clone(), one.clone(), dv)?;
            let p = b.mul_(p, df)?;
            let p = b.mul_(p, ne_factor)?;
            let dc = b.select(dz, SubExp::i64(1), SubExp::i64(0))?;
            let c = b.add_(c, dc)?;
            let c = b.add_(c, ne_count)?;
            let scaled = b.mul_(p, g)?;
            let is_zero = b.op2(BinOp::Eq, x.clone(), zero.clone())?;
            let none = b.op2(BinOp::Eq, c.clone(), SubExp::i64(0))?;
            let single = b.op2(BinOp::Eq, c, SubExp::i64(1))?;
            let safe = b.select(is_zero.clone(), one, x)?;
            let div = b.op2(BinOp::Div, scaled.clone(), safe)?;
            let at_zero = b.select(is_zero, scaled, zero.clone())?;
            let one_case = b.select(single, at_zero, zero.clone())?;
            Ok(vec![b.select(none, div, one_case)?])
        },
    )?;
    rev.owned.insert(vbar[0]);
    rev.add_adj(b, &SubExp::Var(v), SubExp::Var(vbar[0]))
}

/// The general rule (any operator, also on tuples and arrays; one index dimension). Each
/// bin is `d ⊙ x` with `x = ne ⊙ v₁ ⊙ … ⊙ vₖ` (the values sent to it, in index order):
/// 1. `x = reduce_by_index (replicate bins ne) ⊙ ne is vs`; `d̄` and `x̄` by the map rule on
///    `map ⊙ d x`;
/// 2. the values sorted by bin (a stable radix sort, out-of-range ones last), segmented
///    scans from the left (from `ne`) and from the right give each value's left and right
///    context `lⱼ`, `rⱼ` within its bin;
/// 3. `v̄ⱼ = vjp (λv. lⱼ ⊙ v ⊙ rⱼ) x̄[isⱼ]` (the map rule), scattered back to the original
///    positions. Work O(n log bins), span O(log n · log bins).
#[allow(clippy::too_many_arguments)]
fn general(
    rev: &mut Rev,
    b: &mut Builder,
    pat: &[Param],
    w: SubExp,
    dests: Vec<VName>,
    lam: Lambda,
    neutral: Vec<SubExp>,
    is: Vec<VName>,
    vals: Vec<VName>,
) -> R<()> {
    let [idx] = is[..] else {
        return Err(AdError::unsupported(
            "vjp of a multi-dimensional reduce_by_index with this operator",
        ));
    };
    let k = neutral.len();
    let Type::Array { shape, .. } = b.type_of(&SubExp::Var(dests[0]))? else {
        return Err(AdError::internal("histogram into a non-array"));
    };
    let bins = shape[0].clone();
    let mut hbar = Vec::new();
    for p in pat {
        hbar.push(rev.adj(b, p.name)?);
    }
    // 1. The neutral-initialised histogram x, then h = map ⊙ d x.
    let mut inits = Vec::new();
    for ne in &neutral {
        let init = BasicOp::Replicate(vec![bins.clone()], ne.clone());
        inits.push(b.let_exp("ne", Exp::Basic(init))?[0]);
    }
    let x = Soac::Hist {
        w: w.clone(),
        dests: inits,
        lam: b.renamed(&lam),
        neutral: neutral.clone(),
        is: is.clone(),
        vals: vals.clone(),
    };
    let xs = b.let_exp("x", Exp::Soac(x))?;
    let comb = b.renamed(&lam);
    let arrs = [dests, xs.clone()].concat();
    let seeds = hbar.into_iter().map(Some).collect();
    let reached = map::reverse_seeded(rev, b, bins.clone(), comb, arrs, seeds, &xs)?;
    let mut xbar = Vec::new();
    for (x, a) in xs.iter().zip(reached) {
        let a = match a {
            Some(a) => a,
            None => {
                let t = b.type_of(&SubExp::Var(*x))?;
                rev.zeros(b, &t)?
            }
        };
        xbar.push(
            a.as_var()
                .ok_or_else(|| AdError::internal("histogram adjoint"))?,
        );
    }
    if !vals.iter().any(|v| rev.active.contains(v)) {
        return Ok(());
    }
    // 2. Sort by bin.
    let keys = b.map_fn("m", w.clone(), vec![idx], |b, i| -> R<_> {
        let ok = common::in_range(b, i, std::slice::from_ref(&bins))?;
        Ok(vec![b.select(ok, i[0].clone(), bins.clone())?])
    })?;
    let (skeys, perm) = sort::sort_by_key(b, &w, keys[0], bins.clone())?;
    let mut svals = Vec::new();
    for v in &vals {
        let sorted = b.map_fn("m", w.clone(), vec![perm], |b, j| -> R<_> {
            Ok(vec![b.let_basic("v", at(*v, j[0].clone()))?])
        })?;
        svals.push(sorted[0]);
    }
    let rows: Vec<Type> = lam.ret.clone();
    let iota = b.iota(w.clone());
    let last = b.sub_i64(w.clone(), SubExp::i64(1));
    // Where segments start and end.
    let se = b.map_fn("m", w.clone(), vec![iota, skeys], |b, jk| -> R<_> {
        let (j, key) = (jk[0].clone(), jk[1].clone());
        let mut out = Vec::new();
        for (edge, delta) in [(SubExp::i64(0), -1), (last, 1)] {
            let at_edge = b.op2(BinOp::Eq, j.clone(), edge)?;
            let nb = b.add_(j.clone(), SubExp::i64(delta))?;
            let nb = b.select(at_edge.clone(), j.clone(), nb)?;
            let other = b.let_basic("k", at(skeys, nb))?;
            let differs = b.op2(BinOp::Neq, key.clone(), other)?;
            out.push(b.op2(BinOp::LogOr, at_edge, differs)?);
        }
        Ok(out)
    })?;
    let (starts, ends) = (se[0], se[1]);
    // Inclusive segmented scan from the left, each segment starting from ne.
    let arrs = [vec![starts], svals.clone()].concat();
    let pre = b.map_fn("m", w.clone(), arrs, |b, ps| -> R<_> {
        let vs = ps[1..].to_vec();
        let from_ne = [neutral.clone(), vs.clone()].concat();
        Ok(if_rows(
            b,
            &rows,
            ps[0].clone(),
            |b| b.inline(&lam, &from_ne),
            |_| vs,
        ))
    })?;
    let incl = segmented_scan(b, &w, starts, &pre, &lam, &neutral, false)?;
    // Inclusive segmented scan from the right (no ne), on the reversed arrays.
    let rends = b.reverse(w.clone(), ends)?;
    let mut rvals = Vec::new();
    for v in &svals {
        rvals.push(b.reverse(w.clone(), *v)?);
    }
    let rsuf = segmented_scan(b, &w, rends, &rvals, &lam, &neutral, true)?;
    let mut suf = Vec::new();
    for v in &rsuf {
        suf.push(b.reverse(w.clone(), *v)?);
    }
    // Left context lⱼ (ne at a segment start) and right context rⱼ (unused at an end).
    let iota = b.iota(w.clone());
    let ctx = b.map_fn("m", w.clone(), vec![iota, starts, ends], |b, ps| -> R<_> {
        let (j, st, en) = (ps[0].clone(), ps[1].clone(), ps[2].clone());
        let prev = b.sub_(j.clone(), SubExp::i64(1))?;
        let prev = b.select(st.clone(), j.clone(), prev)?;
        let next = b.add_(j.clone(), SubExp::i64(1))?;
        let next = b.select(en, j, next)?;
        let mut out = Vec::new();
        for (s, ne) in incl.iter().zip(&neutral) {
            let l = b.let_basic("l", at(*s, prev.clone()))?;
            out.push(b.select(st.clone(), ne.clone(), l)?);
        }
        for s in &suf {
            out.push(b.let_basic("r", at(*s, next.clone()))?);
        }
        Ok(out)
    })?;
    let (ls, rs) = ctx.split_at(k);
    // x̄ of each sorted value's bin (zero out of range).
    let iota = b.iota(w.clone());
    let xb = b.map_fn("m", w.clone(), vec![iota, skeys], |b, ps| -> R<_> {
        let key = &ps[1..];
        let ok = common::in_range(b, key, std::slice::from_ref(&bins))?;
        let mut out = Vec::new();
        for (x, t) in xbar.iter().zip(&rows) {
            let safe = b.select(ok.clone(), key[0].clone(), SubExp::i64(0))?;
            let at = vec![DimIndex::Fix(safe)];
            out.extend(b.let_if(
                "r",
                ok.clone(),
                |b| -> R<_> { Ok(vec![b.let_basic("xb", BasicOp::Index(*x, at))?]) },
                |b| Ok(vec![b.zeros(t)?]),
            )?);
        }
        Ok(out)
    })?;
    // 3. v̄ through the map rule on m = map (λl v r e. if e then l ⊙ v else l ⊙ v ⊙ r).
    let mut params: Vec<(&str, Type)> = [&rows[..], &rows, &rows]
        .concat()
        .into_iter()
        .map(|t| ("p", t))
        .collect();
    params.push(("end", Type::Prim(PrimType::Bool)));
    let comb = b.lambda(params, rows.clone(), |b, ps| {
        let ps: Vec<SubExp> = ps.iter().map(|p| SubExp::Var(*p)).collect();
        let (lv, vv, rv, end) = (
            &ps[..k],
            &ps[k..2 * k],
            &ps[2 * k..3 * k],
            ps[3 * k].clone(),
        );
        let lx = b.inline(&lam, &[lv, vv].concat());
        let lxr = [&lx[..], rv].concat();
        if_rows(b, &rows, end, |_| lx, |b| b.inline(&lam, &lxr))
    });
    let arrs = [ls, &svals, rs, &[ends]].concat();
    let seeds = xb.iter().map(|x| Some(SubExp::Var(*x))).collect();
    let reached = map::reverse_seeded(rev, b, w.clone(), comb, arrs, seeds, &svals)?;
    // Scatter the sorted values' adjoints back to their original positions.
    for (v, a) in vals.iter().zip(reached) {
        let Some(a) = a else {
            continue;
        };
        let a = a
            .as_var()
            .ok_or_else(|| AdError::internal("histogram value adjoint"))?;
        let vt = b.type_of(&SubExp::Var(*v))?;
        let Type::Array { elem, shape } = vt else {
            continue;
        };
        let dest = b.let_exp("adj", Exp::Basic(BasicOp::Scratch(elem, shape)))?;
        let back = Soac::Scatter {
            w: w.clone(),
            dests: dest,
            is: vec![perm],
            vals: vec![a],
        };
        let back = b.let_exp("adj", Exp::Soac(back))?[0];
        rev.owned.insert(back);
        rev.add_adj(b, &SubExp::Var(*v), SubExp::Var(back))?;
    }
    Ok(())
}

/// A histogram with `r > 1` index dimensions is one with a single dimension over the
/// flattened bins: `isⱼ = (i₀, …, i_{r-1})` becomes `i₀·b₁⋯b_{r-1} + … + i_{r-1}` when in
/// range (else −1, which stays out of range), the destinations and the results' adjoints
/// are reshaped to `[b₀⋯b_{r-1}]` rows, the 1-D rule runs, and the destinations' adjoints
/// are reshaped back. Work and span: those of the 1-D rule, plus a map.
#[allow(clippy::too_many_arguments)]
fn flattened(
    rev: &mut Rev,
    b: &mut Builder,
    pat: &[Param],
    w: SubExp,
    dests: Vec<VName>,
    lam: Lambda,
    neutral: Vec<SubExp>,
    is: Vec<VName>,
    vals: Vec<VName>,
) -> R<()> {
    let Type::Array { shape, .. } = b.type_of(&SubExp::Var(dests[0]))? else {
        return Err(AdError::internal("histogram into a non-array"));
    };
    let dims = shape[..is.len()].to_vec();
    let mut bins = dims[0].clone();
    for d in &dims[1..] {
        bins = b.mul_i64(bins, d.clone());
    }
    let flat_is = b.map_fn("m", w.clone(), is, |b, ix| -> R<_> {
        let mut ix64 = Vec::new();
        for i in ix {
            ix64.push(b.convert_to(PrimType::I64, i.clone())?);
        }
        let ok = common::in_range(b, &ix64, &dims)?;
        let mut flat = ix64[0].clone();
        for (i, d) in ix64.iter().zip(&dims).skip(1) {
            let scaled = b.mul_(flat, d.clone())?;
            flat = b.add_(scaled, i.clone())?;
        }
        Ok(vec![b.select(ok, flat, SubExp::i64(-1))?])
    })?;
    // `a` with its first `from` dimensions replaced by `lead` (the bins merged, or split
    // back into `dims`).
    let reshape = |b: &mut Builder, a: VName, from: usize, lead: &[SubExp]| -> R<VName> {
        let Type::Array { elem, shape } = b.type_of(&SubExp::Var(a))? else {
            return Err(AdError::internal("reshaping a non-array"));
        };
        let to = [lead, &shape[from..]].concat();
        let ty = Type::Array {
            elem,
            shape: to.clone(),
        };
        let op = BasicOp::Reshape { arr: a, shape: to };
        Ok(b.bind1("flat", Exp::Basic(op), ty))
    };
    let r = dims.len();
    let lead = [bins];
    let mut flat_dests = Vec::new();
    for d in &dests {
        let fd = reshape(b, *d, r, &lead)?;
        if rev.active.contains(d) {
            rev.active.insert(fd);
        }
        flat_dests.push(fd);
    }
    let mut flat_pat = Vec::new();
    for p in pat {
        // The result itself, flattened (the min/max rule compares it with the values).
        let name = reshape(b, p.name, r, &lead)?;
        let ty = b.type_of(&SubExp::Var(name))?;
        let fp = Param { name, ty };
        if let Some(a) = rev.adjs.get(&p.name).cloned() {
            let a = a
                .as_var()
                .ok_or_else(|| AdError::internal("histogram adjoint is a scalar"))?;
            let fa = reshape(b, a, r, &lead)?;
            rev.active.insert(fp.name);
            rev.adjs.insert(fp.name, SubExp::Var(fa));
        }
        flat_pat.push(fp);
    }
    let flat_is = vec![flat_is[0]];
    reverse(
        rev,
        b,
        &flat_pat,
        w,
        flat_dests.clone(),
        lam,
        neutral,
        flat_is,
        vals,
    )?;
    for p in &flat_pat {
        rev.adjs.remove(&p.name);
        rev.active.remove(&p.name);
    }
    for (d, fd) in dests.iter().zip(&flat_dests) {
        rev.active.remove(fd);
        if let Some(a) = rev.adjs.remove(fd) {
            let a = a
                .as_var()
                .ok_or_else(|| AdError::internal("histogram adjoint is a scalar"))?;
            let back = reshape(b, a, 1, &dims)?;
            rev.add_adj(b, &SubExp::Var(*d), SubExp::Var(back))?;
        }
    }
    Ok(())
}

/// `if c then … else …` of the operator's types `rows` (not inferred: the operator's
/// results may have shapes computed inside it).
fn if_rows(
    b: &mut Builder,
    rows: &[Type],
    c: SubExp,
    then_f: impl FnOnce(&mut Builder) -> Vec<SubExp>,
    else_f: impl FnOnce(&mut Builder) -> Vec<SubExp>,
) -> Vec<SubExp> {
    let (then_body, else_body) = (b.body(then_f), b.body(else_f));
    let exp = Exp::If {
        cond: c,
        then_body,
        else_body,
        ret: rows.to_vec(),
    };
    let rs = b.bind_named(&["r"], exp, rows.to_vec());
    rs.into_iter().map(SubExp::Var).collect()
}

/// An inclusive segmented scan of `vals` (restarting where `flags` is set) with `lam`
/// (`flipped`: `\a b -> b ⊙ a`, for scans of reversed arrays). The operator is lifted to
/// (valid, flag, value) triples with an identity of its own, so `⊙` needs no neutral
/// element.
fn segmented_scan(
    b: &mut Builder,
    w: &SubExp,
    flags: VName,
    vals: &[VName],
    lam: &Lambda,
    neutral: &[SubExp],
    flipped: bool,
) -> R<Vec<VName>> {
    let (no, yes) = (
        SubExp::Const(Prim::Bool(false)),
        SubExp::Const(Prim::Bool(true)),
    );
    let bool_t = Type::Prim(PrimType::Bool);
    let rows: Vec<Type> = lam.ret.clone();
    let k = rows.len();
    let valid = b.let_exp(
        "valid",
        Exp::Basic(BasicOp::Replicate(vec![w.clone()], yes)),
    )?;
    let side = [
        vec![("valid", bool_t.clone()), ("flag", bool_t)],
        rows.iter().map(|t| ("x", t.clone())).collect(),
    ]
    .concat();
    let op = b.lam([side.clone(), side].concat(), |b, ps| -> R<_> {
        let (v1, f1, x1) = (ps[0].clone(), ps[1].clone(), ps[2..2 + k].to_vec());
        let (v2, f2, x2) = (ps[2 + k].clone(), ps[3 + k].clone(), ps[4 + k..].to_vec());
        let valid = b.op2(BinOp::LogOr, v1.clone(), v2.clone())?;
        let flag = b.op2(BinOp::LogOr, f1, f2.clone())?;
        let no_left = b.op2(BinOp::Eq, v1, no.clone())?;
        let take_right = b.op2(BinOp::LogOr, no_left, f2)?;
        let x = b.let_if(
            "r",
            v2,
            |b| -> R<_> {
                b.let_if(
                    "r",
                    take_right,
                    |_| Ok(x2.clone()),
                    |b| -> R<_> {
                        let args = if flipped {
                            [x2.clone(), x1.clone()].concat()
                        } else {
                            [x1.clone(), x2.clone()].concat()
                        };
                        Ok(b.inline(lam, &args))
                    },
                )
            },
            |_| Ok(x1.clone()),
        )?;
        Ok([vec![valid, flag], x].concat())
    })?;
    let ne = [vec![no.clone(), no], neutral.to_vec()].concat();
    let arrs = [valid, vec![flags], vals.to_vec()].concat();
    let out = b.scan("seg", w.clone(), op, ne, arrs)?;
    Ok(out[2..].to_vec())
}
