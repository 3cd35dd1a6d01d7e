//! Fold and scan kernels: `op` folded over `map pre` of the inputs, in element order, from
//! an accumulator the caller gives (one raw word per scalar accumulator value, a pointer to
//! a dense buffer per array one); a scan also stores every intermediate accumulator.
//!
//! An array accumulator (a vectorised operator such as `map2 (+)`) is carried like a loop
//! parameter that is an array (`inplace.rs`): in one of two buffers of its own, so that the
//! operator's result may be a fresh array, a view of its operands, or the accumulator
//! itself; the caller's buffer gets the final value. An operator that is a map over the
//! accumulator and the operand element by element ([`elementwise`]) writes its result over
//! the accumulator, which it reads element by element before writing.

use crate::gen::{
    ba, build_kernel, check_lambda_in, cl, elem_addr, load_ptrs, mem, prim_of, Gen, R,
};
use crate::kernels::{prologue, Inputs};
use crate::nest::ArrV;
use crate::{FoldFn, FoldKernel, ScanKernel, VarType};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, Value};
use runic_ir::traverse::uses;
use runic_ir::*;

/// A value of a lambda's result: a scalar, or a view of an array.
enum Item {
    Scalar(Value),
    Array(ArrV),
}

/// `index[k]`: the fold's input `k` is an `iota` (see [`crate::compile_map_indexed`]).
pub fn compile_fold(
    pre: Option<&Lambda>,
    op: &Lambda,
    index: &[bool],
    free_type: &dyn Fn(VName) -> Option<VarType>,
    in_order: bool,
) -> R<FoldKernel> {
    fold_kernel(pre, op, index, free_type, false, in_order)
}

pub fn compile_scan(
    pre: Option<&Lambda>,
    op: &Lambda,
    index: &[bool],
    free_type: &dyn Fn(VName) -> Option<VarType>,
) -> R<ScanKernel> {
    Ok(ScanKernel(fold_kernel(
        pre, op, index, free_type, true, true,
    )?))
}

/// A fold (or, with `scan`, a scan writing every accumulator) compiled from `pre` and `op`.
fn fold_kernel(
    pre: Option<&Lambda>,
    op: &Lambda,
    index: &[bool],
    free_type: &dyn Fn(VName) -> Option<VarType>,
    scan: bool,
    in_order: bool,
) -> R<FoldKernel> {
    let (f, io, accs, acc_ranks, code, index_params) =
        fold_like(pre, op, index, free_type, scan, in_order)?;
    Ok(FoldKernel {
        f,
        elems: io.params,
        ranks: io.ranks,
        accs,
        acc_ranks,
        frees: io.frees,
        free_arrays: io.free_arrays,
        index_params,
        _code: code,
    })
}

impl Gen<'_, '_> {
    /// The results of a body as items of the given ranks.
    fn items(&mut self, result: &[SubExp], ranks: &[usize]) -> R<Vec<Item>> {
        let mut out = Vec::new();
        for (r, rank) in result.iter().zip(ranks) {
            out.push(match (r, rank) {
                (_, 0) => Item::Scalar(self.opd(r)?.0),
                (SubExp::Var(v), _) => Item::Array(self.array(*v)?),
                _ => return Err("internal error: an array result that is a constant".into()),
            });
        }
        Ok(out)
    }

    /// Binds parameters to items.
    fn bind_items(&mut self, params: &[Param], items: Vec<Item>) {
        for (p, it) in params.iter().zip(items) {
            match it {
                Item::Scalar(v) => {
                    self.env.insert(p.name, (v, prim_of(&p.ty)));
                }
                Item::Array(a) => {
                    self.arrays.insert(p.name, a);
                }
            }
        }
    }
}

/// Whether result `j` of the operator `op` is a map (nested maps) over its accumulator
/// parameter `j` and operand `j`, element by element: each element of the result reads
/// only the same elements of them, so it may overwrite the accumulator.
pub(crate) fn elementwise(op: &Lambda, j: usize) -> bool {
    let k = op.ret.len();
    let (Some(acc), Some(x), Some(SubExp::Var(r))) = (
        op.params.get(j),
        op.params.get(k + j),
        op.body.result.get(j),
    ) else {
        return false;
    };
    let Some(def) = op.body.binding(*r) else {
        return false;
    };
    let Stm {
        exp: Exp::Soac(Soac::Map { lam, arrs, .. }),
        pat,
        ..
    } = def
    else {
        return false;
    };
    // The map reads the accumulator only as one of its inputs, and nothing else in the
    // operator reads it.
    let elsewhere = op
        .body
        .stms
        .iter()
        .filter(|s| !std::ptr::eq(*s, def))
        .any(|s| uses(s).contains(&acc.name));
    let [res] = &pat[..] else { return false };
    res.name == *r
        && arrs.contains(&acc.name)
        && arrs.contains(&x.name)
        && !elsewhere
        && !uses(&lam.body).contains(&acc.name)
        && lambda_elementwise(lam)
}

/// Whether a map's lambda computes each result element from the same elements of its
/// inputs: scalar operations on its scalar parameters, or nested maps over its row
/// parameters only, recursively.
fn lambda_elementwise(lam: &Lambda) -> bool {
    let params: Vec<VName> = lam.params.iter().map(|p| p.name).collect();
    lam.body.stms.iter().all(|s| match &s.exp {
        Exp::Basic(BasicOp::BinOp(..) | BasicOp::UnOp(..) | BasicOp::SubExp(_)) => {
            s.pat.iter().all(|p| p.ty.rank() == 0)
        }
        Exp::Soac(Soac::Map {
            lam: inner, arrs, ..
        }) => arrs.iter().all(|a| params.contains(a)) && lambda_elementwise(inner),
        _ => false,
    }) && lam.params.iter().filter(|p| p.ty.rank() > 0).all(|p| {
        // A row parameter is read only as a nested map's input.
        lam.body.stms.iter().all(|s| match &s.exp {
            Exp::Soac(Soac::Map { lam: inner, .. }) => !uses(&inner.body).contains(&p.name),
            _ => !uses(s).contains(&p.name),
        })
    })
}

/// A fold of `op` over `map pre` of the inputs; `scan`: also store the accumulator after
/// every element into the outputs (an inclusive scan); `in_order`: combine the elements in
/// order (otherwise a sum may add them in SIMD lanes).
#[allow(clippy::type_complexity)]
fn fold_like(
    pre: Option<&Lambda>,
    op: &Lambda,
    index: &[bool],
    free_type: &dyn Fn(VName) -> Option<VarType>,
    scan: bool,
    in_order: bool,
) -> R<(
    FoldFn,
    Inputs,
    Vec<PrimType>,
    Vec<usize>,
    crate::Code,
    Vec<bool>,
)> {
    let what = if scan { "scan" } else { "reduction" };
    let no_ret = |l: &Lambda| Lambda {
        ret: vec![],
        ..l.clone()
    };
    if let Some(p) = pre {
        check_lambda_in(&no_ret(p), &format!("the {what}'s map lambda"), true)?;
    }
    check_lambda_in(&no_ret(op), &format!("the {what} operator"), true)?;
    let k = op.ret.len();
    if op.params.len() != 2 * k {
        return Err(format!(
            "the {what} operator's arity does not match its results"
        ));
    }
    if op
        .ret
        .iter()
        .any(|t| !matches!(t, Type::Prim(_) | Type::Array { .. }))
    {
        return Err(format!("the {what} operator has an accumulator result"));
    }
    let accs: Vec<PrimType> = op.ret.iter().map(prim_of).collect();
    let acc_ranks: Vec<usize> = op.ret.iter().map(Type::rank).collect();
    let same = |ps: &[Param]| {
        ps.iter()
            .map(|p| (prim_of(&p.ty), p.ty.rank()))
            .eq(accs.iter().copied().zip(acc_ranks.iter().copied()))
    };
    if !same(&op.params[..k]) || !same(&op.params[k..]) {
        return Err(format!(
            "the {what} operator's parameter types differ from its results"
        ));
    }
    let elem_params: &[Param] = match pre {
        Some(p) => {
            let rets = p.ret.iter().map(|t| (prim_of(t), t.rank()));
            if rets.ne(accs.iter().copied().zip(acc_ranks.iter().copied())) {
                return Err(format!("the {what}'s map lambda does not produce operands"));
            }
            &p.params
        }
        None => &op.params[k..],
    };
    // The parameters whose inputs are iotas: bound to the counter, no input read.
    let index: Vec<bool> = (elem_params.iter().enumerate())
        .map(|(k, p)| index.get(k) == Some(&true) && p.ty == Type::Prim(PrimType::I64))
        .collect();
    let kept: Vec<Param> = (elem_params.iter().zip(&index))
        .filter(|(_, &ix)| !ix)
        .map(|(p, _)| p.clone())
        .collect();
    let mut lams = vec![op];
    lams.extend(pre);
    let io = Inputs::of(&kept, &lams, free_type)?;
    if !io.accs.is_empty() {
        return Err(format!("the {what} updates an accumulator"));
    }
    // `reduce (+) 0 (map pre xs)` of f32/f64 (or `min`, `max`) with `pre` vectorisable:
    // SIMD lanes first.
    let free_scalar = |v: VName| io.frees.iter().find(|(n, _)| *n == v).map(|(_, t)| *t);
    let flat = io.free_arrays.is_empty() && io.ranks.iter().all(|&r| r == 1);
    let index_bits = crate::kernels::index_bits(&index);
    let fold_plan = match (pre, crate::simd::Fold::of(op), index_bits) {
        (Some(p), Some(fold), Some(bits)) if !scan && !in_order && flat && acc_ranks == [0] => {
            crate::simd::plan_indexed(p, bits, &free_scalar)
                .filter(|pl| pl.elem == accs[0])
                .map(|pl| (pl, fold))
        }
        _ => None,
    };
    let i64t = types::I64;
    let array_accs: Vec<usize> = acc_ranks.iter().copied().filter(|&r| r > 0).collect();
    let kind = if scan { "scan" } else { "fold" };
    let name = crate::gen::kernel_name(kind, pre.unwrap_or(op));
    let (ptr, code) = build_kernel(&name, &[i64t; 5], |b, rt, slot| {
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        let header = b.create_block();
        b.append_block_param(header, i64t);
        let body = b.create_block();
        let done = b.create_block();
        for (t, r) in accs.iter().zip(&acc_ranks) {
            let ty = if *r == 0 { cl(*t) } else { i64t };
            b.append_block_param(header, ty);
            b.append_block_param(done, ty);
        }
        let fail = b.create_block();
        b.append_block_param(fail, types::I32);

        b.switch_to_block(entry);
        let [start, end, ins, acc_ptr, outs] = b.block_params(entry)[..] else {
            return Err("internal error: kernel parameters".into());
        };
        // After the inputs' and free arrays' dimensions: those of every array accumulator.
        let pro = prologue(b, ins, &io, &array_accs);
        let out_bases = if scan {
            load_ptrs(b, outs, 0, accs.len())
        } else {
            Vec::new()
        };
        let mut g = Gen::new(b, pro.env, fail, rt, slot, Some(pro.arena));
        g.arrays = pro.arrays;
        g.free_iotas(&pro.iotas);
        // Every array accumulator: its dimensions, its caller's buffer and its two own.
        let mut acc_dims = pro.out_dims.into_iter();
        let mut carried = Vec::new();
        let mut init = vec![start];
        for (j, (t, r)) in accs.iter().zip(&acc_ranks).enumerate() {
            if *r == 0 {
                init.push(g.b.ins().load(cl(*t), mem(), acc_ptr, (8 * j) as i32));
                carried.push(None);
                continue;
            }
            let dims = acc_dims
                .next()
                .ok_or("internal error: accumulator dimensions")?;
            let caller = g.b.ins().load(i64t, mem(), acc_ptr, (8 * j) as i32);
            let mut n = g.b.ins().iconst(i64t, 1);
            for d in &dims {
                n = g.b.ins().imul(n, *d);
            }
            let bufs = [g.scratch_buf(n, *t)?, g.scratch_buf(n, *t)?];
            let from = ArrV::dense(g.b, caller, *t, dims.clone());
            let to = ArrV::dense(g.b, bufs[0], *t, dims.clone());
            g.copy_row(&from, &to)?;
            init.push(bufs[0]);
            carried.push(Some((caller, dims, bufs)));
        }
        if let (Some((plan, fold)), Some(p)) = (fold_plan, pre) {
            let frees = crate::simd::splat_env(g.b, plan, &g.env, p);
            let bases = crate::kernels::lane_columns(plan, p, &pro.inputs, start)?;
            let to = crate::kernels::lanes_end(g.b, plan, start, end);
            let (j, acc) =
                crate::simd::vector_fold(g.b, plan, fold, p, &frees, &bases, start, to, init[1])?;
            init[0] = j;
            init[1] = acc;
        }
        g.b.ins().jump(header, &ba(&init));

        g.b.switch_to_block(header);
        let hp = g.b.block_params(header).to_vec();
        let (i, acc) = (hp[0], hp[1..].to_vec());
        let more = g.b.ins().icmp(IntCC::SignedLessThan, i, end);
        g.b.ins().brif(more, body, &[], done, &ba(&acc));

        g.b.switch_to_block(body);
        let saved = (g.env.clone(), g.arrays.clone());
        g.bind_element(&kept, &pro.inputs, i);
        g.bind_index(
            elem_params,
            &index,
            i,
            pre.is_some_and(crate::kernels::has_loops),
        );
        let ys = match pre {
            Some(p) => {
                g.stms(&p.body)?;
                g.items(&p.body.result, &acc_ranks)?
            }
            None => {
                let names: Vec<SubExp> = elem_params.iter().map(|p| SubExp::Var(p.name)).collect();
                g.items(&names, &acc_ranks)?
            }
        };
        let xs: Vec<Item> = acc
            .iter()
            .zip(&carried)
            .zip(&accs)
            .map(|((v, c), t)| match c {
                None => Item::Scalar(*v),
                Some((_, dims, _)) => Item::Array(ArrV::dense(g.b, *v, *t, dims.clone())),
            })
            .collect();
        g.bind_items(&op.params[..k], xs);
        g.bind_items(&op.params[k..], ys);
        // An elementwise operator writes its result over the accumulator it reads (each
        // element read before it is written): no fresh array per element, no copy back.
        for (j, ((c, cur), t)) in carried.iter().zip(&acc).zip(&accs).enumerate() {
            if let (Some((_, dims, _)), Some(SubExp::Var(r)), true) =
                (c, op.body.result.get(j), elementwise(op, j))
            {
                let dense = ArrV::dense(g.b, *cur, *t, dims.clone());
                g.dests.insert(*r, dense);
            }
        }
        g.stms(&op.body)?;
        let new = g.items(&op.body.result, &acc_ranks)?;
        let mut next_acc = Vec::new();
        for (((it, c), cur), (t, out)) in new.into_iter().zip(&carried).zip(&acc).zip(
            accs.iter()
                .zip(out_bases.iter().map(Some).chain(std::iter::repeat(None))),
        ) {
            match (it, c) {
                (Item::Scalar(v), None) => {
                    if let Some(base) = out {
                        let a = elem_addr(g.b, *base, i, *t);
                        g.b.ins().store(mem(), v, a, 0);
                    }
                    next_acc.push(v);
                }
                (Item::Array(v), Some((_, dims, bufs))) => {
                    let nb = g.carry(&v, *cur, *t, dims, *bufs)?;
                    if let Some(base) = out {
                        // Row `i` of the scan's output.
                        let mut all = vec![end];
                        all.extend(dims.iter().copied());
                        let o = ArrV::dense(g.b, *base, *t, all).row(g.b, i);
                        let now = ArrV::dense(g.b, nb, *t, dims.clone());
                        g.copy_row(&now, &o)?;
                    }
                    next_acc.push(nb);
                }
                _ => return Err("internal error: an accumulator of another kind".into()),
            }
        }
        (g.env, g.arrays) = saved;
        let next = g.b.ins().iadd_imm_s(i, 1);
        let mut hargs = vec![next];
        hargs.extend(next_acc);
        g.b.ins().jump(header, &ba(&hargs));

        g.b.switch_to_block(done);
        let fin = g.b.block_params(done).to_vec();
        for (j, ((v, c), t)) in fin.into_iter().zip(&carried).zip(&accs).enumerate() {
            match c {
                None => {
                    g.b.ins().store(mem(), v, acc_ptr, (8 * j) as i32);
                }
                Some((caller, dims, _)) => {
                    let from = ArrV::dense(g.b, v, *t, dims.clone());
                    let to = ArrV::dense(g.b, *caller, *t, dims.clone());
                    g.copy_row(&from, &to)?;
                }
            }
        }
        crate::gen::return_ok_or_fail(g.b, fail);
        Ok(())
    })?;
    // SAFETY: compiled with exactly this signature (five i64-sized arguments, an i32
    // result, the platform's C calling convention).
    let f: FoldFn = unsafe { std::mem::transmute::<*const u8, FoldFn>(ptr) };
    Ok((f, io, accs, acc_ranks, code, index))
}
