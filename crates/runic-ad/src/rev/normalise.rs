//! Normalisation before differentiation: statements are rewritten into the forms the
//! rules handle. A reduce or scan with a fused `pre` map becomes the map followed by the
//! plain SOAC; a reduce, scan or histogram with a vectorised operator (`map2 ⊙`) becomes a
//! map of scalar SOACs over the transposed arrays (IRWIM/ISWIM, seed 001 §3, §5), so the
//! scalar rules apply; a loop that wants it is strip-mined ([`super::checkpoint`]).

use super::checkpoint::{strip_mine, wants_stripmining};
use runic_ir::traverse::{Renamer, VisitorMut};
use runic_ir::*;
use std::collections::HashMap;

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
