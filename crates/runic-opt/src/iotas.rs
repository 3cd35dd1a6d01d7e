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
use runic_ir::*;
use runic_prim::Prim;

/// Indices per chunk: small enough for a worker's cache, large enough that the chunk
/// results are few.
const CHUNK: i64 = 1 << 16;

pub fn chunk_iotas(mut prog: Prog) -> Prog {
    prog.record_types();
    let mut ns = std::mem::take(&mut prog.names);
    for f in &mut prog.funs {
        rewrite_body(&mut f.body, &mut ns);
    }
    prog.names = ns;
    prog
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
        let red = body.stms.remove(k);
        let new = chunked(red, n, range_src, ns);
        body.stms.remove(at);
        let count = new.len();
        body.stms.splice(at..at, new);
        k = at + count;
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

/// The statements replacing the reduction `red` over `iota n`.
fn chunked(red: Stm, n: SubExp, range_src: SrcInfo, ns: &mut NameSource) -> Vec<Stm> {
    let Exp::Soac(Soac::Reduce {
        pre,
        lam,
        neutral,
        commutative,
        ..
    }) = red.exp
    else {
        unreachable!("iota_input accepts reductions only")
    };
    let i64t = Type::Prim(PrimType::I64);
    let src = red.src.clone();
    let mut out = Vec::new();
    let bin = |op, a: SubExp, b: SubExp| Exp::Basic(BasicOp::BinOp(op, a, b));
    let k = SubExp::Const(Prim::I64(CHUNK));
    // iota (min n 0): fails exactly when iota n would, with its message and location.
    let neg = let1(
        ns,
        &mut out,
        "neg",
        i64t.clone(),
        bin(BinOp::Min, n.clone(), SubExp::i64(0)),
        &src,
    );
    let check_ty = i64_array(neg);
    let_range(
        ns,
        &mut out,
        check_ty,
        SubExp::i64(0),
        SubExp::Var(neg),
        &range_src,
    );
    // (n − 1) / K + 1 chunks (one, empty, when n = 0; no overflow near i64's maximum).
    let last = let1(
        ns,
        &mut out,
        "last",
        i64t.clone(),
        bin(BinOp::Sub, n.clone(), SubExp::i64(1)),
        &src,
    );
    let q = let1(
        ns,
        &mut out,
        "q",
        i64t.clone(),
        bin(BinOp::Quot, SubExp::Var(last), k.clone()),
        &src,
    );
    let count = let1(
        ns,
        &mut out,
        "chunks",
        i64t.clone(),
        bin(BinOp::Add, SubExp::Var(q), SubExp::i64(1)),
        &src,
    );
    let js_ty = i64_array(count);
    let js = let_range(
        ns,
        &mut out,
        js_ty,
        SubExp::i64(0),
        SubExp::Var(count),
        &src,
    );
    // The lambda over chunk j: the reduction over lo..<hi.
    let j = ns.fresh_typed("chunk", i64t.clone());
    let mut inner = Vec::new();
    let lo = let1(
        ns,
        &mut inner,
        "lo",
        i64t.clone(),
        bin(BinOp::Mul, SubExp::Var(j), k.clone()),
        &src,
    );
    let end = let1(
        ns,
        &mut inner,
        "end",
        i64t.clone(),
        bin(BinOp::Add, SubExp::Var(lo), k),
        &src,
    );
    let hi = let1(
        ns,
        &mut inner,
        "hi",
        i64t.clone(),
        bin(BinOp::Min, SubExp::Var(end), n),
        &src,
    );
    let len = let1(
        ns,
        &mut inner,
        "len",
        i64t.clone(),
        bin(BinOp::Sub, SubExp::Var(hi), SubExp::Var(lo)),
        &src,
    );
    let is_ty = i64_array(len);
    let is = let_range(
        ns,
        &mut inner,
        is_ty,
        SubExp::Var(lo),
        SubExp::Var(hi),
        &src,
    );
    let part_tys: Vec<Type> = lam.ret.clone();
    let parts: Vec<VName> = part_tys
        .iter()
        .map(|t| ns.fresh_typed("part", t.clone()))
        .collect();
    inner.push(Stm {
        pat: parts
            .iter()
            .zip(&part_tys)
            .map(|(p, t)| Param {
                name: *p,
                ty: t.clone(),
            })
            .collect(),
        exp: Exp::Soac(Soac::Reduce {
            w: SubExp::Var(len),
            arrs: vec![is],
            pre,
            lam: lam.clone(),
            neutral: neutral.clone(),
            commutative,
        }),
        src: src.clone(),
    });
    let per_chunk = Lambda::new(
        vec![Param { name: j, ty: i64t }],
        Body {
            stms: inner,
            result: parts.iter().map(|p| SubExp::Var(*p)).collect(),
        },
        part_tys.clone(),
    );
    let arrays: Vec<(VName, Type)> = part_tys
        .iter()
        .map(|t| {
            let ty = t.array_of(SubExp::Var(count));
            (ns.fresh_typed("parts", ty.clone()), ty)
        })
        .collect();
    out.push(Stm {
        pat: arrays
            .iter()
            .map(|(v, t)| Param {
                name: *v,
                ty: t.clone(),
            })
            .collect(),
        exp: Exp::Soac(Soac::Map {
            w: SubExp::Var(count),
            lam: per_chunk,
            arrs: vec![js],
        }),
        src: src.clone(),
    });
    // The chunks' results, combined in order by a fresh copy of the operator.
    let mut combine = lam;
    walk_lambda_mut(&mut Renamer::new(ns), &mut combine);
    out.push(Stm {
        pat: red.pat,
        exp: Exp::Soac(Soac::Reduce {
            w: SubExp::Var(count),
            arrs: arrays.iter().map(|(v, _)| *v).collect(),
            pre: None,
            lam: combine,
            neutral,
            commutative,
        }),
        src,
    });
    out
}

/// `let v : ty = start ..< end` (step 1, `i64`; written `0 .. 1 ..< end`, iota's form,
/// when `start` is 0).
fn let_range(
    ns: &mut NameSource,
    out: &mut Vec<Stm>,
    ty: Type,
    start: SubExp,
    end: SubExp,
    src: &SrcInfo,
) -> VName {
    let second = (start == SubExp::i64(0)).then(|| SubExp::i64(1));
    let range = BasicOp::Range {
        start,
        second,
        end,
        kind: RangeKind::UpToExclusive,
        elem: PrimType::I64,
    };
    let1(ns, out, "iota", ty, Exp::Basic(range), src)
}

/// `[len]i64`.
fn i64_array(len: VName) -> Type {
    Type::Array {
        elem: PrimType::I64,
        shape: vec![SubExp::Var(len)],
    }
}

/// `let v : ty = exp`, appended to `out`.
fn let1(
    ns: &mut NameSource,
    out: &mut Vec<Stm>,
    hint: &str,
    ty: Type,
    exp: Exp,
    src: &SrcInfo,
) -> VName {
    let v = ns.fresh_typed(hint, ty.clone());
    out.push(Stm {
        pat: vec![Param { name: v, ty }],
        exp,
        src: src.clone(),
    });
    v
}
