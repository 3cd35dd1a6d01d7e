//! Helpers shared by several rule files: the range check of a bin index and maps over
//! bins (histogram and scatter rules), the zero-counting pairs of the `*` rules (reduce
//! and histogram rules), exclusive scans and shifts (reduce and scan rules), the `+`
//! operator on adjoints, and pruning the bodies of the return sweep.

use super::build::at;
use super::R;
use crate::error::AdError;
use runic_ir::*;

/// Whether every index component is within `0 ≤ i < dim`.
pub fn in_range(b: &mut Builder, idx: &[SubExp], dims: &[SubExp]) -> R<SubExp> {
    let mut ok = SubExp::Const(Prim::Bool(true));
    for (i, d) in idx.iter().zip(dims) {
        let lo = b.op2(BinOp::Ge, i.clone(), SubExp::i64(0))?;
        let hi = b.op2(BinOp::Lt, i.clone(), d.clone())?;
        let both = b.op2(BinOp::LogAnd, lo, hi)?;
        ok = b.op2(BinOp::LogAnd, ok, both)?;
    }
    Ok(ok)
}

/// Per element of `x`: the element, or 1 for a zero; and 1 for a zero, else 0 (what the
/// zero-counting `*` rules multiply and count).
pub fn nonzero_pairs(b: &mut Builder, w: &SubExp, x: VName) -> R<Vec<VName>> {
    b.map_fn("m", w.clone(), vec![x], |b, xs| -> R<_> {
        let t = b.prim_of(&xs[0])?;
        let z = b.op2(BinOp::Eq, xs[0].clone(), SubExp::Const(Prim::zero(t)))?;
        let v = b.select(z.clone(), SubExp::Const(Prim::one(t)), xs[0].clone())?;
        let c = b.select(z, SubExp::i64(1), SubExp::i64(0))?;
        Ok(vec![v, c])
    })
}

/// The exclusive scan of `arrs` with `lam` (`from_right`: of the reversed array with the
/// flipped operator, reversed back, so element i combines the elements after i).
pub fn exclusive_scan(
    b: &mut Builder,
    w: &SubExp,
    arrs: &[VName],
    lam: &Lambda,
    neutral: &[SubExp],
    from_right: bool,
) -> R<Vec<VName>> {
    let mut input = arrs.to_vec();
    if from_right {
        for a in input.iter_mut() {
            *a = b.reverse(w.clone(), *a)?;
        }
    }
    let mut op = b.renamed(lam);
    if from_right {
        // \a b -> b ⊙ a
        let second = op.params.split_off(neutral.len());
        op.params.splice(0..0, second);
    }
    let inclusive = b.scan("scan", w.clone(), op, neutral.to_vec(), input)?;
    // From the right, element i combines the elements after i: element n-2-i of the
    // reversed scan.
    shift(b, w, &inclusive, neutral, from_right)
}

/// `[e, s₀, s₁, …, sₙ₋₂]`: the inclusive scan `s` shifted right by one (the exclusive scan).
pub fn exclusive_shift(
    b: &mut Builder,
    w: &SubExp,
    inclusive: &[VName],
    neutral: &[SubExp],
) -> R<Vec<VName>> {
    shift(b, w, inclusive, neutral, false)
}

/// Element `i` is `s[i-1]` (`reversed`: `s[n-2-i]`), or `e` where that is out of range.
fn shift(
    b: &mut Builder,
    w: &SubExp,
    inclusive: &[VName],
    neutral: &[SubExp],
    reversed: bool,
) -> R<Vec<VName>> {
    let iota = b.iota(w.clone());
    let last = b.sub_i64(w.clone(), SubExp::i64(1));
    b.map_fn("m", w.clone(), vec![iota], |b, i| -> R<_> {
        let src = if reversed {
            b.sub_i64(last, i[0].clone())
        } else {
            i[0].clone()
        };
        let j = b.sub_i64(src, SubExp::i64(1));
        let at_edge = b.op2(BinOp::Lt, j.clone(), SubExp::i64(0))?;
        let safe = b.select(at_edge.clone(), SubExp::i64(0), j)?;
        let mut out = Vec::new();
        for (s, ne) in inclusive.iter().zip(neutral) {
            let v = b.let_basic("s", at(*s, safe.clone()))?;
            out.push(b.select(at_edge.clone(), ne.clone(), v)?);
        }
        Ok(out)
    })
}

/// `\x y -> x + y` on values of type `t` (elementwise for arrays).
pub fn add_lambda(b: &mut Builder, t: &Type) -> R<Lambda> {
    if matches!(t, Type::Acc { .. }) {
        return Err(AdError::unsupported("adjoints of accumulators"));
    }
    Ok(b.add_lambda(t)?)
}

/// `map (λj e… i… → if (i…) is a valid bin then f(bin, j, e…) else outside) (iota w) extra…
/// is…` for scalar results, as straight-line code (the bin index is clamped and the result
/// selected, so the executor runs it as a column program); the whole map is guarded by
/// "the destination is not empty", where no index is valid.
pub fn bin_map(
    b: &mut Builder,
    w: &SubExp,
    extra: Vec<VName>,
    is: &[VName],
    dims: &[SubExp],
    outside: Vec<Prim>,
    f: impl FnOnce(&mut Builder, Vec<DimIndex>, SubExp, &[SubExp]) -> R<Vec<SubExp>>,
) -> R<Vec<VName>> {
    let mut size = SubExp::i64(1);
    for d in dims {
        size = b.mul_(size, d.clone())?;
    }
    let nonempty = b.op2(BinOp::Gt, size, SubExp::i64(0))?;
    let n_extra = extra.len();
    let outs = b.let_if(
        "r",
        nonempty,
        |b| -> R<_> {
            let iota = b.iota(w.clone());
            let arrs = [vec![iota], extra, is.to_vec()].concat();
            let r = b.map_fn("m", w.clone(), arrs, |b, ps| -> R<_> {
                let idx = &ps[1 + n_extra..];
                let ok = in_range(b, idx, dims)?;
                let mut bin = Vec::new();
                for i in idx {
                    bin.push(DimIndex::Fix(b.select(
                        ok.clone(),
                        i.clone(),
                        SubExp::i64(0),
                    )?));
                }
                let vals = f(b, bin, ps[0].clone(), &ps[1..1 + n_extra])?;
                let mut out = Vec::new();
                for (v, o) in vals.into_iter().zip(&outside) {
                    out.push(b.select(ok.clone(), v, SubExp::Const(*o))?);
                }
                Ok(out)
            })?;
            Ok(r.into_iter().map(SubExp::Var).collect())
        },
        |b| -> R<_> {
            let mut none = Vec::new();
            for o in &outside {
                let all = BasicOp::Replicate(vec![w.clone()], SubExp::Const(*o));
                none.push(b.let_basic("none", all)?);
            }
            Ok(none)
        },
    )?;
    outs.into_iter()
        .map(|s| s.as_var().ok_or_else(|| AdError::internal("bin_map")))
        .collect()
}

/// Remove the statements of a body whose results are unused, even those that could fail:
/// only for bodies of the return sweep, whose primal statements re-execute ones that
/// already succeeded in the forward sweep on the same values. Accumulator updates (and
/// statements containing them) are effects and stay.
pub fn prune(body: &mut Body) {
    let mut live = std::collections::HashSet::new();
    crate::scope::mentions(&body.result, &mut live);
    let mut kept = Vec::with_capacity(body.stms.len());
    for s in std::mem::take(&mut body.stms).into_iter().rev() {
        let used = s.pat.iter().any(|p| live.contains(&p.name));
        let effect =
            !used && runic_ir::traverse::any_exp(&s.exp, runic_ir::traverse::is_update_acc);
        if used || effect {
            crate::scope::mentions(&s.exp, &mut live);
            for p in &s.pat {
                crate::scope::mentions(&p.ty, &mut live);
            }
            kept.push(s);
        }
    }
    kept.reverse();
    body.stms = kept;
}
