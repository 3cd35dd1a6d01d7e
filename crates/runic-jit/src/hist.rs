//! `reduce_by_index` and `scatter`: the top-level histogram kernel ([`compile_hist`]: the
//! elements of a range whose bins fall into a range of bins, applied in input order), and
//! both as sequential loops inside map kernels, on a copy of their destination (views in
//! kernels are never updated in place). An index out of range is skipped, as the
//! evaluator skips it.

use crate::gen::{build_kernel, check_lambda_in, cl, load_ptrs, mem, prim_of, AccV, Gen, R};
use crate::kernels::{prologue, Inputs};
use crate::nest::{split_frees, ArrV, Frees, FAIL_INDEX};
use crate::{HistKernel, MapFn, VarType};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Block, InstBuilder, Value};
use runic_ir::*;

/// An accumulator update at `[fixed.., j]` of a nested map over `j`.
struct RowUpdate {
    acc: AccV,
    fixed: Vec<SubExp>,
}

impl Gen<'_, '_> {
    /// An index value of any integer type as an i64 (sign- or zero-extended).
    pub(crate) fn widen_index(&mut self, v: Value, t: PrimType) -> R<Value> {
        Ok(match t {
            PrimType::I64 | PrimType::U64 => v,
            t if t.is_signed_int() => self.b.ins().sextend(types::I64, v),
            t if t.is_int() => self.b.ins().uextend(types::I64, v),
            _ => return Err("an index that is not an integer".into()),
        })
    }

    /// The flat position of the indices `cs` (i64) in an array of dimensions `dims`, and
    /// whether every index is within its dimension.
    pub(crate) fn flat_index(&mut self, cs: &[Value], dims: &[Value]) -> (Value, Value) {
        let mut acc: Option<(Value, Value)> = None;
        for (c, d) in cs.iter().zip(dims) {
            // Unsigned: a negative index is out of range too.
            let inside = self.b.ins().icmp(IntCC::UnsignedLessThan, *c, *d);
            acc = Some(match acc {
                None => (*c, inside),
                Some((flat, ok)) => {
                    let scaled = self.b.ins().imul(flat, *d);
                    (self.b.ins().iadd(scaled, *c), self.b.ins().band(ok, inside))
                }
            });
        }
        acc.unwrap_or_else(|| {
            (
                self.b.ins().iconst(types::I64, 0),
                self.b.ins().iconst(types::I8, 1),
            )
        })
    }

    /// Continue in a new block when `c` holds; returns the block to continue in otherwise
    /// (the caller jumps there once the conditional code is done).
    pub(crate) fn when(&mut self, c: Value) -> Block {
        let yes = self.b.create_block();
        let after = self.b.create_block();
        self.b.ins().brif(c, yes, &[], after, &[]);
        self.b.switch_to_block(yes);
        after
    }

    /// `dest[flat] = op(dest[flat], xs)` for every destination (element `flat` of each,
    /// dense), or `dest[flat] = xs` without an operator.
    pub(crate) fn combine_at(
        &mut self,
        dests: &[(Value, PrimType)],
        flat: Value,
        xs: &[Value],
        op: Option<&Lambda>,
    ) -> R<()> {
        let addrs: Vec<Value> = dests
            .iter()
            .map(|(base, t)| crate::gen::elem_addr(self.b, *base, flat, *t))
            .collect();
        let new = match op {
            Some(op) => {
                let mut args: Vec<Value> = dests
                    .iter()
                    .zip(&addrs)
                    .map(|((_, t), a)| self.b.ins().load(cl(*t), mem(), *a, 0))
                    .collect();
                args.extend_from_slice(xs);
                // The operator's variables are rebound at every application.
                let saved = self.env.clone();
                let r = self.lambda(op, &args)?;
                self.env = saved;
                r
            }
            None => xs.to_vec(),
        };
        for (a, v) in addrs.iter().zip(new) {
            self.b.ins().store(mem(), v, *a, 0);
        }
        Ok(())
    }

    /// `acc' = update_acc(acc, is, vals)`: the update applied to the accumulator's array
    /// (skipped when an index is out of range); `acc'` names the same accumulator.
    pub(crate) fn update_acc(
        &mut self,
        s: &Stm,
        acc: VName,
        is: &[SubExp],
        vals: &[SubExp],
    ) -> R<()> {
        let a = self
            .accs
            .get(&acc)
            .cloned()
            .ok_or_else(|| format!("internal error: the accumulator {acc} is not in scope"))?;
        if is.len() != a.dims.len() || vals.len() != 1 {
            return Err("an accumulator update of a row".into());
        }
        let mut cs = Vec::new();
        for i in is {
            cs.push(self.index_value(i)?);
        }
        let (x, t) = self.opd(&vals[0])?;
        if t != a.elem {
            return Err("an accumulator update of another type".into());
        }
        let (flat, ok) = self.flat_index(&cs, &a.dims);
        let after = self.when(ok);
        self.combine_at(&[(a.base, a.elem)], flat, &[x], a.op.as_ref())?;
        self.b.ins().jump(after, &[]);
        self.b.switch_to_block(after);
        for p in &s.pat {
            self.accs.insert(p.name, a.clone());
        }
        Ok(())
    }

    /// The elements of a nested map over `j < w` whose body ends in accumulator updates
    /// at `[i.., j]` (indices `i` fixed outside the map) and computes their values from
    /// f32/f64 elements of `views` alone (`lam` without its `iota` parameter `j`, which
    /// only the updates read), in SIMD lanes: each update adds a vector of values to a
    /// contiguous stretch of the accumulator's row `[i..]`. Runs when the accumulators
    /// add (`+` on the element type), the fixed indices are in range, the row holds `w`
    /// elements and the views are contiguous; returns the element the scalar loop
    /// continues from (0 when nothing ran in lanes).
    pub(crate) fn vector_acc_updates(
        &mut self,
        lam: &Lambda,
        j: VName,
        params: &[Param],
        views: &[ArrV],
        w: Value,
    ) -> R<Value> {
        let zero = self.b.ins().iconst(types::I64, 0);
        let Some((values, rows)) = self.acc_row_updates(lam, j, params) else {
            return Ok(zero);
        };
        let env = &self.env;
        let Some(plan) = crate::simd::plan(&values, &|v| env.get(&v).map(|(_, t)| *t)) else {
            return Ok(zero);
        };
        let fits = views
            .iter()
            .all(|a| a.dims.len() == 1 && a.elem == plan.elem)
            && rows.iter().all(|r| r.acc.elem == plan.elem);
        if !fits {
            return Ok(zero);
        }
        let mut ok = self.contiguous(views);
        let mut bases = Vec::new();
        for RowUpdate { acc: a, fixed } in &rows {
            let mut cs = Vec::new();
            for i in fixed {
                cs.push(self.index_value(i)?);
            }
            let (row_dims, last) = a.dims.split_at(a.dims.len() - 1);
            let (row, inside) = self.flat_index(&cs, row_dims);
            let holds = self
                .b
                .ins()
                .icmp(IntCC::UnsignedLessThanOrEqual, w, last[0]);
            ok = self.b.ins().band(ok, inside);
            ok = self.b.ins().band(ok, holds);
            let first = self.b.ins().imul(row, last[0]);
            bases.push(crate::gen::elem_addr(self.b, a.base, first, a.elem));
        }
        let ins: Vec<Value> = views.iter().map(|a| a.base).collect();
        self.lanes_first(ok, |g| {
            let frees = crate::simd::splat_env(g.b, plan, &g.env, &values);
            let write = (bases.as_slice(), crate::simd::Write::Add);
            crate::simd::vector_loop(g.b, plan, &values, &frees, &ins, write, zero, w)
        })
    }

    /// Splits `lam` (over the element parameters `params` and the iteration `j`) into a
    /// lambda computing the values of its trailing accumulator updates and, for each
    /// update, its accumulator and fixed indices — when every update is at `[i.., j]` of
    /// an adding accumulator in scope, nothing else reads `j`, and the map returns nothing.
    /// Whether a nested map over the lazy iota `j` ends in accumulator updates along rows
    /// (what [`Gen::vector_acc_updates`] runs in lanes).
    pub(crate) fn updates_acc_rows(&self, lam: &Lambda, j: VName, params: &[Param]) -> bool {
        self.acc_row_updates(lam, j, params).is_some()
    }

    fn acc_row_updates(
        &self,
        lam: &Lambda,
        j: VName,
        params: &[Param],
    ) -> Option<(Lambda, Vec<RowUpdate>)> {
        if !lam.body.result.is_empty() {
            return None;
        }
        let stms = &lam.body.stms;
        let head = stms
            .iter()
            .rposition(|s| !matches!(s.exp, Exp::Basic(BasicOp::UpdateAcc { .. })))
            .map_or(0, |k| k + 1);
        let mut accs = self.accs.clone();
        let mut rows = Vec::new();
        let mut vals = Vec::new();
        for s in &stms[head..] {
            let Exp::Basic(BasicOp::UpdateAcc { acc, is, vals: v }) = &s.exp else {
                return None;
            };
            let a = accs.get(acc)?.clone();
            let adds = a.op.as_ref().and_then(crate::simd::Fold::of);
            let (last, fixed) = is.split_last()?;
            // Fixed: constants or scalars bound before the map.
            let fixed_outside = fixed
                .iter()
                .all(|i| i.as_var().is_none_or(|v| self.env.contains_key(&v)));
            if adds != Some(crate::simd::Fold::Add)
                || *last != SubExp::Var(j)
                || !fixed_outside
                || is.len() != a.dims.len()
                || v.len() != 1
            {
                return None;
            }
            for p in &s.pat {
                accs.insert(p.name, a.clone());
            }
            vals.push(v[0].clone());
            rows.push(RowUpdate {
                acc: a,
                fixed: fixed.to_vec(),
            });
        }
        if rows.is_empty() {
            return None;
        }
        let ret = rows.iter().map(|r| Type::Prim(r.acc.elem)).collect();
        let body = Body {
            stms: stms[..head].to_vec(),
            result: vals,
        };
        let values = Lambda::new(params.to_vec(), body, ret);
        (!runic_ir::traverse::free_vars(&values).contains(&j)).then_some((values, rows))
    }

    /// `with_acc` inside a kernel: the lambda runs once, sequentially, for this element
    /// alone, so each accumulator is simply its array — the input itself when this code
    /// owns it and nothing reads it afterwards (`with_acc` consumes its arrays), else a
    /// copy — and its updates write there in place. The results are those arrays,
    /// followed by the lambda's other results.
    pub(crate) fn with_acc(&mut self, s: &Stm, inputs: &[AccInput], lam: &Lambda) -> R<()> {
        let n = inputs.len();
        if lam.params.len() != n || lam.body.result.len() != s.pat.len() {
            return Err("internal error: a with_acc whose lambda does not fit".into());
        }
        let mut accs = Vec::new();
        for inp in inputs {
            let [a] = inp.arrays.as_slice() else {
                return Err("an accumulator of several arrays".into());
            };
            let v = self.array(*a)?;
            let arr = match self.consume(*a) {
                true => v,
                false => self.fresh_copy(&v)?,
            };
            accs.push(AccV {
                base: arr.base,
                elem: arr.elem,
                dims: arr.dims,
                op: inp.op.as_ref().map(|(op, _)| op.clone()),
            });
        }
        for (p, a) in lam.params.iter().zip(&accs) {
            self.accs.insert(p.name, a.clone());
        }
        self.stms(&lam.body)?;
        for (k, (p, r)) in s.pat.iter().zip(&lam.body.result).enumerate() {
            if k < n {
                // The final accumulator: the array its updates wrote into.
                let SubExp::Var(r) = r else {
                    return Err("internal error: an accumulator result that is a constant".into());
                };
                let a = self
                    .accs
                    .get(r)
                    .cloned()
                    .ok_or("a with_acc whose result is not one of its accumulators")?;
                let arr = ArrV::dense(self.b, a.base, a.elem, a.dims);
                self.arrays.insert(p.name, arr);
                self.owned.insert(p.name);
            } else {
                match r {
                    SubExp::Var(v) if self.arrays.contains_key(v) => {
                        let arr = self.array(*v)?;
                        self.arrays.insert(p.name, arr);
                        // Two names for one buffer: neither may be consumed in place.
                        self.owned.remove(v);
                    }
                    r => {
                        let x = self.opd(r)?;
                        self.env.insert(p.name, x);
                    }
                }
            }
        }
        Ok(())
    }

    /// `dest[flat] = op(dest[flat], vals[j])` where bins may be rows: the operator's
    /// parameters are views of the destination's row and the value's row; its result is
    /// copied into the row (through a scratch buffer unless it is that very row, so that a
    /// result computed from views of the row cannot overwrite what it reads).
    pub(crate) fn combine_rows(
        &mut self,
        dests: &[ArrV],
        flat: Value,
        vals: &[ArrV],
        j: Value,
        op: &Lambda,
    ) -> R<()> {
        let k = dests.len();
        let saved = (self.env.clone(), self.arrays.clone());
        let mut targets = Vec::new();
        for (d, p) in dests.iter().zip(&op.params[..k]) {
            if d.dims.len() == 1 {
                let a = d.at(self.b, flat);
                let x = self.b.ins().load(cl(d.elem), mem(), a, 0);
                self.env.insert(p.name, (x, d.elem));
                targets.push(None);
            } else {
                let row = d.row(self.b, flat);
                self.arrays.insert(p.name, row.clone());
                targets.push(Some(row));
            }
        }
        self.bind_element(&op.params[k..], vals, j);
        // An elementwise operator (`map2 (+)` over rows) writes over the bin's row, which
        // it reads element by element before writing: no scratch row, no copy back.
        let mut in_place = Vec::new();
        for (i, t) in targets.iter().enumerate() {
            if let (Some(row), Some(SubExp::Var(r))) = (t, op.body.result.get(i)) {
                if crate::folds::elementwise(op, i) {
                    self.dests.insert(*r, row.clone());
                    in_place.push(*r);
                }
            }
        }
        self.stms(&op.body)?;
        for r in in_place {
            self.dests.remove(&r);
        }
        for ((r, t), d) in op.body.result.iter().zip(targets).zip(dests) {
            match (r, t) {
                (SubExp::Var(v), Some(row)) => {
                    let res = self.array(*v)?;
                    let same = self.same_layout(&res, &row);
                    let differ = self.b.ins().icmp_imm_s(IntCC::Equal, same, 0);
                    let after = self.when(differ);
                    let tmp = self.fresh_copy(&res)?;
                    self.copy_row(&tmp, &row)?;
                    self.b.ins().jump(after, &[]);
                    self.b.switch_to_block(after);
                }
                (_, None) => {
                    let (x, _) = self.opd(r)?;
                    let a = d.at(self.b, flat);
                    self.b.ins().store(mem(), x, a, 0);
                }
                _ => return Err("internal error: a row result that is a constant".into()),
            }
        }
        (self.env, self.arrays) = saved;
        Ok(())
    }

    /// A fresh dense copy of the array `v` in a scratch buffer, to update in place.
    pub(crate) fn fresh_copy(&mut self, v: &ArrV) -> R<ArrV> {
        let mut n = self.b.ins().iconst(types::I64, 1);
        for d in &v.dims {
            n = self.b.ins().imul(n, *d);
        }
        let base = self.scratch_buf(n, v.elem)?;
        let copy = ArrV::dense(self.b, base, v.elem, v.dims.clone());
        self.copy_row(v, &copy)?;
        Ok(copy)
    }

    /// `hist` or `scatter` inside a kernel: a loop over `w` elements applying each whose
    /// indices are in range to fresh copies of the destinations, bound to the pattern.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn inner_hist(
        &mut self,
        s: &Stm,
        w: &SubExp,
        dests: &[VName],
        op: Option<&Lambda>,
        is: &[VName],
        vals: &[VName],
    ) -> R<()> {
        let w = self.index_value(w)?;
        let mut outs = Vec::new();
        for d in dests {
            let v = self.array(*d)?;
            if v.dims.len() != is.len() {
                return Err("a reduce_by_index or scatter of rows".into());
            }
            // The destination is consumed: updated in place when this code owns it.
            let fresh = match self.consume(*d) {
                true => v,
                false => self.fresh_copy(&v)?,
            };
            outs.push(fresh);
        }
        let mut ins = Vec::new();
        for a in is.iter().chain(vals) {
            let v = self.array(*a)?;
            if v.dims.len() != 1 {
                return Err("a reduce_by_index or scatter of rows".into());
            }
            // A size larger than an input: the slow path reports it.
            let big = self.b.ins().icmp(IntCC::UnsignedGreaterThan, w, v.dims[0]);
            self.fail_if(big, FAIL_INDEX);
            ins.push(v);
        }
        let (j, header, done) = self.open_counted_loop(w);
        let mut xs = Vec::new();
        for v in &ins {
            let a = v.at(self.b, j);
            xs.push((self.b.ins().load(cl(v.elem), mem(), a, 0), v.elem));
        }
        let mut cs = Vec::new();
        for (x, t) in &xs[..is.len()] {
            cs.push(self.widen_index(*x, *t)?);
        }
        let vs: Vec<Value> = xs[is.len()..].iter().map(|(x, _)| *x).collect();
        match op {
            Some(_) => {
                let (flat, ok) = self.flat_index(&cs, &outs[0].dims.clone());
                let after = self.when(ok);
                let targets: Vec<(Value, PrimType)> =
                    outs.iter().map(|o| (o.base, o.elem)).collect();
                self.combine_at(&targets, flat, &vs, op)?;
                self.b.ins().jump(after, &[]);
                self.b.switch_to_block(after);
            }
            // Scatter: destination k gets value array k, each within its own bounds.
            None => {
                for (o, v) in outs.clone().iter().zip(&vs) {
                    let (flat, ok) = self.flat_index(&cs, &o.dims);
                    let after = self.when(ok);
                    self.combine_at(&[(o.base, o.elem)], flat, &[*v], None)?;
                    self.b.ins().jump(after, &[]);
                    self.b.switch_to_block(after);
                }
            }
        }
        self.close_counted_loop(j, header, done);
        for (p, o) in s.pat.iter().zip(outs) {
            self.arrays.insert(p.name, o);
            self.owned.insert(p.name);
        }
        Ok(())
    }
}

/// Compile `reduce_by_index` with the operator `op` whose indices have the types
/// `index_types` (one per dimension of the destinations) into a histogram kernel.
pub fn compile_hist(
    op: &Lambda,
    index_types: &[PrimType],
    free_type: &dyn Fn(VName) -> Option<VarType>,
) -> R<HistKernel> {
    let no_ret = Lambda {
        ret: vec![],
        ..op.clone()
    };
    check_lambda_in(&no_ret, "the reduce_by_index operator", true)?;
    let k = op.ret.len();
    let kind = |t: &Type| (prim_of(t), t.rank());
    if op.params.len() != 2 * k
        || op
            .ret
            .iter()
            .any(|t| !matches!(t, Type::Prim(_) | Type::Array { .. }))
        || op.params[..k]
            .iter()
            .map(|p| kind(&p.ty))
            .ne(op.ret.iter().map(kind))
        || op.params[k..]
            .iter()
            .map(|p| kind(&p.ty))
            .ne(op.ret.iter().map(kind))
    {
        return Err(
            "the reduce_by_index operator's parameter types differ from its results".into(),
        );
    }
    let dests: Vec<PrimType> = op.ret.iter().map(prim_of).collect();
    let rows: Vec<usize> = op.ret.iter().map(Type::rank).collect();
    let frees = split_frees(&[op], free_type)?;
    if !frees.accs.is_empty() {
        return Err("the reduce_by_index operator updates an accumulator".into());
    }
    histogram_kernel(Some(op), index_types, &rows, dests, frees)
}

/// Compile `scatter` into one destination of element type `elem` whose indices have the
/// types `index_types`: a histogram kernel whose update overwrites (the last element in
/// input order wins).
pub fn compile_scatter(index_types: &[PrimType], elem: PrimType) -> R<HistKernel> {
    histogram_kernel(None, index_types, &[0], vec![elem], Frees::default())
}

/// The kernel of [`compile_hist`] and [`compile_scatter`].
/// `rows`: the rank of every destination's rows (0: scalar bins), which the value arrays'
/// rows have too.
fn histogram_kernel(
    op: Option<&Lambda>,
    index_types: &[PrimType],
    rows: &[usize],
    dests: Vec<PrimType>,
    frees: Frees,
) -> R<HistKernel> {
    if index_types.iter().any(|t| !t.is_int()) {
        return Err("indices that are not integers".into());
    }
    let mut params: Vec<PrimType> = index_types.to_vec();
    params.extend(&dests);
    let mut ranks = vec![1; index_types.len()];
    ranks.extend(rows.iter().map(|r| r + 1));
    let io = Inputs {
        ranks,
        params,
        frees: frees.scalars,
        free_arrays: frees.arrays,
        accs: vec![],
        iotas: frees.iotas,
    };
    let n_is = index_types.len();
    let i64t = types::I64;
    let name = match op {
        Some(op) => crate::gen::kernel_name("hist", op),
        None => "scatter".to_string(),
    };
    let (ptr, code) = build_kernel(&name, &[i64t; 4], |b, rt, slot| {
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        let fail = b.create_block();
        b.append_block_param(fail, types::I32);
        b.switch_to_block(entry);
        let [start, end, ins, outs] = b.block_params(entry)[..] else {
            return Err("internal error: kernel parameters".into());
        };
        // After the inputs' and free arrays' dimensions: the bins of every dimension, the
        // range of flat bins `lo..hi` this call applies, then the dimensions of the rows of
        // every destination of rows.
        let mut extra = vec![n_is, 2];
        extra.extend(rows.iter().copied().filter(|&r| r > 0));
        let pro = prologue(b, ins, &io, &extra);
        let mut row_dims = pro.out_dims[2..].iter().cloned();
        let bins = pro.out_dims[0].clone();
        let (lo, hi) = (pro.out_dims[1][0], pro.out_dims[1][1]);
        let bases = load_ptrs(b, outs, 0, dests.len());
        let width = b.ins().isub(hi, lo);
        let mut g = Gen::new(b, pro.env, fail, rt, slot, Some(pro.arena));
        g.arrays = pro.arrays;
        g.free_iotas(&pro.iotas);
        let n = g.b.ins().isub(end, start);
        let (j0, header, done) = g.open_counted_loop(n);
        let j = g.b.ins().iadd(j0, start);
        let mut cs = Vec::new();
        for v in &pro.inputs[..n_is] {
            let a = v.at(g.b, j);
            let x = g.b.ins().load(cl(v.elem), mem(), a, 0);
            cs.push(g.widen_index(x, v.elem)?);
        }
        // One unsigned comparison: lo <= flat < hi. With one dimension it also covers the
        // bounds of the index (0 <= lo and hi <= bins).
        let (flat, ok) = match cs.as_slice() {
            [c] => (*c, None),
            _ => {
                let (flat, ok) = g.flat_index(&cs, &bins);
                (flat, Some(ok))
            }
        };
        let local = g.b.ins().isub(flat, lo);
        let mine = g.b.ins().icmp(IntCC::UnsignedLessThan, local, width);
        let ok = match ok {
            Some(ok) => g.b.ins().band(ok, mine),
            None => mine,
        };
        let after = g.when(ok);
        if rows.iter().all(|&r| r == 0) {
            let targets: Vec<(Value, PrimType)> =
                bases.iter().copied().zip(dests.iter().copied()).collect();
            let mut vs = Vec::new();
            for v in &pro.inputs[n_is..] {
                let a = v.at(g.b, j);
                vs.push(g.b.ins().load(cl(v.elem), mem(), a, 0));
            }
            g.combine_at(&targets, local, &vs, op)?;
        } else {
            let op = op.ok_or("internal error: rows without an operator")?;
            // Every destination as a dense array of its bins `lo..hi`.
            let mut ds = Vec::new();
            for ((base, t), r) in bases.iter().zip(&dests).zip(rows) {
                let mut dims = vec![width];
                if *r > 0 {
                    dims.extend(row_dims.next().ok_or("internal error: row dimensions")?);
                }
                ds.push(ArrV::dense(g.b, *base, *t, dims));
            }
            g.combine_rows(&ds, local, &pro.inputs[n_is..], j, op)?;
        }
        g.b.ins().jump(after, &[]);
        g.b.switch_to_block(after);
        g.close_counted_loop(j0, header, done);
        crate::gen::return_ok_or_fail(g.b, fail);
        Ok(())
    })?;
    // SAFETY: compiled with exactly this signature (four i64-sized arguments, an i32
    // result, the platform's C calling convention).
    let f: MapFn = unsafe { std::mem::transmute::<*const u8, MapFn>(ptr) };
    Ok(HistKernel {
        f,
        index_types: index_types.to_vec(),
        vals: io.params[n_is..].to_vec(),
        row_ranks: rows.to_vec(),
        dests,
        frees: io.frees,
        free_arrays: io.free_arrays,
        _code: code,
    })
}
