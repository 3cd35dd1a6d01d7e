//! Loops (`for` and `while`) with a tape.
//!
//! Forward sweep: the loop runs as written and also stores the loop-carried values at the
//! start of every iteration in a tape (one array per loop parameter, `n × size` memory). A
//! `while` loop first runs counting its iterations, then a `for` loop of that many
//! iterations builds the tape.
//!
//! Return sweep: a loop over the iterations backwards; each restores its parameters from
//! the tape, re-executes the body (renamed) and runs the body's return sweep, carrying the
//! adjoints of the loop parameters and of the free variables the body contributes to as
//! loop parameters. Work: about three times the primal loop's; span: the loop's, times a
//! constant (the body's own parallelism is kept).

use super::{build, checkpoint, common, differentiable, Rev, Saved, R};
use crate::error::AdError;
use runic_ir::*;

pub fn forward(rev: &mut Rev, b: &mut Builder, s: &Stm) -> R<()> {
    let Exp::Loop { params, form, body } = &s.exp else {
        return Err(AdError::internal("loop rule on a non-loop"));
    };
    let i64t = Type::Prim(PrimType::I64);
    match form {
        LoopForm::For { i, bound } => {
            let it = b.type_of(bound)?.elem().unwrap_or(PrimType::I64);
            let n = to_i64(rev, b, bound.clone(), it);
            let tapes = tape_loop(
                rev,
                b,
                params,
                Some((*i, it)),
                bound,
                &n,
                body,
                s.pat.clone(),
            )?;
            rev.saved
                .insert(s.pat[0].name, Saved::Tape { tapes, count: n });
        }
        LoopForm::While { cond } => {
            // The loop as written, counting its iterations.
            let mut sb = Builder::new(b.names);
            let count = rev.fresh_param(&mut sb, "count", &i64t);
            drop(sb);
            let mut ps = params.clone();
            ps.push((count.clone(), SubExp::i64(0)));
            let mut body2 = body.clone();
            let next = b.names.fresh("count");
            b.names.set_type(next, i64t.clone());
            body2.stms.push(Stm {
                pat: vec![Param {
                    name: next,
                    ty: i64t.clone(),
                }],
                exp: Exp::Basic(BasicOp::BinOp(
                    BinOp::Add,
                    SubExp::Var(count.name),
                    SubExp::i64(1),
                )),
                src: s.src.clone(),
            });
            body2.result.push(SubExp::Var(next));
            let total = b.names.fresh("iterations");
            b.names.set_type(total, i64t.clone());
            let mut pat = s.pat.clone();
            pat.push(Param {
                name: total,
                ty: i64t.clone(),
            });
            b.add(Stm {
                pat,
                exp: Exp::Loop {
                    params: ps,
                    form: LoopForm::While { cond: *cond },
                    body: body2,
                },
                src: s.src.clone(),
            });
            // A renamed copy as a for loop of that many iterations builds the tape.
            let mut copy = rename_loop(rev, b, params, None, body);
            let pat: Vec<Param> = s
                .pat
                .iter()
                .map(|p| rev.fresh_param(b, "unused", &p.ty))
                .collect();
            let inits: Vec<(Param, SubExp)> = copy
                .params
                .drain(..)
                .zip(params.iter().map(|(_, init)| init.clone()))
                .collect();
            let n = SubExp::Var(total);
            let tapes = tape_loop(rev, b, &inits, None, &n, &n, &copy.body, pat)?;
            rev.saved.insert(
                s.pat[0].name,
                Saved::Tape {
                    tapes,
                    count: SubExp::Var(total),
                },
            );
        }
    }
    Ok(())
}

/// `x` (of integer type `t`) as an `i64`.
fn to_i64(rev: &mut Rev, b: &mut Builder, x: SubExp, t: PrimType) -> SubExp {
    if t == PrimType::I64 {
        return x;
    }
    let r = b.convert(PrimType::I64, x);
    r
}

/// Emit `loop params for i < bound do body` (with the counter `i` of type `it` when given,
/// a fresh `i64` counter otherwise; `n` is the bound as an `i64`) that also records each
/// iteration's parameters in tapes; binds the loop's results to `pat` and returns the tapes.
#[allow(clippy::too_many_arguments)]
fn tape_loop(
    rev: &mut Rev,
    b: &mut Builder,
    params: &[(Param, SubExp)],
    counter: Option<(VName, PrimType)>,
    bound: &SubExp,
    n: &SubExp,
    body: &Body,
    pat: Vec<Param>,
) -> R<Vec<VName>> {
    let src = b.src.clone();
    // Tape storage: one array of n rows per loop parameter.
    let mut inits = Vec::new();
    for (p, _) in params {
        let (elem, mut shape) = match &checkpoint::loop_outside(params, &p.ty) {
            Type::Prim(e) => (*e, vec![]),
            Type::Array { elem, shape } => (*elem, shape.clone()),
            Type::Acc { .. } => return Err(AdError::unsupported("loops over accumulators")),
        };
        shape.insert(0, n.clone());
        let tt = Type::Array {
            elem,
            shape: shape.clone(),
        };
        let init = rev.bind(
            b,
            "tape",
            Exp::Basic(BasicOp::Scratch(elem, shape)),
            tt.clone(),
        );
        inits.push((init, tt));
    }
    let mut sb = Builder::new(b.names);
    sb.src = src.clone();
    let (i, it) = match counter {
        Some(c) => c,
        None => (sb.fresh("i"), PrimType::I64),
    };
    sb.names.set_type(i, Type::Prim(it));
    let idx = to_i64(rev, &mut sb, SubExp::Var(i), it);
    let mut loop_params = params.to_vec();
    let mut tape_results = Vec::new();
    let mut tape_types = Vec::new();
    for ((p, _), (init, tt)) in params.iter().zip(inits) {
        let tp = rev.fresh_param(&mut sb, "tape", &tt);
        let upd = rev.bind(
            &mut sb,
            "tape",
            Exp::Basic(BasicOp::Update(
                tp.name,
                vec![DimIndex::Fix(idx.clone())],
                SubExp::Var(p.name),
            )),
            tt.clone(),
        );
        loop_params.push((tp, SubExp::Var(init)));
        tape_results.push(SubExp::Var(upd));
        tape_types.push(tt);
    }
    for s in &body.stms {
        sb.add(s.clone());
    }
    let mut result = body.result.clone();
    result.extend(tape_results);
    let body = sb.finish(result);
    let mut all_pat = pat;
    let tapes: Vec<Param> = tape_types
        .iter()
        .map(|t| {
            let name = b.names.fresh("tape");
            b.names.set_type(name, t.clone());
            Param {
                name,
                ty: t.clone(),
            }
        })
        .collect();
    all_pat.extend(tapes.iter().cloned());
    b.add(Stm {
        pat: all_pat,
        exp: Exp::Loop {
            params: loop_params,
            form: LoopForm::For {
                i,
                bound: bound.clone(),
            },
            body,
        },
        src,
    });
    Ok(tapes.into_iter().map(|p| p.name).collect())
}

/// A renamed copy of a loop's parameters, counter and body.
fn rename_loop(
    rev: &mut Rev,
    b: &mut Builder,
    params: &[(Param, SubExp)],
    counter: Option<Param>,
    body: &Body,
) -> Lambda {
    let mut ps: Vec<Param> = params.iter().map(|(p, _)| p.clone()).collect();
    if let Some(c) = counter {
        ps.insert(0, c);
    }
    rev.renamed(
        b,
        &Lambda {
            id: runic_ir::LamId::fresh(),
            params: ps,
            body: body.clone(),
            ret: vec![],
        },
    )
}

pub fn reverse(
    rev: &mut Rev,
    b: &mut Builder,
    pat: &[Param],
    params: Vec<(Param, SubExp)>,
    form: LoopForm,
    body: Body,
) -> R<()> {
    let Some(Saved::Tape { tapes, count }) = rev.saved.remove(&pat[0].name) else {
        return Err(AdError::internal("a loop without a tape"));
    };
    let i64t = Type::Prim(PrimType::I64);
    // Adjoints of the loop's results seed those of the parameters.
    let diff: Vec<bool> = params.iter().map(|(p, _)| differentiable(&p.ty)).collect();
    let mut seeds = Vec::new();
    for (k, p) in pat.iter().enumerate().take(params.len()) {
        if diff[k] {
            seeds.push(rev.adj(b, p.name)?);
        }
    }
    let frees = rev.free_adjoints(&body);
    let mut free_inits = Vec::new();
    for f in &frees {
        free_inits.push(rev.adj(b, *f)?);
    }
    let counter = match &form {
        LoopForm::For { i, bound } => Some(Param {
            name: *i,
            ty: b.type_of(bound)?,
        }),
        LoopForm::While { .. } => None,
    };
    let has_counter = counter.is_some();
    let copy = rename_loop(rev, b, &params, counter, &body);
    let (new_i, new_params) = if has_counter {
        (Some(copy.params[0].clone()), copy.params[1..].to_vec())
    } else {
        (None, copy.params.clone())
    };

    let mut sb = Builder::new(b.names);
    sb.src = b.src.clone();
    let k = rev.fresh_param(&mut sb, "k", &i64t);
    let mut loop_params = Vec::new();
    let mut pbars = Vec::new();
    for ((p, _), seed) in params
        .iter()
        .filter(|(p, _)| differentiable(&p.ty))
        .zip(&seeds)
    {
        let pb = rev.fresh_param(&mut sb, "adj", &p.ty);
        pbars.push(pb.clone());
        loop_params.push((pb, seed.clone()));
    }
    let mut fbars = Vec::new();
    for (f, init) in frees.iter().zip(&free_inits) {
        let t = sb.type_of(&SubExp::Var(*f))?;
        let fb = rev.fresh_param(&mut sb, "adj", &t);
        fbars.push(fb.clone());
        loop_params.push((fb, init.clone()));
    }
    // Inside the backward loop: restore iteration `count - 1 - k`.
    let saved_owned = std::mem::take(&mut rev.owned);
    let last = sb.sub_i64(count.clone(), SubExp::i64(1));
    let idx = sb.sub_i64(last, SubExp::Var(k.name));
    let src = sb.src.clone();
    if let Some(ip) = &new_i {
        let it = ip.ty.elem().unwrap_or(PrimType::I64);
        let v = if it == PrimType::I64 {
            idx.clone()
        } else {
            let c = sb.convert(it, idx.clone());
            if let SubExp::Var(cv) = &c {
                sb.names.set_type(*cv, Type::Prim(it));
            }
            c
        };
        sb.add(build::copy_stm(ip.clone(), v, &src));
    }
    for (np, tape) in new_params.iter().zip(&tapes) {
        sb.add(Stm {
            pat: vec![np.clone()],
            exp: Exp::Basic(BasicOp::Index(*tape, vec![DimIndex::Fix(idx.clone())])),
            src: src.clone(),
        });
        rev.mark_active(np);
    }
    for (f, fb) in frees.iter().zip(&fbars) {
        rev.adjs.insert(*f, SubExp::Var(fb.name));
        rev.owned.insert(fb.name);
    }
    for pb in &pbars {
        rev.owned.insert(pb.name);
    }
    let mut body_seeds = Vec::new();
    let mut it = pbars.iter();
    for d in &diff {
        body_seeds.push(if *d {
            it.next().map(|p| SubExp::Var(p.name))
        } else {
            None
        });
    }
    rev.sweep(&mut sb, copy.body, body_seeds)?;
    let mut result = Vec::new();
    for (np, d) in new_params.iter().zip(&diff) {
        if *d {
            result.push(rev.adj(&mut sb, np.name)?);
        }
    }
    for f in &frees {
        result.push(rev.adj(&mut sb, *f)?);
    }
    rev.owned = saved_owned;
    let mut loop_body = sb.finish(result);
    common::prune(&mut loop_body);
    let tys: Vec<Type> = loop_params.iter().map(|(p, _)| p.ty.clone()).collect();
    let outs = rev.bind_many(
        b,
        "adj",
        Exp::Loop {
            params: loop_params,
            form: LoopForm::For {
                i: k.name,
                bound: count,
            },
            body: loop_body,
        },
        tys.clone(),
    );
    let (pouts, fouts) = outs.split_at(pbars.len());
    for (f, o) in frees.iter().zip(fouts) {
        rev.adjs.insert(*f, SubExp::Var(*o));
        if b.type_of(&SubExp::Var(*o))?.rank() > 0 {
            rev.owned.insert(*o);
        }
    }
    let inits: Vec<SubExp> = params
        .iter()
        .filter(|(p, _)| differentiable(&p.ty))
        .map(|(_, init)| init.clone())
        .collect();
    for (init, o) in inits.iter().zip(pouts) {
        rev.add_adj(b, init, SubExp::Var(*o))?;
    }
    Ok(())
}
