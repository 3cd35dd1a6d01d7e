//! Normalisation before differentiation: statements are rewritten into the forms the
//! rules handle. A reduce or scan with a fused `pre` map becomes the map followed by the
//! plain SOAC; a reduce, scan or histogram with a vectorised operator (`map2 ⊙`) becomes a
//! map of scalar SOACs over the transposed arrays (IRWIM/ISWIM, seed 001 §3, §5), so the
//! scalar rules apply; a loop that wants it is strip-mined ([`super::checkpoint`]).

use super::checkpoint::{strip_mine, wants_stripmining};
use runic_ir::typing::TResult;
use runic_ir::*;

/// Rewrite a statement into the forms the rules handle.
pub fn normalise(names: &mut NameSource, mut s: Stm) -> TResult<Vec<Stm>> {
    let mut b = Builder::new(names);
    b.src = s.src.clone();
    if let Exp::Soac(Soac::Reduce { w, arrs, pre, .. } | Soac::Scan { w, arrs, pre, .. }) =
        &mut s.exp
    {
        if let Some(pre) = pre.take() {
            *arrs = b.map("pre", w.clone(), pre, std::mem::take(arrs))?;
            b.add(s);
            return Ok(b.take_stms());
        }
    }
    // Dot products from outside a branch are computed before it (`runic_ir::dots`), so
    // that their adjoints are not in a branch either.
    for d in runic_ir::dots::take_dots_out_of_branches(&mut s, b.names) {
        b.add(d);
    }
    let inner = match &s.exp {
        Exp::Soac(Soac::Reduce { lam, .. } | Soac::Scan { lam, .. }) => vectorised(lam),
        // A sum of rows has its own rule (a gather of rows, `hist::sums_of_rows`).
        Exp::Soac(Soac::Hist { lam, is, .. }) if is.len() == 1 && !super::hist::sums_rows(lam) => {
            vectorised(lam)
        }
        _ => None,
    };
    let pat = s.pat;
    match (s.exp, inner) {
        (
            Exp::Soac(Soac::Reduce {
                w, arrs, neutral, ..
            }),
            Some(inner),
        ) => transposed(&mut b, pat, w, arrs, inner, neutral, Kind::Reduce)?,
        (
            Exp::Soac(Soac::Scan {
                w, arrs, neutral, ..
            }),
            Some(inner),
        ) => transposed(&mut b, pat, w, arrs, inner, neutral, Kind::Scan)?,
        (
            Exp::Soac(Soac::Hist {
                w,
                dests,
                neutral,
                is,
                vals,
                ..
            }),
            Some(inner),
        ) => transposed_hist(&mut b, pat, w, dests, inner, neutral, is, vals)?,
        (
            Exp::Loop {
                params,
                form: LoopForm::For { i, bound },
                body,
            },
            _,
        ) if wants_stripmining(&s.src, &params, &body) => {
            strip_mine(&mut b, pat, params, i, bound, body)?
        }
        (exp, _) => b.let_pat(pat, exp),
    }
    Ok(b.take_stms())
}

/// The element operator `f` of a vectorised operator `\xs ys -> map f xs ys` (parameters
/// passed to the map in order).
fn vectorised(lam: &Lambda) -> Option<Lambda> {
    let [s] = lam.body.stms.as_slice() else {
        return None;
    };
    let Exp::Soac(Soac::Map {
        lam: inner, arrs, ..
    }) = &s.exp
    else {
        return None;
    };
    let params: Vec<VName> = lam.params.iter().map(|p| p.name).collect();
    let results: Vec<SubExp> = s.pat.iter().map(|p| SubExp::Var(p.name)).collect();
    (lam.params.iter().all(|p| p.ty.rank() >= 1) && *arrs == params && lam.body.result == results)
        .then(|| inner.clone())
}

enum Kind {
    Reduce,
    Scan,
}

/// `a` with its two outer dimensions swapped, bound to a fresh variable named `hint`.
fn transpose(b: &mut Builder, hint: &str, a: VName) -> TResult<VName> {
    let mut perm: Vec<usize> = (0..b.type_of(&SubExp::Var(a))?.rank()).collect();
    perm.swap(0, 1);
    Ok(b.let_exp(hint, Exp::Basic(BasicOp::Rearrange(perm, a)))?[0])
}

/// `pat = transpose a` for every `a` of `arrs`.
fn transpose_into(b: &mut Builder, pat: Vec<Param>, arrs: Vec<VName>) -> TResult<()> {
    for (p, a) in pat.into_iter().zip(arrs) {
        let mut perm: Vec<usize> = (0..p.ty.rank()).collect();
        perm.swap(0, 1);
        b.let_pat(vec![p], Exp::Basic(BasicOp::Rearrange(perm, a)));
    }
    Ok(())
}

/// The outer size of the array `a`.
fn outer_size(b: &Builder, a: VName) -> TResult<SubExp> {
    match b.type_of(&SubExp::Var(a))? {
        Type::Array { shape, .. } => Ok(shape[0].clone()),
        t => Err(TypeError(format!("{t:?} is not an array"))),
    }
}

/// The neutral elements as arrays to map over (a constant is replicated `m` times).
fn neutral_arrays(b: &mut Builder, m: &SubExp, neutral: Vec<SubExp>) -> TResult<Vec<VName>> {
    let mut out = Vec::new();
    for ne in neutral {
        out.push(match ne {
            SubExp::Var(v) => v,
            c => b.let_exp("ne", Exp::Basic(BasicOp::Replicate(vec![m.clone()], c)))?[0],
        });
    }
    Ok(out)
}

/// `reduce (map2 f) ne xss` = `map (\col ne -> reduce f ne col) (transpose xss) ne` (IRWIM)
/// and `scan (map2 f) ne xss` = `transpose (map (\col ne -> scan f ne col) (transpose xss)
/// ne)` (ISWIM): the rules for operators on scalars then apply per column.
fn transposed(
    b: &mut Builder,
    pat: Vec<Param>,
    w: SubExp,
    arrs: Vec<VName>,
    inner: Lambda,
    neutral: Vec<SubExp>,
    kind: Kind,
) -> TResult<()> {
    let mut cols = Vec::new();
    for a in arrs {
        cols.push(transpose(b, "tr", a)?);
    }
    let m = outer_size(b, cols[0])?;
    // The map's lambda: one column and one neutral element per operand.
    let mut params = Vec::new();
    for c in &cols {
        params.push(("col", b.type_of(&SubExp::Var(*c))?.row()));
    }
    for c in &cols {
        params.push(("ne", b.type_of(&SubExp::Var(*c))?.row().row()));
    }
    let k = cols.len();
    let lam = b.lam(params, |b, ps| -> TResult<_> {
        let lam = b.renamed(&inner);
        let arrs = ps[..k].iter().filter_map(SubExp::as_var).collect();
        let neutral = ps[k..].to_vec();
        let soac = match kind {
            Kind::Reduce => Soac::Reduce {
                w,
                arrs,
                pre: None,
                lam,
                neutral,
                commutative: false,
            },
            Kind::Scan => Soac::Scan {
                w,
                arrs,
                pre: None,
                lam,
                neutral,
            },
        };
        let r = b.let_exp("r", Exp::Soac(soac))?;
        Ok(r.into_iter().map(SubExp::Var).collect())
    })?;
    let mut map_arrs = cols;
    map_arrs.extend(neutral_arrays(b, &m, neutral)?);
    let map = Exp::Soac(Soac::Map {
        w: m,
        lam,
        arrs: map_arrs,
    });
    match kind {
        Kind::Reduce => b.let_pat(pat, map),
        Kind::Scan => {
            let scanned = b.let_exp("scanned", map)?;
            transpose_into(b, pat, scanned)?
        }
    }
    Ok(())
}

/// `reduce_by_index d (map2 f) ne is vs` = `transpose (map (\dc vc ne -> reduce_by_index dc f
/// ne is vc) (transpose d) (transpose vs) ne)`: a map of scalar histograms, one per column,
/// so the rules for scalar operators apply.
#[allow(clippy::too_many_arguments)]
fn transposed_hist(
    b: &mut Builder,
    pat: Vec<Param>,
    w: SubExp,
    dests: Vec<VName>,
    inner: Lambda,
    neutral: Vec<SubExp>,
    is: Vec<VName>,
    vals: Vec<VName>,
) -> TResult<()> {
    let mut dt = Vec::new();
    for d in dests {
        dt.push(transpose(b, "tr", d)?);
    }
    let mut vt = Vec::new();
    for v in vals {
        vt.push(transpose(b, "tr", v)?);
    }
    let m = outer_size(b, dt[0])?;
    let ne_arrs = neutral_arrays(b, &m, neutral)?;
    let mut params = Vec::new();
    for (hint, a) in dt
        .iter()
        .map(|d| ("dcol", d))
        .chain(vt.iter().map(|v| ("vcol", v)))
    {
        params.push((hint, b.type_of(&SubExp::Var(*a))?.row()));
    }
    for d in &dt {
        params.push(("ne", b.type_of(&SubExp::Var(*d))?.row().row()));
    }
    let (nd, nv) = (dt.len(), vt.len());
    let lam = b.lam(params, |b, ps| -> TResult<_> {
        let var = |s: &SubExp| s.as_var();
        let hist = Soac::Hist {
            w,
            dests: ps[..nd].iter().filter_map(var).collect(),
            lam: b.renamed(&inner),
            neutral: ps[nd + nv..].to_vec(),
            is,
            vals: ps[nd..nd + nv].iter().filter_map(var).collect(),
        };
        let h = b.let_exp("h", Exp::Soac(hist))?;
        Ok(h.into_iter().map(SubExp::Var).collect())
    })?;
    let arrs = [dt, vt, ne_arrs].concat();
    let hists = b.map("hists", m, lam, arrs)?;
    transpose_into(b, pat, hists)
}
