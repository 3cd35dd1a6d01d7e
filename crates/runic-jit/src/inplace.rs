//! Arrays updated in place inside kernels: `a with [i] = v`, `scratch`, and loops whose
//! parameters are arrays.
//!
//! Views in kernels are shared (rows of inputs, free arrays, aliases and `copy`s of them),
//! so only arrays the kernel made itself and that no other name, view or `if` result
//! refers to are *owned* ([`Gen::owned`]): an update of an owned array that nothing reads
//! afterwards ([`Gen::later`]) writes in place — what the IR's consuming operations mean;
//! an update of any other array first copies it into a scratch buffer of its own.
//!
//! A loop parameter that is an array lives in one of two buffers of its own (copied there
//! from its initial value before the loop): the body may update it in place; at the end of
//! an iteration, a result that is not that same buffer (unchanged view) is copied into the
//! parameter's other buffer, which no value of the iteration refers to, so results that
//! swap or reuse each other's parameters stay correct.

use crate::gen::{ba, cl, mem, Gen, R};
use crate::nest::{ArrV, FAIL_INDEX};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, Value};
use runic_ir::*;

/// A loop parameter: a scalar (its type), or an array (element type, dimensions and its
/// two buffers).
enum LoopParam {
    Scalar(PrimType),
    Array {
        elem: PrimType,
        dims: Vec<Value>,
        bufs: [Value; 2],
    },
}

impl Gen<'_, '_> {
    /// `a' = a with [idx] = v`: in place when `a` is owned, otherwise on a copy.
    pub(crate) fn update(&mut self, s: &Stm, a: VName, idx: &[DimIndex], v: &SubExp) -> R<()> {
        let [p] = s.pat.as_slice() else {
            return Err("an update with several results".into());
        };
        let src = self.array(a)?;
        let dest = if self.consume(a) {
            src
        } else {
            self.fresh_copy(&src)?
        };
        let at = self.select(&dest, idx)?;
        match v {
            SubExp::Var(x) if self.arrays.contains_key(x) => {
                let row = self.array(*x)?;
                self.copy_row(&row, &at)?;
            }
            v => {
                if !at.dims.is_empty() {
                    return Err("an update of a slice with a scalar".into());
                }
                let (x, _) = self.opd(v)?;
                self.b.ins().store(mem(), x, at.base, 0);
            }
        }
        self.arrays.insert(p.name, dest);
        self.owned.insert(p.name);
        Ok(())
    }

    /// The sizes of `shape` and their product; a negative size leaves for the slow path,
    /// which reports it.
    fn checked_dims(&mut self, shape: &[SubExp]) -> R<(Vec<Value>, Value)> {
        let mut dims = Vec::new();
        let mut n = self.b.ins().iconst(types::I64, 1);
        for d in shape {
            let d = self.index_value(d)?;
            let bad = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, d, 0);
            self.fail_if(bad, FAIL_INDEX);
            n = self.b.ins().imul(n, d);
            dims.push(d);
        }
        Ok((dims, n))
    }

    /// `scratch(t, shape)`: an owned buffer (its contents are unspecified).
    pub(crate) fn scratch_array(&mut self, s: &Stm, t: PrimType, shape: &[SubExp]) -> R<()> {
        let [p] = s.pat.as_slice() else {
            return Err("a scratch array with several results".into());
        };
        let (dims, n) = self.checked_dims(shape)?;
        let base = self.scratch_buf(n, t)?;
        let a = ArrV::dense(self.b, base, t, dims);
        self.arrays.insert(p.name, a);
        self.owned.insert(p.name);
        Ok(())
    }

    /// `rearrange(perm, a)`: a view with its dimensions permuted (no copy).
    pub(crate) fn rearrange(&mut self, s: &Stm, perm: &[usize], a: VName) -> R<()> {
        let [p] = s.pat.as_slice() else {
            return Err("a transposition with several results".into());
        };
        let v = self.array(a)?;
        let r = v.dims.len();
        if perm.len() != r || (0..r).any(|k| !perm.contains(&k)) {
            return Err("a transposition that is not a permutation".into());
        }
        let t = ArrV {
            base: v.base,
            elem: v.elem,
            dims: perm.iter().map(|&k| v.dims[k]).collect(),
            strides: perm.iter().map(|&k| v.strides[k]).collect(),
        };
        self.arrays.insert(p.name, t);
        self.owned.remove(&a);
        Ok(())
    }

    /// `reshape(shape, a)`: a view of `a`'s elements in row-major order with new
    /// dimensions — `a` itself when it is dense, else a dense copy. An element count that
    /// differs leaves for the slow path, which reports it.
    pub(crate) fn reshape(&mut self, s: &Stm, shape: &[SubExp], a: VName) -> R<()> {
        let [p] = s.pat.as_slice() else {
            return Err("a reshape with several results".into());
        };
        let v = self.array(a)?;
        let (dims, n) = self.checked_dims(shape)?;
        let mut had = self.b.ins().iconst(types::I64, 1);
        for d in &v.dims {
            had = self.b.ins().imul(had, *d);
        }
        let bad = self.b.ins().icmp(IntCC::NotEqual, n, had);
        self.fail_if(bad, FAIL_INDEX);
        let base = self.dense_base(&v)?;
        let out = ArrV::dense(self.b, base, v.elem, dims);
        self.arrays.insert(p.name, out);
        // Two names may now share a buffer: neither is consumed in place.
        self.owned.remove(&a);
        Ok(())
    }

    /// Whether `v` is `w` element for element in memory: the same first element and the
    /// same strides (their dimensions are equal).
    pub(crate) fn same_layout(&mut self, v: &ArrV, w: &ArrV) -> Value {
        let mut same = self.b.ins().icmp(IntCC::Equal, v.base, w.base);
        for (a, b) in v.strides.iter().zip(&w.strides) {
            let eq = self.b.ins().icmp(IntCC::Equal, *a, *b);
            same = self.b.ins().band(same, eq);
        }
        same
    }

    /// The address of `v`'s elements in dense row-major order: its own when its strides
    /// are already those, else a copy's.
    fn dense_base(&mut self, v: &ArrV) -> R<Value> {
        let dense = ArrV::dense(self.b, v.base, v.elem, v.dims.clone());
        let same = self.same_layout(v, &dense);
        let copy = self.b.create_block();
        let merge = self.b.create_block();
        self.b.append_block_param(merge, types::I64);
        self.b.ins().brif(same, merge, &ba(&[v.base]), copy, &[]);
        self.b.switch_to_block(copy);
        let c = self.fresh_copy(v)?;
        self.b.ins().jump(merge, &ba(&[c.base]));
        self.b.switch_to_block(merge);
        Ok(self.b.block_params(merge)[0])
    }

    /// `concat(dim, a, b, …)`: the pieces copied side by side along `dim` into an owned
    /// buffer. Pieces whose other dimensions differ leave for the slow path, which
    /// reports them.
    pub(crate) fn concat(&mut self, s: &Stm, dim: usize, pieces: &[VName]) -> R<()> {
        let [p] = s.pat.as_slice() else {
            return Err("a concatenation with several results".into());
        };
        let views = pieces
            .iter()
            .map(|a| self.array(*a))
            .collect::<R<Vec<ArrV>>>()?;
        let Some(first) = views.first().cloned() else {
            return Err("a concatenation of nothing".into());
        };
        let rank = first.dims.len();
        if dim >= rank
            || views
                .iter()
                .any(|v| v.dims.len() != rank || v.elem != first.elem)
        {
            return Err("a concatenation of arrays of different ranks".into());
        }
        let mut dims = first.dims.clone();
        for v in &views[1..] {
            dims[dim] = self.b.ins().iadd(dims[dim], v.dims[dim]);
            for k in (0..rank).filter(|&k| k != dim) {
                let bad = self.b.ins().icmp(IntCC::NotEqual, v.dims[k], first.dims[k]);
                self.fail_if(bad, FAIL_INDEX);
            }
        }
        let mut n = self.b.ins().iconst(types::I64, 1);
        for d in &dims {
            n = self.b.ins().imul(n, *d);
        }
        let base = self.scratch_buf(n, first.elem)?;
        let out = ArrV::dense(self.b, base, first.elem, dims);
        let mut offset = self.b.ins().iconst(types::I64, 0);
        for v in &views {
            // The piece's place: `out` from `offset` along `dim`, with the piece's dims.
            let skip = self.b.ins().imul(offset, out.strides[dim]);
            let mut place = out.clone();
            place.base = crate::gen::elem_addr(self.b, out.base, skip, out.elem);
            place.dims[dim] = v.dims[dim];
            self.copy_row(v, &place)?;
            offset = self.b.ins().iadd(offset, v.dims[dim]);
        }
        self.arrays.insert(p.name, out);
        self.owned.insert(p.name);
        Ok(())
    }

    /// `[a, b, …]` of arrays of equal shape: their rows copied into an owned buffer (rows of
    /// another shape leave for the slow path, which reports them).
    pub(crate) fn array_of_rows(&mut self, s: &Stm, rows: &[SubExp]) -> R<()> {
        let [p] = s.pat.as_slice() else {
            return Err("an array literal with several results".into());
        };
        let mut views = Vec::new();
        for r in rows {
            match r {
                SubExp::Var(v) => views.push(self.array(*v)?),
                SubExp::Const(_) => return Err("an array literal of arrays and scalars".into()),
            }
        }
        let Some(first) = views.first().cloned() else {
            return Err("an empty array literal of arrays".into());
        };
        let mut dims = vec![self.b.ins().iconst(types::I64, views.len() as i64)];
        dims.extend(first.dims.iter().copied());
        let mut n = self.b.ins().iconst(types::I64, 1);
        for d in &dims {
            n = self.b.ins().imul(n, *d);
        }
        let base = self.scratch_buf(n, first.elem)?;
        let out = ArrV::dense(self.b, base, first.elem, dims);
        for (k, v) in views.iter().enumerate() {
            let k = self.b.ins().iconst(types::I64, k as i64);
            let row = out.row(self.b, k);
            self.copy_row(v, &row)?;
        }
        self.arrays.insert(p.name, out);
        self.owned.insert(p.name);
        Ok(())
    }

    /// `size(a, d)`.
    pub(crate) fn array_size(&mut self, s: &Stm, a: VName, d: usize) -> R<()> {
        let [p] = s.pat.as_slice() else {
            return Err("a size with several results".into());
        };
        let v = self.array(a)?;
        let n = *v
            .dims
            .get(d)
            .ok_or("a size of a dimension the array does not have")?;
        self.env.insert(p.name, (n, PrimType::I64));
        Ok(())
    }

    /// A `for`/`while` loop: a native loop whose header block carries the counter, the
    /// scalar parameters and the buffer of every array parameter.
    pub(crate) fn native_loop(
        &mut self,
        s: &Stm,
        params: &[(Param, SubExp)],
        form: &LoopForm,
        body: &Body,
    ) -> R<()> {
        let mut kinds = Vec::new();
        let mut init = Vec::new();
        let bound = match form {
            LoopForm::For { bound, .. } => {
                let (v, t) = self.opd(bound)?;
                if !t.is_int() {
                    return Err("a for loop whose bound is not an integer".into());
                }
                init.push(self.b.ins().iconst(cl(t), 0));
                Some((v, t))
            }
            LoopForm::While { .. } => None,
        };
        for (p, e) in params {
            match (&p.ty, e) {
                (Type::Prim(t), e) => {
                    kinds.push(LoopParam::Scalar(*t));
                    init.push(self.opd(e)?.0);
                }
                (Type::Array { .. }, SubExp::Var(a)) => {
                    // The initial value, copied into the parameter's first buffer.
                    let v = self.array(*a)?;
                    let mut n = self.b.ins().iconst(types::I64, 1);
                    for d in &v.dims {
                        n = self.b.ins().imul(n, *d);
                    }
                    let bufs = [self.scratch_buf(n, v.elem)?, self.scratch_buf(n, v.elem)?];
                    let first = ArrV::dense(self.b, bufs[0], v.elem, v.dims.clone());
                    self.copy_row(&v, &first)?;
                    init.push(bufs[0]);
                    kinds.push(LoopParam::Array {
                        elem: v.elem,
                        dims: v.dims,
                        bufs,
                    });
                }
                _ => return Err("a loop with accumulator parameters".into()),
            }
        }
        let header = self.b.create_block();
        let body_b = self.b.create_block();
        let done = self.b.create_block();
        if let Some((_, t)) = bound {
            self.b.append_block_param(header, cl(t));
        }
        for k in &kinds {
            let t = match k {
                LoopParam::Scalar(t) => cl(*t),
                LoopParam::Array { .. } => types::I64,
            };
            self.b.append_block_param(header, t);
            self.b.append_block_param(done, t);
        }
        self.b.ins().jump(header, &ba(&init));

        self.b.switch_to_block(header);
        let hp = self.b.block_params(header).to_vec();
        let (i, ps) = match bound {
            Some(_) => (Some(hp[0]), hp[1..].to_vec()),
            None => (None, hp),
        };
        let more = match (form, bound, i) {
            (LoopForm::For { .. }, Some((n, t)), Some(i)) => {
                let cc = if t.is_signed_int() {
                    IntCC::SignedLessThan
                } else {
                    IntCC::UnsignedLessThan
                };
                self.b.ins().icmp(cc, i, n)
            }
            (LoopForm::While { cond }, _, _) => {
                let k = params
                    .iter()
                    .position(|(p, _)| p.name == *cond)
                    .ok_or("a while loop whose condition is not a loop parameter")?;
                ps[k]
            }
            _ => return Err("internal error: loop form".into()),
        };
        self.b.ins().brif(more, body_b, &[], done, &ba(&ps));

        self.b.switch_to_block(body_b);
        let saved = (self.env.clone(), self.arrays.clone());
        // The body runs many times: it owns only what it makes (and its parameters).
        let saved_owned = std::mem::take(&mut self.owned);
        if let (LoopForm::For { i: iv, .. }, Some((_, t)), Some(i)) = (form, bound, i) {
            self.env.insert(*iv, (i, t));
        }
        self.bind_loop_params(params.iter().map(|(p, _)| p), &kinds, &ps);
        self.stms(body)?;
        let mut args = Vec::new();
        if let Some(i) = i {
            args.push(self.b.ins().iadd_imm_s(i, 1));
        }
        for ((r, k), cur) in body.result.iter().zip(&kinds).zip(&ps) {
            match k {
                LoopParam::Scalar(_) => args.push(self.opd(r)?.0),
                LoopParam::Array { elem, dims, bufs } => {
                    let SubExp::Var(a) = r else {
                        return Err("internal error: an array result that is a constant".into());
                    };
                    let v = self.array(*a)?;
                    args.push(self.carry(&v, *cur, *elem, dims, *bufs)?);
                }
            }
        }
        self.b.ins().jump(header, &ba(&args));
        (self.env, self.arrays) = saved;
        self.owned = saved_owned;

        self.b.switch_to_block(done);
        let fin = self.b.block_params(done).to_vec();
        self.bind_loop_params(s.pat.iter(), &kinds, &fin);
        Ok(())
    }

    /// Binds loop parameters (or the loop's results) to the values of the header: arrays
    /// are dense views of their current buffers, which they own.
    fn bind_loop_params<'p>(
        &mut self,
        names: impl Iterator<Item = &'p Param>,
        kinds: &[LoopParam],
        vals: &[Value],
    ) {
        for ((p, k), v) in names.zip(kinds).zip(vals) {
            match k {
                LoopParam::Scalar(t) => {
                    self.env.insert(p.name, (*v, *t));
                }
                LoopParam::Array { elem, dims, .. } => {
                    let a = ArrV::dense(self.b, *v, *elem, dims.clone());
                    self.arrays.insert(p.name, a);
                    self.owned.insert(p.name);
                }
            }
        }
    }

    /// The buffer an array parameter continues with: its current buffer `cur` when the
    /// result is exactly that (updated in place), otherwise its other buffer with the
    /// result copied in. A result of other dimensions leaves for the slow path.
    pub(crate) fn carry(
        &mut self,
        v: &ArrV,
        cur: Value,
        elem: PrimType,
        dims: &[Value],
        bufs: [Value; 2],
    ) -> R<Value> {
        if v.elem != elem || v.dims.len() != dims.len() {
            return Err("a loop whose array parameter changes type".into());
        }
        for (a, b) in v.dims.iter().zip(dims) {
            let bad = self.b.ins().icmp(IntCC::NotEqual, *a, *b);
            self.fail_if(bad, FAIL_INDEX);
        }
        let dense = ArrV::dense(self.b, cur, elem, dims.to_vec());
        let same = self.same_layout(v, &dense);
        let copy = self.b.create_block();
        let merge = self.b.create_block();
        self.b.append_block_param(merge, types::I64);
        self.b.ins().brif(same, merge, &ba(&[cur]), copy, &[]);
        self.b.switch_to_block(copy);
        let is_first = self.b.ins().icmp(IntCC::Equal, cur, bufs[0]);
        let other = self.b.ins().select(is_first, bufs[1], bufs[0]);
        let dst = ArrV::dense(self.b, other, elem, dims.to_vec());
        self.copy_row(v, &dst)?;
        self.b.ins().jump(merge, &ba(&[other]));
        self.b.switch_to_block(merge);
        Ok(self.b.block_params(merge)[0])
    }
}
