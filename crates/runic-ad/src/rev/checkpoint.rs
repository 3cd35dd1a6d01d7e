//! Checkpointing for the loop rule: strip-mining a loop into nested loops, so that reverse
//! mode keeps a tape per level (`k·n^(1/k)` saved states instead of `n`) at the cost of
//! re-running each inner loop once more (seed 003, "loops").

use runic_ir::traverse::{type_mut, Substitute};
use runic_ir::typing::TResult;
use runic_ir::*;
use std::collections::HashMap;

/// Tapes larger than this (the loop-carried state times the iterations) make reverse mode
/// strip-mine a loop that carries arrays.
pub const TAPE_BUDGET_BYTES: i64 = 256 << 20;

/// `#[stripmine(k)]` with `k ≥ 1`, or no hint and a loop that carries an array its tape
/// stores whole (the tape may be large; the chunk size is then chosen at run time). An
/// array the body only updates element by element is restored, not taped
/// ([`super::restore`]), and does not count.
pub(super) fn wants_stripmining(src: &SrcInfo, params: &[(Param, SubExp)], body: &Body) -> bool {
    match src.stripmine {
        Some(k) => k >= 1,
        None => params
            .iter()
            .zip(super::loop_::restore::chains(params, body))
            .any(|((p, _), chain)| p.ty.rank() > 0 && chain.is_none()),
    }
}

/// Strip-mining for checkpointing: `loop p = init for i < n do body` becomes
/// `loop p = init for o < ⌈n/c⌉ do (loop p = p for j < min(c, n - o·c) do body[i := o·c + j])`.
/// Reverse mode then keeps a tape of ⌈n/c⌉ states for the outer loop and, per outer
/// iteration, one of at most `c` states for the inner one (re-running it once more).
/// With `#[stripmine(k)]`, `c = ⌈n^(k/(k+1))⌉` and the inner loop is strip-mined `k - 1` more
/// times (k + 1 loops of about n^(1/(k+1)) iterations). Without a hint, `c = ⌈√n⌉` when
/// the whole tape (the loop-carried state and the body's values the tape stores, per
/// iteration) would exceed [`TAPE_BUDGET_BYTES`], else `c = n` (one outer iteration).
pub(super) fn strip_mine(
    b: &mut Builder,
    pat: Vec<Param>,
    params: Vec<(Param, SubExp)>,
    i: VName,
    bound: SubExp,
    body: Body,
) -> TResult<()> {
    use BinOp::*;
    let i64t = PrimType::I64;
    let src = b.src.clone();
    let it = b.prim_of(&bound).unwrap_or(i64t);
    let n = match it {
        PrimType::I64 => bound,
        _ => b.let_basic("n", BasicOp::Convert(i64t, bound))?,
    };
    let n = bin(b, "n", Max, n, SubExp::i64(0))?;
    let nf = b.let_basic("nf", BasicOp::Convert(PrimType::F64, n.clone()))?;
    let levels = src.stripmine.unwrap_or(0);
    let root = if levels >= 1 {
        let e = SubExp::Const(Prim::F64(levels as f64 / (levels as f64 + 1.0)));
        bin(b, "root", Pow, nf, e)?
    } else {
        b.let_basic("root", BasicOp::UnOp(UnOp::Sqrt, nf))?
    };
    let root = b.let_basic("root", BasicOp::UnOp(UnOp::Ceil, root))?;
    let root = b.let_basic("root", BasicOp::Convert(i64t, root))?;
    let chunk = if levels >= 1 {
        root
    } else {
        // Bytes of state per iteration, from the initial values' shapes.
        let mut state = SubExp::i64(0);
        for (p, init) in &params {
            let t = loop_outside(&params, &p.ty);
            let mut bytes = SubExp::i64(t.elem().map(|e| e.size_bytes() as i64).unwrap_or(8));
            if let (Type::Array { shape, .. }, SubExp::Var(_)) = (&t, init) {
                for d in shape {
                    bytes = bin(b, "bytes", Mul, bytes, d.clone())?;
                }
            }
            state = bin(b, "bytes", Add, state, bytes)?;
        }
        // The values of the body the tape also stores (their sizes are known here).
        for kept in super::loop_::kept_stms(&params, &body) {
            for t in kept.types(&body) {
                let elem = t.elem().map(|e| e.size_bytes() as i64).unwrap_or(8);
                let mut bytes = SubExp::i64(elem);
                if let Type::Array { shape, .. } = &t {
                    for d in shape {
                        bytes = bin(b, "bytes", Mul, bytes, d.clone())?;
                    }
                }
                state = bin(b, "bytes", Add, state, bytes)?;
            }
        }
        let total = bin(b, "tape", Mul, state, n.clone())?;
        let big = bin(b, "big", Gt, total, SubExp::i64(TAPE_BUDGET_BYTES))?;
        let n = n.clone();
        b.let_if("chunk", big, |_| Ok(vec![root]), |_| Ok(vec![n]))?[0].clone()
    };
    let chunk = bin(b, "chunk", Max, chunk, SubExp::i64(1))?;
    let up = bin(b, "m", Add, n.clone(), chunk.clone())?;
    let up = bin(b, "m", Sub, up, SubExp::i64(1))?;
    let outer_n = bin(b, "m", Quot, up, chunk.clone())?;
    // The outer loop's parameters: renamed copies (types follow the renaming).
    let ps = params.iter().map(|(p, _)| p.clone()).collect();
    let outer = b.renamed(&Lambda::new(ps, Body::default(), vec![]));
    let o = b.names.fresh_typed("o", Type::Prim(i64t));
    let j = b.names.fresh_typed("j", Type::Prim(i64t));
    let mut ob = Builder::new(b.names);
    ob.src = src.clone();
    let lo = bin(&mut ob, "lo", Mul, SubExp::Var(o), chunk.clone())?;
    let rest = bin(&mut ob, "rest", Sub, n, lo.clone())?;
    let count = bin(&mut ob, "count", Min, chunk, rest)?;
    // The inner loop: the original parameters, counter and body.
    let inner_body = ob.body_try(|ib| -> TResult<_> {
        let at = bin(ib, "i", Add, lo, SubExp::Var(j))?;
        let at = match it {
            PrimType::I64 => BasicOp::SubExp(at),
            _ => BasicOp::Convert(it, at),
        };
        let iv = Param {
            name: i,
            ty: Type::Prim(it),
        };
        ib.let_pat(vec![iv], Exp::Basic(at));
        for s in body.stms {
            ib.add(s);
        }
        Ok(body.result)
    })?;
    let inner_pat: Vec<Param> = outer
        .params
        .iter()
        .map(|p| ob.param("inner", p.ty.clone()))
        .collect();
    let inner_params = params
        .iter()
        .zip(&outer.params)
        .map(|((p, _), op)| (p.clone(), SubExp::Var(op.name)))
        .collect();
    ob.src.stripmine = Some(levels.saturating_sub(1));
    let inner = Exp::Loop {
        params: inner_params,
        form: LoopForm::For { i: j, bound: count },
        body: inner_body,
    };
    ob.let_pat(inner_pat.clone(), inner);
    let outer_body = ob.finish(inner_pat.iter().map(|p| SubExp::Var(p.name)).collect());
    let outer_params = outer
        .params
        .into_iter()
        .zip(params.into_iter().map(|(_, init)| init))
        .collect();
    b.src.stripmine = Some(0);
    let outer = Exp::Loop {
        params: outer_params,
        form: LoopForm::For {
            i: o,
            bound: outer_n,
        },
        body: outer_body,
    };
    b.let_pat(pat, outer);
    Ok(())
}

/// `let hint = x op y`, not folded (the names say what the sizes are).
fn bin(b: &mut Builder, hint: &str, op: BinOp, x: SubExp, y: SubExp) -> TResult<SubExp> {
    b.let_basic(hint, BasicOp::BinOp(op, x, y))
}

/// A loop parameter's type as seen outside the loop: sizes that are themselves loop
/// parameters are replaced by their initial values (tapes assume shapes that do not change
/// across iterations; a change is a shape error when the tape is written).
pub fn loop_outside(params: &[(Param, SubExp)], t: &Type) -> Type {
    let inits: HashMap<VName, SubExp> = params
        .iter()
        .map(|(p, init)| (p.name, init.clone()))
        .collect();
    let mut t = t.clone();
    type_mut(&mut Substitute(&inits), &mut t);
    t
}
