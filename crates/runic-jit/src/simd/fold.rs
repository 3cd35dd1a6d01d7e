//! Folds in lanes: `reduce (+)`, `min` or `max` over `map pre` of contiguous vectors, in
//! vector accumulators, for the fold kernels (`folds.rs`) and inner folds of nests
//! (`nest.rs`). Part of [`super`], whose lane code (`VGen`, `lanes_body`) it uses.

use super::{byte_offset, lanes_body, Plan, VGen, R};
use crate::gen::ba;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Block, InstBuilder, Value};
use cranelift_frontend::FunctionBuilder;
use runic_ir::*;
use std::collections::HashMap;

/// A fold whose operator the vector code can apply across lanes: `+`, `min` or `max` on
/// `T` (in either order of the operands: each is commutative on floats, bit for bit).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Fold {
    Add,
    Min,
    Max,
}

impl Fold {
    /// The fold of `op`, if it is `\a b -> a ⊕ b` with `⊕` one of the three.
    pub(crate) fn of(op: &Lambda) -> Option<Fold> {
        match op.binop_either_order()?.0 {
            BinOp::Add => Some(Fold::Add),
            BinOp::Min => Some(Fold::Min),
            BinOp::Max => Some(Fold::Max),
            _ => None,
        }
    }

    /// The value lanes start from: `-0` for a sum (so that a sum of `-0`s stays `-0`),
    /// NaN for `min`/`max` (`runic_prim`'s `max NaN x` is `x`, and `max NaN NaN` is NaN,
    /// so it is the operator's identity, unlike `-inf`: `max -inf NaN` is `-inf`).
    fn lane_start(self, elem: PrimType) -> Prim {
        let x = if self == Fold::Add { -0.0 } else { f64::NAN };
        Prim::float(elem, x)
    }
}

/// Where a group of lanes that bailed goes: a sum on in the scalar code from the group
/// (`rest`, with the loop's parameters `params`, the accumulators before the group), a
/// `min`/`max` to the scalar fold from the start (`done` with `restart`).
fn leave_on_bail(
    b: &mut FunctionBuilder,
    fold: Fold,
    bail: Option<Value>,
    rest: Block,
    params: &[Value],
    done: Block,
    restart: &[Value],
) {
    let Some(m) = bail else { return };
    let any = b.ins().vany_true(m);
    let go = b.create_block();
    if fold == Fold::Add {
        b.ins().brif(any, rest, &ba(params), go, &[]);
    } else {
        b.ins().brif(any, done, &ba(restart), go, &[]);
    }
    b.switch_to_block(go);
}

/// Where a fold's loops leave for: `rest` (the lanes combined, the scalar fold after
/// them) and `done` with `restart` (the scalar fold from the start).
struct Exits {
    rest: Block,
    done: Block,
    restart: [Value; 2],
}

/// What one loop of a vector fold reads: the fold, its pre-lambda over the inputs `ins`
/// up to element `to`.
struct FoldLoop<'a> {
    plan: Plan,
    fold: Fold,
    lam: &'a Lambda,
    frees: &'a HashMap<VName, (Value, bool)>,
    ins: &'a [Value],
    to: Value,
}

impl FoldLoop<'_> {
    /// The loop whose header is `header` (parameters: `j` and every accumulator): while
    /// `groups` whole vectors remain, one into each of the first `groups` accumulators
    /// (in `body`); then on to `next` with the same parameters.
    fn emit(
        &self,
        b: &mut FunctionBuilder,
        header: Block,
        body: Block,
        groups: usize,
        next: Block,
        exits: &Exits,
    ) -> R<()> {
        let plan = self.plan;
        b.switch_to_block(header);
        let params = b.block_params(header).to_vec();
        let (j, accs) = (params[0], &params[1..]);
        let last = b.ins().iadd_imm_s(j, groups as i64 * plan.lanes);
        let more = b.ins().icmp(IntCC::SignedLessThanOrEqual, last, self.to);
        b.ins().brif(more, body, &[], next, &ba(&params));
        b.switch_to_block(body);
        let mut lanes = Vec::with_capacity(groups);
        let mut bails = Vec::new();
        for k in 0..groups {
            let jk = b.ins().iadd_imm_s(j, k as i64 * plan.lanes);
            let off = byte_offset(b, plan, jk);
            let (r, bail) = lanes_body(b, plan, self.lam, self.frees, self.ins, off)?;
            lanes.push(r[0].v);
            bails.extend(bail);
        }
        let mut g = VGen::bare(b, plan);
        let mut args = vec![last];
        args.extend(
            accs[..groups]
                .iter()
                .zip(&lanes)
                .map(|(a, r)| g.combine(self.fold, *a, *r)),
        );
        args.extend(&accs[groups..]);
        let bail = g
            .bail
            .into_iter()
            .chain(bails)
            .reduce(|x, m| b.ins().bor(x, m));
        leave_on_bail(
            b,
            self.fold,
            bail,
            exits.rest,
            &params,
            exits.done,
            &exits.restart,
        );
        b.ins().jump(header, &ba(&args));
        Ok(())
    }
}

/// How many vector accumulators a fold keeps: a sum's additions into one accumulator
/// wait for each other (three or four cycles each), so independent chains keep the adder
/// busy. Four gave a [64]f64 dot product per row 1.7× the speed of two.
const FOLD_CHAINS: usize = 4;

/// The fewest elements a `min`/`max` folds in lanes (see [`vector_fold`]).
const MIN_LANE_EXTREMUM: i64 = 32;

/// Emits `acc ⊕ lam(ins[..][j]) ⊕ …` for `j` from `from`, in [`FOLD_CHAINS`] vector
/// accumulators of lanes while that many whole vectors remain, then in the first two of
/// them while whole pairs remain, and returns the `j` where the scalar fold takes over
/// and the accumulator.
///
/// A sum is reassociated (per-lane partial sums, combined at the end), as any split
/// reduction is. `min` and `max` give exactly the sequential fold's result, since they do
/// not depend on the order except when choosing between `0` and `-0`: when any lane (or
/// the combination of lanes) meets that choice, the vector result is dropped and the
/// scalar fold starts again from `from` and `acc`. A group of lanes that `lam` leaves to
/// the scalar code ends a sum's vector loop where it is, and restarts a `min`/`max`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn vector_fold(
    b: &mut FunctionBuilder,
    plan: Plan,
    fold: Fold,
    lam: &Lambda,
    frees: &HashMap<VName, (Value, bool)>,
    ins: &[Value],
    from: Value,
    to: Value,
    acc: Value,
) -> R<(Value, Value)> {
    let (i64t, vt) = (types::I64, plan.vt());
    let header = b.create_block();
    let body = b.create_block();
    let pairs = b.create_block();
    let pairs_body = b.create_block();
    let rest = b.create_block();
    let done = b.create_block();
    // Each loop block and `rest` take `j` and the accumulators.
    for blk in [header, pairs, rest] {
        b.append_block_param(blk, i64t);
        for _ in 0..FOLD_CHAINS {
            b.append_block_param(blk, vt);
        }
    }
    b.append_block_param(done, i64t);
    b.append_block_param(done, plan.elem_type());
    let mut g = VGen::bare(b, plan);
    let z = g.konst(fold.lane_start(plan.elem))?.v;
    let mut start = vec![from];
    start.extend([z; FOLD_CHAINS]);
    if fold == Fold::Add {
        b.ins().jump(header, &ba(&start));
    } else {
        // A short `min`/`max` is the scalar fold's: one instruction a step there, where
        // the lanes' combining (accumulators, then lanes, each a NaN-aware select) costs
        // more than a row of ten (65 536 rows of ten `f32`s: 1.0–1.25 → 0.95–1.05 ms).
        let left = b.ins().isub(to, from);
        let long = b
            .ins()
            .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, left, MIN_LANE_EXTREMUM);
        b.ins()
            .brif(long, header, &ba(&start), done, &ba(&[from, acc]));
    }

    // Whole groups of FOLD_CHAINS vectors, one into each accumulator; then whole pairs,
    // into the first two (a short row — ten `f32`s — then costs what it did with two
    // accumulators).
    let exits = Exits {
        rest,
        done,
        restart: [from, acc],
    };
    let loop_ = FoldLoop {
        plan,
        fold,
        lam,
        frees,
        ins,
        to,
    };
    loop_.emit(b, header, body, FOLD_CHAINS, pairs, &exits)?;
    loop_.emit(b, pairs, pairs_body, 2, rest, &exits)?;

    b.switch_to_block(rest);
    let params = b.block_params(rest).to_vec();
    let (j, accs) = (params[0], &params[1..]);
    let mut g = VGen::bare(b, plan);
    let (a01, a23) = (
        g.combine(fold, accs[0], accs[1]),
        g.combine(fold, accs[2], accs[3]),
    );
    let both = g.combine(fold, a01, a23);
    let out = if fold == Fold::Add {
        let mut acc = acc;
        for l in 0..plan.lanes as u8 {
            let x = b.ins().extractlane(both, l);
            acc = b.ins().fadd(acc, x);
        }
        acc
    } else {
        // Lane by lane into the accumulator, in vectors so that a choice between `0` and
        // `-0` is seen as in the loop.
        let mut c = g.b.ins().splat(vt, acc);
        for l in 0..plan.lanes as u8 {
            let x = g.b.ins().extractlane(both, l);
            let x = g.b.ins().splat(vt, x);
            c = g.combine(fold, c, x);
        }
        let c = g.b.ins().extractlane(c, 0);
        if let Some(m) = g.bail {
            let any = b.ins().vany_true(m);
            let go = b.create_block();
            b.ins().brif(any, done, &ba(&[from, acc]), go, &[]);
            b.switch_to_block(go);
        }
        c
    };
    b.ins().jump(done, &ba(&[j, out]));

    b.switch_to_block(done);
    let [j, acc] = b.block_params(done)[..] else {
        return Err("internal error: vector fold results".into());
    };
    Ok((j, acc))
}
