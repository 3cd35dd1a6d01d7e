//! Maps over short rows with one row per SIMD lane: `map (\r -> … reduce op ne (map pre r)
//! …) xs`, a row's maximum, sum, log-sum-exp or norm, for rows too short for lanes along
//! them (ten classes of a softmax: lanes along such a row spend more on their tail and on
//! combining than on the row). Each lane folds its own row from the neutral element in
//! the row's order, exactly as the scalar code does, so the results are the scalar code's
//! (up to the last bit of `exp`, `log` and `tanh`, as everywhere in `simd/`); the elements
//! of the lanes' rows are gathered from the rows at each step of the fold.
//!
//! The lambda takes rows and scalars of one float type `T` and returns scalars of `T`; its
//! statements are those the lane code does (`VGen`) and reductions over its rows whose
//! operator and `pre` are such code too. Part of [`super`], whose `VGen` it uses.

use super::{check_body, enabled, lane_groups, splat_env, sub_type, unaligned};
use super::{Plan, VGen, R, V};
use crate::gen::ba;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;
use runic_ir::*;
use std::collections::HashMap;

/// The longest rows that run with one row per lane; longer ones have lanes along them.
pub(crate) const ROW_LANES_MAX: i64 = 32;

/// The plan of `lam` if its elements can run with one row per lane (see the module
/// comment); `free` gives the type of a variable the lambda does not bind.
pub(crate) fn row_plan(lam: &Lambda, free: &dyn Fn(VName) -> Option<PrimType>) -> Option<Plan> {
    if !enabled() {
        return None;
    }
    let t = match lam.ret.first()? {
        Type::Prim(t @ (PrimType::F32 | PrimType::F64)) => *t,
        _ => return None,
    };
    let is_t = |ty: &Type| matches!(ty, Type::Prim(p) if *p == t);
    let is_row =
        |ty: &Type| matches!(ty, Type::Array { elem, shape } if *elem == t && shape.len() == 1);
    let rows: Vec<VName> = (lam.params.iter())
        .filter(|p| is_row(&p.ty))
        .map(|p| p.name)
        .collect();
    let params_ok = lam.params.iter().all(|p| is_t(&p.ty) || is_row(&p.ty));
    if rows.is_empty() || !params_ok || !lam.ret.iter().all(is_t) {
        return None;
    }
    let mut tys: HashMap<VName, PrimType> = (lam.params.iter())
        .filter(|p| is_t(&p.ty))
        .map(|p| (p.name, t))
        .collect();
    for s in &lam.body.stms {
        match &s.exp {
            Exp::Soac(Soac::Reduce {
                w,
                arrs,
                pre,
                lam: op,
                neutral,
                ..
            }) => {
                let [p] = &s.pat[..] else { return None };
                let [ne] = &neutral[..] else { return None };
                // The width is the same in every lane: a constant or a free size.
                let uniform = match w {
                    SubExp::Const(_) => true,
                    SubExp::Var(v) => free(*v) == Some(PrimType::I64),
                };
                if !uniform
                    || arrs.is_empty()
                    || !arrs.iter().all(|a| rows.contains(a))
                    || !is_t(&p.ty)
                    || sub_type(ne, &tys, free) != Some(t)
                {
                    return None;
                }
                match pre {
                    Some(pre) if pre.params.len() == arrs.len() => {
                        scalar_lambda(pre, t, &mut tys, free)?
                    }
                    None if arrs.len() == 1 => {}
                    _ => return None,
                }
                if op.params.len() != 2 {
                    return None;
                }
                scalar_lambda(op, t, &mut tys, free)?;
                tys.insert(p.name, t);
            }
            _ => {
                let one = Body {
                    stms: vec![s.clone()],
                    result: Vec::new(),
                };
                check_body(&one, t, &mut tys, free)?;
            }
        }
    }
    let results_t = (lam.body.result.iter()).all(|r| sub_type(r, &tys, free) == Some(t));
    results_t.then_some(Plan {
        elem: t,
        lanes: if t == PrimType::F32 { 4 } else { 2 },
        index: 0,
    })
}

/// Whether `l` takes and returns scalars of `t` and its body is lane code, seeing the
/// enclosing lambda's bindings `tys` (its parameters are added to them).
fn scalar_lambda(
    l: &Lambda,
    t: PrimType,
    tys: &mut HashMap<VName, PrimType>,
    free: &dyn Fn(VName) -> Option<PrimType>,
) -> Option<()> {
    let is_t = |ty: &Type| matches!(ty, Type::Prim(p) if *p == t);
    if !l.params.iter().all(|p| is_t(&p.ty)) || l.ret.len() != 1 || !is_t(&l.ret[0]) {
        return None;
    }
    tys.extend(l.params.iter().map(|p| (p.name, t)));
    check_body(&l.body, t, tys, free)?;
    let [r] = &l.body.result[..] else { return None };
    (sub_type(r, tys, free) == Some(t)).then_some(())
}

/// Where a parameter's values come from: rows of an array (its base, the distances in
/// bytes between rows and between a row's elements, and the rows' length), or a column of
/// scalars (its base).
pub(crate) enum RowInput {
    Rows {
        base: Value,
        row_step: Value,
        elem_step: Value,
        len: Value,
    },
    Column(Value),
}

/// Emits the loop over the elements `from..to` of a map whose lambda has a [`row_plan`],
/// a group of rows at a time, writing each result into its column of `outs` (contiguous);
/// returns the element the scalar code continues from: `to` minus the tail, or the first
/// group that a `min`/`max` between `0` and `-0` leaves to it, or `from` when a row is
/// longer than [`ROW_LANES_MAX`] or shorter than a reduction over it. `env` holds the
/// kernel's free scalars (sizes among them).
#[allow(clippy::too_many_arguments)]
pub(crate) fn row_loop(
    b: &mut FunctionBuilder,
    plan: Plan,
    lam: &Lambda,
    env: &HashMap<VName, (Value, PrimType)>,
    inputs: &[RowInput],
    outs: &[Value],
    from: Value,
    to: Value,
) -> R<Value> {
    let by_name: HashMap<VName, &RowInput> =
        lam.params.iter().map(|p| p.name).zip(inputs).collect();
    // Every row short, and as long as every reduction over it.
    let mut ok = b.ins().iconst(types::I8, 1);
    for input in inputs {
        if let RowInput::Rows { len, .. } = input {
            let short = b
                .ins()
                .icmp_imm_s(IntCC::SignedLessThanOrEqual, *len, ROW_LANES_MAX);
            ok = b.ins().band(ok, short);
        }
    }
    let mut widths = HashMap::new();
    for s in &lam.body.stms {
        let Exp::Soac(Soac::Reduce { w, arrs, .. }) = &s.exp else {
            continue;
        };
        let w = match w {
            SubExp::Const(c) => {
                let w = c.as_int().and_then(|w| i64::try_from(w).ok()).unwrap_or(-1);
                b.ins().iconst(types::I64, w)
            }
            SubExp::Var(v) => env
                .get(v)
                .map(|x| x.0)
                .ok_or_else(|| format!("internal error: the width {v} is not in scope"))?,
        };
        let natural = b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, w, 0);
        ok = b.ins().band(ok, natural);
        for a in arrs {
            if let Some(RowInput::Rows { len, .. }) = by_name.get(a) {
                let fits = b.ins().icmp(IntCC::SignedLessThanOrEqual, w, *len);
                ok = b.ins().band(ok, fits);
            }
        }
        widths.insert(s.pat[0].name, w);
    }
    let frees = splat_env(b, plan, env, lam);
    let lanes_block = b.create_block();
    let after = b.create_block();
    b.append_block_param(after, types::I64);
    b.ins().brif(ok, lanes_block, &[], after, &ba(&[from]));
    b.switch_to_block(lanes_block);
    let stop = lane_groups(
        b,
        plan,
        (from, to),
        1,
        |b, off| rows_body(b, plan, lam, &frees, &by_name, &widths, off),
        |b, off, res: Vec<V>| {
            for (r, base) in res.iter().zip(outs) {
                let a = b.ins().iadd(*base, off);
                b.ins().store(unaligned(), r.v, a, 0);
            }
        },
    )?;
    b.ins().jump(after, &ba(&[stop]));
    b.switch_to_block(after);
    Ok(b.block_params(after)[0])
}

/// The lambda on the group of rows at byte offset `off` (of the first row's result):
/// its results in lanes, and the lanes to leave to the scalar code, if any can be.
fn rows_body(
    b: &mut FunctionBuilder,
    plan: Plan,
    lam: &Lambda,
    frees: &HashMap<VName, (Value, bool)>,
    inputs: &HashMap<VName, &RowInput>,
    widths: &HashMap<VName, Value>,
    off: Value,
) -> R<(Vec<V>, Option<Value>)> {
    let shift = plan.elem.size_bytes().trailing_zeros() as i64;
    let first = b.ins().ushr_imm_u(off, shift);
    let mut env: HashMap<VName, V> = frees
        .iter()
        .map(|(k, &(v, mask))| (*k, V { v, mask }))
        .collect();
    // Each row parameter's lanes: the address of each lane's row.
    let mut rows: HashMap<VName, (Vec<Value>, Value)> = HashMap::new();
    for p in &lam.params {
        match inputs.get(&p.name) {
            Some(RowInput::Column(base)) => {
                let a = b.ins().iadd(*base, off);
                let v = b.ins().load(plan.vt(), unaligned(), a, 0);
                env.insert(p.name, V { v, mask: false });
            }
            Some(RowInput::Rows {
                base,
                row_step,
                elem_step,
                ..
            }) => {
                let at = b.ins().imul(first, *row_step);
                let row0 = b.ins().iadd(*base, at);
                let mut lanes = vec![row0];
                for _ in 1..plan.lanes {
                    let prev = *lanes.last().unwrap_or(&row0);
                    lanes.push(b.ins().iadd(prev, *row_step));
                }
                rows.insert(p.name, (lanes, *elem_step));
            }
            None => return Err(format!("internal error: no input for {}", p.name)),
        }
    }
    let mut g = VGen {
        b,
        plan,
        env,
        bail: None,
    };
    for s in &lam.body.stms {
        match &s.exp {
            Exp::Soac(Soac::Reduce {
                arrs,
                pre,
                lam: op,
                neutral,
                ..
            }) => {
                let w = widths[&s.pat[0].name];
                let reads: Vec<&(Vec<Value>, Value)> = arrs
                    .iter()
                    .map(|a| rows.get(a).ok_or("internal error: a reduction's row"))
                    .collect::<Result<_, _>>()?;
                let v = row_fold(&mut g, &reads, pre.as_ref(), op, &neutral[0], w)?;
                g.env.insert(s.pat[0].name, v);
            }
            _ => g.stm(s)?,
        }
    }
    let res = (lam.body.result.iter())
        .map(|r| g.opd(r))
        .collect::<R<Vec<V>>>()?;
    Ok((res, g.bail))
}

/// `reduce op ne (map pre rows…)` over the first `w` elements of each lane's rows, in
/// order: a loop over the elements carrying the accumulators' lanes and the lanes that
/// a `min`/`max` leaves to the scalar code.
fn row_fold(
    g: &mut VGen,
    reads: &[&(Vec<Value>, Value)],
    pre: Option<&Lambda>,
    op: &Lambda,
    ne: &SubExp,
    w: Value,
) -> R<V> {
    let (vt, mt) = (g.plan.vt(), g.plan.mt());
    let acc0 = g.opd(ne)?.v;
    let zero = g.b.ins().iconst(mt.lane_type(), 0);
    let no_bail = g.b.ins().splat(mt, zero);
    let k0 = g.b.ins().iconst(types::I64, 0);
    let header = g.b.create_block();
    let body = g.b.create_block();
    let done = g.b.create_block();
    for (blk, ts) in [(header, &[types::I64, vt, mt][..]), (done, &[vt, mt][..])] {
        for &t in ts {
            g.b.append_block_param(blk, t);
        }
    }
    g.b.ins().jump(header, &ba(&[k0, acc0, no_bail]));
    g.b.switch_to_block(header);
    let [k, acc, bail] = g.b.block_params(header)[..] else {
        return Err("internal error: a fold's loop".into());
    };
    let more = g.b.ins().icmp(IntCC::SignedLessThan, k, w);
    g.b.ins().brif(more, body, &[], done, &ba(&[acc, bail]));
    g.b.switch_to_block(body);
    // Element k of each lane's row, gathered into one vector per input.
    let mut xs = Vec::new();
    for (lanes, step) in reads {
        let at = g.b.ins().imul(k, *step);
        let mut v = None;
        for (l, row) in lanes.iter().enumerate() {
            let a = g.b.ins().iadd(*row, at);
            let x = g.b.ins().load(g.plan.elem_type(), unaligned(), a, 0);
            v = Some(match v {
                None => g.b.ins().scalar_to_vector(vt, x),
                Some(v) => g.b.ins().insertlane(v, x, l as u8),
            });
        }
        xs.push(v.ok_or("internal error: no lanes")?);
    }
    let saved = (g.env.clone(), g.bail.take());
    let y = match pre {
        Some(pre) => {
            for (p, x) in pre.params.iter().zip(&xs) {
                g.env.insert(p.name, V { v: *x, mask: false });
            }
            g.body(&pre.body)?[0].v
        }
        None => xs[0],
    };
    g.env.insert(
        op.params[0].name,
        V {
            v: acc,
            mask: false,
        },
    );
    g.env.insert(op.params[1].name, V { v: y, mask: false });
    let next = g.body(&op.body)?[0].v;
    let bail = match g.bail {
        Some(m) => g.b.ins().bor(bail, m),
        None => bail,
    };
    (g.env, g.bail) = saved;
    let k1 = g.b.ins().iadd_imm_s(k, 1);
    g.b.ins().jump(header, &ba(&[k1, next, bail]));
    g.b.switch_to_block(done);
    let [acc, bail] = g.b.block_params(done)[..] else {
        return Err("internal error: a fold's loop".into());
    };
    g.bail = Some(match g.bail {
        Some(m) => g.b.ins().bor(m, bail),
        None => bail,
    });
    Ok(V {
        v: acc,
        mask: false,
    })
}
