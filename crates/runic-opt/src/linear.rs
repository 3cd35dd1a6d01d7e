//! Linear tails: a value `v` of a map's body written as `L(u…)`, where `L` is linear in
//! values `u…` of the body and its coefficients are the same in every iteration. A sum of
//! `v` over the iterations is then `L` of the sums of the `u…`: `Σ_b L(u_b) = L(Σ_b u_b)`,
//! one application of `L` instead of one per iteration. The accumulator optimisation
//! (`accs`) uses it for the per-iteration values it sums.
//!
//! Reverse mode makes such values everywhere, since an adjoint is linear in the adjoint it
//! comes from. The GMM's means receive from every point `i` the adjoint `−Q_kᵀ·δ_ik` of
//! `x_i − μ_k`; summing `δ_ik` over the points and multiplying once by `Q_kᵀ` replaces a
//! batched matrix product over all points by one matrix–vector product per component.
//!
//! Linear statements (in the values that vary, the others being coefficients): on floats,
//! `-a`, `a + b`, `a - b`, `a · c`, `c · a`, `a / c`; copies, `replicate`, `rearrange`,
//! `reshape`, indexing with invariant indices; maps whose lambda's result is linear in
//! its varying parameters (values the slice stops at inside the lambda are returned by the
//! map); and sums (`reduce (+) 0`) whose `pre` is linear. The slice stops at the first
//! value computed otherwise (`δ_ik` above, a product of two varying values).

use runic_ir::traverse::{any_exp, free_vars, uses};
use runic_ir::*;
use std::collections::HashSet;

/// `v = lam(frontier…)`, with `lam` linear in its parameters.
pub(crate) struct Tail {
    /// The values of the map's body that `v` is a linear function of: parameters of its
    /// lambda, or values bound in the body.
    pub frontier: Vec<VName>,
    /// `\frontier… -> v`. Its free variables are free in the map's lambda, hence the same
    /// in every iteration (what it needs of the body's invariant statements, it copies).
    pub lam: Lambda,
}

/// `v`, a value of `body` (the body of a map's lambda whose parameters are `params`), as a
/// linear tail, with the body it is a tail of: `body` where maps that compute parts of `v`
/// also return the values the slice stopped at inside them. `None` when `v` is not linear
/// in anything but itself, or when a value it is linear in has dimensions `v` does not
/// (summing it would cost more than `L` saves). The slice stops at the values in `stored`
/// (the map stores them per iteration anyway), and inside a map at what it returns as one
/// of them.
pub(crate) fn tail(
    body: &Body,
    params: &[VName],
    stored: &HashSet<VName>,
    v: VName,
    ns: &mut NameSource,
) -> Option<(Body, Tail)> {
    let mut body = body.clone();
    let varying: HashSet<VName> = params.iter().copied().collect();
    let slice = slice(&mut body, &varying, stored, v, ns)?;
    // Without a sum in `L`, storing its arguments instead of `v` saves little.
    if !has_sum(&slice.stms) || slice.frontier.contains(&v) {
        return None;
    }
    let dims = |x: VName| -> Option<Vec<SubExp>> {
        match ns.type_of(x)? {
            Type::Array { elem, shape } if elem.is_float() => Some(shape.clone()),
            _ => None,
        }
    };
    // The map returns the frontier: no statement may update it in place first.
    if consumes_any(&body, &slice.frontier) {
        return None;
    }
    let whole = dims(v)?;
    for f in &slice.frontier {
        let mut left = whole.clone();
        for d in dims(*f)? {
            let at = left.iter().position(|e| *e == d)?;
            left.remove(at);
        }
    }
    let lam_params = slice
        .frontier
        .iter()
        .map(|f| {
            Some(Param {
                name: *f,
                ty: ns.type_of(*f)?.clone(),
            })
        })
        .collect::<Option<Vec<_>>>()?;
    let lam = lambda_of(lam_params, slice.stms, v, ns.type_of(v)?.clone());
    Some((
        body,
        Tail {
            frontier: slice.frontier,
            lam,
        },
    ))
}

/// `\params… -> stms; r`, of result type `ret`.
fn lambda_of(params: Vec<Param>, stms: Vec<Stm>, r: VName, ret: Type) -> Lambda {
    let body = Body {
        stms,
        result: vec![SubExp::Var(r)],
    };
    Lambda::new(params, body, vec![ret])
}

/// Whether a statement of `body` updates one of `vs` in place.
fn consumes_any(body: &Body, vs: &[VName]) -> bool {
    body.stms.iter().any(|s| {
        crate::simplify::consumed(&s.exp)
            .iter()
            .any(|c| vs.contains(c))
    })
}

/// Whether a reduction is among `stms`, at any depth.
fn has_sum(stms: &[Stm]) -> bool {
    stms.iter()
        .any(|s| any_exp(s, |e| matches!(e, Exp::Soac(Soac::Reduce { .. }))))
}

/// The statements of one body that compute a value from the values it is linear in.
struct Slice {
    /// Values it is linear in: varying values bound in the body, or varying values from
    /// outside it (its lambda's parameters, or free).
    frontier: Vec<VName>,
    /// In the body's order: the linear statements (a map or sum as its linear part only)
    /// and copies of the invariant statements they read.
    stms: Vec<Stm>,
}

/// One linear statement of a slice.
struct Step {
    /// The statement as the slice computes it.
    stm: Stm,
    /// Varying values it is linear in, to slice further.
    operands: Vec<VName>,
    /// Values a map now returns for the slice to stop at.
    exported: Vec<VName>,
}

/// The values of `body` that vary with the iteration: `outer` (the lambda's varying
/// parameters and varying values from outside it) and what is computed from them.
fn varying_in(body: &Body, outer: &HashSet<VName>) -> HashSet<VName> {
    let mut vary = outer.clone();
    for s in &body.stms {
        if uses(s).iter().any(|u| vary.contains(u)) {
            vary.extend(s.pat.iter().map(|p| p.name));
        }
    }
    vary
}

/// The slice of `body` that computes `v` (varying) from the values it is linear in.
fn slice(
    body: &mut Body,
    outer: &HashSet<VName>,
    stops: &HashSet<VName>,
    v: VName,
    ns: &mut NameSource,
) -> Option<Slice> {
    let vary = varying_in(body, outer);
    if !vary.contains(&v) {
        return None;
    }
    let mut frontier = Vec::new();
    let mut steps: Vec<(usize, Stm)> = Vec::new();
    let mut seen = HashSet::new();
    let mut todo = vec![v];
    while let Some(x) = todo.pop() {
        if !seen.insert(x) {
            continue;
        }
        let at = body.stms.iter().position(|s| s.binds(x));
        let Some(at) = at.filter(|_| x == v || !stops.contains(&x)) else {
            frontier.push(x);
            continue;
        };
        match linear_step(&mut body.stms[at], x, &vary, stops, ns) {
            Some(step) => {
                steps.push((at, step.stm));
                todo.extend(step.operands);
                frontier.extend(step.exported);
            }
            None => frontier.push(x),
        }
    }
    // The invariant statements of this body the linear ones read, transitively.
    let mut wanted: HashSet<VName> = steps.iter().flat_map(|(_, s)| free_vars(s)).collect();
    for at in (0..body.stms.len()).rev() {
        let s = &body.stms[at];
        let invariant = s.pat.iter().all(|p| !vary.contains(&p.name));
        if invariant && s.pat.iter().any(|p| wanted.contains(&p.name)) {
            if !copyable(s) {
                return None;
            }
            wanted.extend(free_vars(s));
            steps.push((at, s.clone()));
        }
    }
    steps.sort_by_key(|(at, _)| *at);
    // A map's result the slice stops at may be reached both as a value and as one the
    // map returns for a slice inside it.
    let mut once = HashSet::new();
    frontier.retain(|f| once.insert(*f));
    Some(Slice {
        frontier,
        stms: steps.into_iter().map(|(_, s)| s).collect(),
    })
}

/// Whether an invariant statement can be computed again outside the map: it consumes
/// nothing.
fn copyable(s: &Stm) -> bool {
    !matches!(
        s.exp,
        Exp::Basic(BasicOp::Update(..) | BasicOp::UpdateAcc { .. })
            | Exp::WithAcc { .. }
            | Exp::Soac(Soac::Hist { .. } | Soac::Scatter { .. })
            | Exp::Loop { .. }
    )
}

/// `x`'s statement `s` as a linear step, if it is one.
fn linear_step(
    s: &mut Stm,
    x: VName,
    vary: &HashSet<VName>,
    stops: &HashSet<VName>,
    ns: &mut NameSource,
) -> Option<Step> {
    let is_vary = |e: &SubExp| e.as_var().is_some_and(|v| vary.contains(&v));
    let all_fixed = |es: &[SubExp]| !es.iter().any(is_vary);
    let float = ns
        .type_of(x)
        .and_then(Type::elem)
        .is_some_and(|t| t.is_float());
    if !float {
        return None;
    }
    let operands: Vec<SubExp> = match &s.exp {
        Exp::Basic(op) => match op {
            BasicOp::BinOp(BinOp::Add | BinOp::Sub, a, b) if is_vary(a) && is_vary(b) => {
                vec![a.clone(), b.clone()]
            }
            BasicOp::BinOp(BinOp::Mul, a, b) if is_vary(a) != is_vary(b) => {
                vec![if is_vary(a) { a.clone() } else { b.clone() }]
            }
            BasicOp::BinOp(BinOp::Div, a, c) if is_vary(a) && !is_vary(c) => vec![a.clone()],
            BasicOp::UnOp(UnOp::Neg, a) if is_vary(a) => vec![a.clone()],
            BasicOp::SubExp(a) if is_vary(a) => vec![a.clone()],
            BasicOp::Copy(a) | BasicOp::Rearrange(_, a) => vec![SubExp::Var(*a)],
            BasicOp::Replicate(shape, a) if is_vary(a) && all_fixed(shape) => vec![a.clone()],
            BasicOp::Reshape { arr, shape } if all_fixed(shape) => vec![SubExp::Var(*arr)],
            BasicOp::Index(a, idx) if idx.iter().all(|d| fixed_index(d, vary)) => {
                vec![SubExp::Var(*a)]
            }
            _ => return None,
        },
        Exp::Soac(Soac::Map { .. }) => return map_step(s, x, vary, stops, ns),
        Exp::Soac(Soac::Reduce { .. }) => return sum_step(s, vary, ns),
        _ => return None,
    };
    Some(Step {
        stm: s.clone(),
        operands: operands.iter().filter_map(SubExp::as_var).collect(),
        exported: Vec::new(),
    })
}

fn fixed_index(d: &DimIndex, vary: &HashSet<VName>) -> bool {
    let fixed = |e: &SubExp| e.as_var().is_none_or(|v| !vary.contains(&v));
    match d {
        DimIndex::Fix(e) => fixed(e),
        DimIndex::Slice { start, end, stride } => {
            [start, end, stride].into_iter().flatten().all(fixed)
        }
    }
}

/// Result `x` of a map whose lambda's result is linear in its varying parameters: the map
/// of that linear part over the arrays those parameters take (and the invariant ones it
/// reads). Values the lambda's slice stops at that the lambda computes become results of
/// the map.
fn map_step(
    s: &mut Stm,
    x: VName,
    vary: &HashSet<VName>,
    stops: &HashSet<VName>,
    ns: &mut NameSource,
) -> Option<Step> {
    let Exp::Soac(Soac::Map { w, lam, arrs }) = &mut s.exp else {
        return None;
    };
    if w.as_var().is_some_and(|v| vary.contains(&v)) {
        return None;
    }
    let out = s.pat.iter().position(|p| p.name == x)?;
    let r = lam.body.result[out].as_var()?;
    let mut inner_vary = vary.clone();
    for (p, a) in lam.params.iter().zip(arrs.iter()) {
        if vary.contains(a) {
            inner_vary.insert(p.name);
        }
    }
    // What the map returns as a stored value is stored inside it too.
    let inner_stops: HashSet<VName> = (s.pat.iter().zip(&lam.body.result))
        .filter(|(p, _)| stops.contains(&p.name))
        .filter_map(|(_, r)| r.as_var())
        .collect();
    let mut inner = lam.body.clone();
    let sl = slice(&mut inner, &inner_vary, &inner_stops, r, ns)?;
    if sl.stms.is_empty() {
        return None;
    }
    let bound_inside: HashSet<VName> = inner
        .stms
        .iter()
        .flat_map(|s| s.pat.iter().map(|p| p.name))
        .collect();
    // Returning a value per element costs a store and its sum: worth it only when the
    // linear part has sums of its own, not for elementwise arithmetic.
    if sl.frontier.iter().any(|f| bound_inside.contains(f)) && !has_sum(&sl.stms)
        || consumes_any(&inner, &sl.frontier)
    {
        return None;
    }
    let (mut operands, mut exported) = (Vec::new(), Vec::new());
    let mut l_params = Vec::new();
    let mut l_arrs = Vec::new();
    let mut exports = Vec::new();
    for f in &sl.frontier {
        if let Some(j) = lam.params.iter().position(|p| p.name == *f) {
            l_params.push(lam.params[j].clone());
            l_arrs.push(arrs[j]);
            operands.push(arrs[j]);
        } else if bound_inside.contains(f) {
            let ty = ns.type_of(*f)?.clone();
            let outer = match inner.result.iter().position(|e| *e == SubExp::Var(*f)) {
                Some(q) => s.pat[q].name,
                None => {
                    let name = ns.fresh_typed("linear", ty.array_of(w.clone()));
                    exports.push((*f, ty.clone(), name));
                    name
                }
            };
            l_params.push(Param { name: *f, ty });
            l_arrs.push(outer);
            exported.push(outer);
        } else {
            operands.push(*f);
        }
    }
    // The invariant parameters the linear part reads.
    let reads: HashSet<VName> = sl.stms.iter().flat_map(free_vars).collect();
    for (p, a) in lam.params.iter().zip(arrs.iter()) {
        if reads.contains(&p.name) && !inner_vary.contains(&p.name) {
            l_params.push(p.clone());
            l_arrs.push(*a);
        }
    }
    if l_arrs.is_empty() {
        return None;
    }
    let l = lambda_of(l_params, sl.stms, r, lam.ret[out].clone());
    let stm = Stm {
        pat: vec![s.pat[out].clone()],
        exp: Exp::Soac(Soac::Map {
            w: w.clone(),
            lam: l,
            arrs: l_arrs,
        }),
        src: s.src.clone(),
    };
    // Commit: the map computes what its lambda's slice stopped at, and returns it.
    inner
        .result
        .extend(exports.iter().map(|(f, _, _)| SubExp::Var(*f)));
    lam.ret.extend(exports.iter().map(|(_, t, _)| t.clone()));
    lam.body = inner;
    for (_, t, name) in exports {
        s.pat.push(Param {
            name,
            ty: t.array_of(w.clone()),
        });
    }
    Some(Step {
        stm,
        operands,
        exported,
    })
}

/// `reduce (+) 0 (map pre arrs)` with `pre` linear in its varying parameters and the
/// varying values it reads from outside: the sum of that linear part. The slice of `pre`
/// must stop at values from outside it (a sum has no per-element results to return).
fn sum_step(s: &Stm, vary: &HashSet<VName>, ns: &mut NameSource) -> Option<Step> {
    let Exp::Soac(Soac::Reduce {
        w,
        arrs,
        pre,
        lam,
        neutral,
        commutative,
    }) = &s.exp
    else {
        return None;
    };
    let zero = match neutral.as_slice() {
        [SubExp::Const(z)] => *z == runic_prim::Prim::zero(z.ty()),
        _ => false,
    };
    let add = matches!(lam.binop(), Some((BinOp::Add, t)) if t.is_float());
    if !zero || !add || s.pat.len() != 1 || w.as_var().is_some_and(|v| vary.contains(&v)) {
        return None;
    }
    let Some(pre) = pre else {
        // A plain sum of an array's rows.
        let [a] = arrs.as_slice() else {
            return None;
        };
        return vary.contains(a).then(|| Step {
            stm: s.clone(),
            operands: vec![*a],
            exported: Vec::new(),
        });
    };
    let r = pre.body.result[0].as_var()?;
    let mut inner_vary = vary.clone();
    for (p, a) in pre.params.iter().zip(arrs.iter()) {
        if vary.contains(a) {
            inner_vary.insert(p.name);
        }
    }
    let mut inner = pre.body.clone();
    let sl = slice(&mut inner, &inner_vary, &HashSet::new(), r, ns)?;
    let bound_inside: HashSet<VName> = inner
        .stms
        .iter()
        .flat_map(|s| s.pat.iter().map(|p| p.name))
        .collect();
    if sl.stms.is_empty() || sl.frontier.iter().any(|f| bound_inside.contains(f)) {
        return None;
    }
    let mut operands = Vec::new();
    for f in &sl.frontier {
        match pre.params.iter().position(|p| p.name == *f) {
            Some(j) => operands.push(arrs[j]),
            None => operands.push(*f),
        }
    }
    // The parameters the linear part reads, varying or not.
    let reads: HashSet<VName> = sl.stms.iter().flat_map(free_vars).collect();
    let mut l_params = Vec::new();
    let mut l_arrs = Vec::new();
    for (p, a) in pre.params.iter().zip(arrs.iter()) {
        if reads.contains(&p.name) || sl.frontier.contains(&p.name) {
            l_params.push(p.clone());
            l_arrs.push(*a);
        }
    }
    if l_arrs.is_empty() {
        return None;
    }
    let l = lambda_of(l_params, sl.stms, r, pre.ret[0].clone());
    Some(Step {
        stm: Stm {
            pat: s.pat.clone(),
            exp: Exp::Soac(Soac::Reduce {
                w: w.clone(),
                arrs: l_arrs,
                pre: Some(l),
                lam: lam.clone(),
                neutral: neutral.clone(),
                commutative: *commutative,
            }),
            src: s.src.clone(),
        },
        operands,
        exported: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The last top-level map of `text`'s entry point `main` after lowering and copy
    /// propagation, and `tail` of its lambda's first result.
    fn tail_of(text: &str) -> Option<(Tail, NameSource)> {
        let mut sources = runic_syntax::SourceMap::new();
        let file = sources.add("t.fut", text);
        let program = runic_syntax::parse_program(file, text, 0).expect("parses");
        let checked = runic_types::check_program(program, &sources).expect("checks");
        let prog = runic_lower::lower_with_sources(&checked, Some(&sources)).expect("lowers");
        let mut prog = crate::copy_prop(prog);
        prog.record_types();
        let f = prog.entry("main").expect("main");
        let lam = f
            .body
            .stms
            .iter()
            .rev()
            .find_map(|s| match &s.exp {
                Exp::Soac(Soac::Map { lam, .. }) => Some(lam.clone()),
                _ => None,
            })
            .expect("a map");
        let params: Vec<VName> = lam.params.iter().map(|p| p.name).collect();
        let v = lam.body.result[0].as_var().expect("a variable");
        let mut ns = prog.names.clone();
        let (body, t) = tail(&lam.body, &params, &HashSet::new(), v, &mut ns)?;
        // The frontier is bound in the body the tail belongs to, or a parameter.
        for u in &t.frontier {
            assert!(
                params.contains(u) || body.stms.iter().any(|s| s.binds(*u)),
                "{u:?} is not a value of the body"
            );
        }
        Some((t, ns))
    }

    const MATVEC: &str = "def matvec [m] [n] (a: [m][n]f64) (v: [n]f64) : [m]f64 =
                            map (\\row -> f64.sum (map2 (*) row v)) a\n";

    #[test]
    fn a_product_with_a_free_matrix_is_a_tail_of_its_vector() {
        let (t, ns) = tail_of(&format!(
            "{MATVEC}entry main [n] [d] (q: [d][d]f64) (xs: [n][d]f64) =
               map (\\x -> let u = map (\\a -> a * a) x in map f64.neg (matvec q u)) xs"
        ))
        .expect("a linear tail");
        assert_eq!(t.frontier.len(), 1);
        assert_eq!(ns.hint(t.frontier[0]), "mapped", "the squares");
        let text = format!("{:?}", t.lam.body.stms);
        assert!(text.contains("Neg") && text.contains("Mul"), "{text}");
        // The tail reads only its parameter, the matrix and its size, all free in the
        // map's lambda.
        let free = free_vars(&t.lam);
        assert!(
            free.iter().all(|v| ["q", "d"].contains(&ns.hint(*v))),
            "{free:?}"
        );
    }

    #[test]
    fn a_matrix_that_varies_with_the_iteration_is_no_coefficient() {
        let r = tail_of(&format!(
            "{MATVEC}entry main [n] [d] (q: [d][d]f64) (xs: [n][d]f64) =
               map (\\x -> let u = map (\\a -> a * a) x
                          let qx = map (map (* x[0])) q
                          in matvec qx u) xs"
        ));
        assert!(r.is_none());
    }

    #[test]
    fn an_affine_function_is_no_tail() {
        let r = tail_of(&format!(
            "{MATVEC}entry main [n] [d] (q: [d][d]f64) (xs: [n][d]f64) =
               map (\\x -> let u = map (\\a -> a * a) x in map (+ 1) (matvec q u)) xs"
        ));
        assert!(r.is_none());
    }

    #[test]
    fn a_tail_of_a_larger_value_is_not_taken() {
        // The row sums of a d×d matrix the iteration builds: summing the matrix over the
        // iterations would cost more than the sums it saves.
        let r = tail_of(
            "entry main [n] [d] (xs: [n][d]f64) =
               map (\\x -> let m = map (\\a -> map (\\b -> a * b) x) x
                          in map f64.sum m) xs",
        );
        assert!(r.is_none());
    }
}
