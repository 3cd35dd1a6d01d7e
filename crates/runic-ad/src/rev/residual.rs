//! Residuals of elementwise maps: the values of expensive scalar operations (`exp`, `tanh`,
//! `log`, `pow`, …) inside a map's lambda that the return sweep needs again. Without them,
//! the adjoint lambda re-executes the primal lambda and computes each such value a second
//! time; with them, the forward sweep's map also returns those values as arrays
//! ([`produce`]), and the adjoint lambda reads them as inputs (in [`super::map`]). A loop
//! keeps them in its tape per iteration, like any value its return sweep reads back.
//!
//! Rule: `ys = map f xs` becomes `(ys, rs) = map f' xs`, where `f'` also returns the
//! residuals `rs`; the return sweep's `map f̄ (xs, ȳs, rs)` binds each residual to its
//! input instead of computing it. Work: the forward sweep writes the residuals and the
//! return sweep reads them (one element each per residual) instead of computing them
//! again; span unchanged. Memory: one array per residual, the size of the map.
//!
//! Only lambdas made of scalar operations and nested maps of such lambdas qualify (an
//! elementwise nest: the gates of an LSTM cell, an activation function): their statements
//! keep their positions through the rules, so a residual is named by its [`Path`] in the
//! lambda and found again in any renamed copy.

use runic_ir::typing::TResult;
use runic_ir::*;

/// Where a residual is computed: the positions of the statements from a lambda's body
/// down through nested maps to the scalar statement whose result it is.
pub(crate) type Path = Vec<usize>;

/// Whether the derivative of operation `op` is written with its own result (so the
/// return sweep reads the value even when nothing else does).
fn partial_uses_result(op: &BasicOp) -> bool {
    matches!(
        op,
        BasicOp::UnOp(UnOp::Exp | UnOp::Tanh | UnOp::Cbrt, _)
            | BasicOp::BinOp(BinOp::Pow | BinOp::Hypot | BinOp::Max | BinOp::Min, _, _)
    )
}

/// Whether a statement only moves its operand's adjoint along (its derivative does not
/// read its operands' values).
fn linear(e: &Exp) -> bool {
    matches!(
        e,
        Exp::Basic(
            BasicOp::BinOp(BinOp::Add | BinOp::Sub, _, _)
                | BasicOp::UnOp(UnOp::Neg, _)
                | BasicOp::SubExp(_)
        )
    )
}

fn is_float_scalar(t: &Type) -> bool {
    matches!(t, Type::Prim(p) if p.is_float())
}

/// Whether `lam` is an elementwise nest: scalar operations and maps of such lambdas only
/// (no accumulators, no other SOACs, loops or branches).
fn elementwise(lam: &Lambda) -> bool {
    let no_accs = |ps: &[Param]| ps.iter().all(|p| !matches!(p.ty, Type::Acc { .. }));
    no_accs(&lam.params)
        && lam.body.stms.iter().all(|s| {
            no_accs(&s.pat)
                && match &s.exp {
                    Exp::Basic(op) => {
                        s.pat.iter().all(|p| p.ty.rank() == 0)
                            && !matches!(op, BasicOp::UpdateAcc { .. })
                    }
                    Exp::Soac(Soac::Map { lam, .. }) => elementwise(lam),
                    _ => false,
                }
        })
}

/// The residuals of `lam` (empty unless it is an elementwise nest), in the order in which
/// [`produce`] returns them and the adjoint lambda takes them.
pub(crate) fn paths(lam: &Lambda) -> Vec<Path> {
    if !elementwise(lam) {
        return Vec::new();
    }
    let stms = &lam.body.stms;
    let mut out = Vec::new();
    for (k, s) in stms.iter().enumerate() {
        match &s.exp {
            Exp::Basic(op) if s.pat.len() == 1 && is_float_scalar(&s.pat[0].ty) => {
                let v = s.pat[0].name;
                let kept = if op.is_transcendental() {
                    // Worth storing when the derivative or a later non-linear statement
                    // reads it.
                    partial_uses_result(op)
                        || stms[k + 1..].iter().any(|t| {
                            !linear(&t.exp) && runic_ir::traverse::uses(&t.exp).contains(&v)
                        })
                } else {
                    // A cheap operation whose derivative reads its result, when that result
                    // is what the lambda returns: the map's own result array holds it at no
                    // cost, and the return sweep reads it there instead of computing it
                    // again from the operands (a ReLU's adjoint then needs its output only).
                    partial_uses_result(op) && lam.body.result.contains(&SubExp::Var(v))
                };
                if kept {
                    out.push(vec![k]);
                }
            }
            Exp::Soac(Soac::Map { lam, .. }) => {
                out.extend(paths(lam).into_iter().map(|p| [vec![k], p].concat()));
            }
            _ => {}
        }
    }
    out
}

/// The residuals of `lam` grouped by the statement of `lam`'s body they start at, with
/// the paths below it (empty for a scalar statement), in [`paths`] order.
pub(crate) fn by_statement(lam: &Lambda) -> Vec<(usize, Vec<Path>)> {
    let mut out: Vec<(usize, Vec<Path>)> = Vec::new();
    for p in paths(lam) {
        let (k, rest) = (p[0], p[1..].to_vec());
        match out.last_mut() {
            Some((j, rests)) if *j == k => rests.push(rest),
            _ => out.push((k, vec![rest])),
        }
    }
    out
}

/// Where a map keeps one of its residuals: one of its results already (the value is what
/// the lambda returns), or an extra array of its own (the `m`th).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Export {
    Result(usize),
    Extra(usize),
}

/// Per residual of `lam`, in [`paths`] order: where the lambda returns it, and the type
/// of one element of it (the row type for a nested map's).
fn exports(lam: &Lambda) -> Vec<(Export, Type)> {
    let mut out = Vec::new();
    let mut extra = 0;
    for (k, rests) in by_statement(lam) {
        let st = &lam.body.stms[k];
        let values: Vec<(Option<VName>, Type)> = match &st.exp {
            Exp::Soac(Soac::Map { w, lam: inner, .. }) if !rests.iter().all(Vec::is_empty) => {
                exports(inner)
                    .into_iter()
                    .map(|(e, t)| match e {
                        Export::Result(j) => (Some(st.pat[j].name), st.pat[j].ty.clone()),
                        Export::Extra(_) => (None, t.array_of(w.clone())),
                    })
                    .collect()
            }
            _ => vec![(Some(st.pat[0].name), st.pat[0].ty.clone())],
        };
        for (v, t) in values {
            let at = v.and_then(|v| lam.body.result.iter().position(|r| *r == SubExp::Var(v)));
            match at {
                Some(j) => out.push((Export::Result(j), t)),
                None => {
                    out.push((Export::Extra(extra), t));
                    extra += 1;
                }
            }
        }
    }
    out
}

/// Where the map `s` keeps each of its residuals ([`Export`]), in [`paths`] order.
pub(crate) fn placement(s: &Stm) -> Vec<Export> {
    match &s.exp {
        Exp::Soac(Soac::Map { lam, .. }) => exports(lam).into_iter().map(|(e, _)| e).collect(),
        _ => Vec::new(),
    }
}

/// The types of the extra arrays that hold the residuals of the map `s` that are not
/// among its results (`[]`: none).
pub(crate) fn types(s: &Stm) -> Vec<Type> {
    match &s.exp {
        Exp::Soac(Soac::Map { w, lam, .. }) => exports(lam)
            .into_iter()
            .filter(|(e, _)| matches!(e, Export::Extra(_)))
            .map(|(_, t)| t.array_of(w.clone()))
            .collect(),
        _ => Vec::new(),
    }
}

/// `s` (an active map with residuals) as the forward sweep runs it: the map also returns
/// those of its residuals that are not among its results, bound to fresh arrays. Returns
/// the arrays holding every residual, in [`paths`] order (its own results or the new ones).
pub(crate) fn produce(b: &mut Builder, s: &Stm) -> (Stm, Vec<VName>) {
    let Exp::Soac(Soac::Map { w, lam, arrs }) = &s.exp else {
        return (s.clone(), Vec::new());
    };
    let mut extra = Vec::new();
    let mut arrays = Vec::new();
    for (e, t) in exports(lam) {
        arrays.push(match e {
            Export::Result(j) => s.pat[j].name,
            Export::Extra(_) => {
                let p = b.param("res", t.array_of(w.clone()));
                extra.push(p.clone());
                p.name
            }
        });
    }
    let stm = Stm {
        pat: [s.pat.clone(), extra].concat(),
        exp: Exp::Soac(Soac::Map {
            w: w.clone(),
            lam: producing(b, lam),
            arrs: arrs.clone(),
        }),
        src: s.src.clone(),
    };
    (stm, arrays)
}

/// `lam` returning, after its results, those of its residuals that are not among them.
fn producing(b: &mut Builder, lam: &Lambda) -> Lambda {
    let mut body = lam.body.clone();
    let mut ret = lam.ret.clone();
    let mut extra = exports(lam)
        .into_iter()
        .filter(|(e, _)| matches!(e, Export::Extra(_)));
    for (k, rests) in by_statement(lam) {
        let values: Vec<VName> = if rests.iter().all(Vec::is_empty) {
            vec![body.stms[k].pat[0].name]
        } else {
            let (inner, arrays) = produce(b, &body.stms[k]);
            body.stms[k] = inner;
            arrays
        };
        for v in values {
            if !lam.body.result.contains(&SubExp::Var(v)) {
                if let Some((_, t)) = extra.next() {
                    body.result.push(SubExp::Var(v));
                    ret.push(t);
                }
            }
        }
    }
    Lambda::new(lam.params.clone(), body, ret)
}

/// The map `s` computed from its residuals `res` (arrays, in [`paths`] order) instead of
/// computing them: each residual's statement binds its input.
pub(crate) fn consume(b: &mut Builder, s: &Stm, res: &[VName]) -> TResult<Stm> {
    let Exp::Soac(Soac::Map { w, lam, arrs }) = &s.exp else {
        return Ok(s.clone());
    };
    let (lam, _) = consuming(b, lam, res)?;
    Ok(Stm {
        pat: s.pat.clone(),
        exp: Exp::Soac(Soac::Map {
            w: w.clone(),
            lam,
            arrs: [arrs.clone(), res.to_vec()].concat(),
        }),
        src: s.src.clone(),
    })
}

/// `lam` taking one element of each residual array `res` as extra parameters (returned
/// too), each residual's statement binding its parameter.
fn consuming(b: &mut Builder, lam: &Lambda, res: &[VName]) -> TResult<(Lambda, Vec<Param>)> {
    let mut params = Vec::new();
    for r in res {
        params.push(b.param("res", b.type_of(&SubExp::Var(*r))?.row()));
    }
    let mut body = lam.body.clone();
    let mut next = params.iter();
    for (k, rests) in by_statement(lam) {
        let st = &mut body.stms[k];
        if rests.iter().all(Vec::is_empty) {
            if let Some(p) = next.next() {
                st.exp = Exp::Basic(BasicOp::SubExp(SubExp::Var(p.name)));
            }
            continue;
        }
        let mine: Vec<VName> = next.by_ref().take(rests.len()).map(|p| p.name).collect();
        if let Exp::Soac(Soac::Map { w, lam, arrs }) = &st.exp {
            let (inner, _) = consuming(b, lam, &mine)?;
            st.exp = Exp::Soac(Soac::Map {
                w: w.clone(),
                lam: inner,
                arrs: [arrs.clone(), mine].concat(),
            });
        }
    }
    let all = [lam.params.clone(), params.clone()].concat();
    Ok((Lambda::new(all, body, lam.ret.clone()), params))
}
