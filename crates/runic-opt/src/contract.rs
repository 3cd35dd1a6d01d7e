//! Contractions apart from their epilogues: a map nest whose inner body is a dot product
//! followed by scalar code,
//!
//! ```text
//! map (\r… -> map (\c… -> f (reduce (+) 0 (map2 (*) r c)) …) …) …
//! ```
//!
//! (a layer `relu (W·x + b)` after fusion), becomes the contraction alone and a map nest
//! of the scalar code over its result:
//!
//! ```text
//! let C = map (\r… -> map (\c… -> reduce (+) 0 (map2 (*) r c)) …) …
//! map (\r… crow -> map (\c… z -> f z …) … crow) … C
//! ```
//!
//! so that the executor can run the contraction as a matrix product (GEMM) and the rest as
//! an elementwise kernel. It runs after fusion, which would otherwise merge them again.
//! Only the shape is checked here (a dot product: `reduce (+) 0` over products of two
//! elements); whether the operands suit a GEMM is the executor's decision, and a nest it
//! does not take costs one extra pass over `C`.
//!
//! Batched products come from applying the same steps level by level, inner bodies first:
//! in the GMM's `map (\x -> … map (\μ Q … -> … ‖Q·(x − μ)‖² …) …) xs`, the products are
//! split out of the sum of squares (a dot product in a reduce's per-element lambda, read
//! only through the lambda's parameters and outer values, becomes a map of its own), the
//! map over components is split before them (`x − μ` stored per component) and they are
//! hoisted out of it, then the same happens one level up, giving
//! `D = map (\x -> map (\μ -> x − μ)) xs` and
//! `Y = map (\x d -> map (\Q dₖ -> map (\row -> dot row dₖ) Q) Qs d) xs D`: per component
//! `k`, `Y[·][k] = D[·][k]·Q_kᵀ`, which the executor runs as a batched GEMM whose batch
//! index is the middle map's. The conditions are those of each step: the nest reads only
//! the enclosing lambda's parameters, rows of them, iotas and values from outside (after
//! fission has stored what it read from the body per iteration, which needs those values'
//! sizes to be known outside the map and no accumulators among them). Storing `D` costs
//! one array of the products' size; the products are the same multiply-adds as before.
//! The `reuse` module then removes what reverse mode computed twice.

use runic_ir::traverse::{binders, for_each_body_mut, uses, walk_exp_mut, Renamer};
use runic_ir::*;
use std::collections::HashSet;

pub fn split_contractions(mut prog: Prog) -> Prog {
    prog.record_types();
    let mut ns = std::mem::take(&mut prog.names);
    for f in &mut prog.funs {
        for_each_body_mut(&mut f.body, |body| {
            split_dots(body, &mut ns);
            hoist_dot_nests(body, &mut ns);
            let moved = crate::hoist::out_of_with_accs(body);
            crate::reuse::reuse_stored(body);
            crate::hoist::back_into_with_accs(body, moved);
            forward_param_results(body);
            // Results forwarded to copies can make later maps equal to earlier ones.
            crate::reuse::reuse_stored(body);
            crate::reuse::export_recomputed(body, &mut ns);
            let mut i = 0;
            while i < body.stms.len() {
                match split(&body.stms[i], &mut ns) {
                    Some((c, rest)) => {
                        body.stms.splice(i..=i, [c, rest]);
                        i += 2;
                    }
                    None => i += 1,
                }
            }
        });
    }
    prog.names = ns;
    prog
}

/// The contraction and the epilogue nest replacing `s`, if `s` is a dot-product nest with
/// an epilogue.
fn split(s: &Stm, ns: &mut NameSource) -> Option<(Stm, Stm)> {
    let (
        Exp::Soac(Soac::Map {
            w: m,
            lam: l1,
            arrs: a1,
        }),
        [out],
    ) = (&s.exp, s.pat.as_slice())
    else {
        return None;
    };
    let inner = inner_map(&l1.body)?;
    let Exp::Soac(Soac::Map { w: p, lam: l2, .. }) = &l1.body.stms[inner].exp else {
        return None;
    };
    let r = dot_product(&l2.body)?;
    let red = l2.body.stms[r].pat[0].clone();
    // Something after the dot product, and the nest's row is its result.
    if l2.body.stms.len() == r + 1
        || l1.body.result != [SubExp::Var(l1.body.stms[inner].pat[0].name)]
    {
        return None;
    }
    let elem = red.ty.elem()?;
    let c_ty = Type::Prim(elem).array_of(p.clone()).array_of(m.clone());
    // The contraction: the nest up to the dot product.
    let mut contraction = s.clone();
    let c = ns.fresh_typed("contraction", c_ty.clone());
    contraction.pat = vec![Param { name: c, ty: c_ty }];
    {
        let Exp::Soac(Soac::Map { lam: l1c, .. }) = &mut contraction.exp else {
            unreachable!()
        };
        l1c.id = LamId::fresh();
        l1c.ret = vec![Type::Prim(elem).array_of(p.clone())];
        let row = &mut l1c.body.stms[inner];
        let Exp::Soac(Soac::Map { lam: l2c, .. }) = &mut row.exp else {
            unreachable!()
        };
        l2c.id = LamId::fresh();
        l2c.body.stms.truncate(r + 1);
        l2c.body.result = vec![SubExp::Var(red.name)];
        l2c.ret = vec![Type::Prim(elem)];
        row.pat[0].ty = Type::Prim(elem).array_of(p.clone());
    }
    // The epilogue: a renamed copy of the nest, reading the dot product from C.
    let mut epilogue = s.clone();
    walk_exp_mut(&mut Renamer::new(ns), &mut epilogue.exp);
    let Exp::Soac(Soac::Map { lam: l1e, arrs, .. }) = &mut epilogue.exp else {
        unreachable!()
    };
    arrs.push(c);
    let crow = ns.fresh_typed("crow", Type::Prim(elem).array_of(p.clone()));
    l1e.params.push(Param {
        name: crow,
        ty: Type::Prim(elem).array_of(p.clone()),
    });
    let Exp::Soac(Soac::Map {
        lam: l2e,
        arrs: a2e,
        ..
    }) = &mut l1e.body.stms[inner].exp
    else {
        unreachable!()
    };
    a2e.push(crow);
    // The dot product's variable becomes the parameter that receives it.
    let dot = l2e.body.stms[r].pat[0].clone();
    // What comes before the dot product goes with it, unless the epilogue reads it.
    let epilogue_reads = uses(&l2e.body.stms[r + 1..]);
    let apart = l2e.body.stms[..r].iter().all(|st| {
        matches!(st.exp, Exp::Basic(BasicOp::ShapeCheck { .. }))
            || st.pat.iter().all(|p| {
                !epilogue_reads.contains(&p.name) && !uses(&l2e.body.result).contains(&p.name)
            })
    });
    if !apart {
        return None;
    }
    l2e.body.stms.drain(..=r);
    let dot_name = dot.name;
    l2e.params.push(dot);
    // The epilogue no longer reads the operands' rows, nor the slices they came from
    // (`w[g]`): both go. The contraction makes those reads first, in every iteration,
    // so any failure of theirs still happens.
    let read = uses(&l2e.body);
    let (params, inputs): (Vec<Param>, Vec<VName>) = (l2e.params.drain(..))
        .zip(a2e.drain(..))
        .filter(|(p, _)| p.name == dot_name || read.contains(&p.name))
        .unzip();
    (l2e.params, *a2e) = (params, inputs);
    let still_read = uses(&l1e.body);
    l1e.body.stms.retain(|st| {
        !matches!(st.exp, Exp::Basic(BasicOp::Index(..)))
            || binders(st).iter().any(|v| still_read.contains(v))
    });
    ns.record_types(&epilogue);
    let _ = (a1, out);
    Some((contraction, epilogue))
}

/// The position of the only map among a body's statements (the others iotas, and reads
/// before the map: `w[g]`, one matrix of a stack, which the GEMM recogniser follows).
pub(crate) fn inner_map(body: &Body) -> Option<usize> {
    let mut found = None;
    for (k, st) in body.stms.iter().enumerate() {
        match &st.exp {
            Exp::Basic(BasicOp::Range { .. }) => {}
            Exp::Basic(BasicOp::Index(..)) if found.is_none() => {}
            Exp::Soac(Soac::Map { .. }) if found.is_none() && st.pat.len() == 1 => found = Some(k),
            _ => return None,
        }
    }
    found
}

/// Statements a dot product's body may hold before its `reduce`: shape checks, and the
/// `iota` of the summed index when the product is written with indices
/// (`reduce (+) 0 (map (\l -> a[i, l] * b[l, j]) (iota k))`).
fn before_dot(st: &Stm) -> bool {
    matches!(
        st.exp,
        Exp::Basic(BasicOp::ShapeCheck { .. } | BasicOp::Range { .. })
    )
}

/// The position of a body's dot product, `reduce (+) 0` over products of two elements,
/// after shape checks and iotas only.
fn dot_product(body: &Body) -> Option<usize> {
    let r = body.stms.iter().position(|st| !before_dot(st))?;
    let st = &body.stms[r];
    let Exp::Soac(Soac::Reduce {
        pre: Some(pre),
        lam,
        neutral,
        ..
    }) = &st.exp
    else {
        return None;
    };
    let float = matches!(st.pat.as_slice(), [x] if matches!(x.ty, Type::Prim(PrimType::F32 | PrimType::F64)));
    let zero = matches!(neutral.as_slice(), [z] if crate::simplify::is_zero_const(z));
    let add = matches!(lam.body.stms.as_slice(), [s] if matches!(s.exp, Exp::Basic(BasicOp::BinOp(BinOp::Add, _, _))));
    let products = pre.body.stms.iter().all(|s| {
        matches!(
            s.exp,
            Exp::Basic(BasicOp::Index(..)) | Exp::Basic(BasicOp::BinOp(BinOp::Mul, _, _))
        )
    }) && pre
        .body
        .stms
        .iter()
        .filter(|s| matches!(s.exp, Exp::Basic(BasicOp::BinOp(BinOp::Mul, _, _))))
        .count()
        == 1;
    (float && zero && add && products).then_some(r)
}

/// Map fission for dot-product nests: in `map (\x… -> …; let y = map (\c -> dot …) …; …)`,
/// a nest `y` that reads only the map's parameters and variables from outside becomes its
/// own map over the same inputs (`let Y = map (\x… -> y) …`), and the body reads row `Y[i]`
/// instead. The forward pass that reverse mode recomputes inside an adjoint map is such a
/// nest (a layer applied to each batch row); on its own it is a matrix product.
fn hoist_dot_nests(body: &mut Body, ns: &mut NameSource) {
    let mut i = 0;
    while i < body.stms.len() {
        if let Some((first, rest)) = split_before_dot_nest(&body.stms[i], ns) {
            // The nest now starts a map of its own, and can be hoisted from it.
            body.stms.splice(i..=i, [first, rest]);
            continue;
        }
        match hoist_one(&mut body.stms[i], ns) {
            Some(hoisted) => {
                body.stms.insert(i, hoisted);
                i += 1; // the map may hold another nest: look at it again
            }
            None => i += 1,
        }
    }
}

/// Takes one dot-product nest out of the map `s` (which then reads its rows), if any; `s`
/// may also be a reduce or scan with a per-element lambda.
fn hoist_one(s: &mut Stm, ns: &mut NameSource) -> Option<Stm> {
    let (w, lam, arrs) = element_lambda(&mut s.exp)?;
    if lam.body.stms.len() < 2 {
        return None;
    }
    let params: HashSet<VName> = lam.params.iter().map(|p| p.name).collect();
    let local = binders(&lam.body);
    // Reads of a parameter (`x[i]`, a row of the iteration's input) and iotas go along as
    // copies.
    let reads: Vec<&Stm> = lam
        .body
        .stms
        .iter()
        .filter(|st| {
            let read = match &st.exp {
                Exp::Basic(BasicOp::Index(a, _)) if params.contains(a) => true,
                // An invariant read (`w[g]`); not a gather at a parameter (see
                // `outside_read`).
                Exp::Basic(BasicOp::Index(..)) => outside_read(st, &local, &params),
                _ => false,
            };
            let iota = matches!(st.exp, Exp::Basic(BasicOp::Range { .. }));
            (read || iota)
                && uses(*st)
                    .iter()
                    .all(|v| params.contains(v) || !local.contains(v))
        })
        .collect();
    let read_names: HashSet<VName> = reads.iter().flat_map(|st| binders(*st)).collect();
    let k = lam.body.stms.iter().position(|st| {
        let Exp::Soac(Soac::Map { lam: l2, .. }) = &st.exp else {
            return false;
        };
        let own = binders(st);
        st.pat.len() == 1
            && contraction_lambda(l2)
            && uses(st).iter().all(|v| {
                params.contains(v)
                    || read_names.contains(v)
                    || !local.contains(v)
                    || own.contains(v)
            })
    })?;
    let st = lam.body.stms[k].clone();
    let y = st.pat[0].clone();
    let needed = uses(&st);
    let mut stms: Vec<Stm> = reads
        .into_iter()
        .filter(|r| r.pat.iter().any(|p| needed.contains(&p.name)))
        .cloned()
        .collect();
    let copied: HashSet<VName> = stms.iter().flat_map(binders).collect();
    stms.push(st);
    // The new map: the same inputs, the nest (after its reads) as its body.
    let nest = copied_lambda(&lam.params, stms, &y, ns);
    let all = y.ty.clone().array_of(w.clone());
    let ys = ns.fresh_typed("hoisted", all.clone());
    let hoisted = Stm {
        pat: vec![Param { name: ys, ty: all }],
        exp: Exp::Soac(Soac::Map {
            w: w.clone(),
            lam: nest,
            arrs: arrs.clone(),
        }),
        src: s.src.clone(),
    };
    // The old map reads row i of it in place of the nest. The reads that went along and
    // that nothing else reads go: the new map makes them in every iteration first, so
    // any failure of theirs happens there.
    lam.body.stms.remove(k);
    let still_read = uses(&lam.body);
    lam.body.stms.retain(|st| {
        !(binders(st)
            .iter()
            .all(|v| copied.contains(v) && !still_read.contains(v))
            && matches!(
                st.exp,
                Exp::Basic(BasicOp::Index(..) | BasicOp::Range { .. })
            ))
    });
    lam.params.push(y);
    arrs.push(ys);
    lam.id = LamId::fresh();
    Some(hoisted)
}

/// Map fission before a dot-product nest that reads values computed earlier in the map's
/// body (or in a reduce's or scan's per-element lambda): `map (\x -> s₁…; nest; s₂…)` becomes `let (L…) = map (\x -> s₁…; L…)` and
/// `map (\x l… -> nest; s₂…)`, where `L` are the values of `s₁…` that the rest reads (now
/// stored per iteration). The nest then reads only parameters, so [`hoist_one`] can take
/// it out as a matrix product.
fn split_before_dot_nest(s: &Stm, ns: &mut NameSource) -> Option<(Stm, Stm)> {
    let mut rest = s.clone();
    let (w, lam, arrs) = element_lambda(&mut rest.exp)?;
    let (w, lam, arrs) = (w.clone(), lam.clone(), arrs.clone());
    let (w, lam, arrs) = (&w, &lam, &arrs);
    let params: HashSet<VName> = lam.params.iter().map(|p| p.name).collect();
    let k = lam.body.stms.iter().position(|st| {
        let Exp::Soac(Soac::Map { lam: l2, .. }) = &st.exp else {
            return false;
        };
        st.pat.len() == 1 && contraction_lambda(l2)
    })?;
    let before = &lam.body.stms[..k];
    let defined: HashSet<VName> = before.iter().flat_map(binders).collect();
    // Only worth it when the nest reads something computed before it (other than row
    // reads of parameters, which `hoist_one` copies, and iotas).
    let computed = |v: &VName| {
        before.iter().any(|st| {
            st.pat.iter().any(|p| p.name == *v)
                && !matches!(&st.exp, Exp::Basic(BasicOp::Index(a, _)) if params.contains(a))
                && !matches!(st.exp, Exp::Basic(BasicOp::Range { .. }))
                && !outside_read(st, &defined, &params)
        })
    };
    if k == 0 || !uses(&lam.body.stms[k]).iter().any(computed) {
        return None;
    }
    // The values the rest of the body reads from the first part. Iotas whose size is
    // known outside the map are computed again in the rest rather than stored per
    // iteration (the GEMM recogniser sees them as indices), and so are reads of arrays
    // from outside (`w[0]`, the same matrix in every iteration, stored per iteration
    // would be a copy of it per row).
    let mut after = Body {
        stms: lam.body.stms[k..].to_vec(),
        result: lam.body.result.clone(),
    };
    let read = uses(&after);
    let recomputed: Vec<Stm> = before
        .iter()
        .filter(|st| {
            let iota = matches!(st.exp, Exp::Basic(BasicOp::Range { .. }))
                && uses(*st)
                    .iter()
                    .all(|v| !defined.contains(v) && !params.contains(v));
            (iota || outside_read(st, &defined, &params))
                && st.pat.iter().any(|p| read.contains(&p.name))
        })
        .cloned()
        .collect();
    after.stms.splice(0..0, recomputed);
    let mut carried: Vec<VName> = uses(&after)
        .into_iter()
        .filter(|v| defined.contains(v) && !binders(&after).contains(v))
        .collect();
    carried.sort();
    let mut types = Vec::new();
    for v in &carried {
        let t = ns.type_of(*v)?.clone();
        // Accumulators cannot be stored, and sizes must be known outside the map.
        if matches!(t, Type::Acc { .. })
            || uses(&t)
                .iter()
                .any(|x| defined.contains(x) || params.contains(x))
        {
            return None;
        }
        types.push(t);
    }
    let first_lam = Lambda::new(
        lam.params.clone(),
        Body {
            stms: before.to_vec(),
            result: carried.iter().map(|v| SubExp::Var(*v)).collect(),
        },
        types.clone(),
    );
    let mut first_lam = first_lam;
    walk_lambda_renamed(&mut first_lam, ns);
    let stored: Vec<Param> = carried
        .iter()
        .zip(&types)
        .map(|(_, t)| {
            let ty = t.clone().array_of(w.clone());
            Param {
                name: ns.fresh_typed("stored", ty.clone()),
                ty,
            }
        })
        .collect();
    let first = Stm {
        pat: stored.clone(),
        exp: Exp::Soac(Soac::Map {
            w: w.clone(),
            lam: first_lam,
            arrs: arrs.clone(),
        }),
        src: s.src.clone(),
    };
    // The rest: the carried values become parameters (same names: they are no longer
    // bound in this lambda's body).
    let mut rest_lam = lam.clone();
    rest_lam.id = LamId::fresh();
    rest_lam.body = after;
    for (v, t) in carried.iter().zip(&types) {
        rest_lam.params.push(Param {
            name: *v,
            ty: t.clone(),
        });
    }
    let mut rest_arrs = arrs.clone();
    rest_arrs.extend(stored.iter().map(|p| p.name));
    let (_, l, a) = element_lambda(&mut rest.exp)?;
    *l = rest_lam;
    *a = rest_arrs;
    Some((first, rest))
}

/// Whether `st` reads an element or a slice of an array from outside a lambda (neither
/// one of its `params` nor bound by its statements `defined`) at subscripts that depend
/// on neither: the same value in every iteration (`w[g]`), which a fission computes again
/// rather than storing it per iteration. (A read at a parameter, a gather `h[src]`, is
/// stored: the gathered rows are then an operand of a matrix product.)
fn outside_read(st: &Stm, defined: &HashSet<VName>, params: &HashSet<VName>) -> bool {
    matches!(&st.exp, Exp::Basic(BasicOp::Index(..)))
        && uses(st)
            .iter()
            .all(|v| !defined.contains(v) && !params.contains(v))
}

/// The lambda applied to each element of a SOAC, with the width and the input arrays: a
/// map's lambda, or the per-element lambda of a reduce or scan (a fused map).
pub(crate) fn element_lambda(e: &mut Exp) -> Option<(&mut SubExp, &mut Lambda, &mut Vec<VName>)> {
    match e {
        Exp::Soac(Soac::Map { w, lam, arrs }) => Some((w, lam, arrs)),
        Exp::Soac(Soac::Reduce {
            w,
            pre: Some(lam),
            arrs,
            ..
        })
        | Exp::Soac(Soac::Scan {
            w,
            pre: Some(lam),
            arrs,
            ..
        }) => Some((w, lam, arrs)),
        _ => None,
    }
}

/// `\params -> stms; result`, from copies of another lambda's parameters and statements:
/// renamed (fresh binders, a fresh id) so that it can live beside the original.
fn copied_lambda(params: &[Param], stms: Vec<Stm>, result: &Param, ns: &mut NameSource) -> Lambda {
    let body = Body {
        stms,
        result: vec![SubExp::Var(result.name)],
    };
    let mut lam = Lambda::new(params.to_vec(), body, vec![result.ty.clone()]);
    walk_lambda_renamed(&mut lam, ns);
    lam
}

/// Gives a lambda built from copied statements fresh binders (and a fresh id).
fn walk_lambda_renamed(lam: &mut Lambda, ns: &mut NameSource) {
    runic_ir::traverse::VisitorMut::lambda(&mut Renamer::new(ns), lam);
    ns.record_types(&*lam);
}

/// Whether a map with this lambda computes dot products (one per element), or a row of
/// them per element (a matrix product): what hoisting takes out of an enclosing map.
fn contraction_lambda(l: &Lambda) -> bool {
    dot_nest(l, Some(1))
}

/// Whether a lambda is a perfect map nest, of any depth, around a dot product (a matrix
/// product or a batch of them, which the executor may run as a GEMM).
pub(crate) fn contraction_nest(l: &Lambda) -> bool {
    dot_nest(l, None)
}

/// A dot product inside at most `levels` maps (any number when `None`), each the body's
/// only statement besides iotas and returned alone.
fn dot_nest(l: &Lambda, levels: Option<usize>) -> bool {
    if dot_product(&l.body).is_some() {
        return true;
    }
    if levels == Some(0) {
        return false;
    }
    let Some(k) = inner_map(&l.body) else {
        return false;
    };
    let Exp::Soac(Soac::Map { lam, .. }) = &l.body.stms[k].exp else {
        return false;
    };
    lam.body.result.len() == 1
        && l.body.result == [SubExp::Var(l.body.stms[k].pat[0].name)]
        && dot_nest(lam, levels.map(|n| n - 1))
}

/// Fission of dot products: in `map (\p… -> …; d₁ = dot …; d₂ = dot …; …)`, each dot
/// product that reads only the lambda's parameters and outside values becomes a map of
/// its own (`D₁ = map (\p… -> dot …)`), and the map reads `D₁`, `D₂` as inputs. Each `Dᵢ`
/// is then a matrix-vector product that hoisting can turn into a matrix product (the gates
/// of an LSTM, `W·x + U·h + b`, hold two). The same holds for the per-element lambda of a
/// reduce or scan, where fusion put a matrix-vector product (`‖Q·v‖²` is
/// `reduce (+) 0 (map (\row -> let t = dot row v in t*t) Q)`): the products become a map,
/// the reduce reads them.
fn split_dots(body: &mut Body, ns: &mut NameSource) {
    crate::expand_stms(body, |_, s| split_dots_of(s, ns));
}

/// The maps replacing `s` by [`split_dots`], if it has dot products to split off.
fn split_dots_of(s: &Stm, ns: &mut NameSource) -> Option<Vec<Stm>> {
    let mut exp = s.exp.clone();
    let (w, lam, arrs) = element_lambda(&mut exp)?;
    let (w, lam, arrs) = (&w.clone(), &lam.clone(), &arrs.clone());
    let local = binders(&lam.body);
    let outside_only = |st: &Stm| {
        uses(st)
            .iter()
            .all(|v| !local.contains(v) || binders(st).contains(v))
    };
    let is_check = |st: &Stm| matches!(st.exp, Exp::Basic(BasicOp::ShapeCheck { .. }));
    let dots: Vec<usize> = (0..lam.body.stms.len())
        .filter(|&k| {
            let st = &lam.body.stms[k];
            let one = Body {
                stms: vec![st.clone()],
                result: Vec::new(),
            };
            st.pat.len() == 1 && dot_product(&one) == Some(0) && outside_only(st)
        })
        .collect();
    // Nothing to split: no dot, or the body is already one dot product (after checks).
    let others = lam
        .body
        .stms
        .iter()
        .enumerate()
        .filter(|(k, st)| !dots.contains(k) && !is_check(st))
        .count();
    if dots.is_empty() || (dots.len() == 1 && others == 0) {
        return None;
    }
    let checks: Vec<Stm> = lam
        .body
        .stms
        .iter()
        .filter(|st| is_check(st) && outside_only(st))
        .cloned()
        .collect();
    let mut out = Vec::new();
    let mut rest = lam.clone();
    rest.id = LamId::fresh();
    let mut rest_arrs = arrs.clone();
    for &k in &dots {
        let st = &lam.body.stms[k];
        let d = st.pat[0].clone();
        let mut stms = checks.clone();
        stms.push(st.clone());
        let dl = copied_lambda(&lam.params, stms, &d, ns);
        let all = d.ty.clone().array_of(w.clone());
        let ds = ns.fresh_typed("dots", all.clone());
        out.push(Stm {
            pat: vec![Param { name: ds, ty: all }],
            exp: Exp::Soac(Soac::Map {
                w: w.clone(),
                lam: dl,
                arrs: arrs.clone(),
            }),
            src: s.src.clone(),
        });
        // The rest receives the dot product as a parameter of the same name.
        rest.params.push(d);
        rest_arrs.push(ds);
    }
    rest.body.stms = lam
        .body
        .stms
        .iter()
        .enumerate()
        .filter(|(k, _)| !dots.contains(k))
        .map(|(_, st)| st.clone())
        .collect();
    let (_, l, a) = element_lambda(&mut exp)?;
    *l = rest;
    *a = rest_arrs;
    out.push(Stm {
        pat: s.pat.clone(),
        exp,
        src: s.src.clone(),
    });
    Some(out)
}

/// A map result that is one of its lambda's parameters (directly or through copies) is
/// that parameter's input array: `let (…, y, …) = map (\…p… -> …; (…, p, …)) …a…` becomes
/// the map without `y` and `let y = a`. Fission and hoisting leave such results behind
/// (a value stored per iteration for later code, that became an input of the map), and
/// computing them copies a whole array. Inner bodies are rewritten first, so a nest that
/// passes a row through each level becomes a copy of the outer input.
fn forward_param_results(body: &mut Body) {
    let mut i = 0;
    while i < body.stms.len() {
        let forwarded = forwarded_results(&mut body.stms[i]);
        let n = forwarded.len();
        let src = body.stms[i].src.clone();
        let copies = forwarded.into_iter().map(|(y, a)| Stm {
            pat: vec![y],
            exp: Exp::Basic(BasicOp::SubExp(SubExp::Var(a))),
            src: src.clone(),
        });
        body.stms.splice(i + 1..i + 1, copies);
        i += 1 + n;
    }
}

/// Removes from the map `s` the results that are parameters of its lambda, returning each
/// removed binder with the input array it equals.
fn forwarded_results(s: &mut Stm) -> Vec<(Param, VName)> {
    let Exp::Soac(Soac::Map { lam, arrs, .. }) = &mut s.exp else {
        return Vec::new();
    };
    if s.pat.len() != lam.body.result.len() {
        return Vec::new();
    }
    // Copies in the body: `let x = y`.
    let copies: std::collections::HashMap<VName, VName> = lam
        .body
        .stms
        .iter()
        .filter_map(|st| match (&st.exp, st.pat.as_slice()) {
            (Exp::Basic(BasicOp::SubExp(SubExp::Var(y))), [x]) => Some((x.name, *y)),
            _ => None,
        })
        .collect();
    let input_of = |v: VName| {
        let mut v = v;
        for _ in 0..=copies.len() {
            if let Some(k) = lam.params.iter().position(|p| p.name == v) {
                return Some(arrs[k]);
            }
            v = *copies.get(&v)?;
        }
        None
    };
    let mut out = Vec::new();
    let mut k = 0;
    while k < s.pat.len() {
        let a = lam.body.result[k].as_var().and_then(input_of);
        match a {
            // Same type: the parameter is a row of `a`, the result the rows stacked.
            Some(a)
                if lam.ret[k] == lam.params[arrs.iter().position(|x| *x == a).unwrap_or(0)].ty =>
            {
                out.push((s.pat.remove(k), a));
                lam.body.result.remove(k);
                lam.ret.remove(k);
            }
            _ => k += 1,
        }
    }
    if !out.is_empty() {
        lam.id = LamId::fresh();
    }
    out
}
