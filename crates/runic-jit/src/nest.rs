//! Nested SOACs in map kernels: the lambda of a top-level `map` may take rows of its inputs
//! (views, never copies), index them and free arrays (bounds-checked: an index out of
//! bounds returns [`FAIL_INDEX`] so that the caller's slow path reports it), and fold rows
//! with inner `reduce`s — with the producer map fused in (`reduce op ne (map f row)`), as
//! sequential loops inside the element loop, without intermediate arrays.

use crate::gen::{ba, check_lambda, cl, elem_addr, mem, prim_of, Gen, R};
use crate::VarType;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, StackSlotData, StackSlotKind, Value};
use cranelift_frontend::FunctionBuilder;
use runic_ir::*;

/// The failure code of an index out of bounds (or an inner reduction whose size exceeds
/// its input's).
pub const FAIL_INDEX: i32 = 3;

/// An array in native code: the address of its first element, its element type, its
/// dimensions and the distance in elements between consecutive indices of each dimension
/// (row-major and dense, or a strided view made by a slice).
#[derive(Clone)]
pub(crate) struct ArrV {
    pub base: Value,
    pub elem: PrimType,
    pub dims: Vec<Value>,
    pub strides: Vec<Value>,
}

impl ArrV {
    /// A dense row-major array.
    pub fn dense(b: &mut FunctionBuilder, base: Value, elem: PrimType, dims: Vec<Value>) -> ArrV {
        let mut strides = Vec::with_capacity(dims.len());
        let mut s = b.ins().iconst(types::I64, 1);
        for d in dims.iter().rev() {
            strides.push(s);
            s = b.ins().imul(s, *d);
        }
        strides.reverse();
        ArrV {
            base,
            elem,
            dims,
            strides,
        }
    }

    /// Row `i` (unchecked). Its address is computed here, once: left pure, Cranelift's
    /// optimiser recomputes it at every use, inside the loops over the row.
    pub fn row(&self, b: &mut FunctionBuilder, i: Value) -> ArrV {
        let off = b.ins().imul(i, self.strides[0]);
        let base = elem_addr(b, self.base, off, self.elem);
        ArrV {
            base: crate::scalar::pinned(b, base),
            elem: self.elem,
            dims: self.dims[1..].to_vec(),
            strides: self.strides[1..].to_vec(),
        }
    }

    /// Address of element `j` of a vector (unchecked).
    pub fn at(&self, b: &mut FunctionBuilder, j: Value) -> Value {
        let off = b.ins().imul(j, self.strides[0]);
        elem_addr(b, self.base, off, self.elem)
    }
}

/// An inner fold's parts that each of its loops reads: its inputs' views (`None`: a lazy
/// iota, whose element is the counter), its `pre` lambda and its operator.
struct InnerFold<'l> {
    views: Vec<Option<ArrV>>,
    pre: Option<&'l Lambda>,
    op: &'l Lambda,
}

/// A free accumulator: element type, rank, operator.
pub(crate) type AccFree = (VName, PrimType, usize, Option<Lambda>);

/// The free variables of lambdas (each kind sorted by name).
#[derive(Default)]
pub(crate) struct Frees {
    pub scalars: Vec<(VName, PrimType)>,
    /// Element type and rank of each.
    pub arrays: Vec<(VName, PrimType, usize)>,
    pub accs: Vec<AccFree>,
    /// The arrays that are `iota n` ([`VarType::Iota`]), also among `arrays`.
    pub iotas: Vec<VName>,
}

/// The free variables of lambdas: scalars, arrays with their element types and ranks,
/// accumulators, and which arrays are `iota`s.
pub(crate) fn split_frees(
    lams: &[&Lambda],
    free_type: &dyn Fn(VName) -> Option<VarType>,
) -> R<Frees> {
    let mut vs: Vec<VName> = Vec::new();
    for l in lams {
        for v in runic_ir::traverse::free_vars(*l) {
            if !vs.contains(&v) {
                vs.push(v);
            }
        }
    }
    vs.sort();
    let mut f = Frees::default();
    for v in vs {
        match free_type(v) {
            Some(VarType::Scalar(t)) => f.scalars.push((v, t)),
            Some(VarType::Array(t, r)) if r >= 1 => f.arrays.push((v, t, r)),
            Some(VarType::Iota) => {
                f.arrays.push((v, PrimType::I64, 1));
                f.iotas.push(v);
            }
            Some(VarType::Acc(t, r, op)) if r >= 1 => {
                if let Some(op) = &op {
                    crate::gen::check_lambda(op, "an accumulator's operator")?;
                    if !runic_ir::traverse::free_vars(op).is_empty() {
                        return Err("an accumulator whose operator has free variables".into());
                    }
                }
                f.accs.push((v, t, r, op))
            }
            _ => {
                return Err(format!(
                    "the free variable {v} is neither a scalar nor an array"
                ))
            }
        }
    }
    Ok(f)
}

impl Gen<'_, '_> {
    pub(crate) fn array(&self, v: VName) -> R<ArrV> {
        self.arrays
            .get(&v)
            .cloned()
            .ok_or_else(|| format!("internal error: the array {v} is not in scope"))
    }

    /// Leave for the failure block with `code` when `c` holds.
    pub(crate) fn fail_if(&mut self, c: Value, code: i32) {
        let ok = self.b.create_block();
        let code = self.b.ins().iconst(types::I32, code as i64);
        self.b.ins().brif(c, self.fail, &ba(&[code]), ok, &[]);
        self.b.switch_to_block(ok);
    }

    /// An index operand as an i64.
    pub(crate) fn index_value(&mut self, s: &SubExp) -> R<Value> {
        let (v, t) = self.opd(s)?;
        self.widen_index(v, t)
    }

    /// `x = a[i, j, …]` with fixed indices: an element, or a view of a row.
    pub(crate) fn index(&mut self, s: &Stm, v: VName, idx: &[DimIndex]) -> R<()> {
        let a = self.array(v)?;
        let [p] = s.pat.as_slice() else {
            return Err("an index with several results".into());
        };
        let view = self.select(&a, idx)?;
        if view.dims.is_empty() {
            let x = self.b.ins().load(cl(a.elem), mem(), view.base, 0);
            self.env.insert(p.name, (x, a.elem));
        } else {
            // A view into `v`: `v` may no longer be consumed in place.
            self.owned.remove(&v);
            self.arrays.insert(p.name, view);
        }
        Ok(())
    }

    /// The view `a[idx]` (bounds-checked: the slow path reports a failure); rank 0 for an
    /// element, whose address is `base`.
    pub(crate) fn select(&mut self, a: &ArrV, idx: &[DimIndex]) -> R<ArrV> {
        if idx.len() > a.dims.len() {
            return Err("an index of more dimensions than the array has".into());
        }
        let mut off = self.b.ins().iconst(types::I64, 0);
        let (mut dims, mut strides) = (Vec::new(), Vec::new());
        for (k, d) in idx.iter().enumerate() {
            match d {
                DimIndex::Fix(i) => {
                    let i = self.index_value(i)?;
                    // Unsigned: a negative index is out of bounds too.
                    let oob = self
                        .b
                        .ins()
                        .icmp(IntCC::UnsignedGreaterThanOrEqual, i, a.dims[k]);
                    self.fail_if(oob, FAIL_INDEX);
                    let o = self.b.ins().imul(i, a.strides[k]);
                    off = self.b.ins().iadd(off, o);
                }
                DimIndex::Slice { start, end, stride } => {
                    let [i, n, st] = self.slice_dim(a.dims[k], [start, end, stride])?;
                    let o = self.b.ins().imul(i, a.strides[k]);
                    off = self.b.ins().iadd(off, o);
                    dims.push(n);
                    strides.push(self.b.ins().imul(st, a.strides[k]));
                }
            }
        }
        dims.extend_from_slice(&a.dims[idx.len()..]);
        strides.extend_from_slice(&a.strides[idx.len()..]);
        Ok(ArrV {
            base: elem_addr(self.b, a.base, off, a.elem),
            elem: a.elem,
            dims,
            strides,
        })
    }

    /// The first index, length and stride of a slice `start:end:stride` of a dimension of
    /// `w` elements, as `runic_prim::index::select` resolves them (an invalid slice leaves
    /// for the slow path, which reports it).
    fn slice_dim(&mut self, w: Value, parts: [&Option<SubExp>; 3]) -> R<[Value; 3]> {
        let mut args = vec![w];
        let mut flags = 0i64;
        for (k, p) in parts.iter().enumerate() {
            match p {
                Some(x) => {
                    args.push(self.index_value(x)?);
                    flags |= 1 << k;
                }
                None => args.push(self.b.ins().iconst(types::I64, 0)),
            }
        }
        args.push(self.b.ins().iconst(types::I64, flags));
        let slot =
            self.b
                .create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 24, 3));
        args.push(self.b.ins().stack_addr(types::I64, slot, 0));
        let call = self.b.ins().call(self.rt.slice, &args);
        let code = self.b.inst_results(call)[0];
        let bad = self.b.ins().icmp_imm_s(IntCC::NotEqual, code, 0);
        self.fail_if(bad, FAIL_INDEX);
        Ok([0, 8, 16].map(|o| self.b.ins().stack_load(types::I64, types::I64, slot, o)))
    }

    /// `assert`/`shape_check` of arrays in scope: leave for the slow path (which reports
    /// the failure) unless it holds; the result is `true`.
    pub(crate) fn assertion(&mut self, s: &Stm, op: &BasicOp) -> R<()> {
        let [p] = s.pat.as_slice() else {
            return Err("an assertion with several results".into());
        };
        match op {
            BasicOp::Assert { cond, .. } => {
                let (c, _) = self.opd(cond)?;
                let bad = self.b.ins().icmp_imm_s(IntCC::Equal, c, 0);
                self.fail_if(bad, FAIL_INDEX);
            }
            BasicOp::ShapeCheck { arr, shape, .. } => {
                let a = self.array(*arr)?;
                if a.dims.len() != shape.len() {
                    return Err("a shape check of another rank".into());
                }
                for (d, want) in a.dims.clone().iter().zip(shape) {
                    let w = self.index_value(want)?;
                    let bad = self.b.ins().icmp(IntCC::NotEqual, *d, w);
                    self.fail_if(bad, FAIL_INDEX);
                }
            }
            _ => return Err("internal error: not an assertion".into()),
        }
        let t = self.b.ins().iconst(types::I8, 1);
        self.env.insert(p.name, (t, PrimType::Bool));
        Ok(())
    }

    /// `reduce op ne (map pre arrs)` over arrays in scope: a sequential loop.
    pub(crate) fn inner_reduce(
        &mut self,
        s: &Stm,
        w: &SubExp,
        arrs: &[VName],
        pre: Option<&Lambda>,
        op: &Lambda,
        neutral: &[SubExp],
    ) -> R<()> {
        let fin = self.fold_loop(w, arrs, pre, op, neutral, None)?;
        for ((p, v), t) in s.pat.iter().zip(fin).zip(op.ret.iter().map(prim_of)) {
            self.env.insert(p.name, (v, t));
        }
        Ok(())
    }

    /// The loop of [`Gen::inner_reduce`]; with `outs`, every intermediate accumulator is
    /// also stored there (a scan). Returns the final accumulator.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fold_loop(
        &mut self,
        w: &SubExp,
        arrs: &[VName],
        pre: Option<&Lambda>,
        op: &Lambda,
        neutral: &[SubExp],
        outs: Option<&[ArrV]>,
    ) -> R<Vec<Value>> {
        check_lambda(op, "an inner reduction's operator")?;
        let w = self.index_value(w)?;
        // `None`: a lazy iota, whose element is the counter.
        let mut views: Vec<Option<ArrV>> = Vec::new();
        for a in arrs {
            if self.lazy_iota(*a).is_some() {
                self.check_lazy_width(*a, w)?;
                views.push(None);
                continue;
            }
            let v = self.array(*a)?;
            if v.dims.len() != 1 && pre.is_none() {
                return Err("an inner reduction of arrays".into());
            }
            // A size larger than the input: the slow path reports it.
            let big = self.b.ins().icmp(IntCC::UnsignedGreaterThan, w, v.dims[0]);
            self.fail_if(big, FAIL_INDEX);
            views.push(Some(v));
        }
        let accs: Vec<PrimType> = op.ret.iter().map(prim_of).collect();
        let mut init = Vec::new();
        for n in neutral {
            init.push(self.opd(n)?.0);
        }
        let header = self.b.create_block();
        let body = self.b.create_block();
        let done = self.b.create_block();
        self.b.append_block_param(header, types::I64);
        for t in &accs {
            self.b.append_block_param(header, cl(*t));
            self.b.append_block_param(done, cl(*t));
        }
        let zero = self.b.ins().iconst(types::I64, 0);
        let mut args0 = vec![zero];
        args0.extend(init);
        let fold = InnerFold { views, pre, op };
        if outs.is_none() {
            args0 = self.vector_fold(&fold, w, args0)?;
            args0 = self.two_chains(&fold, w, args0)?;
        }
        self.b.ins().jump(header, &ba(&args0));

        self.b.switch_to_block(header);
        let hp = self.b.block_params(header).to_vec();
        let (j, acc) = (hp[0], hp[1..].to_vec());
        let more = self.b.ins().icmp(IntCC::SignedLessThan, j, w);
        self.b.ins().brif(more, body, &[], done, &ba(&acc));

        self.b.switch_to_block(body);
        let new = self.fold_step(&fold, j, acc)?;
        for (out, v) in outs.unwrap_or_default().iter().zip(&new) {
            let addr = out.at(self.b, j);
            self.b.ins().store(mem(), *v, addr, 0);
        }
        let next = self.b.ins().iadd_imm_s(j, 1);
        let mut hargs = vec![next];
        hargs.extend(new);
        self.b.ins().jump(header, &ba(&hargs));

        self.b.switch_to_block(done);
        Ok(self.b.block_params(done).to_vec())
    }

    /// One step of an inner fold: element `j` of the inputs through `pre`, folded into
    /// `acc` with `op`; the new accumulator.
    fn fold_step(&mut self, fold: &InnerFold<'_>, j: Value, acc: Vec<Value>) -> R<Vec<Value>> {
        let InnerFold { views, pre, op } = fold;
        let (pre, op) = (*pre, *op);
        let mut xs = Vec::new();
        for (k, v) in views.iter().enumerate() {
            let Some(v) = v else {
                xs.push(j);
                continue;
            };
            if v.dims.len() == 1 {
                let addr = v.at(self.b, j);
                xs.push(self.b.ins().load(cl(v.elem), mem(), addr, 0));
            } else if let Some(p) = pre {
                // A row of a matrix: its view is the parameter.
                let row = v.row(self.b, j);
                self.arrays.insert(p.params[k].name, row);
            }
        }
        let ys = match pre {
            Some(p) => {
                for (q, x) in p.params.iter().filter(|q| q.ty.rank() == 0).zip(&xs) {
                    self.env.insert(q.name, (*x, prim_of(&q.ty)));
                }
                self.body(&p.body)?
            }
            None => xs,
        };
        let mut args = acc;
        args.extend(ys);
        self.lambda(op, &args)
    }

    /// The start of an inner fold's scalar loop, `[j, acc]` from `[j, acc]`: when `op` is
    /// exactly associative and commutative (integer `+`, `*`, `min`, `max`, `&`, `|`, `^`;
    /// `&&`, `||`), the elements from `j` fold two at a time into two accumulators (the
    /// second from `op`'s neutral element, or, for an idempotent `op`, from the first's
    /// start), combined at the end. Each step of a single
    /// chain waits for the one before (an integer `min` of positions, as reverse mode
    /// finds a minimum's: a compare and a select per element on the critical path); two
    /// chains overlap. Bit for bit the sequential result.
    fn two_chains(&mut self, fold: &InnerFold<'_>, w: Value, start: Vec<Value>) -> R<Vec<Value>> {
        use BinOp::*;
        let op = fold.op;
        let exact = match op.binop_either_order() {
            Some((Add | Mul | Min | Max | And | Or | Xor, t)) => t.is_int(),
            Some((LogAnd | LogOr, t)) => t == PrimType::Bool,
            _ => false,
        };
        let (true, [j0, acc0]) = (exact, &start[..]) else {
            return Ok(start);
        };
        let t = cl(prim_of(&op.ret[0]));
        let ne = match op.binop_either_order().map(|(o, _)| o) {
            Some(Add | Or | Xor | LogOr) => self.b.ins().iconst(t, 0),
            Some(Mul | LogAnd) => self.b.ins().iconst(t, 1),
            _ => *acc0, // min, max: idempotent, so the first chain's start serves both
        };
        let header = self.b.create_block();
        let body = self.b.create_block();
        let exit = self.b.create_block();
        for blk in [header, exit] {
            self.b.append_block_param(blk, types::I64);
            self.b.append_block_param(blk, t);
            self.b.append_block_param(blk, t);
        }
        self.b.ins().jump(header, &ba(&[*j0, *acc0, ne]));

        self.b.switch_to_block(header);
        let [j, a0, a1] = self.b.block_params(header)[..] else {
            return Err("internal error: fold chains".into());
        };
        let j2 = self.b.ins().iadd_imm_s(j, 2);
        let more = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, j2, w);
        self.b.ins().brif(more, body, &[], exit, &ba(&[j, a0, a1]));

        self.b.switch_to_block(body);
        let n0 = self.fold_step(fold, j, vec![a0])?;
        let j1 = self.b.ins().iadd_imm_s(j, 1);
        let n1 = self.fold_step(fold, j1, vec![a1])?;
        self.b.ins().jump(header, &ba(&[j2, n0[0], n1[0]]));

        self.b.switch_to_block(exit);
        let [j, a0, a1] = self.b.block_params(exit)[..] else {
            return Err("internal error: fold chains".into());
        };
        let acc = self.lambda(op, &[a0, a1])?;
        Ok(vec![j, acc[0]])
    }

    /// The start of an inner fold's scalar loop, `[j, acc]` from `[0, ne]`: a sum, `min` or
    /// `max` of f32/f64 over contiguous vectors, whose `pre` (or none) runs in SIMD lanes,
    /// folds the elements it can in lanes first (`simd::vector_fold`) when the vectors are
    /// contiguous at run time. Without it every element of a row was one step of a chain
    /// of dependent operations (a row maximum ~5 ns an element), and `exp` a call.
    fn vector_fold(&mut self, fold: &InnerFold<'_>, w: Value, start: Vec<Value>) -> R<Vec<Value>> {
        let InnerFold { views, pre, op } = fold;
        let (pre, op) = (*pre, *op);
        let (Some(kind), [_, acc]) = (crate::simd::Fold::of(op), &start[..]) else {
            return Ok(start);
        };
        let Some(vectors) = views.iter().cloned().collect::<Option<Vec<ArrV>>>() else {
            return Ok(start); // a lazy iota: integers
        };
        let identity;
        let lam = match pre {
            Some(p) => p,
            None => {
                let x = op.params[1].clone();
                let result = vec![SubExp::Var(x.name)];
                identity = Lambda::new(
                    vec![x],
                    Body {
                        stms: vec![],
                        result,
                    },
                    op.ret.clone(),
                );
                &identity
            }
        };
        let env = &self.env;
        let plan = crate::simd::plan(lam, &|v| env.get(&v).map(|(_, t)| *t));
        let Some(plan) = plan.filter(|pl| op.ret == [Type::Prim(pl.elem)]) else {
            return Ok(start);
        };
        if !vectors
            .iter()
            .all(|a| a.dims.len() == 1 && a.elem == plan.elem)
        {
            return Ok(start);
        }
        let mut contiguous = self.contiguous(&vectors);
        if kind == crate::simd::Fold::Add && self.in_order_short_sums {
            let max = crate::simd::rows::ROW_LANES_MAX;
            let long = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, w, max);
            contiguous = self.b.ins().band(contiguous, long);
        }
        let lanes = self.b.create_block();
        let after = self.b.create_block();
        self.b.append_block_param(after, types::I64);
        self.b.append_block_param(after, plan.elem_type());
        self.b
            .ins()
            .brif(contiguous, lanes, &[], after, &ba(&start));
        self.b.switch_to_block(lanes);
        let frees = crate::simd::splat_env(self.b, plan, &self.env, lam);
        let bases: Vec<Value> = vectors.iter().map(|a| a.base).collect();
        let (j, acc) =
            crate::simd::vector_fold(self.b, plan, kind, lam, &frees, &bases, start[0], w, *acc)?;
        self.b.ins().jump(after, &ba(&[j, acc]));
        self.b.switch_to_block(after);
        Ok(self.b.block_params(after).to_vec())
    }

    /// Whether every vector of `arrays` has its elements next to each other (a row, not a
    /// column), at run time: what SIMD loads need.
    pub(crate) fn contiguous<'v>(&mut self, arrays: impl IntoIterator<Item = &'v ArrV>) -> Value {
        let mut all = self.b.ins().iconst(types::I8, 1);
        for a in arrays {
            let unit = self.b.ins().icmp_imm_s(IntCC::Equal, a.strides[0], 1);
            all = self.b.ins().band(all, unit);
        }
        all
    }
}
