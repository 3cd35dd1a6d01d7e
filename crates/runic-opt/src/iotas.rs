//! Chunked iotas: a reduction over `iota n` and nothing else never builds the iota.
//!
//! ```text
//! let is = iota n                     let check = iota (min n 0)     -- iota's error, if any
//! reduce op ne (map f is)       ⇒     let parts = map (\j -> let lo = j·K
//!                                                       let hi = min (lo + K) n
//!                                                       in reduce op ne (map f (lo..<hi)))
//!                                                     (iota ((n − 1) / K + 1))
//!                                     reduce op ne parts
//! ```
//!
//! Each chunk's range of `K` indices lives in a worker's scratch memory, so the reduction
//! allocates nothing proportional to `n` (`iota 11264000000 |> reduce (+) 0` runs instead of
//! failing to allocate 90 GB) and reads no index from memory. The operator is associative
//! (a reduction's contract), so combining chunk results is the reduction itself; chunks are
//! combined in order, so a non-commutative operator is respected. `iota (min n 0)` keeps a
//! negative `n`'s error, message and location unchanged.

use runic_ir::traverse::{uses, walk_lambda_mut, Renamer};
use runic_ir::typing::TResult;
use runic_ir::*;

/// Indices per chunk: small enough for a worker's cache, large enough that the chunk
/// results are few.
const CHUNK: i64 = 1 << 16;

pub fn chunk_iotas(prog: Prog) -> Prog {
    crate::rewrite_bodies(prog, rewrite_body)
}

/// Rewrites the reductions over an iota among the top-level statements of `body` (inside
/// kernels, an iota is already scratch memory).
fn rewrite_body(body: &mut Body, ns: &mut NameSource) {
    let mut k = 0;
    while k < body.stms.len() {
        let Some((at, n)) = iota_input(body, k) else {
            k += 1;
            continue;
        };
        let range_src = body.stms[at].src.clone();
        let Ok((check, new)) = chunked(&body.stms[k], n, range_src, ns) else {
            k += 1;
            continue;
        };
        // The iota's check where the iota was; the chunks where the reduction was (it may
        // read what the statements between them bind).
        let count = new.len();
        body.stms.splice(k..=k, new);
        let checks = check.len();
        body.stms.splice(at..=at, check);
        k += count + checks - 1;
    }
}

/// The position of the `iota n` that statement `k` reduces over, and `n`, when the
/// reduction reads nothing else and nothing else reads the iota.
fn iota_input(body: &Body, k: usize) -> Option<(usize, SubExp)> {
    let Exp::Soac(Soac::Reduce {
        w, arrs, lam, pre, ..
    }) = &body.stms[k].exp
    else {
        return None;
    };
    let [xs] = arrs.as_slice() else {
        return None;
    };
    if !lam.ret.iter().all(|t| matches!(t, Type::Prim(_)))
        || pre
            .as_ref()
            .is_some_and(|p| !p.ret.iter().all(|t| matches!(t, Type::Prim(_))))
    {
        return None;
    }
    let at = body.stms[..k]
        .iter()
        .position(|s| s.pat.iter().any(|p| p.name == *xs))?;
    let n = runic_ir::traverse::iota_width(&body.stms[at].exp)?;
    let elsewhere = body
        .stms
        .iter()
        .enumerate()
        .any(|(j, s)| j != k && uses(s).contains(xs))
        || uses(&body.result).contains(xs);
    (*w == n && !elsewhere).then_some((at, n))
}

/// The statements replacing the iota (its check) and the reduction `red` over `iota n`.
fn chunked(
    red: &Stm,
    n: SubExp,
    range_src: SrcInfo,
    ns: &mut NameSource,
) -> TResult<(Vec<Stm>, Vec<Stm>)> {
    let Exp::Soac(Soac::Reduce {
        pre,
        lam,
        neutral,
        commutative,
        ..
    }) = &red.exp
    else {
        unreachable!("iota_input accepts reductions only")
    };
    let i64t = Type::Prim(PrimType::I64);
    let k = SubExp::i64(CHUNK);
    let mut b = Builder::new(ns);
    // iota (min n 0): fails exactly when iota n would, with its message and location.
    b.src = range_src;
    let neg = i64_op(&mut b, "neg", BinOp::Min, n.clone(), SubExp::i64(0));
    b.iota(neg);
    let check = b.take_stms();
    b.src = red.src.clone();
    // ⌊(n − 1) / K⌋ + 1 chunks: none when n = 0 (floor division), so an empty iota reduces to
    // the neutral element without one application of the operator; no overflow near i64's
    // maximum, as ⌈n / K⌉ written (n + K − 1) / K would have.
    let last = i64_op(&mut b, "last", BinOp::Sub, n.clone(), SubExp::i64(1));
    let q = i64_op(&mut b, "q", BinOp::Div, last, k.clone());
    let count = i64_op(&mut b, "chunks", BinOp::Add, q, SubExp::i64(1));
    let chunks = b.iota(count.clone());
    // Chunk j: the reduction over lo ..< hi.
    let per_chunk = b.lam(
        vec![("chunk", i64t.clone())],
        |b, j| -> TResult<Vec<SubExp>> {
            let lo = i64_op(b, "lo", BinOp::Mul, j[0].clone(), k.clone());
            let end = i64_op(b, "end", BinOp::Add, lo.clone(), k);
            let hi = i64_op(b, "hi", BinOp::Min, end, n);
            let len = i64_op(b, "len", BinOp::Sub, hi.clone(), lo.clone());
            let range = BasicOp::Range {
                start: lo,
                second: None,
                end: hi,
                kind: RangeKind::UpToExclusive,
                elem: PrimType::I64,
            };
            let is = b.bind1("iota", Exp::Basic(range), i64t.array_of(len.clone()));
            let part = Exp::Soac(Soac::Reduce {
                w: len,
                arrs: vec![is],
                pre: pre.clone(),
                lam: lam.clone(),
                neutral: neutral.clone(),
                commutative: *commutative,
            });
            Ok(b.let_exp("part", part)?
                .into_iter()
                .map(SubExp::Var)
                .collect())
        },
    )?;
    let parts = b.map("parts", count.clone(), per_chunk, vec![chunks])?;
    // The chunks' results, combined in order by a fresh copy of the operator; one chunk's
    // result is the reduction's (so `n ≤ K` applies the operator exactly as the reduction
    // over the iota would, even one whose neutral element is not neutral).
    let mut combine = lam.clone();
    walk_lambda_mut(&mut Renamer::new(b.names), &mut combine);
    let one = b.op2(BinOp::Eq, count.clone(), SubExp::i64(1))?;
    let results = b.let_if(
        "whole",
        one,
        |b| -> TResult<_> {
            let mut firsts = Vec::new();
            for p in &parts {
                firsts.push(b.let_basic(
                    "first",
                    BasicOp::Index(*p, vec![DimIndex::Fix(SubExp::i64(0))]),
                )?);
            }
            Ok(firsts)
        },
        |b| -> TResult<_> {
            let whole = Exp::Soac(Soac::Reduce {
                w: count.clone(),
                arrs: parts.clone(),
                pre: None,
                lam: combine,
                neutral: neutral.clone(),
                commutative: *commutative,
            });
            Ok(b.let_exp("whole", whole)?
                .into_iter()
                .map(SubExp::Var)
                .collect())
        },
    )?;
    for (p, r) in red.pat.iter().zip(results) {
        b.let_pat(vec![p.clone()], Exp::Basic(BasicOp::SubExp(r)));
    }
    Ok((check, b.take_stms()))
}

/// `let hint = a op c` at `i64` (sizes and indices), named for readers of the IR.
fn i64_op(b: &mut Builder, hint: &str, op: BinOp, a: SubExp, c: SubExp) -> SubExp {
    b.basic(hint, BasicOp::BinOp(op, a, c), Type::Prim(PrimType::I64))
}
