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

use super::build::{self, at};
use super::{checkpoint, common, differentiable, Rev, Saved, R};
use crate::error::AdError;
use runic_ir::*;

pub fn forward(rev: &mut Rev, b: &mut Builder, s: &Stm) -> R<()> {
    let Exp::Loop { params, form, body } = &s.exp else {
        return Err(AdError::internal("loop rule on a non-loop"));
    };
    let (tapes, count) = match form {
        LoopForm::For { i, bound } => {
            let n = to_i64(b, bound.clone())?;
            let counter = Some((*i, b.type_of(bound)?));
            let tapes = tape_loop(b, params, counter, bound, &n, body, s.pat.clone())?;
            (tapes, n)
        }
        LoopForm::While { cond } => {
            // The loop as written, counting its iterations.
            let i64t = Type::Prim(PrimType::I64);
            let count = b.param("count", i64t.clone());
            let mut counting = body.clone();
            let mut cb = Builder::new(b.names);
            cb.src = s.src.clone();
            let one = SubExp::i64(1);
            let next = cb.let_basic(
                "count",
                BasicOp::BinOp(BinOp::Add, SubExp::Var(count.name), one),
            )?;
            counting.stms.extend(cb.take_stms());
            counting.result.push(next);
            let total = b.param("iterations", i64t);
            let n = SubExp::Var(total.name);
            let mut ps = params.clone();
            ps.push((count, SubExp::i64(0)));
            let form = LoopForm::While { cond: *cond };
            let pat = [s.pat.clone(), vec![total]].concat();
            b.let_pat(
                pat,
                Exp::Loop {
                    params: ps,
                    form,
                    body: counting,
                },
            );
            // A renamed copy as a for loop of that many iterations builds the tape.
            let copy = rename_loop(b, params, None, body);
            let unused = s
                .pat
                .iter()
                .map(|p| b.param("unused", p.ty.clone()))
                .collect();
            let inits: Vec<(Param, SubExp)> = copy
                .params
                .into_iter()
                .zip(params.iter().map(|(_, init)| init.clone()))
                .collect();
            let tapes = tape_loop(b, &inits, None, &n, &n, &copy.body, unused)?;
            (tapes, n)
        }
    };
    rev.saved
        .insert(s.pat[0].name, Saved::Tape { tapes, count });
    Ok(())
}

/// `x` (of an integer type) as an `i64`.
fn to_i64(b: &mut Builder, x: SubExp) -> R<SubExp> {
    Ok(match b.prim_of(&x)? {
        PrimType::I64 => x,
        _ => b.convert(PrimType::I64, x),
    })
}

/// Emit `loop params for i < bound do body` (with the counter `i` of the given type when
/// given, a fresh `i64` counter otherwise; `n` is the bound as an `i64`) that also records
/// each iteration's parameters in tapes; binds the loop's results to `pat` and returns the
/// tapes.
fn tape_loop(
    b: &mut Builder,
    params: &[(Param, SubExp)],
    counter: Option<(VName, Type)>,
    bound: &SubExp,
    n: &SubExp,
    body: &Body,
    pat: Vec<Param>,
) -> R<Vec<VName>> {
    // Tape storage: one array of n rows per loop parameter.
    let mut tapes = Vec::new();
    for (p, _) in params {
        let (elem, shape) = match checkpoint::loop_outside(params, &p.ty) {
            Type::Prim(e) => (e, vec![]),
            Type::Array { elem, shape } => (elem, shape),
            Type::Acc { .. } => return Err(AdError::unsupported("loops over accumulators")),
        };
        let shape = [vec![n.clone()], shape].concat();
        tapes.push(b.let_exp("tape", Exp::Basic(BasicOp::Scratch(elem, shape)))?[0]);
    }
    let mut sb = Builder::new(b.names);
    sb.src = b.src.clone();
    let i = match counter {
        Some((i, t)) => {
            sb.names.set_type(i, t);
            i
        }
        None => sb.names.fresh_typed("i", Type::Prim(PrimType::I64)),
    };
    let idx = to_i64(&mut sb, SubExp::Var(i))?;
    let mut loop_params = params.to_vec();
    let mut tape_results = Vec::new();
    for ((p, _), init) in params.iter().zip(&tapes) {
        // A tape row has the parameter's shape before the loop: an array that changes
        // shape across iterations cannot be taped yet, and says so (rather than failing
        // as a shape mismatch of the tape's update).
        if let (Type::Array { shape: now, .. }, Type::Array { shape: before, .. }) =
            (&p.ty, checkpoint::loop_outside(params, &p.ty))
        {
            for (d, d0) in now.iter().zip(before) {
                if *d != d0 {
                    let cond = sb.op2(BinOp::Eq, d.clone(), d0)?;
                    let message = AdError::unsupported(
                        "vjp of a loop whose carried array changes shape (the loop tape holds one shape per loop parameter)",
                    )
                    .message;
                    sb.let_basic("same_shape", BasicOp::Assert { cond, message })?;
                }
            }
        }
        let tp = sb.param("tape", sb.type_of(&SubExp::Var(*init))?);
        let at = vec![DimIndex::Fix(idx.clone())];
        let upd = BasicOp::Update(tp.name, at, SubExp::Var(p.name));
        tape_results.push(sb.let_basic("tape", upd)?);
        loop_params.push((tp, SubExp::Var(*init)));
    }
    for s in &body.stms {
        sb.add(s.clone());
    }
    let body = sb.finish([body.result.clone(), tape_results].concat());
    let tapes: Vec<Param> = tapes
        .iter()
        .map(|t| {
            let ty = b.type_of(&SubExp::Var(*t))?;
            Ok(b.param("tape", ty))
        })
        .collect::<R<_>>()?;
    let names = tapes.iter().map(|p| p.name).collect();
    let form = LoopForm::For {
        i,
        bound: bound.clone(),
    };
    let exp = Exp::Loop {
        params: loop_params,
        form,
        body,
    };
    b.let_pat([pat, tapes].concat(), exp);
    Ok(names)
}

/// A renamed copy of a loop's parameters, counter and body.
fn rename_loop(
    b: &mut Builder,
    params: &[(Param, SubExp)],
    counter: Option<Param>,
    body: &Body,
) -> Lambda {
    let ps = counter
        .into_iter()
        .chain(params.iter().map(|(p, _)| p.clone()))
        .collect();
    b.renamed(&Lambda::new(ps, body.clone(), vec![]))
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
    let copy = rename_loop(b, &params, counter, &body);
    let (new_i, new_params) = if has_counter {
        (Some(copy.params[0].clone()), copy.params[1..].to_vec())
    } else {
        (None, copy.params.clone())
    };

    let mut sb = Builder::new(b.names);
    sb.src = b.src.clone();
    let k = sb.param("k", Type::Prim(PrimType::I64));
    let mut loop_params = Vec::new();
    let mut pbars = Vec::new();
    for ((p, _), seed) in params
        .iter()
        .filter(|(p, _)| differentiable(&p.ty))
        .zip(&seeds)
    {
        let pb = sb.param("adj", p.ty.clone());
        pbars.push(pb.clone());
        loop_params.push((pb, seed.clone()));
    }
    let mut fbars = Vec::new();
    for (f, init) in frees.iter().zip(&free_inits) {
        let fb = sb.param("adj", sb.type_of(&SubExp::Var(*f))?);
        fbars.push(fb.clone());
        loop_params.push((fb, init.clone()));
    }
    // Inside the backward loop: restore iteration `count - 1 - k`.
    let saved_owned = std::mem::take(&mut rev.owned);
    let last = sb.sub_i64(count.clone(), SubExp::i64(1));
    let idx = sb.sub_i64(last, SubExp::Var(k.name));
    if let Some(ip) = &new_i {
        let it = ip.ty.elem().unwrap_or(PrimType::I64);
        let v = match it {
            PrimType::I64 => idx.clone(),
            _ => sb.convert(it, idx.clone()),
        };
        build::copy_to(&mut sb, ip.clone(), v);
    }
    for (np, tape) in new_params.iter().zip(&tapes) {
        let row = at(*tape, idx.clone());
        sb.let_pat(vec![np.clone()], Exp::Basic(row));
        rev.mark_active(np);
    }
    for (f, fb) in frees.iter().zip(&fbars) {
        rev.adjs.insert(*f, SubExp::Var(fb.name));
        rev.owned.insert(fb.name);
    }
    for pb in &pbars {
        rev.owned.insert(pb.name);
    }
    let mut pbar_seeds = pbars.iter().map(|p| SubExp::Var(p.name));
    let body_seeds = diff.iter().map(|d| d.then(|| pbar_seeds.next()).flatten());
    rev.sweep(&mut sb, copy.body, body_seeds.collect())?;
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
    let form = LoopForm::For {
        i: k.name,
        bound: count,
    };
    let exp = Exp::Loop {
        params: loop_params,
        form,
        body: loop_body,
    };
    let outs = b.let_exp("adj", exp)?;
    let (pouts, fouts) = outs.split_at(pbars.len());
    for (f, o) in frees.iter().zip(fouts) {
        rev.adjs.insert(*f, SubExp::Var(*o));
        if b.type_of(&SubExp::Var(*o))?.rank() > 0 {
            rev.owned.insert(*o);
        }
    }
    let inits = params.iter().filter(|(p, _)| differentiable(&p.ty));
    for ((_, init), o) in inits.zip(pouts) {
        rev.add_adj(b, init, SubExp::Var(*o))?;
    }
    Ok(())
}
