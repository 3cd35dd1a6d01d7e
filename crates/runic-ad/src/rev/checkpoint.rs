//! Checkpointing for the loop rule: strip-mining a loop into nested loops, so that reverse
//! mode keeps a tape per level (`k·n^(1/k)` saved states instead of `n`) at the cost of
//! re-running each inner loop once more (seed 003, "loops").

use runic_ir::traverse::{Renamer, VisitorMut};
use runic_ir::*;
use std::collections::HashMap;

/// Tapes larger than this (the loop-carried state times the iterations) make reverse mode
/// strip-mine a loop that carries arrays.
pub const TAPE_BUDGET_BYTES: i64 = 256 << 20;

/// `#[stripmine(k)]` with `k ≥ 1`, or no hint and a loop that carries an array (whose tape
/// may be large; the chunk size is then chosen at run time).
pub(super) fn wants_stripmining(src: &SrcInfo, params: &[(Param, SubExp)]) -> bool {
    match src.stripmine {
        Some(k) => k >= 1,
        None => params.iter().any(|(p, _)| p.ty.rank() > 0),
    }
}

/// Strip-mining for checkpointing: `loop p = init for i < n do body` becomes
/// `loop p = init for o < ⌈n/c⌉ do (loop p = p for j < min(c, n - o·c) do body[i := o·c + j])`.
/// Reverse mode then keeps a tape of ⌈n/c⌉ states for the outer loop and, per outer
/// iteration, one of at most `c` states for the inner one (re-running it once more).
/// With `#[stripmine(k)]`, `c = ⌈n^(k/(k+1))⌉` and the inner loop is strip-mined `k - 1` more
/// times (k + 1 loops of about n^(1/(k+1)) iterations). Without a hint, `c = ⌈√n⌉` when
/// the whole tape would exceed [`TAPE_BUDGET_BYTES`], else `c = n` (one outer iteration).
#[allow(clippy::too_many_arguments)]
pub(super) fn strip_mine(
    names: &mut NameSource,
    pat: Vec<Param>,
    src: &SrcInfo,
    params: Vec<(Param, SubExp)>,
    i: VName,
    bound: SubExp,
    body: Body,
) -> Vec<Stm> {
    let i64t = PrimType::I64;
    let f64t = PrimType::F64;
    let mut out: Vec<Stm> = Vec::new();
    // `let v: t = exp` appended to a list of statements, `v` a fresh name of the hint.
    macro_rules! scalar {
        ($out:expr, $hint:expr, $t:expr, $exp:expr) => {{
            let p = Param {
                name: names.fresh($hint),
                ty: Type::Prim($t),
            };
            names.set_type(p.name, p.ty.clone());
            $out.push(Stm {
                pat: vec![p.clone()],
                exp: Exp::Basic($exp),
                src: src.clone(),
            });
            SubExp::Var(p.name)
        }};
    }
    let it = match &bound {
        SubExp::Const(c) => c.ty(),
        SubExp::Var(v) => names.type_of(*v).and_then(Type::elem).unwrap_or(i64t),
    };
    let n = if it == i64t {
        bound.clone()
    } else {
        scalar!(out, "n", i64t, BasicOp::Convert(i64t, bound.clone()))
    };
    let n = scalar!(
        out,
        "n",
        i64t,
        BasicOp::BinOp(BinOp::Max, n, SubExp::i64(0))
    );
    let nf = scalar!(out, "nf", f64t, BasicOp::Convert(f64t, n.clone()));
    let levels = src.stripmine.unwrap_or(0);
    let root = if levels >= 1 {
        let e = levels as f64 / (levels as f64 + 1.0);
        scalar!(
            out,
            "root",
            f64t,
            BasicOp::BinOp(BinOp::Pow, nf, SubExp::Const(Prim::F64(e)))
        )
    } else {
        scalar!(out, "root", f64t, BasicOp::UnOp(UnOp::Sqrt, nf))
    };
    let root = scalar!(out, "root", f64t, BasicOp::UnOp(UnOp::Ceil, root));
    let root = scalar!(out, "root", i64t, BasicOp::Convert(i64t, root));
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
                    bytes = scalar!(
                        out,
                        "bytes",
                        i64t,
                        BasicOp::BinOp(BinOp::Mul, bytes, d.clone())
                    );
                }
            }
            state = scalar!(out, "bytes", i64t, BasicOp::BinOp(BinOp::Add, state, bytes));
        }
        let total = scalar!(
            out,
            "tape",
            i64t,
            BasicOp::BinOp(BinOp::Mul, state, n.clone())
        );
        let big = scalar!(
            out,
            "big",
            PrimType::Bool,
            BasicOp::BinOp(BinOp::Gt, total, SubExp::i64(TAPE_BUDGET_BYTES))
        );
        let c = Param {
            name: names.fresh("chunk"),
            ty: Type::Prim(i64t),
        };
        names.set_type(c.name, c.ty.clone());
        out.push(Stm {
            pat: vec![c.clone()],
            exp: Exp::If {
                cond: big,
                then_body: Body {
                    stms: vec![],
                    result: vec![root],
                },
                else_body: Body {
                    stms: vec![],
                    result: vec![n.clone()],
                },
                ret: vec![Type::Prim(i64t)],
            },
            src: src.clone(),
        });
        SubExp::Var(c.name)
    };
    let chunk = scalar!(
        out,
        "chunk",
        i64t,
        BasicOp::BinOp(BinOp::Max, chunk, SubExp::i64(1))
    );
    let up = scalar!(
        out,
        "m",
        i64t,
        BasicOp::BinOp(BinOp::Add, n.clone(), chunk.clone())
    );
    let up = scalar!(
        out,
        "m",
        i64t,
        BasicOp::BinOp(BinOp::Sub, up, SubExp::i64(1))
    );
    let outer_n = scalar!(
        out,
        "m",
        i64t,
        BasicOp::BinOp(BinOp::Quot, up, chunk.clone())
    );
    // The outer loop's parameters: renamed copies (types follow the renaming).
    let mut outer = Lambda {
        id: runic_ir::LamId::fresh(),
        params: params.iter().map(|(p, _)| p.clone()).collect(),
        body: Body::default(),
        ret: vec![],
    };
    Renamer {
        names,
        map: HashMap::new(),
    }
    .lambda(&mut outer);
    for p in &outer.params {
        names.set_type(p.name, p.ty.clone());
    }
    let o = names.fresh("o");
    names.set_type(o, Type::Prim(i64t));
    let j = names.fresh("j");
    names.set_type(j, Type::Prim(i64t));
    let mut ob: Vec<Stm> = Vec::new();
    let lo = scalar!(
        ob,
        "lo",
        i64t,
        BasicOp::BinOp(BinOp::Mul, SubExp::Var(o), chunk.clone())
    );
    let rest = scalar!(
        ob,
        "rest",
        i64t,
        BasicOp::BinOp(BinOp::Sub, n.clone(), lo.clone())
    );
    let count = scalar!(
        ob,
        "count",
        i64t,
        BasicOp::BinOp(BinOp::Min, chunk.clone(), rest)
    );
    // The inner loop: the original parameters, counter and body.
    let mut ib: Vec<Stm> = Vec::new();
    let at = scalar!(
        ib,
        "i",
        i64t,
        BasicOp::BinOp(BinOp::Add, lo, SubExp::Var(j))
    );
    let iv = Param {
        name: i,
        ty: Type::Prim(it),
    };
    names.set_type(i, iv.ty.clone());
    ib.push(Stm {
        pat: vec![iv],
        exp: Exp::Basic(if it == i64t {
            BasicOp::SubExp(at)
        } else {
            BasicOp::Convert(it, at)
        }),
        src: src.clone(),
    });
    ib.extend(body.stms);
    let inner_pat: Vec<Param> = outer
        .params
        .iter()
        .map(|p| {
            let q = Param {
                name: names.fresh("inner"),
                ty: p.ty.clone(),
            };
            names.set_type(q.name, q.ty.clone());
            q
        })
        .collect();
    let mut inner_src = src.clone();
    inner_src.stripmine = Some(levels.saturating_sub(1));
    ob.push(Stm {
        pat: inner_pat.clone(),
        exp: Exp::Loop {
            params: params
                .iter()
                .zip(&outer.params)
                .map(|((p, _), op)| (p.clone(), SubExp::Var(op.name)))
                .collect(),
            form: LoopForm::For { i: j, bound: count },
            body: Body {
                stms: ib,
                result: body.result,
            },
        },
        src: inner_src,
    });
    let mut outer_src = src.clone();
    outer_src.stripmine = Some(0);
    out.push(Stm {
        pat,
        exp: Exp::Loop {
            params: outer
                .params
                .into_iter()
                .zip(params.iter().map(|(_, init)| init.clone()))
                .collect(),
            form: LoopForm::For {
                i: o,
                bound: outer_n,
            },
            body: Body {
                stms: ob,
                result: inner_pat.iter().map(|p| SubExp::Var(p.name)).collect(),
            },
        },
        src: outer_src,
    });
    out
}

/// A loop parameter's type as seen outside the loop: sizes that are themselves loop
/// parameters are replaced by their initial values (tapes assume shapes that do not change
/// across iterations; a change is a shape error when the tape is written).
pub fn loop_outside(params: &[(Param, SubExp)], t: &Type) -> Type {
    let Type::Array { elem, shape } = t else {
        return t.clone();
    };
    let shape = shape
        .iter()
        .map(|d| match d {
            SubExp::Var(v) => params
                .iter()
                .find(|(p, _)| p.name == *v)
                .map(|(_, init)| init.clone())
                .unwrap_or_else(|| d.clone()),
            c => c.clone(),
        })
        .collect();
    Type::Array { elem: *elem, shape }
}
