//! Column reductions in map kernels: a map (nested in a kernel, or the kernel's own over a
//! chunk of its elements) `map (\j -> reduce op ne (map pre xs)) js` whose reduction reads
//! arrays at `[…, j]` (row-major, so `j` walks along a row) runs with its two loops
//! swapped: the output row starts as `ne` everywhere, and each step of the reduction
//! updates the whole row (`out[j] = op out[j] (pre …)` for every `j`).
//!
//! Each element still folds its values in the same order, so the results are the same bit
//! for bit; but where the loop over the reduction came innermost, every element was one
//! chain of dependent operations (an addition's latency per step) reading memory down a
//! column, and swapped the elements are independent and read along rows. Over an `iota`
//! (nested: one the kernel made; top level: a chunk of consecutive indices, checked at run
//! time) the steps run in SIMD lanes (`simd/`) when the rows are contiguous, the scalar
//! loop finishing. The LSTM's bias adjoints (`Σ_b adj[b][j]`), its sums over the four
//! gates and the MLP's bias adjoints are such maps.

use crate::gen::{ba, cl, mem, prim_of, Gen, R};
use crate::nest::ArrV;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, Value};
use runic_ir::traverse::uses;
use runic_ir::*;
use std::collections::{HashMap, HashSet};

/// The parts of a nested map's lambda that is a column reduction: the statements before
/// the reduction that do not depend on the element, those that do (scalar operations,
/// run again at each step), and the reduction's statement.
pub(crate) struct Column<'l> {
    prefix: Body,
    per_element: Body,
    reduce: &'l Stm,
}

/// `lam` as a [`Column`]: scalar parameters; a body of statements that do not read them
/// or are scalar operations, then one reduction of scalars (its result the lambda's) whose
/// size, inputs and neutral element do not depend on the parameters, and whose `pre`
/// lambda reads arrays indexed by a parameter only in their last position.
pub(crate) fn column(lam: &Lambda) -> Option<Column<'_>> {
    let (reduce, prefix) = lam.body.stms.split_last()?;
    let Exp::Soac(Soac::Reduce {
        w,
        arrs,
        pre: Some(pre),
        lam: op,
        neutral,
        ..
    }) = &reduce.exp
    else {
        return None;
    };
    let [p] = &reduce.pat[..] else { return None };
    let scalar = |t: &Type| matches!(t, Type::Prim(_));
    if lam.body.result != [SubExp::Var(p.name)]
        || !lam.params.iter().all(|q| scalar(&q.ty))
        || !scalar(&p.ty)
        || op.ret.len() != 1
    {
        return None;
    }
    // The parameters and what is computed from them.
    let mut js: Vec<VName> = lam.params.iter().map(|q| q.name).collect();
    let (mut before, mut per_element) = (Vec::new(), Vec::new());
    for s in prefix {
        if uses(s).iter().any(|v| js.contains(v)) {
            let scalar_op = matches!(s.exp, Exp::Basic(_)) && s.pat.iter().all(|p| scalar(&p.ty));
            if !scalar_op {
                return None;
            }
            js.extend(s.pat.iter().map(|p| p.name));
            per_element.push(s.clone());
        } else {
            before.push(s.clone());
        }
    }
    let independent = |used: HashSet<VName>| js.iter().all(|j| !used.contains(j));
    if !independent(uses(w))
        || !independent(uses(neutral.as_slice()))
        || !arrs.iter().all(|a| !js.contains(a))
    {
        return None;
    }
    let body = |stms| Body {
        stms,
        result: Vec::new(),
    };
    along_rows(&pre.body, &js).then(|| Column {
        prefix: body(before),
        per_element: body(per_element),
        reduce,
    })
}

/// Whether every array the body indexes with one of `js` has it as its last index (and
/// only there), in the body and in the bodies nested in it.
fn along_rows(body: &Body, js: &[VName]) -> bool {
    !runic_ir::traverse::any_exp(body, |e| {
        let Exp::Basic(BasicOp::Index(_, idx)) = e else {
            return false;
        };
        idx.iter().enumerate().any(|(k, d)| {
            let reads_j = uses_dim(d).iter().any(|v| js.contains(v));
            let last =
                k + 1 == idx.len() && matches!(d, DimIndex::Fix(SubExp::Var(v)) if js.contains(v));
            reads_j && !last
        })
    })
}

fn uses_dim(d: &DimIndex) -> Vec<VName> {
    let subs: Vec<&SubExp> = match d {
        DimIndex::Fix(s) => vec![s],
        DimIndex::Slice { start, end, stride } => {
            [start, end, stride].into_iter().flatten().collect()
        }
    };
    subs.into_iter().filter_map(|s| s.as_var()).collect()
}

impl Gen<'_, '_> {
    /// `s = map lam arrs` over `w` elements, `lam` a [`Column`]: the output row filled with
    /// the neutral element, then for each step of the reduction, for each element `j`,
    /// `out[j] = op out[j] (pre step j)`.
    pub(crate) fn column_map(
        &mut self,
        s: &Stm,
        w: &SubExp,
        lam: &Lambda,
        arrs: &[VName],
        col: Column<'_>,
    ) -> R<()> {
        let w = self.index_value(w)?;
        let views = self.map_inputs(arrs, w)?;
        let outs = self.out_arrays(s, w, &lam.ret)?;
        let [out] = &outs[..] else {
            return Err("internal error: a column reduction of several results".into());
        };
        // Over `iota`s, element `j` is `j`: consecutive from 0.
        let consecutive = if arrs.iter().all(|a| self.iotas.contains(a)) {
            let zero = self.b.ins().iconst(types::I64, 0);
            let yes = self.b.ins().iconst(types::I8, 1);
            Some((zero, yes))
        } else {
            None
        };
        self.column_loops(&col, lam, &views, out, w, consecutive)?;
        self.bind_outs(s, outs);
        Ok(())
    }

    /// The loops of a column reduction over `w` elements whose map inputs are `views` (of
    /// scalars) into `out`: `out` filled with the neutral element, then for each step of
    /// the reduction, every element. With `consecutive = (j0, ok)`, the elements are
    /// `j0, j0 + 1, …` when `ok` holds at run time, and a step may run in SIMD lanes.
    pub(crate) fn column_loops(
        &mut self,
        col: &Column<'_>,
        lam: &Lambda,
        views: &[ArrV],
        out: &ArrV,
        w: Value,
        consecutive: Option<(Value, Value)>,
    ) -> R<()> {
        let Exp::Soac(Soac::Reduce {
            w: steps,
            arrs: red_arrs,
            pre: Some(pre),
            lam: op,
            neutral,
            ..
        }) = &col.reduce.exp
        else {
            return Err("internal error: not a column reduction".into());
        };
        let saved = (self.env.clone(), self.arrays.clone());
        let saved_owned = std::mem::take(&mut self.owned);
        self.stms(&col.prefix)?;
        // The row starts as the neutral element.
        let [ne] = &neutral[..] else {
            return Err("internal error: a column reduction of several results".into());
        };
        let ne = self.opd(ne)?.0;
        let (j, header, done) = self.open_counted_loop(w);
        let addr = out.at(self.b, j);
        self.b.ins().store(mem(), ne, addr, 0);
        // The statements each element runs before its reduction run here once per
        // element too, so that one that fails does even when the reduction has no steps.
        if !col.per_element.stms.is_empty() {
            self.bind_element(&lam.params, views, j);
            self.stms(&col.per_element)?;
        }
        self.close_counted_loop(j, header, done);
        // The steps of the reduction, outermost: STEPS at a time while they last (their
        // lanes keep each element's accumulator in a register from step to step), then one
        // at a time.
        let n = self.index_value(steps)?;
        let red_views = self.map_inputs(red_arrs, n)?;
        let step = Step {
            col,
            lam,
            pre,
            op,
            views,
            red_views: &red_views,
            out,
            w,
        };
        let first = match consecutive.filter(|_| lanes_lambda(col, lam).is_some()) {
            Some((j0, ok)) => self.column_step_groups(&step, j0, ok, n)?,
            None => self.b.ins().iconst(types::I64, 0),
        };
        let (i, i_header, i_done) = self.open_counted_loop_from(first, n);
        let from = match consecutive {
            Some((j0, ok)) => self.column_lanes(&step, j0, ok, &[i])?,
            None => self.b.ins().iconst(types::I64, 0),
        };
        self.column_scalar_step(&step, i, from)?;
        self.close_counted_loop(i, i_header, i_done);
        (self.env, self.arrays) = saved;
        self.owned = saved_owned;
        Ok(())
    }
}

/// Steps of a column reduction's outer loop run together in SIMD lanes (see
/// [`crate::simd::vector_chain`]): each element's accumulator is loaded and stored once per
/// group instead of once per step.
const STEPS: i64 = 4;

/// What every step of a column reduction needs: its parts, the map's and the reduction's
/// inputs, and the output row of `w` elements.
struct Step<'s, 'l> {
    col: &'s Column<'l>,
    lam: &'s Lambda,
    pre: &'s Lambda,
    op: &'s Lambda,
    views: &'s [ArrV],
    red_views: &'s [ArrV],
    out: &'s ArrV,
    w: Value,
}

impl Gen<'_, '_> {
    /// The steps `0, 1, …` of a column reduction of `n` steps in groups of [`STEPS`], each
    /// group in lanes (elements `j0..` when `consecutive` holds) and then one by one from
    /// where the lanes stopped; returns the first step left over.
    fn column_step_groups(
        &mut self,
        st: &Step<'_, '_>,
        j0: Value,
        consecutive: Value,
        n: Value,
    ) -> R<Value> {
        let kept = (self.env.clone(), self.arrays.clone(), self.owned.clone());
        let zero = self.b.ins().iconst(types::I64, 0);
        let header = self.b.create_block();
        let body = self.b.create_block();
        let done = self.b.create_block();
        self.b.append_block_param(header, types::I64);
        self.b.append_block_param(done, types::I64);
        self.b.ins().jump(header, &ba(&[zero]));
        self.b.switch_to_block(header);
        let i = self.b.block_params(header)[0];
        let last = self.b.ins().iadd_imm_s(i, STEPS);
        let more = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, last, n);
        self.b.ins().brif(more, body, &[], done, &ba(&[i]));
        self.b.switch_to_block(body);
        let is: Vec<Value> = (0..STEPS).map(|u| self.b.ins().iadd_imm_s(i, u)).collect();
        let from = self.column_lanes(st, j0, consecutive, &is)?;
        for &i in &is {
            self.column_scalar_step(st, i, from)?;
        }
        self.b.ins().jump(header, &ba(&[last]));
        self.b.switch_to_block(done);
        (self.env, self.arrays, self.owned) = kept;
        Ok(self.b.block_params(done)[0])
    }

    /// Step `i` of a column reduction on the elements `from..w`, one by one:
    /// `out[j] = op out[j] (pre i j)`.
    fn column_scalar_step(&mut self, st: &Step<'_, '_>, i: Value, from: Value) -> R<()> {
        self.bind_element(&st.pre.params, st.red_views, i);
        let (j, header, done) = self.open_counted_loop_from(from, st.w);
        self.bind_element(&st.lam.params, st.views, j);
        self.stms(&st.col.per_element)?;
        let ys = self.body(&st.pre.body)?;
        let addr = st.out.at(self.b, j);
        let t = prim_of(&st.op.ret[0]);
        let acc = self.b.ins().load(cl(t), mem(), addr, 0);
        let args = [vec![acc], ys].concat();
        let new = self.lambda(st.op, &args)?;
        let [new] = new[..] else {
            return Err("internal error: a column reduction of several results".into());
        };
        self.b.ins().store(mem(), new, addr, 0);
        self.close_counted_loop(j, header, done);
        Ok(())
    }
}

impl Gen<'_, '_> {
    /// `(v[0], whether v[e] = v[0] + e for every e < w)`: whether the elements of a map
    /// over `v` are consecutive indices (a chunk of an `iota`), checked at run time.
    pub(crate) fn consecutive(&mut self, v: &ArrV, w: Value) -> (Value, Value) {
        let zero = self.b.ins().iconst(types::I64, 0);
        let some = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, w, 0);
        let first_block = self.b.create_block();
        let after = self.b.create_block();
        self.b.append_block_param(after, types::I64);
        self.b.append_block_param(after, types::I8);
        let no = self.b.ins().iconst(types::I8, 0);
        self.b
            .ins()
            .brif(some, first_block, &[], after, &ba(&[zero, no]));
        self.b.switch_to_block(first_block);
        let a0 = v.at(self.b, zero);
        let j0 = self.b.ins().load(types::I64, mem(), a0, 0);
        // for e < w: ok &= v[e] == j0 + e (a loop carrying `ok`).
        let header = self.b.create_block();
        let body = self.b.create_block();
        let done = self.b.create_block();
        self.b.append_block_param(header, types::I64);
        self.b.append_block_param(header, types::I8);
        self.b.append_block_param(done, types::I8);
        let yes = self.b.ins().iconst(types::I8, 1);
        self.b.ins().jump(header, &ba(&[zero, yes]));
        self.b.switch_to_block(header);
        let e = self.b.block_params(header)[0];
        let ok = self.b.block_params(header)[1];
        let more = self.b.ins().icmp(IntCC::SignedLessThan, e, w);
        self.b.ins().brif(more, body, &[], done, &ba(&[ok]));
        self.b.switch_to_block(body);
        let addr = v.at(self.b, e);
        let x = self.b.ins().load(types::I64, mem(), addr, 0);
        let want = self.b.ins().iadd(j0, e);
        let same = self.b.ins().icmp(IntCC::Equal, x, want);
        let ok = self.b.ins().band(ok, same);
        let next = self.b.ins().iadd_imm_s(e, 1);
        self.b.ins().jump(header, &ba(&[next, ok]));
        self.b.switch_to_block(done);
        let ok = self.b.block_params(done)[0];
        self.b.ins().jump(after, &ba(&[j0, ok]));
        self.b.switch_to_block(after);
        let ps = self.b.block_params(after);
        (ps[0], ps[1])
    }
}

/// An array a column reduction's step reads along a row, and the indices of that row.
type RowRead = (VName, Vec<SubExp>);

/// A column reduction's step in SIMD lanes: the lambda over one element, the rows its
/// inputs come from, and the statements of `pre` that are the same for every element.
struct Lanes {
    step: Lambda,
    rows: Vec<RowRead>,
    per_step: Body,
}

/// A column reduction's step as a lambda over one element that SIMD code can run: its
/// parameters the accumulator (named as the reduction's result) and the values `pre`
/// reads at `[…, j]` (named as the statements that read them), its body `pre`'s other
/// statements that depend on those reads, and the operator. Each input comes with the
/// array and the indices of its row. The statements that depend on neither (the
/// adjoint's value for this step, `δ[i]` in `Σ_i δ[i]·x[i][j]`) are run once per step,
/// before the elements, and broadcast. `None` unless the map is over one `iota`
/// parameter that `pre` uses only as the last index of such reads, with row indices from
/// outside `pre`.
fn lanes_lambda(col: &Column<'_>, lam: &Lambda) -> Option<Lanes> {
    let Exp::Soac(Soac::Reduce {
        pre: Some(pre),
        lam: op,
        ..
    }) = &col.reduce.exp
    else {
        return None;
    };
    let [j] = &lam.params[..] else { return None };
    if !col.per_element.stms.is_empty() || op.params.len() != 2 || pre.body.result.len() != 1 {
        return None;
    }
    let local = runic_ir::traverse::binders(&pre.body);
    let mut params = vec![col.reduce.pat[0].clone()];
    let mut rows = Vec::new();
    let mut stms = Vec::new();
    let mut per_step = Vec::new();
    // What differs between elements: the row reads and what is computed from them.
    let mut varying: HashSet<VName> = std::collections::HashSet::new();
    for s in &reads_before_branches(&pre.body.stms, j.name, &local) {
        match row_read(s, j.name, &local) {
            Some((p, a, outer)) => {
                params.push(p.clone());
                rows.push((a, outer));
                varying.insert(p.name);
            }
            None if uses(s).contains(&j.name) => return None,
            None if uses(s).is_disjoint(&varying) => per_step.push(s.clone()),
            None => {
                varying.extend(s.pat.iter().map(|p| p.name));
                stms.push(s.clone());
            }
        }
    }
    // The operator, on the accumulator and `pre`'s result.
    let args = [
        SubExp::Var(col.reduce.pat[0].name),
        pre.body.result[0].clone(),
    ];
    for (q, x) in op.params.iter().zip(args) {
        stms.push(Stm {
            pat: vec![q.clone()],
            exp: Exp::Basic(BasicOp::SubExp(x)),
            src: col.reduce.src.clone(),
        });
    }
    stms.extend(op.body.stms.iter().cloned());
    let body = Body {
        stms,
        result: op.body.result.clone(),
    };
    Some(Lanes {
        step: Lambda::new(params, body, op.ret.clone()),
        rows,
        per_step: Body {
            stms: per_step,
            result: Vec::new(),
        },
    })
}

/// `s` as a read of a row at element `j` (`a[outer…, j]`, the outer indices bound outside
/// `pre`, none of them in `local`): its result, the array and the outer indices.
fn row_read<'s>(
    s: &'s Stm,
    j: VName,
    local: &HashSet<VName>,
) -> Option<(&'s Param, VName, Vec<SubExp>)> {
    let (Exp::Basic(BasicOp::Index(a, idx)), [p]) = (&s.exp, &s.pat[..]) else {
        return None;
    };
    let (DimIndex::Fix(SubExp::Var(last)), outer) = idx.split_last()? else {
        return None;
    };
    // The array itself from outside `pre` too: the lanes read it before the branch.
    if *last != j || local.contains(a) {
        return None;
    }
    let outer = outer.iter().map(|d| match d {
        DimIndex::Fix(x) if x.as_var().is_none_or(|v| !local.contains(&v)) => Some(x.clone()),
        _ => None,
    });
    Some((p, *a, outer.collect::<Option<_>>()?))
}

/// `stms` with the row reads inside their `if`s' branches (at any depth) moved before the
/// `if`, so that the branches are arithmetic the lanes compute on both sides and select
/// (`if r[i, j] == 0 then 0 else δ[i, j]`, a masked column sum). Reading a row a branch
/// would not have read is safe here: the lanes run only when [`Gen::column_lanes`] has
/// checked every row they read in bounds, and otherwise the scalar loop runs the
/// statements as written.
fn reads_before_branches(stms: &[Stm], j: VName, local: &HashSet<VName>) -> Vec<Stm> {
    fn lift(body: &Body, j: VName, local: &HashSet<VName>, out: &mut Vec<Stm>) -> Body {
        let mut kept = Vec::new();
        for s in &body.stms {
            if row_read(s, j, local).is_some() {
                out.push(s.clone());
            } else {
                kept.push(lift_stm(s, j, local, out));
            }
        }
        Body {
            stms: kept,
            result: body.result.clone(),
        }
    }
    fn lift_stm(s: &Stm, j: VName, local: &HashSet<VName>, out: &mut Vec<Stm>) -> Stm {
        let Exp::If {
            cond,
            then_body,
            else_body,
            ret,
        } = &s.exp
        else {
            return s.clone();
        };
        let exp = Exp::If {
            cond: cond.clone(),
            then_body: lift(then_body, j, local, out),
            else_body: lift(else_body, j, local, out),
            ret: ret.clone(),
        };
        Stm { exp, ..s.clone() }
    }
    let mut out = Vec::new();
    for s in stms {
        let s = lift_stm(s, j, local, &mut out);
        out.push(s);
    }
    out
}

impl Gen<'_, '_> {
    /// The SIMD loop over the elements `0..w` of the steps `is` (in this order) of a column
    /// reduction, when [`lanes_lambda`] gives one and, at run time, the rows every step
    /// reads are in bounds, contiguous and at least `w` long; returns the element the
    /// scalar loops of the steps continue from.
    fn column_lanes(
        &mut self,
        st: &Step<'_, '_>,
        j0: Value,
        consecutive: Value,
        is: &[Value],
    ) -> R<Value> {
        let zero = self.b.ins().iconst(types::I64, 0);
        if !crate::simd::enabled() {
            return Ok(zero);
        }
        let Some(Lanes {
            step,
            rows,
            per_step,
        }) = lanes_lambda(st.col, st.lam)
        else {
            return Ok(zero);
        };
        let (out, w) = (st.out, st.w);
        // The per-step statements' scalars are free in the step: their types as bound (the
        // reduction's parameters too, bound for each step below).
        let mut types: HashMap<VName, PrimType> =
            self.env.iter().map(|(v, (_, t))| (*v, *t)).collect();
        for (p, v) in st.pre.params.iter().zip(st.red_views) {
            if v.dims.len() == 1 {
                types.insert(p.name, v.elem);
            }
        }
        for s in &per_step.stms {
            for p in &s.pat {
                if let Type::Prim(t) = p.ty {
                    types.insert(p.name, t);
                }
            }
        }
        let Some(plan) = crate::simd::plan(&step, &|v| types.get(&v).copied()) else {
            return Ok(zero);
        };
        if out.elem != plan.elem || out.dims.len() != 1 {
            return Ok(zero);
        }
        // A row the reduction's `pre` reads may be one of its own parameters (a row of the
        // reduced array, `map (\r -> r[j]) xs`), bound only step by step: its type is its
        // array's minus one dimension.
        let rank_and_elem = |g: &Self, a: VName| -> R<(usize, PrimType)> {
            match st.pre.params.iter().position(|p| p.name == a) {
                Some(k) => Ok((st.red_views[k].dims.len() - 1, st.red_views[k].elem)),
                None => g.array(a).map(|v| (v.dims.len(), v.elem)),
            }
        };
        for (a, outer) in &rows {
            let (rank, elem) = rank_and_elem(self, *a)?;
            if elem != plan.elem || rank != outer.len() + 1 {
                return Ok(zero);
            }
        }
        let unit = self.b.ins().icmp_imm_s(IntCC::Equal, out.strides[0], 1);
        let mut ok = self.b.ins().band(consecutive, unit);
        let end = self.b.ins().iadd(j0, w);
        let kept = (self.env.clone(), self.arrays.clone(), self.owned.clone());
        let mut columns = Vec::new();
        for &i in is {
            self.bind_element(&st.pre.params, st.red_views, i);
            let mut bases = vec![out.base];
            for (a, outer) in &rows {
                let mut v = self.array(*a)?;
                for x in outer {
                    let i = self.index_value(x)?;
                    let inside = self.b.ins().icmp(IntCC::UnsignedLessThan, i, v.dims[0]);
                    ok = self.b.ins().band(ok, inside);
                    v = v.row(self.b, i);
                }
                // Elements j0 .. j0 + w of the row.
                let from = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, j0, 0);
                let long = self
                    .b
                    .ins()
                    .icmp(IntCC::SignedLessThanOrEqual, end, v.dims[0]);
                let unit = self.b.ins().icmp_imm_s(IntCC::Equal, v.strides[0], 1);
                ok = self.b.ins().band(ok, from);
                ok = self.b.ins().band(ok, long);
                ok = self.b.ins().band(ok, unit);
                // Pinned: Cranelift would otherwise add `j0` inside the vector loop, and
                // keep both the row and `j0` live across it (spilled, reloaded at every
                // step: a top-level column sum 6× slower than the same loop in Rust).
                let at = crate::gen::elem_addr(self.b, v.base, j0, v.elem);
                bases.push(crate::scalar::pinned(self.b, at));
            }
            columns.push(bases);
        }
        (self.env, self.arrays, self.owned) = kept;
        // The per-step statements run for the first element in the scalar code: only
        // when there is one here (one may fail). When the lanes run, the scalar code after
        // them cannot fail (its reads are the rows checked here, the rest is arithmetic on
        // floats), so running every step's per-step statements first keeps the order of
        // the errors.
        let some = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, w, 0);
        ok = self.b.ins().band(ok, some);
        self.column_lanes = true;
        self.lanes_first(ok, |g| {
            let mut chain = Vec::new();
            for (&i, ins) in is.iter().zip(columns) {
                // Values bound here do not reach the scalar loops after the lanes.
                let saved = (g.env.clone(), g.arrays.clone(), g.owned.clone());
                g.bind_element(&st.pre.params, st.red_views, i);
                g.stms(&per_step)?;
                let frees = crate::simd::splat_env(g.b, plan, &g.env, &step);
                (g.env, g.arrays, g.owned) = saved;
                chain.push(crate::simd::ChainStep { frees, ins });
            }
            crate::simd::vector_chain(g.b, plan, &step, &chain, out.base, zero, w)
        })
    }
}
