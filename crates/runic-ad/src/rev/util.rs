//! Building blocks shared by the reverse-mode rules: adding adjoints, accumulator updates,
//! maps over index ranges, reversing arrays, inlining lambdas, and recognising simple
//! operators.

use super::{Rev, R};
use crate::error::AdError;
use runic_ir::builder::binop_type;
use runic_ir::traverse::{Renamer, VisitorMut};
use runic_ir::*;
use std::collections::HashMap;

pub fn copy_stm(p: Param, s: SubExp, src: &SrcInfo) -> Stm {
    Stm {
        pat: vec![p],
        exp: Exp::Basic(BasicOp::SubExp(s)),
        src: src.clone(),
    }
}

/// The arrays `e` updates in place.
fn consumed_mut(e: &mut Exp) -> Vec<&mut VName> {
    match e {
        Exp::Basic(BasicOp::Update(arr, _, _)) => vec![arr],
        Exp::Soac(Soac::Scatter { dests, .. }) | Exp::Soac(Soac::Hist { dests, .. }) => {
            dests.iter_mut().collect()
        }
        _ => Vec::new(),
    }
}

/// `s` with every array it updates in place replaced by a fresh copy (emitted into `b`):
/// the return sweep may still read the original.
pub fn copy_consumed(rev: &mut Rev, b: &mut Builder, mut s: Stm) -> Stm {
    for v in consumed_mut(&mut s.exp) {
        let Some(ty) = b.names.type_of(*v).cloned() else {
            continue;
        };
        let c = rev.bind(b, "copy", Exp::Basic(BasicOp::Copy(*v)), ty);
        *v = c;
    }
    s
}

/// Rewrite a statement into the forms the rules handle: a reduce or scan with a fused
/// `pre` map becomes the map followed by the plain SOAC; a SOAC with a vectorised operator
/// becomes a map of scalar SOACs (`transposed`); a loop that wants it is strip-mined.
pub fn normalise(names: &mut NameSource, mut s: Stm) -> Vec<Stm> {
    if let Exp::Soac(Soac::Reduce { w, arrs, pre, .. } | Soac::Scan { w, arrs, pre, .. }) =
        &mut s.exp
    {
        if let Some(p) = pre.take() {
            let (map, plain) = pre_map(names, w, std::mem::take(arrs), p, &s.src);
            *arrs = plain;
            return vec![map, s];
        }
    }
    let inner = match &s.exp {
        Exp::Soac(Soac::Reduce { lam, .. } | Soac::Scan { lam, .. }) => vectorised(lam),
        Exp::Soac(Soac::Hist { lam, is, .. }) if is.len() == 1 => vectorised(lam),
        _ => None,
    };
    let (pat, src) = (s.pat, s.src);
    match (s.exp, inner) {
        (
            Exp::Soac(Soac::Reduce {
                w, arrs, neutral, ..
            }),
            Some(inner),
        ) => transposed(names, pat, &src, w, arrs, inner, neutral, Kind::Reduce),
        (
            Exp::Soac(Soac::Scan {
                w, arrs, neutral, ..
            }),
            Some(inner),
        ) => transposed(names, pat, &src, w, arrs, inner, neutral, Kind::Scan),
        (
            Exp::Soac(Soac::Hist {
                w,
                dests,
                neutral,
                is,
                vals,
                ..
            }),
            Some(inner),
        ) => transposed_hist(names, pat, &src, w, dests, inner, neutral, is, vals),
        (
            Exp::Loop {
                params,
                form: LoopForm::For { i, bound },
                body,
            },
            _,
        ) if wants_stripmining(&src, &params) => {
            strip_mine(names, pat, &src, params, i, bound, body)
        }
        (exp, _) => vec![Stm { pat, exp, src }],
    }
}

/// Tapes larger than this (the loop-carried state times the iterations) make reverse mode
/// strip-mine a loop that carries arrays.
pub const TAPE_BUDGET_BYTES: i64 = 256 << 20;

/// `#[stripmine(k)]` with `k ≥ 1`, or no hint and a loop that carries an array (whose tape
/// may be large; the chunk size is then chosen at run time).
fn wants_stripmining(src: &SrcInfo, params: &[(Param, SubExp)]) -> bool {
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
fn strip_mine(
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

/// `reduce_by_index d (map2 f) ne is vs` = `transpose (map (\dc vc ne -> reduce_by_index dc f
/// ne is vc) (transpose d) (transpose vs) ne)`: a map of scalar histograms, one per column,
/// so the rules for scalar operators apply.
#[allow(clippy::too_many_arguments)]
fn transposed_hist(
    names: &mut NameSource,
    pat: Vec<Param>,
    src: &SrcInfo,
    w: SubExp,
    dests: Vec<VName>,
    inner: Lambda,
    neutral: Vec<SubExp>,
    is: Vec<VName>,
    vals: Vec<VName>,
) -> Vec<Stm> {
    let mut out = Vec::new();
    let fresh = |names: &mut NameSource, hint: &str, ty: Type| {
        let p = Param {
            name: names.fresh(hint),
            ty,
        };
        names.set_type(p.name, p.ty.clone());
        p
    };
    let mut transpose = |names: &mut NameSource, a: VName| {
        let at = names
            .type_of(a)
            .cloned()
            .unwrap_or(Type::Prim(PrimType::Bool));
        let p = fresh(names, "tr", transpose_type(&at));
        out.push(Stm {
            pat: vec![p.clone()],
            exp: Exp::Basic(BasicOp::Rearrange(swap_outer(at.rank()), a)),
            src: src.clone(),
        });
        p
    };
    let dt: Vec<Param> = dests.iter().map(|d| transpose(names, *d)).collect();
    let vt: Vec<Param> = vals.iter().map(|v| transpose(names, *v)).collect();
    let m = match &dt[0].ty {
        Type::Array { shape, .. } => shape[0].clone(),
        _ => SubExp::i64(0),
    };
    let dcols: Vec<Param> = dt
        .iter()
        .map(|d| fresh(names, "dcol", d.ty.row()))
        .collect();
    let vcols: Vec<Param> = vt
        .iter()
        .map(|v| fresh(names, "vcol", v.ty.row()))
        .collect();
    let mut ne_params = Vec::new();
    let mut ne_arrs = Vec::new();
    for (ne, d) in neutral.iter().zip(&dt) {
        let p = fresh(names, "ne", d.ty.row().row());
        ne_params.push(p);
        match ne {
            SubExp::Var(v) => ne_arrs.push(*v),
            SubExp::Const(c) => {
                let r = fresh(names, "ne", Type::Prim(c.ty()).array_of(m.clone()));
                out.push(Stm {
                    pat: vec![r.clone()],
                    exp: Exp::Basic(BasicOp::Replicate(vec![m.clone()], SubExp::Const(*c))),
                    src: src.clone(),
                });
                ne_arrs.push(r.name);
            }
        }
    }
    let mut inner = inner;
    Renamer {
        names,
        map: HashMap::new(),
    }
    .lambda(&mut inner);
    names.record_types(&inner);
    let res: Vec<Param> = dcols
        .iter()
        .map(|d| fresh(names, "h", d.ty.clone()))
        .collect();
    let body = Body {
        stms: vec![Stm {
            pat: res.clone(),
            exp: Exp::Soac(Soac::Hist {
                w,
                dests: dcols.iter().map(|p| p.name).collect(),
                lam: inner,
                neutral: ne_params.iter().map(|p| SubExp::Var(p.name)).collect(),
                is,
                vals: vcols.iter().map(|p| p.name).collect(),
            }),
            src: src.clone(),
        }],
        result: res.iter().map(|p| SubExp::Var(p.name)).collect(),
    };
    let ret: Vec<Type> = res.iter().map(|p| p.ty.clone()).collect();
    let mut params = dcols;
    params.extend(vcols);
    params.extend(ne_params);
    let mut arrs: Vec<VName> = dt.iter().map(|p| p.name).collect();
    arrs.extend(vt.iter().map(|p| p.name));
    arrs.extend(ne_arrs);
    let tmp: Vec<Param> = ret
        .iter()
        .map(|t| fresh(names, "hists", t.array_of(m.clone())))
        .collect();
    out.push(Stm {
        pat: tmp.clone(),
        exp: Exp::Soac(Soac::Map {
            w: m,
            lam: Lambda {
                id: runic_ir::LamId::fresh(),
                params,
                body,
                ret,
            },
            arrs,
        }),
        src: src.clone(),
    });
    for (p, t) in pat.into_iter().zip(tmp) {
        let rank = t.ty.rank();
        out.push(Stm {
            pat: vec![p],
            exp: Exp::Basic(BasicOp::Rearrange(swap_outer(rank), t.name)),
            src: src.clone(),
        });
    }
    out
}

/// The element operator `f` of a vectorised operator `\xs ys -> map f xs ys` (parameters
/// passed to the map in order).
fn vectorised(lam: &Lambda) -> Option<Lambda> {
    let [s] = lam.body.stms.as_slice() else {
        return None;
    };
    let Exp::Soac(Soac::Map {
        lam: inner, arrs, ..
    }) = &s.exp
    else {
        return None;
    };
    let params: Vec<VName> = lam.params.iter().map(|p| p.name).collect();
    let results: Vec<SubExp> = s.pat.iter().map(|p| SubExp::Var(p.name)).collect();
    (lam.params.iter().all(|p| p.ty.rank() >= 1) && *arrs == params && lam.body.result == results)
        .then(|| inner.clone())
}

enum Kind {
    Reduce,
    Scan,
}

/// Permute the two outer dimensions.
fn swap_outer(rank: usize) -> Vec<usize> {
    let mut p: Vec<usize> = (0..rank).collect();
    p.swap(0, 1);
    p
}

fn transpose_type(t: &Type) -> Type {
    match t {
        Type::Array { elem, shape } if shape.len() >= 2 => {
            let mut s = shape.clone();
            s.swap(0, 1);
            Type::Array {
                elem: *elem,
                shape: s,
            }
        }
        t => t.clone(),
    }
}

/// `reduce (map2 f) ne xss` = `map (\col ne -> reduce f ne col) (transpose xss) ne` (IRWIM)
/// and `scan (map2 f) ne xss` = `transpose (map (\col ne -> scan f ne col) (transpose xss)
/// ne)` (ISWIM): the rules for operators on scalars then apply per column.
#[allow(clippy::too_many_arguments)]
fn transposed(
    names: &mut NameSource,
    pat: Vec<Param>,
    src: &SrcInfo,
    w: SubExp,
    arrs: Vec<VName>,
    inner: Lambda,
    neutral: Vec<SubExp>,
    kind: Kind,
) -> Vec<Stm> {
    let mut out = Vec::new();
    let fresh = |names: &mut NameSource, hint: &str, ty: Type| {
        let p = Param {
            name: names.fresh(hint),
            ty,
        };
        names.set_type(p.name, p.ty.clone());
        p
    };
    let mut cols = Vec::new();
    for a in &arrs {
        let at = names
            .type_of(*a)
            .cloned()
            .unwrap_or(Type::Prim(PrimType::Bool));
        let tt = transpose_type(&at);
        let p = fresh(names, "tr", tt);
        out.push(Stm {
            pat: vec![p.clone()],
            exp: Exp::Basic(BasicOp::Rearrange(swap_outer(at.rank()), *a)),
            src: src.clone(),
        });
        cols.push(p);
    }
    let m = match &cols[0].ty {
        Type::Array { shape, .. } => shape[0].clone(),
        _ => SubExp::i64(0),
    };
    // The map's lambda: one column and one neutral element per operand.
    let mut params = Vec::new();
    for c in &cols {
        params.push(fresh(names, "col", c.ty.row()));
    }
    let mut nes = Vec::new();
    for (ne, c) in neutral.iter().zip(&cols) {
        let row_t = c.ty.row().row();
        let p = fresh(names, "ne", row_t);
        nes.push((p, ne.clone()));
    }
    let mut inner = inner;
    Renamer {
        names,
        map: HashMap::new(),
    }
    .lambda(&mut inner);
    names.record_types(&inner);
    let col_arrs: Vec<VName> = params.iter().map(|p| p.name).collect();
    let ne_vals: Vec<SubExp> = nes.iter().map(|(p, _)| SubExp::Var(p.name)).collect();
    let (soac, res_tys): (Soac, Vec<Type>) = match kind {
        Kind::Reduce => (
            Soac::Reduce {
                w: w.clone(),
                arrs: col_arrs,
                pre: None,
                lam: inner.clone(),
                neutral: ne_vals,
                commutative: false,
            },
            inner.ret.clone(),
        ),
        Kind::Scan => (
            Soac::Scan {
                w: w.clone(),
                arrs: col_arrs,
                pre: None,
                lam: inner.clone(),
                neutral: ne_vals,
            },
            inner.ret.iter().map(|t| t.array_of(w.clone())).collect(),
        ),
    };
    let res: Vec<Param> = res_tys
        .iter()
        .map(|t| fresh(names, "r", t.clone()))
        .collect();
    let body = Body {
        stms: vec![Stm {
            pat: res.clone(),
            exp: Exp::Soac(soac),
            src: src.clone(),
        }],
        result: res.iter().map(|p| SubExp::Var(p.name)).collect(),
    };
    let mut lam_params = params;
    let mut map_arrs: Vec<VName> = cols.iter().map(|c| c.name).collect();
    for (p, ne) in nes {
        lam_params.push(p);
        // A neutral element that is not a variable is replicated into one.
        let v = match ne {
            SubExp::Var(v) => v,
            SubExp::Const(c) => {
                let r = fresh(names, "ne", Type::Prim(c.ty()).array_of(m.clone()));
                out.push(Stm {
                    pat: vec![r.clone()],
                    exp: Exp::Basic(BasicOp::Replicate(vec![m.clone()], SubExp::Const(c))),
                    src: src.clone(),
                });
                r.name
            }
        };
        map_arrs.push(v);
    }
    let lam = Lambda {
        id: runic_ir::LamId::fresh(),
        params: lam_params,
        body,
        ret: res_tys.clone(),
    };
    let map_exp = Exp::Soac(Soac::Map {
        w: m.clone(),
        lam,
        arrs: map_arrs,
    });
    match kind {
        Kind::Reduce => out.push(Stm {
            pat,
            exp: map_exp,
            src: src.clone(),
        }),
        Kind::Scan => {
            let tmp: Vec<Param> = res_tys
                .iter()
                .map(|t| fresh(names, "scanned", t.array_of(m.clone())))
                .collect();
            out.push(Stm {
                pat: tmp.clone(),
                exp: map_exp,
                src: src.clone(),
            });
            for (p, t) in pat.into_iter().zip(tmp) {
                let rank = t.ty.rank();
                out.push(Stm {
                    pat: vec![p],
                    exp: Exp::Basic(BasicOp::Rearrange(swap_outer(rank), t.name)),
                    src: src.clone(),
                });
            }
        }
    }
    out
}

fn pre_map(
    names: &mut NameSource,
    w: &SubExp,
    arrs: Vec<VName>,
    pre: Lambda,
    src: &SrcInfo,
) -> (Stm, Vec<VName>) {
    let pat: Vec<Param> = pre
        .ret
        .iter()
        .map(|t| {
            let ty = t.array_of(w.clone());
            let p = Param {
                name: names.fresh("pre"),
                ty,
            };
            names.set_type(p.name, p.ty.clone());
            p
        })
        .collect();
    let out = pat.iter().map(|p| p.name).collect();
    (
        Stm {
            pat,
            exp: Exp::Soac(Soac::Map {
                w: w.clone(),
                lam: pre,
                arrs,
            }),
            src: src.clone(),
        },
        out,
    )
}

/// `a + c` for adjoints of type `ty` (elementwise for arrays, into a fresh array).
pub fn add_values(rev: &mut Rev, b: &mut Builder, ty: &Type, a: SubExp, c: SubExp) -> R<SubExp> {
    match ty {
        Type::Prim(t) => Ok(add_scalars(rev, b, *t, a, c)),
        Type::Array { .. } => {
            let (SubExp::Var(av), SubExp::Var(cv)) = (&a, &c) else {
                return Err(AdError::internal("array adjoints must be variables"));
            };
            Ok(SubExp::Var(add_arrays(rev, b, ty, *av, *cv)))
        }
        Type::Acc { .. } => Err(AdError::unsupported("adjoints of accumulators")),
    }
}

pub fn add_scalars(rev: &mut Rev, b: &mut Builder, t: PrimType, a: SubExp, c: SubExp) -> SubExp {
    let op = if t == PrimType::Bool {
        BinOp::LogOr
    } else {
        BinOp::Add
    };
    let r = b.binop(op, a, c, t);
    if let SubExp::Var(v) = &r {
        b.names.set_type(*v, Type::Prim(binop_type(op, t)));
    }
    r
}

/// Elementwise sum of two arrays of type `ty` (nested maps, one per dimension).
fn add_arrays(rev: &mut Rev, b: &mut Builder, ty: &Type, a: VName, c: VName) -> VName {
    let Type::Array { elem, shape } = ty else {
        return a;
    };
    let row = ty.row();
    let x = rev.fresh_param(b, "x", &row);
    let y = rev.fresh_param(b, "y", &row);
    let mut sb = Builder::new(b.names);
    sb.src = b.src.clone();
    let r = match &row {
        Type::Prim(_) => add_scalars(
            rev,
            &mut sb,
            *elem,
            SubExp::Var(x.name),
            SubExp::Var(y.name),
        ),
        _ => SubExp::Var(add_arrays(rev, &mut sb, &row, x.name, y.name)),
    };
    let body = sb.finish(vec![r]);
    let lam = Lambda {
        id: runic_ir::LamId::fresh(),
        params: vec![x, y],
        body,
        ret: vec![row],
    };
    rev.bind(
        b,
        "adj",
        Exp::Soac(Soac::Map {
            w: shape[0].clone(),
            lam,
            arrs: vec![a, c],
        }),
        ty.clone(),
    )
}

/// `acc[is ++ j…] += c[j…]` for every element of `c` (a scalar, or an array written at
/// every index below `is`), through the accumulator `acc`.
pub fn acc_add_all(
    rev: &mut Rev,
    b: &mut Builder,
    acc: VName,
    is: Vec<SubExp>,
    c: SubExp,
) -> R<()> {
    let acc_ty = b.type_of(&SubExp::Var(acc))?;
    let cty = b.type_of(&c)?;
    match &cty {
        Type::Prim(_) => {
            rev.bind(
                b,
                "acc",
                Exp::Basic(BasicOp::UpdateAcc {
                    acc,
                    is,
                    vals: vec![c],
                }),
                acc_ty,
            );
            Ok(())
        }
        Type::Array { shape, .. } => {
            let SubExp::Var(cv) = c else {
                return Err(AdError::internal("array adjoints must be variables"));
            };
            let n = shape[0].clone();
            let iota = iota(rev, b, n.clone());
            let j = rev.fresh_param(b, "j", &Type::Prim(PrimType::I64));
            let row = rev.fresh_param(b, "row", &cty.row());
            let mut sb = Builder::new(b.names);
            sb.src = b.src.clone();
            let mut is2 = is;
            is2.push(SubExp::Var(j.name));
            acc_add_all(rev, &mut sb, acc, is2, SubExp::Var(row.name))?;
            let body = sb.finish(vec![SubExp::Var(j.name)]);
            let i64t = Type::Prim(PrimType::I64);
            rev.bind(
                b,
                "done",
                Exp::Soac(Soac::Map {
                    w: n.clone(),
                    lam: Lambda {
                        id: runic_ir::LamId::fresh(),
                        params: vec![j, row],
                        body,
                        ret: vec![i64t.clone()],
                    },
                    arrs: vec![iota, cv],
                }),
                i64t.array_of(n),
            );
            Ok(())
        }
        Type::Acc { .. } => Err(AdError::unsupported("adjoints of accumulators")),
    }
}

/// `iota n` (an `i64` array).
pub fn iota(rev: &mut Rev, b: &mut Builder, n: SubExp) -> VName {
    let ty = Type::Prim(PrimType::I64).array_of(n.clone());
    rev.bind(
        b,
        "iota",
        Exp::Basic(BasicOp::Range {
            start: SubExp::i64(0),
            second: Some(SubExp::i64(1)),
            end: n,
            kind: RangeKind::UpToExclusive,
            elem: PrimType::I64,
        }),
        ty,
    )
}

/// A `map` of a lambda built by `f` (given the parameters) over `arrs`; returns the result
/// arrays.
pub fn map(
    rev: &mut Rev,
    b: &mut Builder,
    w: &SubExp,
    arrs: Vec<VName>,
    ret: Vec<Type>,
    f: impl FnOnce(&mut Rev, &mut Builder, &[VName]) -> R<Vec<SubExp>>,
) -> R<Vec<VName>> {
    let mut params = Vec::new();
    for a in &arrs {
        let t = b.type_of(&SubExp::Var(*a))?.row();
        params.push(rev.fresh_param(b, "x", &t));
    }
    let names: Vec<VName> = params.iter().map(|p| p.name).collect();
    let mut sb = Builder::new(b.names);
    sb.src = b.src.clone();
    let res = f(rev, &mut sb, &names)?;
    let body = sb.finish(res);
    let tys: Vec<Type> = ret.iter().map(|t| t.array_of(w.clone())).collect();
    Ok(rev.bind_many(
        b,
        "m",
        Exp::Soac(Soac::Map {
            w: w.clone(),
            lam: Lambda {
                id: runic_ir::LamId::fresh(),
                params,
                body,
                ret,
            },
            arrs,
        }),
        tys,
    ))
}

/// The rows of `arr` (outer size `w`) in reverse order (`arr[::-1]`, as `reverse`).
pub fn reverse(rev: &mut Rev, b: &mut Builder, w: &SubExp, arr: VName) -> R<VName> {
    let t = b.type_of(&SubExp::Var(arr))?;
    let Type::Array { elem, shape } = t else {
        return Err(AdError::internal("reversing a non-array"));
    };
    let mut shape = shape;
    shape[0] = w.clone();
    let idx = vec![DimIndex::Slice {
        start: None,
        end: None,
        stride: Some(SubExp::i64(-1)),
    }];
    Ok(rev.bind(
        b,
        "rev",
        Exp::Basic(BasicOp::Index(arr, idx)),
        Type::Array { elem, shape },
    ))
}

/// Inline a renamed copy of `lam` applied to `args`; its results.
pub fn apply(rev: &mut Rev, b: &mut Builder, lam: &Lambda, args: &[SubExp]) -> Vec<SubExp> {
    let l = rev.renamed(b, lam);
    let src = b.src.clone();
    for (p, a) in l.params.iter().zip(args) {
        b.add(copy_stm(p.clone(), a.clone(), &src));
    }
    for s in l.body.stms {
        b.add(s);
    }
    l.body.result
}

pub use crate::scope::simple_binop;

/// `if c then a else b` on scalars of type `t`.
pub fn select(
    rev: &mut Rev,
    b: &mut Builder,
    t: PrimType,
    c: SubExp,
    x: SubExp,
    y: SubExp,
) -> SubExp {
    if let SubExp::Const(Prim::Bool(k)) = c {
        return if k { x } else { y };
    }
    let r = b.if_(
        c,
        vec![Type::Prim(t)],
        |_| vec![x.clone()],
        |_| vec![y.clone()],
    )[0];
    b.names.set_type(r, Type::Prim(t));
    SubExp::Var(r)
}

/// A scalar binary operation, its result's type recorded.
pub fn binop(
    rev: &mut Rev,
    b: &mut Builder,
    op: BinOp,
    x: SubExp,
    y: SubExp,
    t: PrimType,
) -> SubExp {
    let r = b.binop(op, x, y, t);
    if let SubExp::Var(v) = &r {
        b.names.set_type(*v, Type::Prim(binop_type(op, t)));
    }
    r
}

/// `if c then (then_f) else (else_f)` where each branch is built by a closure.
pub fn if_with(
    rev: &mut Rev,
    b: &mut Builder,
    c: SubExp,
    tys: Vec<Type>,
    then_f: impl FnOnce(&mut Rev, &mut Builder) -> R<Vec<SubExp>>,
    else_f: impl FnOnce(&mut Rev, &mut Builder) -> R<Vec<SubExp>>,
) -> R<Vec<SubExp>> {
    let mut tb = Builder::new(b.names);
    tb.src = b.src.clone();
    let tr = then_f(rev, &mut tb)?;
    let then_body = tb.finish(tr);
    let mut eb = Builder::new(b.names);
    eb.src = b.src.clone();
    let er = else_f(rev, &mut eb)?;
    let else_body = eb.finish(er);
    let vs = rev.bind_many(
        b,
        "r",
        Exp::If {
            cond: c,
            then_body,
            else_body,
            ret: tys.clone(),
        },
        tys,
    );
    Ok(vs.into_iter().map(SubExp::Var).collect())
}

/// `map (λj e… i… → if (i…) is a valid bin then f(bin, j, e…) else outside) (iota w) extra…
/// is…` for scalar results, as straight-line code (the bin index is clamped and the result
/// selected, so the executor runs it as a column program); the whole map is guarded by
/// "the destination is not empty", where no index is valid.
#[allow(clippy::too_many_arguments)]
pub fn bin_map(
    rev: &mut Rev,
    b: &mut Builder,
    w: &SubExp,
    extra: Vec<VName>,
    is: &[VName],
    dims: &[SubExp],
    outside: Vec<Prim>,
    f: impl FnOnce(&mut Rev, &mut Builder, Vec<DimIndex>, SubExp, &[VName]) -> R<Vec<SubExp>>,
) -> R<Vec<VName>> {
    let i64t = PrimType::I64;
    let mut size = SubExp::i64(1);
    for d in dims {
        size = binop(rev, b, BinOp::Mul, size, d.clone(), i64t);
    }
    let nonempty = binop(rev, b, BinOp::Gt, size, SubExp::i64(0), i64t);
    let rets: Vec<Type> = outside.iter().map(|p| Type::Prim(p.ty())).collect();
    let arr_tys: Vec<Type> = rets.iter().map(|t| t.array_of(w.clone())).collect();
    let n_extra = extra.len();
    let outs = if_with(
        rev,
        b,
        nonempty,
        arr_tys,
        |rev, b| {
            let iota = iota(rev, b, w.clone());
            let mut arrs = vec![iota];
            arrs.extend(extra);
            arrs.extend(is.iter().copied());
            let outside = outside.clone();
            let r = map(rev, b, w, arrs, rets.clone(), |rev, b, ps| {
                let j = SubExp::Var(ps[0]);
                let idx: Vec<SubExp> = ps[1 + n_extra..].iter().map(|v| SubExp::Var(*v)).collect();
                let ok = super::scatter::in_range(rev, b, &idx, dims);
                let bin: Vec<DimIndex> = idx
                    .into_iter()
                    .map(|i| DimIndex::Fix(select(rev, b, i64t, ok.clone(), i, SubExp::i64(0))))
                    .collect();
                let vals = f(rev, b, bin, j, &ps[1..1 + n_extra])?;
                Ok(vals
                    .into_iter()
                    .zip(&outside)
                    .map(|(v, o)| select(rev, b, o.ty(), ok.clone(), v, SubExp::Const(*o)))
                    .collect())
            })?;
            Ok(r.into_iter().map(SubExp::Var).collect())
        },
        |rev, b| {
            let mut r = Vec::new();
            for o in &outside {
                let t = Type::Prim(o.ty()).array_of(w.clone());
                let z = rev.bind(
                    b,
                    "none",
                    Exp::Basic(BasicOp::Replicate(vec![w.clone()], SubExp::Const(*o))),
                    t,
                );
                r.push(SubExp::Var(z));
            }
            Ok(r)
        },
    )?;
    outs.into_iter()
        .map(|s| s.as_var().ok_or_else(|| AdError::internal("bin_map")))
        .collect()
}

/// Remove the statements of a body whose results are unused, even those that could fail:
/// only for bodies of the return sweep, whose primal statements re-execute ones that
/// already succeeded in the forward sweep on the same values. Accumulator updates (and
/// statements containing them) are effects and stay.
pub fn prune(body: &mut Body) {
    let mut live = std::collections::HashSet::new();
    crate::scope::mentions(&body.result, &mut live);
    let mut kept = Vec::with_capacity(body.stms.len());
    for s in std::mem::take(&mut body.stms).into_iter().rev() {
        let used = s.pat.iter().any(|p| live.contains(&p.name));
        let effect =
            !used && runic_ir::traverse::any_exp(&s.exp, runic_ir::traverse::is_update_acc);
        if used || effect {
            crate::scope::mentions(&s.exp, &mut live);
            for p in &s.pat {
                crate::scope::mentions(&p.ty, &mut live);
            }
            kept.push(s);
        }
    }
    kept.reverse();
    body.stms = kept;
}
