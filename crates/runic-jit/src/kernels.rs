//! The element loops of the kernels around lambda bodies: `map` (one output element or
//! row per input element), and folds and inclusive scans of `op` over `map pre` of the
//! inputs. All of them take their inputs, free scalars and free arrays the same way
//! ([`Prologue`]), so that `pre`, like a map's lambda, may take rows, index free arrays
//! and run nested SOACs as loops.

use crate::gen::{
    ba, build_kernel, check_lambda_in, cl, elem_addr, load_ptrs, mem, prim_of, Gen, R,
};
use crate::nest::{split_frees, ArrV};
use crate::{MapFn, MapKernel, VarType};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;
use runic_ir::*;
use std::collections::HashMap;

/// What a kernel reads: its inputs (element type and rank, one per parameter of the
/// lambda that takes elements) and the free variables of its lambdas.
pub(crate) struct Inputs {
    // (fields in the order of the kernel's `ins`)
    pub params: Vec<PrimType>,
    pub ranks: Vec<usize>,
    pub frees: Vec<(VName, PrimType)>,
    pub free_arrays: Vec<(VName, PrimType, usize)>,
    pub accs: Vec<crate::nest::AccFree>,
    /// The free arrays that are `iota n` ([`crate::VarType::Iota`]).
    pub iotas: Vec<VName>,
}

impl Inputs {
    pub(crate) fn of(
        elem_params: &[Param],
        lams: &[&Lambda],
        free_type: &dyn Fn(VName) -> Option<VarType>,
    ) -> R<Inputs> {
        let f = split_frees(lams, free_type)?;
        Ok(Inputs {
            params: elem_params.iter().map(|p| prim_of(&p.ty)).collect(),
            ranks: elem_params.iter().map(|p| p.ty.rank() + 1).collect(),
            frees: f.scalars,
            free_arrays: f.arrays,
            accs: f.accs,
            iotas: f.iotas,
        })
    }
}

/// The values a kernel's entry block loads: the inputs as arrays, the free scalars and
/// arrays, the dimensions of the outputs, and the call's scratch arena.
pub(crate) struct Prologue {
    pub inputs: Vec<ArrV>,
    pub env: HashMap<VName, (Value, PrimType)>,
    pub arrays: HashMap<VName, ArrV>,
    pub accs: HashMap<VName, crate::gen::AccV>,
    /// The free `iota`s, with their lengths.
    pub iotas: HashMap<VName, Value>,
    pub out_dims: Vec<Vec<Value>>,
    pub arena: Value,
}

/// Loads what `ins` points to: a pointer per input, per free scalar, per free array and
/// per accumulator, then a pointer to the dimensions (`i64`) of every input, every free
/// array, every accumulator and `out_ranks` more arrays, then the scratch arena.
pub(crate) fn prologue(
    b: &mut FunctionBuilder,
    ins: Value,
    io: &Inputs,
    out_ranks: &[usize],
) -> Prologue {
    let n = io.params.len();
    let bases = load_ptrs(b, ins, 0, n);
    let free_ptrs = load_ptrs(b, ins, n, io.frees.len());
    let arr_ptrs = load_ptrs(b, ins, n + io.frees.len(), io.free_arrays.len());
    let acc_ptrs = load_ptrs(
        b,
        ins,
        n + io.frees.len() + io.free_arrays.len(),
        io.accs.len(),
    );
    let n_in = n + io.frees.len() + io.free_arrays.len() + io.accs.len();
    let dims_ptr = load_ptrs(b, ins, n_in, 1)[0];
    let arena = load_ptrs(b, ins, n_in + 1, 1)[0];
    let mut env = HashMap::new();
    for ((v, t), p) in io.frees.iter().zip(free_ptrs) {
        let x = b.ins().load(cl(*t), mem(), p, 0);
        env.insert(*v, (x, *t));
    }
    let mut k = 0;
    let mut dims = |b: &mut FunctionBuilder, r: usize| -> Vec<Value> {
        let d = (k..k + r)
            .map(|j| b.ins().load(types::I64, mem(), dims_ptr, (8 * j) as i32))
            .collect();
        k += r;
        d
    };
    let mut inputs = Vec::new();
    for ((base, t), r) in bases.iter().zip(&io.params).zip(&io.ranks) {
        let d = dims(b, *r);
        inputs.push(ArrV::dense(b, *base, *t, d));
    }
    let mut arrays = HashMap::new();
    let mut iotas = HashMap::new();
    for ((v, t, r), p) in io.free_arrays.iter().zip(arr_ptrs) {
        let d = dims(b, *r);
        if io.iotas.contains(v) {
            iotas.insert(*v, d[0]);
        }
        arrays.insert(*v, ArrV::dense(b, p, *t, d));
    }
    let mut accs = HashMap::new();
    for ((v, t, r, op), p) in io.accs.iter().zip(acc_ptrs) {
        let d = dims(b, *r);
        let acc = crate::gen::AccV {
            base: p,
            elem: *t,
            dims: d,
            op: op.clone(),
        };
        accs.insert(*v, acc);
    }
    let out_dims = out_ranks.iter().map(|&r| dims(b, r)).collect();
    Prologue {
        inputs,
        env,
        arrays,
        accs,
        iotas,
        out_dims,
        arena,
    }
}

impl Gen<'_, '_> {
    /// Binds the parameters marked in `index` to the element's index `i`; `pin`: read back
    /// from a stack slot ([`crate::scalar::pinned`]), as an input's element is loaded, for a
    /// body with loops of its own ([`has_loops`]: Cranelift would otherwise compute what
    /// depends only on the index, `f32.i64 i * 0.5`, again inside them: a grid's rows
    /// 1.24 → 1.44 ms). Other bodies take the counter as it is.
    pub(crate) fn bind_index(&mut self, params: &[Param], index: &[bool], i: Value, pin: bool) {
        if !index.contains(&true) {
            return;
        }
        let i = if pin {
            crate::scalar::pinned(self.b, i)
        } else {
            i
        };
        for (p, _) in params.iter().zip(index).filter(|(_, &ix)| ix) {
            self.env.insert(p.name, (i, PrimType::I64));
        }
    }

    /// Binds the parameters of element `i`: an element of a vector input, or a view of a
    /// row of a higher-rank one.
    pub(crate) fn bind_element(&mut self, params: &[Param], inputs: &[ArrV], i: Value) {
        for (p, v) in params.iter().zip(inputs) {
            if v.dims.len() == 1 {
                let a = v.at(self.b, i);
                let x = self.b.ins().load(cl(v.elem), mem(), a, 0);
                self.env.insert(p.name, (x, v.elem));
            } else {
                let row = v.row(self.b, i);
                self.arrays.insert(p.name, row);
            }
        }
    }
}

/// Whether `lam`'s body runs loops (nested SOACs or `loop`s).
pub(crate) fn has_loops(lam: &Lambda) -> bool {
    runic_ir::traverse::any_exp(&lam.body, |e| matches!(e, Exp::Soac(_) | Exp::Loop { .. }))
}

/// The parameters marked in `index` as the bits of a [`crate::simd::Plan`]'s `index`, if
/// they fit (parameters from the 65th on are never vectorised as indices).
pub(crate) fn index_bits(index: &[bool]) -> Option<u64> {
    if index.iter().skip(64).any(|&ix| ix) {
        return None;
    }
    Some((index.iter().enumerate()).fold(0, |bits, (k, &ix)| bits | (ix as u64) << k))
}

/// Where a row lambda's parameters come from, or its results go (`simd/rows/`): rows of
/// the arrays of rank 2, columns of the others.
fn row_inputs(b: &mut FunctionBuilder, inputs: &[ArrV]) -> Vec<crate::simd::rows::RowInput> {
    use crate::simd::rows::RowInput;
    inputs
        .iter()
        .map(|v| match v.dims.len() {
            2 => RowInput::Rows(crate::simd::rows::Rows {
                base: v.base,
                row_step: step_bytes(b, v, 0),
                elem_step: step_bytes(b, v, 1),
                len: v.dims[1],
            }),
            _ if v.elem == PrimType::I64 => RowInput::Indices(v.base),
            _ => RowInput::Column(v.base),
        })
        .collect()
}

/// The free vectors of a kernel (`simd/rows/` reads them in every lane alike).
fn free_vectors(
    b: &mut FunctionBuilder,
    arrays: &HashMap<VName, ArrV>,
) -> HashMap<VName, crate::simd::rows::Vector> {
    (arrays.iter())
        .filter(|(_, v)| v.dims.len() == 1)
        .map(|(n, v)| {
            let x = crate::simd::rows::Vector {
                base: v.base,
                step: step_bytes(b, v, 0),
                len: v.dims[0],
            };
            (*n, x)
        })
        .collect()
}

/// The distance in bytes between consecutive indices of dimension `k` of `v`.
fn step_bytes(b: &mut FunctionBuilder, v: &ArrV, k: usize) -> Value {
    b.ins().imul_imm_s(v.strides[k], v.elem.size_bytes() as i64)
}

/// The column of each parameter of `lam` for its vector loop: an input's base, in order;
/// an index parameter has none (its lanes are computed; `dummy` stands in).
pub(crate) fn lane_columns(
    plan: crate::simd::Plan,
    lam: &Lambda,
    inputs: &[ArrV],
    dummy: Value,
) -> R<Vec<Value>> {
    let mut columns = inputs.iter().map(|a| a.base);
    (0..lam.params.len())
        .map(|k| match plan.is_index(k) {
            true => Some(dummy),
            false => columns.next(),
        })
        .collect::<Option<_>>()
        .ok_or_else(|| "internal error: a kernel's columns".into())
}

/// Where the vector loop over `start..end` stops: `f32` lanes convert indices from 32-bit
/// integers, so a range reaching past 2^31 leaves them all to the scalar code.
pub(crate) fn lanes_end(
    b: &mut FunctionBuilder,
    plan: crate::simd::Plan,
    start: Value,
    end: Value,
) -> Value {
    if plan.index != 0 && plan.elem == PrimType::F32 {
        let small = b
            .ins()
            .icmp_imm_s(IntCC::SignedLessThanOrEqual, end, i32::MAX as i64);
        b.ins().select(small, end, start)
    } else {
        end
    }
}

/// Elements per iteration of a flat map kernel's main loop.
const UNROLL: usize = 4;

/// `index[k]`: parameter `k` takes the element's index (its input is `iota`): bound to the
/// kernel's counter and not read, if it is an `i64` and the map is not a column reduction.
pub fn compile_map(
    lam: &Lambda,
    index: &[bool],
    free_type: &dyn Fn(VName) -> Option<VarType>,
) -> R<MapKernel> {
    // Array results are written into rows of the outputs.
    let what = "the map's lambda";
    if lam
        .ret
        .iter()
        .any(|t| !matches!(t, Type::Prim(_) | Type::Array { .. }))
    {
        return Err(format!(
            "{what} has a result that is neither a scalar nor an array"
        ));
    }
    let scalar_ret = Lambda {
        ret: vec![],
        ..lam.clone()
    };
    check_lambda_in(&scalar_ret, what, true)?;
    // A column reduction reads its inputs as columns (`columns.rs`): no index parameters.
    let columns_shape = crate::columns::column(lam);
    let index: Vec<bool> = (lam.params.iter().enumerate())
        .map(|(k, p)| {
            index.get(k) == Some(&true)
                && p.ty == Type::Prim(PrimType::I64)
                && columns_shape.is_none()
        })
        .collect();
    let elem_params: Vec<Param> = (lam.params.iter().zip(&index))
        .filter(|(_, &ix)| !ix)
        .map(|(p, _)| p.clone())
        .collect();
    let io = Inputs::of(&elem_params, &[lam], free_type)?;
    let results: Vec<PrimType> = lam.ret.iter().map(prim_of).collect();
    let result_ranks: Vec<usize> = lam.ret.iter().map(|t| t.rank() + 1).collect();
    let i64t = types::I64;
    // A flat map (scalar code on elements of vectors) runs UNROLL elements per iteration
    // of its main loop, then the rest one by one.
    let flat = io.ranks.iter().chain(&result_ranks).all(|&r| r == 1)
        && crate::gen::check_lambda(lam, what).is_ok()
        && io.free_arrays.is_empty()
        && io.accs.is_empty();
    let unroll = if flat { UNROLL } else { 1 };
    // Short rows folded or mapped: a row per lane (`simd/rows/`).
    let by_rows = !flat
        && !index.contains(&true)
        && io.accs.is_empty()
        && result_ranks.iter().all(|&r| r <= 2);
    let free_scalar = |v: VName| io.frees.iter().find(|(n, _)| *n == v).map(|(_, t)| *t);
    let vector = match index_bits(&index) {
        Some(bits) if flat => crate::simd::plan_indexed(lam, bits, &free_scalar),
        _ => None,
    };
    let free_vector = |v: VName| {
        let vector = io.free_arrays.iter().find(|(n, _, r)| *n == v && *r == 1);
        vector.map(|(_, t, _)| *t)
    };
    let row_lanes = by_rows
        .then(|| crate::simd::rows::row_plan(lam, &free_scalar, &free_vector))
        .flatten();
    // A map whose elements are reductions down columns: its loops swapped.
    let columns = columns_shape
        .filter(|_| io.ranks.iter().all(|&r| r == 1) && result_ranks == [1] && io.accs.is_empty());
    let column_reduction = columns.is_some();
    let mut column_lanes = false;
    let name = crate::gen::kernel_name("map", lam);
    let (ptr, code) = build_kernel(&name, &[i64t; 4], |b, rt, slot| {
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        let fail = b.create_block();
        b.append_block_param(fail, types::I32);

        b.switch_to_block(entry);
        let [start, end, ins, outs] = b.block_params(entry)[..] else {
            return Err("internal error: kernel parameters".into());
        };
        let pro = prologue(b, ins, &io, &result_ranks);
        let out_bases = load_ptrs(b, outs, 0, results.len());
        let out_views: Vec<_> = (out_bases.iter().zip(&results).zip(&pro.out_dims))
            .map(|((base, t), d)| ArrV::dense(b, *base, *t, d.clone()))
            .collect();
        if let Some(col) = &columns {
            // Elements `start..end` as one column reduction, loops swapped (`columns.rs`).
            let w = b.ins().isub(end, start);
            let mut g = Gen::new(b, pro.env.clone(), fail, rt, slot, Some(pro.arena));
            g.arrays = pro.arrays.clone();
            g.accs = pro.accs.clone();
            g.free_iotas(&pro.iotas);
            let part = |g: &mut Gen, v: &ArrV| ArrV {
                base: v.at(g.b, start),
                elem: v.elem,
                dims: vec![w],
                strides: v.strides.clone(),
            };
            let views: Vec<ArrV> = pro.inputs.iter().map(|v| part(&mut g, v)).collect();
            let out = part(&mut g, &out_views[0]);
            let consecutive = match &views[..] {
                [v] if v.elem == PrimType::I64 => Some(g.consecutive(v, w)),
                _ => None,
            };
            g.column_loops(col, lam, &views, &out, w, consecutive)?;
            column_lanes = g.column_lanes;
            crate::gen::return_ok_or_fail(b, fail);
            return Ok(());
        }
        // The body for element `i`, emitted into the current block.
        let element = |b: &mut FunctionBuilder, i: Value| -> R<()> {
            // The output rows of array results, where a nested map producing one writes.
            let mut out_rows = Vec::new();
            for out in &out_views {
                out_rows.push((out.dims.len() > 1).then(|| out.row(b, i)));
            }
            let mut g = Gen::new(b, pro.env.clone(), fail, rt, slot, Some(pro.arena));
            g.arrays = pro.arrays.clone();
            g.accs = pro.accs.clone();
            g.free_iotas(&pro.iotas);
            g.in_order_short_sums = row_lanes.is_some();
            g.bind_element(&elem_params, &pro.inputs, i);
            g.bind_index(&lam.params, &index, i, has_loops(lam));
            for (r, row) in lam.body.result.iter().zip(&out_rows) {
                if let (SubExp::Var(v), Some(row)) = (r, row) {
                    g.dests.entry(*v).or_insert_with(|| row.clone());
                }
            }
            g.stms(&lam.body)?;
            let mut copied = std::collections::HashSet::new();
            for ((r, row), (base, t)) in lam
                .body
                .result
                .iter()
                .zip(&out_rows)
                .zip(out_bases.iter().zip(&results))
            {
                match (r, row) {
                    (SubExp::Var(v), Some(row)) => {
                        // Written in place by the nested map that made it, or copied.
                        if !(g.written.contains(v) && copied.insert(*v)) {
                            let src = g.array(*v)?;
                            g.copy_row(&src, row)?;
                        }
                    }
                    (_, Some(_)) => return Err("internal error: an array result".into()),
                    (_, None) => {
                        let (v, _) = g.opd(r)?;
                        let a = elem_addr(g.b, *base, i, *t);
                        g.b.ins().store(mem(), v, a, 0);
                    }
                }
            }
            Ok(())
        };
        let mut i0 = start;
        if let Some(plan) = vector {
            // Lanes of f32/f64 first; the loops below finish the rest.
            let frees = crate::simd::splat_env(b, plan, &pro.env, lam);
            let ins = lane_columns(plan, lam, &pro.inputs, start)?;
            let to = lanes_end(b, plan, start, end);
            i0 = crate::simd::vector_loop(
                b,
                plan,
                lam,
                &frees,
                &ins,
                (&out_bases, crate::simd::Write::Store),
                start,
                to,
            )?;
        }
        if let Some(plan) = row_lanes {
            let ins = row_inputs(b, &pro.inputs);
            let outs = row_inputs(b, &out_views);
            let vectors = free_vectors(b, &pro.arrays);
            i0 = crate::simd::rows::row_loop(
                b, plan, lam, &pro.env, &vectors, &ins, &outs, start, end,
            )?;
        }
        if unroll > 1 {
            // for (i = start; i + UNROLL <= end; i += UNROLL) { body(i) … body(i + UNROLL - 1) }
            let header = b.create_block();
            b.append_block_param(header, i64t);
            let body = b.create_block();
            let rest = b.create_block();
            b.append_block_param(rest, i64t);
            b.ins().jump(header, &ba(&[i0]));
            b.switch_to_block(header);
            let i = b.block_params(header)[0];
            let last = b.ins().iadd_imm_s(i, unroll as i64);
            let more = b.ins().icmp(IntCC::SignedLessThanOrEqual, last, end);
            b.ins().brif(more, body, &[], rest, &ba(&[i]));
            b.switch_to_block(body);
            for u in 0..unroll {
                let iu = b.ins().iadd_imm_s(i, u as i64);
                element(b, iu)?;
            }
            b.ins().jump(header, &ba(&[last]));
            b.switch_to_block(rest);
            i0 = b.block_params(rest)[0];
        }
        let (i, header, done) = crate::rows::open_loop(b, i0, end);
        element(b, i)?;
        crate::rows::close_loop(b, i, header, done);
        crate::gen::return_ok_or_fail(b, fail);
        Ok(())
    })?;
    // SAFETY: the function was compiled with exactly this signature (four i64-sized
    // arguments, an i32 result, the platform's C calling convention).
    let f: MapFn = unsafe { std::mem::transmute::<*const u8, MapFn>(ptr) };
    Ok(MapKernel {
        f,
        params: io.params,
        ranks: io.ranks,
        results,
        result_ranks,
        frees: io.frees,
        free_arrays: io.free_arrays,
        accs: io.accs.into_iter().map(|(v, t, r, _)| (v, t, r)).collect(),
        simd_lanes: vector.map_or(0, |p| p.lanes as usize),
        column_reduction,
        column_lanes,
        row_lanes: row_lanes.is_some(),
        index_params: index,
        _code: code,
    })
}
