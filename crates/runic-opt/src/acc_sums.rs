//! Sums before accumulator updates. Reverse mode gives an array read as `a[i, l]` inside
//! `map_i (map_j (sum_l …))` (a product written with indices) the adjoint
//!
//! ```text
//! with_acc (+) \acc -> map_i (\i -> map_j (\j … -> map_l (\l -> acc[i, l] += v(j, l))))
//! ```
//!
//! whose update does not depend on the middle map's `j`: every `j` adds into the same
//! elements, one scattered update per `(i, j, l)` (2·10⁸ for a `[256][1024]·[1024][784]`
//! product). Accumulation by `+` does not depend on the order of the updates, so the map
//! over `j` can move inside the one over `l` and become a sum:
//!
//! ```text
//! map_l (\l -> acc[i, l] += reduce (+) 0 (map (\j … -> v(j, l)) …))
//! ```
//!
//! one update per element and a dot product per update. The rewrite applies inside a
//! `with_acc` whose operators are all scalar `+` with neutral `0`, to a result-less map
//! whose body is (iotas and) one result-less map whose body ends in its only accumulator
//! update, of one float value, at indices that neither map's iteration above it decides.
//!
//! Then, when a `with_acc` into zeros holds only such a pair of maps (any statements
//! without the accumulator before the inner one), over `iota`s whose elements are the
//! update's two indices (in either order) and whose widths are the accumulator's shape,
//! each element is written exactly once: the accumulator is the nest's values, a plain
//! array (transposed when the indices run inner map first):
//!
//! ```text
//! let V = map_i (\i -> map_l (\l -> reduce (+) 0 (map (\j … -> v(j, l)) …)))
//! let ā = V
//! ```
//!
//! a product the executor runs as a GEMM (`δ·b` for the adjoint of `a` in `a·b`).
//!
//! Two normalisations bring other forms to the first rule: a nest three deep whose outer
//! map does not decide the update (the right operand's adjoint, `b[l, j]`) swaps its two
//! outer maps ([`outer_map_inward`]), and a map over a column sliced in its body reads the
//! column's elements in place ([`columns_as_reads`]: the product written with columns).

use crate::dce::removable;
use runic_ir::traverse::{any_exp, binders, for_each_body_mut, iotas, uses};
use runic_ir::*;
use std::collections::{HashMap, HashSet};

pub fn sums_before_updates(mut prog: Prog) -> Prog {
    let mut ns = std::mem::take(&mut prog.names);
    for f in &mut prog.funs {
        let ranges = iotas(&f.body);
        for_each_body_mut(&mut f.body, |body| {
            for s in &mut body.stms {
                if let Exp::WithAcc { inputs, lam } = &mut s.exp {
                    if inputs.iter().all(adds_from_zero) {
                        for_each_body_mut(&mut lam.body, |b| rewrite_body(b, &ranges, &mut ns));
                    }
                }
            }
            crate::expand_stms(body, |before, s| {
                let zeros = crate::accs::zero_arrays(before);
                written_once(s, &zeros, &ranges, &mut ns)
            });
        });
    }
    prog.names = ns;
    prog
}

/// A result-less map over `outer` whose body is statements (`prefix`; the first rule
/// wants only iotas there) and one result-less map over `inner` whose body is `work` and
/// then its one accumulator update, `acc[is] += v`
/// of a float `v` that `work` computes.
struct UpdateNest<'a> {
    w_o: &'a SubExp,
    outer: &'a Lambda,
    arrs_o: &'a [VName],
    prefix: &'a [Stm],
    inner_stm: &'a Stm,
    w_i: &'a SubExp,
    inner: &'a Lambda,
    arrs_i: &'a [VName],
    work: &'a [Stm],
    update: &'a Stm,
    acc: VName,
    is: &'a [SubExp],
    v: VName,
    t: PrimType,
}

fn update_nest(stm: &Stm) -> Option<UpdateNest<'_>> {
    let (w_o, outer, arrs_o) = resultless_map(stm)?;
    let (inner_stm, prefix) = outer.body.stms.split_last()?;
    let (w_i, inner, arrs_i) = resultless_map(inner_stm)?;
    let (update, work) = inner.body.stms.split_last()?;
    let Exp::Basic(BasicOp::UpdateAcc { acc, is, vals }) = &update.exp else {
        return None;
    };
    let [SubExp::Var(v)] = vals.as_slice() else {
        return None;
    };
    let t = work
        .iter()
        .flat_map(|st| &st.pat)
        .find(|p| p.name == *v)
        .and_then(|p| p.ty.elem())
        .filter(|t| matches!(t, PrimType::F32 | PrimType::F64))?;
    let returns_nothing = outer.body.result.is_empty() && inner.body.result.is_empty();
    returns_nothing.then_some(UpdateNest {
        w_o,
        outer,
        arrs_o,
        prefix,
        inner_stm,
        w_i,
        inner,
        arrs_i,
        work,
        update,
        acc: *acc,
        is,
        v: *v,
        t,
    })
}

/// The statement of a map binding nothing (its lambda's effects are all it does).
fn effect_map(w: SubExp, lam: Lambda, arrs: Vec<VName>, src: SrcInfo) -> Stm {
    Stm {
        pat: vec![],
        exp: Exp::Soac(Soac::Map { w, lam, arrs }),
        src,
    }
}

/// A map binding nothing (its lambda's effects are all it does): its width, lambda and
/// inputs.
fn resultless_map(s: &Stm) -> Option<(&SubExp, &Lambda, &[VName])> {
    match (&s.exp, s.pat.as_slice()) {
        (Exp::Soac(Soac::Map { w, lam, arrs }), []) => Some((w, lam, arrs.as_slice())),
        _ => None,
    }
}

/// `s`, a `with_acc` into zeros whose body is (iotas and) one pair of maps over iotas that updates
/// each element of the accumulator once (its indices the maps' elements, its shape their
/// widths), as the nest of the values it adds and, for indices inner map first, their
/// transpose.
fn written_once(
    s: &Stm,
    zeros: &HashSet<VName>,
    ranges: &HashMap<VName, SubExp>,
    ns: &mut NameSource,
) -> Option<Vec<Stm>> {
    let (Exp::WithAcc { inputs, lam }, [out]) = (&s.exp, s.pat.as_slice()) else {
        return None;
    };
    let ([input], [acc], Some((nest, iotas))) = (
        inputs.as_slice(),
        lam.params.as_slice(),
        lam.body.stms.split_last(),
    ) else {
        return None;
    };
    // Iotas before the nest (where `outer_map_inward` leaves the middle map's) move out.
    if !iotas
        .iter()
        .all(|st| runic_ir::traverse::iota_width(&st.exp).is_some())
    {
        return None;
    }
    let ([dest], [rows, cols]) = (input.arrays.as_slice(), input.shape.as_slice()) else {
        return None;
    };
    if !adds_from_zero(input) || !zeros.contains(dest) || lam.body.result != [SubExp::Var(acc.name)]
    {
        return None;
    }
    let UpdateNest {
        w_o,
        outer,
        arrs_o,
        prefix,
        inner_stm,
        w_i,
        inner,
        arrs_i,
        work,
        acc: a,
        is,
        v,
        t,
        ..
    } = update_nest(nest)?;
    let [SubExp::Var(x), SubExp::Var(y)] = is else {
        return None;
    };
    // The element of the map over `arrs` that takes the elements of an iota as wide as it.
    let element = |params: &[Param], arrs: &[VName], w: &SubExp| {
        params
            .iter()
            .zip(arrs)
            .find(|(_, a)| ranges.get(*a) == Some(w))
            .map(|(p, _)| p.name)
    };
    let (j, l) = (
        element(&outer.params, arrs_o, w_o)?,
        element(&inner.params, arrs_i, w_i)?,
    );
    // `[j, l]` with shape `[w_o, w_i]`, or `[l, j]` with `[w_i, w_o]` (transposed).
    let transposed = match (*x == j && *y == l, *x == l && *y == j) {
        (true, _) if rows == w_o && cols == w_i => false,
        (_, true) if rows == w_i && cols == w_o => true,
        _ => return None,
    };
    let only_update = a == acc.name
        && prefix
            .iter()
            .chain(work)
            .all(|st| !uses(st).contains(&acc.name));
    if !only_update {
        return None;
    }
    // The nest, returning the values.
    let elem = Type::Prim(t);
    let row_ty = elem.array_of(w_i.clone());
    let mut b = Builder::new(ns);
    for st in iotas {
        b.add(st.clone());
    }
    let row = b.param("row", row_ty.clone());
    let mut inner2 = inner.clone();
    inner2.id = LamId::fresh();
    inner2.body = Body {
        stms: work.to_vec(),
        result: vec![SubExp::Var(v)],
    };
    inner2.ret = vec![elem.clone()];
    let mut outer2 = outer.clone();
    outer2.id = LamId::fresh();
    let mut stms = prefix.to_vec();
    stms.push(Stm {
        pat: vec![row.clone()],
        exp: Exp::Soac(Soac::Map {
            w: w_i.clone(),
            lam: inner2,
            arrs: arrs_i.to_vec(),
        }),
        src: inner_stm.src.clone(),
    });
    outer2.body = Body {
        stms,
        result: vec![SubExp::Var(row.name)],
    };
    outer2.ret = vec![row_ty.clone()];
    let values_ty = row_ty.array_of(w_o.clone());
    let map = Exp::Soac(Soac::Map {
        w: w_o.clone(),
        lam: outer2,
        arrs: arrs_o.to_vec(),
    });
    if transposed {
        let values = b.bind1("values", map, values_ty);
        b.let_pat(
            vec![out.clone()],
            Exp::Basic(BasicOp::Rearrange(vec![1, 0], values)),
        );
    } else {
        b.let_pat(vec![out.clone()], map);
    }
    Some(b.take_stms())
}

/// An accumulator combined by scalar `+` from `0`.
fn adds_from_zero(input: &AccInput) -> bool {
    matches!(&input.op, Some((lam, ne))
        if crate::accs::is_add_lambda(lam)
            && ne.iter().all(crate::simplify::is_zero_const))
}

fn rewrite_body(body: &mut Body, ranges: &HashMap<VName, SubExp>, ns: &mut NameSource) {
    columns_as_reads(body, ranges);
    crate::expand_stms(body, |_, s| {
        interchanged(s, ns).or_else(|| outer_map_inward(s, ranges, ns))
    });
}

/// A map over a column sliced out in the same body, `let c = x[:, j]`, beside an iota as
/// wide, reads `x[b, j]` at the iota's element `b` instead, and the slice goes when
/// nothing else reads it (the adjoint of `f32.sum (map2 (*) d[:, j] x[:, k])` updates
/// through such a map; the column bound outside it hid the update nest from the rules).
/// The reads fail where the slice did, but for an empty map; the primal's forward sweep
/// ran the same slice before its adjoint does.
fn columns_as_reads(body: &mut Body, ranges: &HashMap<VName, SubExp>) {
    let slices: HashMap<VName, (VName, Vec<DimIndex>)> = body
        .stms
        .iter()
        .filter_map(|st| match (&st.exp, st.pat.as_slice()) {
            (Exp::Basic(BasicOp::Index(x, idx)), [p]) if p.ty.rank() == 1 => {
                Some((p.name, (*x, idx.clone())))
            }
            _ => None,
        })
        .collect();
    for st in &mut body.stms {
        let Exp::Soac(Soac::Map { w, lam, arrs }) = &mut st.exp else {
            continue;
        };
        let Some(b) = lam
            .params
            .iter()
            .zip(arrs.iter())
            .find(|(_, a)| ranges.get(*a) == Some(w))
            .map(|(p, _)| p.name)
        else {
            continue;
        };
        let mut reads = Vec::new();
        let mut k = 0;
        while k < arrs.len() {
            let column = slices.get(&arrs[k]).filter(|(_, idx)| {
                idx.iter()
                    .filter(|d| matches!(d, DimIndex::Slice { .. }))
                    .count()
                    == 1
                    && idx.iter().any(|d| d.is_prefix_slice(Some(w)))
            });
            let Some((x, idx)) = column else {
                k += 1;
                continue;
            };
            let at = idx
                .iter()
                .map(|d| match d {
                    DimIndex::Slice { .. } => DimIndex::Fix(SubExp::Var(b)),
                    fixed => fixed.clone(),
                })
                .collect();
            reads.push(Stm {
                pat: vec![lam.params.remove(k)],
                exp: Exp::Basic(BasicOp::Index(*x, at)),
                src: st.src.clone(),
            });
            arrs.remove(k);
        }
        if !reads.is_empty() {
            lam.id = LamId::fresh();
            reads.append(&mut lam.body.stms);
            lam.body.stms = reads;
        }
    }
    let mut read: HashSet<VName> = body.stms.iter().flat_map(|st| uses(&st.exp)).collect();
    read.extend(uses(&body.result));
    body.stms.retain(|st| match st.pat.as_slice() {
        [p] => !slices.contains_key(&p.name) || read.contains(&p.name),
        _ => true,
    });
}

/// The right operand's adjoint of a product written with indices: three maps deep,
///
/// ```text
/// map_i (\i row -> map_j (\j x -> map_l (\l -> acc[l, j] += x · a[i, l])) (iota p) row)
/// ```
///
/// the update decided by `j` and `l` but not by the outer `i`. The maps over `i` and `j`
/// swap (the middle map's elements of the outer map's rows become reads `row[j]` in the
/// inner body), and then the map over `i`, now in the middle, is a sum inside the map
/// over `l` ([`interchanged`]):
///
/// ```text
/// map_j (\j -> map_l (\l -> acc[l, j] += Σ_i row_i[j] · a[i, l]))
/// ```
///
/// Requires the outer body to be iotas and the middle map, the middle map's width and
/// the inner map's inputs not to depend on `i`, and the middle map to run over an iota of
/// its width, whose element indexes the rows it took from the outer map.
fn outer_map_inward(
    s: &Stm,
    ranges: &HashMap<VName, SubExp>,
    ns: &mut NameSource,
) -> Option<Vec<Stm>> {
    let (w_o, outer, arrs_o) = resultless_map(s)?;
    let (mid_stm, prefix_o) = outer.body.stms.split_last()?;
    let (w_m, mid, arrs_m) = resultless_map(mid_stm)?;
    let (inner_stm, prefix_m) = mid.body.stms.split_last()?;
    let (w_i, inner, arrs_i) = resultless_map(inner_stm)?;
    let outer_params: HashSet<VName> = outer.params.iter().map(|p| p.name).collect();
    let from_outer = |x: &VName| outer_params.contains(x);
    // What stays outside the map over i must not depend on it.
    let mut outside = uses(w_m);
    for st in prefix_o {
        runic_ir::traverse::iota_width(&st.exp)?;
        outside.extend(uses(&st.exp));
    }
    if outside.iter().any(from_outer) {
        return None;
    }
    // The middle map's element index, and its parameters that are elements of i's rows.
    let j = mid
        .params
        .iter()
        .zip(arrs_m)
        .find(|(_, a)| !from_outer(a) && ranges.get(*a) == Some(w_m))?
        .0
        .name;
    let (row_params, kept): (Vec<_>, Vec<_>) = mid
        .params
        .iter()
        .zip(arrs_m)
        .partition(|(_, a)| from_outer(a));
    // Those elements are read where the inner body uses them, and nowhere else.
    let row_elems: HashSet<VName> = row_params.iter().map(|(p, _)| p.name).collect();
    let mut elsewhere = uses(w_i);
    elsewhere.extend(arrs_i.iter().copied());
    for st in prefix_m {
        elsewhere.extend(uses(&st.exp));
    }
    if elsewhere.iter().any(|x| row_elems.contains(x)) {
        return None;
    }
    let reads = row_params.iter().map(|(p, row)| Stm {
        pat: vec![(*p).clone()],
        exp: Exp::Basic(BasicOp::Index(**row, vec![DimIndex::Fix(SubExp::Var(j))])),
        src: mid_stm.src.clone(),
    });
    // map_i (\i row -> prefix_m; map_l (\l -> x = row[j]; work; update)), inside map_j.
    let mut inner2 = inner.clone();
    inner2.body.stms = reads.chain(inner.body.stms.iter().cloned()).collect();
    let mut outer2 = outer.clone();
    outer2.body.stms = prefix_m.to_vec();
    outer2.body.stms.push(effect_map(
        w_i.clone(),
        inner2,
        arrs_i.to_vec(),
        inner_stm.src.clone(),
    ));
    let swapped = effect_map(w_o.clone(), outer2, arrs_o.to_vec(), s.src.clone());
    let mut mid2 = mid.clone();
    mid2.id = LamId::fresh();
    mid2.params = kept.iter().map(|(p, _)| (*p).clone()).collect();
    mid2.body.stms = interchanged(&swapped, ns)?;
    let mut out = prefix_o.to_vec();
    out.push(effect_map(
        w_m.clone(),
        mid2,
        kept.iter().map(|(_, a)| **a).collect(),
        mid_stm.src.clone(),
    ));
    Some(out)
}

/// `s` with its map over `j` made a sum inside the inner map, and the iotas it moved out
/// before it; `None` when `s` is not such a nest.
fn interchanged(s: &Stm, ns: &mut NameSource) -> Option<Vec<Stm>> {
    let UpdateNest {
        w_o: w_outer,
        outer,
        arrs_o: outer_arrs,
        prefix,
        w_i: w,
        inner,
        arrs_i: arrs,
        work,
        update,
        acc,
        is,
        v,
        t,
        ..
    } = update_nest(s)?;
    // The outer body holds only iotas besides the inner map.
    let iotas_only = prefix
        .iter()
        .all(|st| runic_ir::traverse::iota_width(&st.exp).is_some());
    if !iotas_only {
        return None;
    }
    let pure = work.iter().all(|st| {
        !any_exp(&st.exp, |e| {
            matches!(
                e,
                Exp::Basic(BasicOp::UpdateAcc { .. }) | Exp::WithAcc { .. } | Exp::Apply { .. }
            )
        })
    });
    // Neither the outer map's parameters nor what the inner body computes decide where
    // the update goes or what the inner map runs over.
    let outer_params: HashSet<VName> = outer.params.iter().map(|p| p.name).collect();
    let inner_bound = binders(&inner.body);
    let index_uses = uses(is);
    let mut shape_uses = uses(w);
    shape_uses.extend(arrs.iter().copied());
    for st in prefix {
        shape_uses.extend(uses(&st.exp));
    }
    let decided_outside = index_uses
        .iter()
        .all(|x| !outer_params.contains(x) && !inner_bound.contains(x))
        && shape_uses.iter().all(|x| !outer_params.contains(x));
    if !pure || !decided_outside || !work.iter().all(|st| removable_or_read(&st.exp)) {
        return None;
    }
    // The sum over the outer map's elements of the inner body's value.
    let mut b = Builder::new(ns);
    let zero = SubExp::Const(Prim::float(t, 0.0));
    let pre = Lambda::new(
        outer.params.clone(),
        Body {
            stms: work.to_vec(),
            result: vec![SubExp::Var(v)],
        },
        vec![Type::Prim(t)],
    );
    let add = b.binop_lam(BinOp::Add, t);
    let pre = b.renamed(&pre);
    let sum = b.bind1(
        "sum",
        Exp::Soac(Soac::Reduce {
            w: w_outer.clone(),
            arrs: outer_arrs.to_vec(),
            pre: Some(pre),
            lam: add,
            neutral: vec![zero],
            commutative: true,
        }),
        Type::Prim(t),
    );
    b.add(Stm {
        pat: update.pat.clone(),
        exp: Exp::Basic(BasicOp::UpdateAcc {
            acc,
            is: is.to_vec(),
            vals: vec![SubExp::Var(sum)],
        }),
        src: update.src.clone(),
    });
    let inner_body = b.take_stms();
    let mut new_inner = inner.clone();
    new_inner.id = LamId::fresh();
    new_inner.body = Body {
        stms: inner_body,
        result: vec![],
    };
    let mut out = prefix.to_vec();
    out.push(effect_map(
        w.clone(),
        new_inner,
        arrs.to_vec(),
        s.src.clone(),
    ));
    Some(out)
}

/// A statement the sum may run as often as the nest did: anything without effects (a read
/// that fails fails for the same elements either way).
fn removable_or_read(e: &Exp) -> bool {
    removable(e) || matches!(e, Exp::Basic(BasicOp::Index(..)))
}
