//! Accumulator optimisation: turn the adjoint of an array that every iteration of a map
//! reads into a reduction over the map, instead of a scatter through an accumulator.
//!
//! Reverse mode gives a free array `a` of `map f xs` the adjoint
//!
//! ```text
//! with_acc (dest, +) \acc -> map (\x… -> …; let V = …; acc[j, k] += V[j, k] for all j, k) xs
//! ```
//!
//! The update indices `j, k` do not depend on the map's iteration `b`, so the result is
//! `dest + Σ_b V_b`. With `V_b[j, k] = f(b, j, k)` (V built by a perfect map nest, as the
//! adjoint of a nest is), the pass writes it as a map over the indices of a map-reduce
//! over the iterations:
//!
//! ```text
//! let (ys…, F…) = map (\x… -> everything but V and its updates; (ys…, F…)) xs
//! let R = map (\j -> map (\k -> dest[j, k] + reduce (+) 0 (map (\b -> f(b, j, k)) (iota n))))
//! ```
//!
//! where `F…` are the per-iteration values `f` needs. When every update is a whole
//! stored value (`V_b` kept per iteration), the sum is instead chosen at run time: one
//! reduction over the stored rows, elementwise, when there are at least as many rows as
//! elements per row (each worker then reads its rows in order), else the nest above. For the MLP's weights `f(b, j, k)`
//! is `δ[b, j] · x[b, k]`: the nest is the matrix product `δᵀ x`, which the executor runs
//! as a GEMM. Work stays the same (one multiply-add per update); the updates become a
//! dense, cache-friendly contraction with no synchronisation.
//!
//! The rewrite applies when at least one update is such a matrix product (the sum of other
//! element codes reads its operands down columns, and the executor's per-worker
//! accumulators do better), the accumulators are updated in one map, and each accumulator
//! it turns into a sum gets whole-array updates (`acc[j…] += V[j…]` over all indices, as
//! `acc_add_all` builds them) with scalar `+`, each `V` a vector, or a matrix built by rows
//! (inner maps, inlined at each index; also through a `rearrange`, attention's
//! `dV = Aᵀ·dO`, by permuting the index) or of reductions (stored per iteration as a
//! batched contraction and summed). The other accumulators (a scatter of gathered rows,
//! as a graph network's) stay those of a smaller `with_acc` around the split map, which
//! also returns the per-iteration values the sums read; anything else is left alone.
//!
//! An accumulator whose updates all fall in a few rows `g` of its outer dimension (the
//! adjoint of `w[g]`, matrices of a stack read inside the map) is first split into one
//! accumulator per row (`narrow.rs`), rewritten as above, each sum added into its row of
//! the destination where the row is in bounds.

mod narrow;
mod sums;

use crate::linear;
use runic_ir::traverse::{binders, for_each_body_mut, free_vars, iota_width, iotas, uses};
use runic_ir::*;
use std::collections::{HashMap, HashSet};
use sums::{nest, rows_or_columns, stacked_rows, tail_sum, Sum};

pub fn acc_to_reduce(mut prog: Prog) -> Prog {
    // A rewrite can expose another (an inner `with_acc` whose result becomes, after copy
    // propagation, the array an outer one accumulates): repeat while something changes.
    for _ in 0..4 {
        prog.record_types();
        let mut ns = std::mem::take(&mut prog.names);
        let mut changed = false;
        for f in &mut prog.funs {
            let ranges = iotas(&f.body);
            for_each_body_mut(&mut f.body, |body| {
                changed |= rewrite_body(body, &ranges, &mut ns)
            });
        }
        prog.names = ns;
        prog = crate::simplify(prog);
        if !changed {
            break;
        }
    }
    prog
}

/// Rewrites the `with_acc` statements of one body (inner bodies were done first).
fn rewrite_body(body: &mut Body, ranges: &HashMap<VName, SubExp>, ns: &mut NameSource) -> bool {
    crate::expand_stms(body, |before, s| {
        let zeros = zero_arrays(before);
        rewrite_with_acc(s, ranges, &zeros, ns).or_else(|| narrow::narrowed(s, ranges, &zeros, ns))
    })
}

/// Arrays bound to `replicate … 0` among `stms` (a destination that needs no add).
pub(crate) fn zero_arrays(stms: &[Stm]) -> HashSet<VName> {
    stms.iter()
        .filter_map(|s| match (&s.exp, s.pat.as_slice()) {
            (e, [p]) if crate::simplify::replicates_zero(e) => Some(p.name),
            _ => None,
        })
        .collect()
}

/// One whole-array update nest `acc[j…] += V[j…]` found in the map's body.
struct Update {
    /// Position of the nest among the map body's statements.
    at: usize,
    acc: VName,
    v: VName,
}

/// The statements replacing `s`, if it is a `with_acc` the rewrite applies to.
fn rewrite_with_acc(
    s: &Stm,
    ranges: &HashMap<VName, SubExp>,
    zeros: &HashSet<VName>,
    ns: &mut NameSource,
) -> Option<Vec<Stm>> {
    let Exp::WithAcc { inputs, lam } = &s.exp else {
        return None;
    };
    let accs: Vec<VName> = lam.params.iter().map(|p| p.name).collect();
    // The body: statements that do not see the accumulators, one map that updates them,
    // and the accumulators returned first.
    let body = &lam.body;
    let touches: Vec<usize> = (0..body.stms.len())
        .filter(|&k| accs.iter().any(|a| uses(&body.stms[k]).contains(a)))
        .collect();
    let [m] = touches.as_slice() else {
        return None;
    };
    let returned: Vec<Option<VName>> = body.result[..accs.len()]
        .iter()
        .map(SubExp::as_var)
        .collect();
    if returned != accs.iter().copied().map(Some).collect::<Vec<_>>()
        || body.result[accs.len()..]
            .iter()
            .any(|r| r.as_var().is_some_and(|v| accs.contains(&v)))
    {
        return None;
    }
    let map_stm = &body.stms[*m];
    let Exp::Soac(Soac::Map { w: n, lam: f, arrs }) = &map_stm.exp else {
        return None;
    };
    // The accumulators that become sums: one destination array of the accumulator's full
    // shape, scalar `+`, and only whole-array updates. The others (a scatter of rows, say)
    // stay accumulators of a smaller `with_acc`.
    let (updates, others) = find_updates(&f.body, &accs, ranges, inputs);
    let mut summed: HashSet<VName> = accs
        .iter()
        .zip(inputs)
        .filter(|(a, inp)| {
            summable(inp, ns) && !others.contains(a) && updates.iter().any(|u| u.acc == **a)
        })
        .map(|(a, _)| *a)
        .collect();
    let params: HashMap<VName, VName> = f.params.iter().map(|p| p.name).zip(arrs.clone()).collect();
    // An accumulator whose updates' elements cannot be written out stays an accumulator
    // (a masked score that is not a plain dot product builds the keys' adjoint in a
    // branch), and the others are tried again without it.
    let (updates, rest, sources, contraction) = loop {
        if summed.is_empty() {
            return None;
        }
        let mine: Vec<&Update> = updates.iter().filter(|u| summed.contains(&u.acc)).collect();
        match element_sources(&f.body, &mine, &params, ns) {
            Ok((rest, sources, contraction)) => break (mine, rest, sources, contraction),
            Err(acc) => {
                summed.remove(&acc);
            }
        }
    };
    // Only a matrix product pays: other sums over the iterations read their operands down
    // columns, where the executor's accumulators (private per worker, updated row by row)
    // are faster.
    let used = uses(&rest);
    if !contraction || summed.iter().any(|a| used.contains(a)) {
        return None;
    }
    let lam_params: Vec<VName> = f.params.iter().map(|p| p.name).collect();
    let (rest, tails) = linear_tails(rest, &updates, &sources, &lam_params, ns);
    let bound = binders(&rest);
    let per_iter = |v: &VName| bound.contains(v) || params.contains_key(v);
    let mut needed: Vec<VName> = Vec::new();
    for src in &sources {
        let reads = match src {
            Source::Stacked(v) if tails.contains_key(v) => tails[v].frontier.clone(),
            _ => src.reads(),
        };
        for v in reads {
            if per_iter(&v) && !needed.contains(&v) {
                needed.push(v);
            }
        }
    }
    if needed
        .iter()
        .any(|v| ns.type_of(*v).is_none_or(|t| matches!(t, Type::Acc { .. })))
    {
        return None;
    }

    let mut b = Builder::new(ns);
    // Statements before the map do not see the accumulators.
    for st in &body.stms[..*m] {
        b.add(st.clone());
    }
    // The split map: the old results, then the values the element code needs.
    let computed: Vec<VName> = needed
        .iter()
        .copied()
        .filter(|v| !params.contains_key(v))
        .collect();
    let mut split = f.clone();
    split.body = rest;
    split.id = LamId::fresh();
    let mut pat = map_stm.pat.clone();
    let mut stacked: HashMap<VName, VName> = params.clone();
    // A value the map already returns (stored for an earlier sum, when no `with_acc`
    // stays around the map, and not updated in place after it) is read from that result.
    let consumed_after: HashSet<VName> = body.stms[*m + 1..]
        .iter()
        .flat_map(|s| crate::simplify::consumed(&s.exp))
        .collect();
    let computed: Vec<VName> = computed
        .into_iter()
        .filter(|v| {
            let q = split.body.result.iter().position(|r| *r == SubExp::Var(*v));
            let q = q.filter(|&q| !consumed_after.contains(&pat[q].name));
            match q.filter(|_| summed.len() == accs.len()) {
                Some(q) => {
                    stacked.insert(*v, pat[q].name);
                    false
                }
                None => true,
            }
        })
        .collect();
    for v in &computed {
        split.body.result.push(SubExp::Var(*v));
        split.ret.push(b.names.type_of(*v)?.clone());
    }
    let mut per_iter_arrays = Vec::new();
    for v in &computed {
        let t = b.names.type_of(*v)?.clone().array_of(n.clone());
        let p = b.param("per_iter", t);
        stacked.insert(*v, p.name);
        per_iter_arrays.push((*v, p.clone()));
        pat.push(p);
    }
    let split_stm = Stm {
        pat,
        exp: Exp::Soac(Soac::Map {
            w: n.clone(),
            lam: split,
            arrs: arrs.clone(),
        }),
        src: map_stm.src.clone(),
    };
    // The pattern of `s`: each input's arrays, then the lambda's other results.
    let mut at = 0;
    let mut input_pats = Vec::new();
    for inp in inputs {
        input_pats.push(&s.pat[at..at + inp.arrays.len()]);
        at += inp.arrays.len();
    }
    let other_pats = &s.pat[at..];
    let others_result: Vec<SubExp> = body.result[accs.len()..].to_vec();
    if summed.len() == accs.len() {
        b.add(split_stm);
        for st in &body.stms[*m + 1..] {
            b.add(st.clone());
        }
        for (p, r) in other_pats.iter().zip(others_result) {
            b.let_pat(vec![p.clone()], Exp::Basic(BasicOp::SubExp(r)));
        }
    } else {
        // The accumulators that stay keep a `with_acc` around the split map, which also
        // returns the per-iteration values the sums read.
        let mut kept = Lambda::new(Vec::new(), Body::default(), Vec::new());
        let mut kept_inputs = Vec::new();
        let mut kept_pat = Vec::new();
        for (k, inp) in inputs.iter().enumerate() {
            if !summed.contains(&accs[k]) {
                kept.params.push(lam.params[k].clone());
                kept.ret.push(lam.ret[k].clone());
                kept.body.result.push(body.result[k].clone());
                kept_inputs.push(inp.clone());
                kept_pat.extend(input_pats[k].iter().cloned());
            }
        }
        kept.body.stms.push(split_stm);
        kept.body.stms.extend(body.stms[*m + 1..].iter().cloned());
        kept.body.result.extend(others_result);
        kept.ret.extend(lam.ret[accs.len()..].iter().cloned());
        kept_pat.extend(other_pats.iter().cloned());
        for (v, p) in &per_iter_arrays {
            let outside = b.param("per_iter", p.ty.clone());
            stacked.insert(*v, outside.name);
            kept.body.result.push(SubExp::Var(p.name));
            kept.ret.push(p.ty.clone());
            kept_pat.push(outside);
        }
        b.let_pat(
            kept_pat,
            Exp::WithAcc {
                inputs: kept_inputs,
                lam: kept,
            },
        );
    }
    // One reduction nest per summed accumulator.
    let iters = b.iota(n.clone());
    for (k, (acc, inp)) in accs.iter().zip(inputs).enumerate() {
        if !summed.contains(acc) {
            continue;
        }
        let dest = inp.arrays[0];
        let mine: Vec<&Source> = (updates.iter().zip(&sources))
            .filter(|(u, _)| u.acc == *acc)
            .map(|(_, s)| s)
            .collect();
        let elem = b.names.type_of(dest)?.elem()?;
        let sum = Sum {
            n: n.clone(),
            iters,
            shape: inp.shape.clone(),
            updates: mine,
            stacked: &stacked,
            dest,
            dest_is_zero: zeros.contains(&dest),
            elem,
        };
        let tail = match sum.updates.as_slice() {
            [Source::Stacked(v)] => tails.get(v),
            _ => None,
        };
        let total = match (tail, stacked_rows(&sum)) {
            (Some(t), _) => tail_sum(&mut b, &sum, t),
            (None, Some(rows)) => rows_or_columns(&mut b, &sum, rows),
            (None, None) => nest(&mut b, &sum, Vec::new()).map(SubExp::Var),
        };
        b.let_pat(
            input_pats[k].to_vec(),
            Exp::Basic(BasicOp::SubExp(total.ok()?)),
        );
    }
    let mut out = b.take_stms();
    for st in &mut out {
        st.src = s.src.clone();
    }
    Some(out)
}

/// The stored per-iteration values that are linear functions of other values of the
/// iteration, with coefficients the same in every iteration (`linear::tail`): each the
/// only update of its accumulator and read by no other element code. The map's body
/// (`rest`) is returned with the values those functions read returned by its inner maps.
fn linear_tails(
    mut rest: Body,
    updates: &[&Update],
    sources: &[Source],
    params: &[VName],
    ns: &mut NameSource,
) -> (Body, HashMap<VName, linear::Tail>) {
    let mut tails = HashMap::new();
    let stored: HashSet<VName> = sources
        .iter()
        .filter(|s| !matches!(s, Source::Stacked(_)))
        .flat_map(Source::reads)
        .collect();
    for (u, src) in updates.iter().zip(sources) {
        let Source::Stacked(v) = src else {
            continue;
        };
        let alone = updates.iter().filter(|w| w.acc == u.acc).count() == 1
            && sources.iter().filter(|s| s.reads().contains(v)).count() == 1;
        if !alone || params.contains(v) {
            continue;
        }
        if let Some((body, t)) = linear::tail(&rest, params, &stored, *v, ns) {
            rest = body;
            tails.insert(*v, t);
        }
    }
    (rest, tails)
}

/// The map's body without the updates, how the elements of each update's `V` are
/// computed, and whether one of them is a matrix product; or the accumulator of an update
/// whose elements cannot be written out.
fn element_sources(
    body: &Body,
    updates: &[&Update],
    params: &HashMap<VName, VName>,
    ns: &mut NameSource,
) -> Result<(Body, Vec<Source>, bool), VName> {
    let mut rest = body.clone();
    let drop: HashSet<usize> = updates.iter().map(|u| u.at).collect();
    rest.stms = rest
        .stms
        .into_iter()
        .enumerate()
        .filter(|(k, _)| !drop.contains(k))
        .map(|(_, s)| s)
        .collect();
    let mut sources = Vec::new();
    let mut contraction = false;
    for u in updates {
        let rank = ns.type_of(u.v).ok_or(u.acc)?.rank();
        let src = if params.contains_key(&u.v) {
            Source::Stacked(u.v)
        } else if rank == 1 {
            let src = scalar_map_source(&rest, u.v).unwrap_or(Source::Stacked(u.v));
            contraction |= src.is_product();
            src
        } else if rank == 2 && rows_are_reductions(&rest, u.v) {
            // Each element costs a reduction anyway: store V per iteration (a contraction
            // per iteration, which hoisting makes a batched matrix product) and sum. (Not
            // for higher ranks: V per iteration could take far more memory than its work.)
            contraction = true;
            Source::Stacked(u.v)
        } else {
            // `V` may be the transpose of the matrix a map nest builds (the adjoint of a
            // `transpose`, as attention's `dV` is): that matrix is split out instead.
            let built = match transposition(&rest, u.v) {
                Some((at, w, perm)) => {
                    rest.stms.remove(at);
                    Some((w, perm))
                }
                None => None,
            };
            let m = built.as_ref().map_or(u.v, |(w, _)| *w);
            if read_in(&rest, u.v) || read_in(&rest, m) {
                return Err(u.acc);
            }
            let mut src = split_inner_map(&mut rest, m, ns).ok_or(u.acc)?;
            if let (Source::Inner { perm, .. }, Some((_, p))) = (&mut src, built) {
                *perm = Some(p);
            }
            contraction |= src.is_product();
            src
        };
        sources.push(src);
    }
    Ok((rest, sources, contraction))
}

/// Whether an accumulator's input may become a sum: one destination array of the
/// accumulator's full shape, and scalar `+`.
fn summable(inp: &AccInput, ns: &NameSource) -> bool {
    let [dest] = inp.arrays.as_slice() else {
        return false;
    };
    ns.type_of(*dest)
        .is_some_and(|t| t.rank() == inp.shape.len())
        && inp.op.as_ref().is_some_and(is_scalar_add)
}

/// Whether an accumulator operator is `\x y -> x + y` on scalars.
fn is_scalar_add((lam, _): &(Lambda, Vec<SubExp>)) -> bool {
    is_add_lambda(lam)
}

/// `\x y -> x + y` over scalars.
pub(crate) fn is_add_lambda(lam: &Lambda) -> bool {
    matches!(lam.binop(), Some((BinOp::Add, _)))
}

/// The whole-array update nests of `body`, one per statement that updates an accumulator,
/// and the accumulators updated otherwise.
fn find_updates(
    body: &Body,
    accs: &[VName],
    ranges: &HashMap<VName, SubExp>,
    inputs: &[AccInput],
) -> (Vec<Update>, HashSet<VName>) {
    let mut out = Vec::new();
    let mut others = HashSet::new();
    for (at, s) in body.stms.iter().enumerate() {
        let used = uses(s);
        if !accs.iter().any(|a| used.contains(a)) {
            continue;
        }
        match whole_update(s, accs, ranges, inputs) {
            Some(acc) => out.push(Update {
                at,
                acc,
                v: match &s.exp {
                    Exp::Soac(Soac::Map { arrs, .. }) => arrs[1],
                    _ => unreachable!("an update nest is a map"),
                },
            }),
            None => others.extend(accs.iter().filter(|a| used.contains(a))),
        }
    }
    (out, others)
}

/// The accumulator `s` updates, if it is a whole-array update nest
/// (`map (\j row -> acc[j, …] += row[…]) (iota w) V` over all of the accumulator).
fn whole_update(
    s: &Stm,
    accs: &[VName],
    ranges: &HashMap<VName, SubExp>,
    inputs: &[AccInput],
) -> Option<VName> {
    let Exp::Soac(Soac::Map { w, lam, arrs }) = &s.exp else {
        return None;
    };
    let [it, _] = arrs.as_slice() else {
        return None;
    };
    let [j, row] = lam.params.as_slice() else {
        return None;
    };
    if ranges.get(it) != Some(w) {
        return None;
    }
    let acc = covers(&lam.body, row.name, vec![j.name], ranges)?;
    let k = accs.iter().position(|a| *a == acc)?;
    let mut widths = vec![w.clone()];
    nest_widths(&lam.body, &mut widths);
    // Only the rank is compared: the widths may be other names of the same sizes (an
    // adjoint has its array's type, so the update covers the accumulator exactly).
    (widths.len() == inputs[k].shape.len()).then_some(acc)
}

/// The accumulator that `body` updates at `is ++ j…` with every element of `row`, if it
/// does exactly that (iotas aside, one statement: the update or a nested map of it).
fn covers(
    body: &Body,
    row: VName,
    is: Vec<VName>,
    ranges: &HashMap<VName, SubExp>,
) -> Option<VName> {
    let mut work = body.stms.iter().filter(|s| iota_width(&s.exp).is_none());
    let (Some(s), None) = (work.next(), work.next()) else {
        return None;
    };
    match &s.exp {
        Exp::Basic(BasicOp::UpdateAcc { acc, is: js, vals }) => {
            let js: Vec<Option<VName>> = js.iter().map(SubExp::as_var).collect();
            let same = js == is.iter().copied().map(Some).collect::<Vec<_>>();
            (same && vals.as_slice() == [SubExp::Var(row)]).then_some(*acc)
        }
        Exp::Soac(Soac::Map { w, lam, arrs }) => {
            let [it, r] = arrs.as_slice() else {
                return None;
            };
            let [j, x] = lam.params.as_slice() else {
                return None;
            };
            if *r != row || ranges.get(it) != Some(w) {
                return None;
            }
            covers(&lam.body, x.name, [is, vec![j.name]].concat(), ranges)
        }
        _ => None,
    }
}

/// The widths of the maps nested in an update nest's body, outermost first.
fn nest_widths(body: &Body, out: &mut Vec<SubExp>) {
    for s in &body.stms {
        if let Exp::Soac(Soac::Map { w, lam, .. }) = &s.exp {
            out.push(w.clone());
            nest_widths(&lam.body, out);
        }
    }
}

/// How the elements of one update's array `V_b` are computed.
enum Source {
    /// `V_b` is a value of the iteration (a vector, or a row of the map's input): the
    /// split map returns it, and element `[j…]` reads it at `[b, j…]`.
    Stacked(VName),
    /// `V_b` (a matrix) is built by a map over `j` whose lambda builds row `j` with an
    /// inner map over `k` (`inner`, after the replicates it reads). The split map keeps
    /// the outer map without that row and returns the values `inner` needs from row `j`
    /// (`level`: value in the lambda → the split map's array of it per `j`); element
    /// `[j, k]` inlines `inner` at `k`.
    Inner {
        inner: Vec<Stm>,
        /// Which result of the inner map is the row.
        out: usize,
        /// `V` is `rearrange(perm, M)` of the matrix `M` the nest builds: element `[j…]`
        /// of `V` is element `[i…]` of `M` with `i[perm[d]] = j[d]`.
        perm: Option<Vec<usize>>,
        /// Whether `inner` builds all of `V_b` (a vector), not row `j` of it.
        whole: bool,
        /// Parameters of the outer map's lambda that `inner` reads → the map's inputs.
        rows: HashMap<VName, VName>,
        level: HashMap<VName, VName>,
    },
}

impl Source {
    /// Whether each element is a product of two values read at the indices (so that the
    /// sum over the iterations is a matrix product).
    fn is_product(&self) -> bool {
        let Source::Inner { inner, out, .. } = self else {
            return false;
        };
        let Some(Stm {
            exp: Exp::Soac(Soac::Map { lam, .. }),
            ..
        }) = inner.last()
        else {
            return false;
        };
        // Down the maps that build the row (a row of a rank-3 `V` is a matrix).
        let (mut lam, mut out) = (lam, *out);
        loop {
            let SubExp::Var(r) = &lam.body.result[out] else {
                return false;
            };
            let Some(def) = lam.body.binding(*r) else {
                return false;
            };
            let params: HashSet<VName> = lam.params.iter().map(|p| p.name).collect();
            match &def.exp {
                Exp::Basic(BasicOp::BinOp(BinOp::Mul, SubExp::Var(a), SubExp::Var(b))) => {
                    return params.contains(a) && params.contains(b)
                }
                Exp::Soac(Soac::Map { lam: l2, .. }) => {
                    out = def.pat.iter().position(|p| p.name == *r).unwrap_or(0);
                    lam = l2;
                }
                _ => return false,
            }
        }
    }

    /// The variables of the map's body the element code reads.
    fn reads(&self) -> Vec<VName> {
        let mut out = match self {
            Source::Stacked(v) => vec![*v],
            Source::Inner {
                inner, rows, level, ..
            } => {
                let mut fv: Vec<VName> = free_vars(inner)
                    .into_iter()
                    .filter(|v| !rows.contains_key(v) && !level.contains_key(v))
                    .collect();
                fv.extend(rows.values());
                fv.extend(level.values());
                fv
            }
        };
        out.sort();
        out.dedup();
        out
    }
}

/// `V = rearrange(perm, M)` among `rest`'s statements: its position, `M` and `perm`.
fn transposition(rest: &Body, v: VName) -> Option<(usize, VName, Vec<usize>)> {
    rest.stms
        .iter()
        .enumerate()
        .find_map(|(at, s)| match (&s.exp, s.pat.as_slice()) {
            (Exp::Basic(BasicOp::Rearrange(perm, m)), [p]) if p.name == v => {
                Some((at, *m, perm.clone()))
            }
            _ => None,
        })
}

/// Whether a statement or the result of `body` reads `v`.
fn read_in(body: &Body, v: VName) -> bool {
    body.stms.iter().any(|s| uses(s).contains(&v)) || body.result.contains(&SubExp::Var(v))
}

/// For `V` built by a map `M` over `j` whose lambda's row is an inner map: takes the inner
/// map (and the replicates only it reads) out of `M`, which now returns instead the
/// values of its lambda that the inner map reads.
fn split_inner_map(rest: &mut Body, v: VName, ns: &mut NameSource) -> Option<Source> {
    if ns.type_of(v)?.rank() < 2 {
        return None;
    }
    let m = rest
        .stms
        .iter()
        .position(|s| s.pat.iter().any(|p| p.name == v))?;
    let consumed: HashSet<VName> = rest
        .stms
        .iter()
        .flat_map(|s| crate::simplify::consumed(&s.exp))
        .collect();
    let Stm {
        pat,
        exp: Exp::Soac(Soac::Map { w, lam: l1, arrs }),
        ..
    } = &mut rest.stms[m]
    else {
        return None;
    };
    let ri = pat.iter().position(|p| p.name == v)?;
    let SubExp::Var(r1) = l1.body.result[ri] else {
        return None;
    };
    let d2 = l1.body.stms.iter().position(|s| {
        matches!(s.exp, Exp::Soac(Soac::Map { .. })) && s.pat.iter().any(|p| p.name == r1)
    })?;
    let out = l1.body.stms[d2].pat.iter().position(|p| p.name == r1)?;
    // Inputs the inner map does not read would make the element code read them too (a
    // row of a per-iteration array, stored for nothing).
    crate::checks::drop_unread_inputs(&mut l1.body.stms[d2]);
    // Whether `x` is read other than by statement `k`, `d2` or as `V`'s row.
    let read_elsewhere = |k: usize, x: VName, l1: &Lambda| {
        l1.body
            .stms
            .iter()
            .enumerate()
            .any(|(i, s)| i != k && i != d2 && uses(s).contains(&x))
            || l1
                .body
                .result
                .iter()
                .enumerate()
                .any(|(i, r)| i != ri && *r == SubExp::Var(x))
    };
    // The inner map moves out of `M` when nothing else needs it (or its other results);
    // otherwise the element code works on a copy.
    let shared = l1.body.stms[d2]
        .pat
        .iter()
        .any(|p| p.name != r1 && read_elsewhere(d2, p.name, l1))
        || read_elsewhere(d2, r1, l1);
    // The replicates and iotas the inner map reads come along: moved when only it reads
    // them, copied otherwise (storing them per row would cost memory for nothing).
    let mut along = vec![d2];
    let mut moved = if shared { vec![] } else { vec![d2] };
    for x in uses(&l1.body.stms[d2]) {
        let cheap = l1.body.stms.iter().position(|s| {
            s.pat.len() == 1
                && s.pat[0].name == x
                && matches!(
                    s.exp,
                    Exp::Basic(BasicOp::Replicate(..) | BasicOp::Range { .. })
                )
        });
        if let Some(k) = cheap {
            along.push(k);
            if !shared && !read_elsewhere(k, x, l1) {
                moved.push(k);
            }
        }
    }
    along.sort();
    moved.sort();
    let inner: Vec<Stm> = along.iter().map(|&k| l1.body.stms[k].clone()).collect();
    for &k in moved.iter().rev() {
        l1.body.stms.remove(k);
    }
    let param_inputs: HashMap<VName, VName> = l1
        .params
        .iter()
        .map(|p| p.name)
        .zip(arrs.iter().copied())
        .collect();
    let bound_in_l1 = binders(&l1.body);
    let mut rows = HashMap::new();
    let mut level_vals = Vec::new();
    let mut fv: Vec<VName> = free_vars(&inner).into_iter().collect();
    fv.sort();
    for x in fv {
        if let Some(a) = param_inputs.get(&x) {
            rows.insert(x, *a);
        } else if bound_in_l1.contains(&x) {
            level_vals.push(x);
        }
    }
    // The row leaves the map's results; the level values join them.
    pat.remove(ri);
    l1.body.result.remove(ri);
    l1.ret.remove(ri);
    let mut level = HashMap::new();
    for x in level_vals {
        // A value the map already returns (a linear tail's argument) is not returned twice.
        let q = l1.body.result.iter().position(|r| *r == SubExp::Var(x));
        if let Some(q) = q.filter(|&q| !consumed.contains(&pat[q].name)) {
            level.insert(x, pat[q].name);
            continue;
        }
        let t = ns.type_of(x)?.clone();
        let p = Param {
            name: ns.fresh_typed("level", t.clone().array_of(w.clone())),
            ty: t.clone().array_of(w.clone()),
        };
        level.insert(x, p.name);
        l1.body.result.push(SubExp::Var(x));
        l1.ret.push(t);
        pat.push(p);
    }
    Some(Source::Inner {
        inner,
        out,
        perm: None,
        whole: false,
        rows,
        level,
    })
}

/// For a vector `V` built by a map of scalar code in the map's body (reading its
/// parameters, replicates and outside values): element `k` of `V_b` is that code inlined
/// at `k`, so `V` need not be stored per iteration. The map stays where it is (it may have
/// other results; dead-code elimination drops it otherwise).
fn scalar_map_source(rest: &Body, v: VName) -> Option<Source> {
    let d = rest
        .stms
        .iter()
        .position(|s| s.pat.iter().any(|p| p.name == v))?;
    let st = &rest.stms[d];
    let Exp::Soac(Soac::Map { lam, arrs, .. }) = &st.exp else {
        return None;
    };
    let scalar_code = lam.body.stms.iter().all(|s| {
        matches!(s.exp, Exp::Basic(_)) && s.pat.iter().all(|p| matches!(p.ty, Type::Prim(_)))
    });
    if !scalar_code {
        return None;
    }
    let out = st.pat.iter().position(|p| p.name == v)?;
    // The replicates among the inputs come along (read at one index, they are a value).
    let mut inner: Vec<Stm> = rest.stms[..d]
        .iter()
        .filter(|s| {
            matches!(s.exp, Exp::Basic(BasicOp::Replicate(..)))
                && s.pat.len() == 1
                && arrs.contains(&s.pat[0].name)
        })
        .cloned()
        .collect();
    inner.push(st.clone());
    Some(Source::Inner {
        inner,
        out,
        perm: None,
        whole: true,
        rows: HashMap::new(),
        level: HashMap::new(),
    })
}

/// Whether the elements of the matrix `V` (built in `rest` by a map whose rows are inner
/// maps) are themselves reductions: inlining them would put a reduction in every term.
fn rows_are_reductions(rest: &Body, v: VName) -> bool {
    let Some(st) = rest.stms.iter().find(|s| s.pat.iter().any(|p| p.name == v)) else {
        return false;
    };
    let Exp::Soac(Soac::Map { lam, .. }) = &st.exp else {
        return false;
    };
    lam.body.stms.iter().any(|s| match &s.exp {
        Exp::Soac(Soac::Map { lam: inner, .. }) => {
            runic_ir::traverse::any_exp(&inner.body, |e| matches!(e, Exp::Soac(_)))
        }
        _ => false,
    })
}
