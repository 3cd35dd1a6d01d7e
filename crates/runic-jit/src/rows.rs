//! Intermediate arrays in map kernels: a nested `map` whose rows are not fused into a
//! reduction writes them either straight into the kernel's output row (when the map's
//! result is the lambda's result) or into a per-call scratch buffer ([`crate::shims::Scratch`]:
//! allocated once per chunk and reused by every element), which later statements index and
//! fold like any other array; array results of the map lambda are copied into their rows of
//! the output.

use crate::gen::{ba, cl, elem_addr, mem, prim_of, Gen, R};
use crate::nest::{ArrV, FAIL_INDEX};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Block, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;
use runic_ir::*;

/// The rank that marks an accumulator among the results of an `if`.
const ACC: usize = usize::MAX;

/// Opens `for j in from..n` (an `i64` counter) and continues in its body; returns the
/// counter and the blocks [`close_loop`] needs.
pub(crate) fn open_loop(b: &mut FunctionBuilder, from: Value, n: Value) -> (Value, Block, Block) {
    let header = b.create_block();
    let body = b.create_block();
    let done = b.create_block();
    b.append_block_param(header, types::I64);
    b.ins().jump(header, &ba(&[from]));
    b.switch_to_block(header);
    let j = b.block_params(header)[0];
    let more = b.ins().icmp(IntCC::SignedLessThan, j, n);
    b.ins().brif(more, body, &[], done, &[]);
    b.switch_to_block(body);
    (j, header, done)
}

/// Ends the body of a loop opened by [`open_loop`] and continues after it.
pub(crate) fn close_loop(b: &mut FunctionBuilder, j: Value, header: Block, done: Block) {
    let next = b.ins().iadd_imm_s(j, 1);
    b.ins().jump(header, &ba(&[next]));
    b.switch_to_block(done);
}

impl Gen<'_, '_> {
    /// Opens `for j < n` (an `i64` counter from 0) and continues in its body; returns the
    /// counter and the blocks [`Gen::close_counted_loop`] needs.
    pub(crate) fn open_counted_loop(&mut self, n: Value) -> (Value, Block, Block) {
        let zero = self.b.ins().iconst(types::I64, 0);
        open_loop(self.b, zero, n)
    }

    /// [`Gen::open_counted_loop`] over `j` in `from..n`.
    pub(crate) fn open_counted_loop_from(
        &mut self,
        from: Value,
        n: Value,
    ) -> (Value, Block, Block) {
        open_loop(self.b, from, n)
    }

    /// Ends the body of a loop opened by [`Gen::open_counted_loop`] and continues after it.
    pub(crate) fn close_counted_loop(&mut self, j: Value, header: Block, done: Block) {
        close_loop(self.b, j, header, done)
    }

    /// Runs `lanes` — which emits a SIMD loop and returns the element it stopped at — where
    /// `ok` holds at run time; returns the element the scalar loop continues from (0
    /// where `ok` does not hold).
    pub(crate) fn lanes_first(
        &mut self,
        ok: Value,
        lanes: impl FnOnce(&mut Self) -> R<Value>,
    ) -> R<Value> {
        let zero = self.b.ins().iconst(types::I64, 0);
        let yes = self.b.create_block();
        let after = self.b.create_block();
        self.b.append_block_param(after, types::I64);
        self.b.ins().brif(ok, yes, &[], after, &ba(&[zero]));
        self.b.switch_to_block(yes);
        let j = lanes(self)?;
        self.b.ins().jump(after, &ba(&[j]));
        self.b.switch_to_block(after);
        Ok(self.b.block_params(after)[0])
    }

    /// `xs = map lam arrs` over arrays in scope: a sequential loop writing each result
    /// into its row (scalars), or copying it there (arrays, unless a nested map builds
    /// it there in place).
    pub(crate) fn inner_map(&mut self, s: &Stm, w: &SubExp, lam: &Lambda, arrs: &[VName]) -> R<()> {
        if arrs.is_empty() || lam.params.len() != arrs.len() {
            return Err("a nested map without inputs".into());
        }
        if let Some(col) = crate::columns::column(lam) {
            return self.column_map(s, w, lam, arrs, col);
        }
        let w = self.index_value(w)?;
        // Lazy iotas are bound to the counter; the other inputs are views.
        let (lazy, stored): (Vec<_>, Vec<_>) = lam
            .params
            .iter()
            .zip(arrs)
            .partition(|(_, a)| self.lazy_iota(**a).is_some());
        for (_, a) in &lazy {
            self.check_lazy_width(**a, w)?;
        }
        let (params, arrs): (Vec<Param>, Vec<VName>) =
            stored.into_iter().map(|(p, a)| (p.clone(), *a)).unzip();
        let views = self.map_inputs(&arrs, w)?;
        let outs = self.out_arrays(s, w, &lam.ret)?;
        let index: Vec<bool> = (lam.params.iter())
            .map(|p| lazy.iter().any(|(q, _)| q.name == p.name))
            .collect();
        let from = match lazy.as_slice() {
            [(j, _)] if self.updates_acc_rows(lam, j.name, &params) => {
                self.vector_acc_updates(lam, j.name, &params, &views, w)?
            }
            _ => self.vector_inner_map(lam, &index, &views, &outs, w)?,
        };
        let (j, header, done) = self.open_counted_loop_from(from, w);
        let saved = (self.env.clone(), self.arrays.clone());
        // The lambda runs many times: it owns only what it makes.
        let saved_owned = std::mem::take(&mut self.owned);
        self.bind_element(&params, &views, j);
        for (p, _) in &lazy {
            self.env.insert(p.name, (j, PrimType::I64));
        }
        // Rows of array results: where the nested maps that make them write.
        let mut rows = Vec::new();
        for (r, out) in lam.body.result.iter().zip(&outs) {
            let row = (out.dims.len() > 1).then(|| out.row(self.b, j));
            if let (SubExp::Var(v), Some(row)) = (r, &row) {
                self.dests.entry(*v).or_insert_with(|| row.clone());
            }
            rows.push(row);
        }
        self.stms(&lam.body)?;
        let mut copied = std::collections::HashSet::new();
        for ((r, out), row) in lam.body.result.iter().zip(&outs).zip(&rows) {
            match (r, row) {
                (SubExp::Var(v), Some(row)) => {
                    if !(self.written.contains(v) && copied.insert(*v)) {
                        let src = self.array(*v)?;
                        self.copy_row(&src, row)?;
                    }
                }
                (_, Some(_)) => return Err("internal error: an array result".into()),
                (_, None) => {
                    let (x, _) = self.opd(r)?;
                    let addr = out.at(self.b, j);
                    self.b.ins().store(mem(), x, addr, 0);
                }
            }
        }
        (self.env, self.arrays) = saved;
        self.owned = saved_owned;
        self.close_counted_loop(j, header, done);
        self.bind_outs(s, outs);
        Ok(())
    }

    /// The arrays a nested map over `w` elements reads, each checked to have them (a
    /// shorter one leaves for the slow path, which reports it).
    pub(crate) fn map_inputs(&mut self, arrs: &[VName], w: Value) -> R<Vec<ArrV>> {
        let mut views = Vec::new();
        for a in arrs {
            let v = self.stored_array(*a)?;
            let big = self.b.ins().icmp(IntCC::UnsignedGreaterThan, w, v.dims[0]);
            self.fail_if(big, FAIL_INDEX);
            views.push(v);
        }
        Ok(views)
    }

    /// Runs the elements of a nested map of f32/f64 scalars in SIMD lanes first when its
    /// lambda allows (`simd/`) and its inputs and outputs are contiguous at run time;
    /// returns the element the scalar loop continues from (0 when nothing ran in lanes).
    /// The parameters marked in `index` take the element's index (an iota not stored);
    /// `ins` are the other parameters' inputs.
    fn vector_inner_map(
        &mut self,
        lam: &Lambda,
        index: &[bool],
        ins: &[ArrV],
        outs: &[ArrV],
        w: Value,
    ) -> R<Value> {
        let zero = self.b.ins().iconst(types::I64, 0);
        let env = &self.env;
        let Some(bits) = crate::kernels::index_bits(index) else {
            return Ok(zero);
        };
        let plan = crate::simd::plan_indexed(lam, bits, &|v| env.get(&v).map(|(_, t)| *t));
        let Some(plan) = plan else { return Ok(zero) };
        let vectors = ins
            .iter()
            .chain(outs)
            .all(|a| a.dims.len() == 1 && a.elem == plan.elem);
        if !vectors {
            return Ok(zero);
        }
        let contiguous = self.contiguous(ins.iter().chain(outs));
        let bases = crate::kernels::lane_columns(plan, lam, ins, zero)?;
        let out_bases: Vec<Value> = outs.iter().map(|a| a.base).collect();
        let to = crate::kernels::lanes_end(self.b, plan, zero, w);
        self.lanes_first(contiguous, |g| {
            let frees = crate::simd::splat_env(g.b, plan, &g.env, lam);
            let outs = (out_bases.as_slice(), crate::simd::Write::Store);
            crate::simd::vector_loop(g.b, plan, lam, &frees, &bases, outs, zero, to)
        })
    }

    /// The arrays a nested SOAC producing rows of `rows` (one per pattern element) over `w`
    /// elements writes: the output row of the enclosing lambda's result when that is where
    /// the result goes, or a scratch buffer.
    pub(crate) fn out_arrays(&mut self, s: &Stm, w: Value, rows: &[Type]) -> R<Vec<ArrV>> {
        let mut outs = Vec::new();
        for (p, t) in s.pat.iter().zip(rows) {
            let elem = prim_of(t);
            let mut dims = vec![w];
            if let Type::Array { shape, .. } = t {
                for d in shape {
                    dims.push(self.index_value(d)?);
                }
            }
            let dest = self
                .dests
                .get(&p.name)
                .filter(|d| d.dims.len() == dims.len() && d.elem == elem)
                .cloned();
            let out = match dest {
                Some(d) => {
                    for (a, b) in dims.iter().zip(&d.dims) {
                        let bad = self.b.ins().icmp(IntCC::NotEqual, *a, *b);
                        self.fail_if(bad, FAIL_INDEX);
                    }
                    self.written.insert(p.name);
                    d
                }
                None => {
                    let mut n = self.b.ins().iconst(types::I64, 1);
                    for d in &dims {
                        // A negative size: the slow path reports it.
                        let bad = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, *d, 0);
                        self.fail_if(bad, FAIL_INDEX);
                        n = self.b.ins().imul(n, *d);
                    }
                    let base = self.scratch_buf(n, elem)?;
                    ArrV::dense(self.b, base, elem, dims)
                }
            };
            outs.push(out);
        }
        Ok(outs)
    }

    /// `xs = scan op ne (map pre arrs)` over arrays in scope: a sequential loop writing
    /// every intermediate accumulator into the outputs.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn inner_scan(
        &mut self,
        s: &Stm,
        w: &SubExp,
        arrs: &[VName],
        pre: Option<&Lambda>,
        op: &Lambda,
        neutral: &[SubExp],
    ) -> R<()> {
        if op.ret.iter().any(|t| !matches!(t, Type::Prim(_))) {
            return Err("a scan of arrays".into());
        }
        let wv = self.index_value(w)?;
        let outs = self.out_arrays(s, wv, &op.ret)?;
        self.fold_loop(w, arrs, pre, op, neutral, Some(&outs))?;
        self.bind_outs(s, outs);
        Ok(())
    }

    /// Binds the arrays a nested SOAC wrote: the ones in scratch buffers are owned.
    pub(crate) fn bind_outs(&mut self, s: &Stm, outs: Vec<ArrV>) {
        for (p, out) in s.pat.iter().zip(outs) {
            if !self.written.contains(&p.name) {
                self.owned.insert(p.name);
            }
            self.arrays.insert(p.name, out);
        }
    }

    /// A scratch buffer for `n` elements of `t`, reused across the elements of a call.
    pub(crate) fn scratch_buf(&mut self, n: Value, t: PrimType) -> R<Value> {
        let arena = self
            .arena
            .ok_or("internal error: an intermediate array outside a map kernel")?;
        let shift = t.size_bytes().trailing_zeros() as i64;
        let bytes = self.b.ins().ishl_imm_u(n, shift);
        let k = self.b.ins().iconst(types::I64, self.n_scratch as i64);
        self.n_scratch += 1;
        let call = self.b.ins().call(self.rt.scratch, &[arena, k, bytes]);
        Ok(self.b.inst_results(call)[0])
    }

    /// Copy the array `src` into the output row `dst` (same dimensions, or a failure).
    pub(crate) fn copy_row(&mut self, src: &ArrV, dst: &ArrV) -> R<()> {
        if src.dims.len() != dst.dims.len() || src.elem != dst.elem {
            return Err("a result of another type than the map's".into());
        }
        for (a, b) in src.dims.iter().zip(&dst.dims) {
            let bad = self.b.ins().icmp(IntCC::NotEqual, *a, *b);
            self.fail_if(bad, FAIL_INDEX);
        }
        self.copy_rec(src, dst);
        Ok(())
    }

    /// A loop over the outer dimension, nested once per dimension (`src` may be strided).
    fn copy_rec(&mut self, src: &ArrV, dst: &ArrV) {
        let (j, header, done) = self.open_counted_loop(src.dims[0]);
        if src.dims.len() == 1 {
            let from = src.at(self.b, j);
            let x = self.b.ins().load(cl(src.elem), mem(), from, 0);
            let to = dst.at(self.b, j);
            self.b.ins().store(mem(), x, to, 0);
        } else {
            let (s, d) = (src.row(self.b, j), dst.row(self.b, j));
            self.copy_rec(&s, &d);
        }
        self.close_counted_loop(j, header, done);
    }

    /// `iota n` (or nothing, when it can stay lazy) or `replicate shape x` (a scalar `x`)
    /// into a scratch buffer.
    pub(crate) fn fill_array(&mut self, s: &Stm, op: &BasicOp) -> R<()> {
        let [p] = s.pat.as_slice() else {
            return Err("an array operation with several results".into());
        };
        let (dims, elem, value) = match op {
            BasicOp::Range {
                start: SubExp::Const(Prim::I64(0)),
                second: Some(SubExp::Const(Prim::I64(1))),
                end,
                kind: RangeKind::UpToExclusive,
                elem: PrimType::I64,
            } => {
                let n = self.index_value(end)?;
                // A negative size: the slow path reports it.
                let bad = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, n, 0);
                self.fail_if(bad, FAIL_INDEX);
                self.iotas.insert(p.name);
                if self.soac_only.contains(&p.name) {
                    // Not stored: the loops reading it bind their counter instead.
                    self.lazy_iotas.insert(p.name, n);
                } else {
                    let a = self.stored_iota(n)?;
                    self.arrays.insert(p.name, a);
                    self.owned.insert(p.name);
                }
                return Ok(());
            }
            BasicOp::Range {
                start,
                second,
                end,
                kind,
                elem,
            } => return self.range(p, [start, end], second.as_ref(), *kind, *elem),
            BasicOp::Replicate(shape, x) => {
                let (v, t) = match x {
                    SubExp::Var(a) if self.arrays.contains_key(a) => {
                        return Err("a replicate of an array".into())
                    }
                    x => self.opd(x)?,
                };
                let mut dims = Vec::new();
                for d in shape {
                    dims.push(self.index_value(d)?);
                }
                (dims, t, v)
            }
            BasicOp::ArrayLit(xs, Type::Prim(t)) => {
                // A literal of scalars: stored one by one.
                let n = self.b.ins().iconst(types::I64, xs.len() as i64);
                let base = self.scratch_buf(n, *t)?;
                for (j, x) in xs.iter().enumerate() {
                    let (v, _) = self.opd(x)?;
                    let off = (j * t.size_bytes()) as i32;
                    self.b.ins().store(mem(), v, base, off);
                }
                let a = ArrV::dense(self.b, base, *t, vec![n]);
                self.arrays.insert(p.name, a);
                self.owned.insert(p.name);
                return Ok(());
            }
            _ => return Err("an array literal of arrays".into()),
        };
        let mut n = self.b.ins().iconst(types::I64, 1);
        for d in &dims {
            // A negative size: the slow path reports it.
            let bad = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, *d, 0);
            self.fail_if(bad, FAIL_INDEX);
            n = self.b.ins().imul(n, *d);
        }
        let base = self.scratch_buf(n, elem)?;
        let (j, header, done) = self.open_counted_loop(n);
        let to = elem_addr(self.b, base, j, elem);
        self.b.ins().store(mem(), value, to, 0);
        self.close_counted_loop(j, header, done);
        let a = ArrV::dense(self.b, base, elem, dims);
        self.arrays.insert(p.name, a);
        self.owned.insert(p.name);
        Ok(())
    }

    /// A range of integers of type `t` into a scratch buffer: its first element, step and
    /// length resolved by a shim with the evaluator's rules (an invalid range leaves for the
    /// slow path, which reports it), its elements computed modulo the type's width.
    fn range(
        &mut self,
        p: &Param,
        [start, end]: [&SubExp; 2],
        second: Option<&SubExp>,
        kind: RangeKind,
        t: PrimType,
    ) -> R<()> {
        if !t.is_int() {
            return Err("a range that is not of integers".into());
        }
        let raw = |g: &mut Self, s: &SubExp| -> R<Value> {
            let x = g.opd(s)?;
            let v = g.convert(x, t);
            Ok(if t.bits() < 64 {
                g.b.ins().uextend(types::I64, v)
            } else {
                v
            })
        };
        let a = raw(self, start)?;
        let c = raw(self, end)?;
        let (b, has_b) = match second {
            Some(s) => (raw(self, s)?, 1),
            None => (self.b.ins().iconst(types::I64, 0), 0),
        };
        let slot = self
            .b
            .create_sized_stack_slot(cranelift_codegen::ir::StackSlotData::new(
                cranelift_codegen::ir::StackSlotKind::ExplicitSlot,
                24,
                3,
            ));
        let args = [
            self.b.ins().iconst(types::I64, crate::shims::type_index(t)),
            a,
            b,
            self.b.ins().iconst(types::I64, has_b),
            c,
            self.b
                .ins()
                .iconst(types::I64, crate::shims::range_kind_index(kind)),
            self.b.ins().stack_addr(types::I64, slot, 0),
        ];
        let call = self.b.ins().call(self.rt.range, &args);
        let code = self.b.inst_results(call)[0];
        let bad = self.b.ins().icmp_imm_s(IntCC::NotEqual, code, 0);
        self.fail_if(bad, FAIL_INDEX);
        let [first, step, n] =
            [0, 8, 16].map(|o| self.b.ins().stack_load(types::I64, types::I64, slot, o));
        let base = self.scratch_buf(n, t)?;
        let (j, header, done) = self.open_counted_loop(n);
        let k = self.b.ins().imul(j, step);
        let x = self.b.ins().iadd(first, k);
        let x = if t.bits() < 64 {
            self.b.ins().ireduce(cl(t), x)
        } else {
            x
        };
        let to = elem_addr(self.b, base, j, t);
        self.b.ins().store(mem(), x, to, 0);
        self.close_counted_loop(j, header, done);
        let a = ArrV::dense(self.b, base, t, vec![n]);
        self.arrays.insert(p.name, a);
        self.owned.insert(p.name);
        Ok(())
    }

    /// `if c then a else b`, with scalar and array results (an array: its address and its
    /// dimensions, merged like scalars). Branches that only select operands become selects.
    pub(crate) fn if_(&mut self, s: &Stm, cond: &SubExp, tb: &Body, eb: &Body) -> R<()> {
        let (c, _) = self.opd(cond)?;
        let mut kinds = Vec::new();
        for p in &s.pat {
            match &p.ty {
                Type::Prim(t) => kinds.push((*t, 0)),
                Type::Array { elem, shape } => kinds.push((*elem, shape.len())),
                // The accumulator a branch returns: the same one from both, see below.
                Type::Acc { .. } => kinds.push((PrimType::Bool, ACC)),
            }
        }
        // The result may be a view of an array either branch returns.
        for r in tb.result.iter().chain(&eb.result) {
            if let SubExp::Var(v) = r {
                self.owned.remove(v);
            }
        }
        let vals = if tb.stms.is_empty() && eb.stms.is_empty() {
            let a = self.flat_results(tb, &kinds)?;
            let e = self.flat_results(eb, &kinds)?;
            a.into_iter()
                .zip(e)
                .map(|(a, e)| self.b.ins().select(c, a, e))
                .collect()
        } else {
            let (tblk, eblk, merge) = (
                self.b.create_block(),
                self.b.create_block(),
                self.b.create_block(),
            );
            for (t, r) in &kinds {
                if *r == ACC {
                    continue;
                } else if *r == 0 {
                    self.b.append_block_param(merge, cl(*t));
                } else {
                    // Address, dimensions, strides.
                    for _ in 0..=2 * *r {
                        self.b.append_block_param(merge, types::I64);
                    }
                }
            }
            self.b.ins().brif(c, tblk, &[], eblk, &[]);
            // Each branch starts from what the code owns before the `if` (one branch
            // consuming an array must not make the other copy it: a loop updating its
            // parameter in either branch copied it every other iteration); after the
            // `if`, it owns what neither branch consumed.
            let owned = self.owned.clone();
            let mut kept = owned.clone();
            for (blk, body) in [(tblk, tb), (eblk, eb)] {
                self.b.switch_to_block(blk);
                let saved = (self.env.clone(), self.arrays.clone());
                self.owned = owned.clone();
                self.stms(body)?;
                let r = self.flat_results(body, &kinds)?;
                (self.env, self.arrays) = saved;
                kept.retain(|v| self.owned.contains(v));
                self.b.ins().jump(merge, &ba(&r));
            }
            self.owned = kept;
            self.b.switch_to_block(merge);
            self.b.block_params(merge).to_vec()
        };
        let mut it = vals.into_iter();
        for (k, (p, (t, r))) in s.pat.iter().zip(kinds).enumerate() {
            let mut next = || it.next().ok_or("internal error: if results");
            if r == ACC {
                let acc = |b: &Body| match &b.result[k] {
                    SubExp::Var(v) => self.accs.get(v).cloned(),
                    _ => None,
                };
                match (acc(tb), acc(eb)) {
                    (Some(a), Some(e)) if a.base == e.base => {
                        self.accs.insert(p.name, a);
                    }
                    _ => return Err("an if whose branches give different accumulators".into()),
                }
            } else if r == 0 {
                let v = next()?;
                self.env.insert(p.name, (v, t));
            } else {
                let base = next()?;
                let mut dims = Vec::new();
                for _ in 0..r {
                    dims.push(next()?);
                }
                let mut strides = Vec::new();
                for _ in 0..r {
                    strides.push(next()?);
                }
                self.arrays.insert(
                    p.name,
                    ArrV {
                        base,
                        elem: t,
                        dims,
                        strides,
                    },
                );
            }
        }
        Ok(())
    }

    /// The results of a branch as flat values: a scalar, or an array's address and dims.
    fn flat_results(&mut self, body: &Body, kinds: &[(PrimType, usize)]) -> R<Vec<Value>> {
        let mut out = Vec::new();
        for (r, (t, rank)) in body.result.iter().zip(kinds) {
            if *rank == ACC {
                continue;
            }
            if *rank == 0 {
                out.push(self.opd(r)?.0);
                continue;
            }
            let SubExp::Var(a) = r else {
                return Err("internal error: an array result that is a constant".into());
            };
            let v = self.array(*a)?;
            if v.dims.len() != *rank || v.elem != *t {
                return Err("an if whose branches give arrays of other types".into());
            }
            out.push(v.base);
            out.extend(v.dims);
            out.extend(v.strides);
        }
        Ok(out)
    }
}

impl Gen<'_, '_> {
    /// The width of a lazy `iota` ([`Gen::soac_only`]) when `v` is one.
    pub(crate) fn lazy_iota(&self, v: VName) -> Option<Value> {
        self.lazy_iotas.get(&v).copied()
    }

    /// A loop over `w` elements of the lazy iota `v`: `w` larger than it leaves for the slow
    /// path, which reports it.
    pub(crate) fn check_lazy_width(&mut self, v: VName, w: Value) -> R<()> {
        let n = self.lazy_iota(v).ok_or("internal error: not a lazy iota")?;
        let big = self.b.ins().icmp(IntCC::UnsignedGreaterThan, w, n);
        self.fail_if(big, FAIL_INDEX);
        Ok(())
    }

    /// Free arrays that are `iota n` (passed in, with lengths `n`): loops over them use
    /// their counter, other readers the array.
    pub(crate) fn free_iotas(&mut self, iotas: &std::collections::HashMap<VName, Value>) {
        self.iotas.extend(iotas.keys().copied());
        self.lazy_iotas.extend(iotas.iter().map(|(v, n)| (*v, *n)));
    }

    /// The array `v`, a lazy iota stored here for this reader alone (readers that need
    /// memory are rare; one stored in a nested block must not be seen after it).
    pub(crate) fn stored_array(&mut self, v: VName) -> R<ArrV> {
        match self.lazy_iota(v) {
            // A free iota is in memory already.
            Some(_) if self.arrays.contains_key(&v) => self.array(v),
            Some(n) => self.stored_iota(n),
            None => self.array(v),
        }
    }

    /// `iota n` (`n` ≥ 0) into a scratch buffer.
    fn stored_iota(&mut self, n: Value) -> R<ArrV> {
        let base = self.scratch_buf(n, PrimType::I64)?;
        let (j, header, done) = self.open_counted_loop(n);
        let to = elem_addr(self.b, base, j, PrimType::I64);
        self.b.ins().store(mem(), j, to, 0);
        self.close_counted_loop(j, header, done);
        Ok(ArrV::dense(self.b, base, PrimType::I64, vec![n]))
    }
}
