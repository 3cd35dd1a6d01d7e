//! runic-trace: seed 000's tracing API. A runic function is built by running a Rust
//! closure over traced values ([`Tracer`]): every operation records the IR statement the
//! front end would emit for it, and closures given to [`Tracer::map`], [`Tracer::reduce`],
//! [`Tracer::scan`], [`map2`], … are traced into the lambdas of those SOACs. The result is
//! an ordinary [`runic_ir::Prog`] with one entry point, so differentiation (`runic-ad`),
//! the optimiser and native execution apply to it unchanged.
//!
//! - [`trace`] gives the function itself; [`grad`], [`vjp`] and [`jvp`] give an entry point
//!   whose body applies the IR's `vjp` / `jvp` construct to the traced function (as the
//!   front end does for `vjp f x 1`), for `runic-ad` to differentiate.
//! - Parameters are described by [`ParamSpec`]: an element type and one size name per
//!   dimension; parameters sharing a size name must have equal sizes (checked on entry, as
//!   the language's size parameters are), which lets traced code combine them without
//!   run-time shape checks.
//! - Errors in the traced code (mismatched types, a value used outside the closure that
//!   made it, …) do not panic: the trace returns the first one as a [`TraceError`].
//!
//! ```
//! use runic_trace::{dot, grad, ParamSpec, PrimType::F32};
//! // The gradient of x ↦ x·x + Σ sin x with respect to x.
//! let g = grad(&[ParamSpec::array(F32, &["n"])], &[0], |a| {
//!     let x = a[0];
//!     dot(x, x) + x.map(|e| e.sin()).sum()
//! })
//! .unwrap();
//! assert!(runic_ir::verify(&g.prog).is_ok());
//! assert_eq!(g.results.len(), 1);
//! ```

mod ctx;
mod soacs;
mod tracer;

pub use runic_ir::PrimType;
pub use soacs::{dot, iota, map2, map3, map_n, replicate, zip, Zip};
pub use tracer::{constant, max, min, select, Operand, Tracer};

use runic_ir::{
    BasicOp, BinOp, EntryInfo, EntryParam, EntryResult, Exp, FunDef, Param, Prim, Prog, SrcInfo,
    SubExp, Type, VName,
};
use std::collections::HashMap;

/// A parameter of a traced function: its element type and the name of each dimension's
/// size (none for a scalar). Parameters that name the same size must agree on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamSpec {
    pub elem: PrimType,
    pub dims: Vec<String>,
}

impl ParamSpec {
    /// A scalar of type `elem`.
    pub fn scalar(elem: PrimType) -> ParamSpec {
        ParamSpec { elem, dims: vec![] }
    }

    /// An array of `elem` with the named sizes (`&["n", "m"]`: an `[n][m]` array).
    pub fn array(elem: PrimType, dims: &[&str]) -> ParamSpec {
        ParamSpec {
            elem,
            dims: dims.iter().map(|d| d.to_string()).collect(),
        }
    }
}

/// A traced function: a program with one entry point.
#[derive(Clone, Debug)]
pub struct Traced {
    /// The program; AD constructs in it are eliminated by `runic_ad`.
    pub prog: Prog,
    /// The name of its entry point.
    pub entry: String,
    /// The entry point's parameters, in order (for `vjp`/`jvp`, the seeds follow the
    /// function's own parameters).
    pub params: Vec<ParamSpec>,
    /// The types of its results.
    pub results: Vec<Type>,
}

/// Why a function could not be traced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    pub message: String,
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "tracing failed: {}", self.message)
    }
}

impl std::error::Error for TraceError {}

fn error(message: impl Into<String>) -> TraceError {
    TraceError {
        message: message.into(),
    }
}

/// The name of the entry point of every traced program.
pub const ENTRY: &str = "main";

/// Traces `f` over parameters described by `params`: the entry point takes those
/// parameters and returns what `f` returns.
pub fn trace(
    params: &[ParamSpec],
    f: impl FnOnce(&[Tracer]) -> Vec<Tracer>,
) -> Result<Traced, TraceError> {
    build(params, |args, _| f(args))
}

/// The gradient of a scalar function: the entry point takes `params` and returns the
/// gradient of `f` with respect to the parameters numbered in `wrt` (`vjp f x 1`).
pub fn grad(
    params: &[ParamSpec],
    wrt: &[usize],
    f: impl FnOnce(&[Tracer]) -> Tracer,
) -> Result<Traced, TraceError> {
    build(params, |args, _| {
        let Some(rs) = vjp_of(
            args,
            wrt,
            |a| vec![f(a)],
            |cx, res| {
                let one = match res.first().and_then(Type::elem) {
                    Some(t) if res.len() == 1 && res[0].rank() == 0 && t.is_float() => {
                        Prim::float(t, 1.0)
                    }
                    _ => {
                        cx.fail("grad of a function whose result is not one float scalar");
                        return None;
                    }
                };
                Some(vec![SubExp::Const(one)])
            },
        ) else {
            return vec![];
        };
        rs[1..].to_vec()
    })
}

/// Reverse mode: the entry point takes `params` and then one cotangent per result of `f`;
/// it returns the results of `f` followed by the cotangents of the parameters numbered in
/// `wrt`.
pub fn vjp(
    params: &[ParamSpec],
    wrt: &[usize],
    f: impl FnOnce(&[Tracer]) -> Vec<Tracer>,
) -> Result<Traced, TraceError> {
    build(params, |args, extra| {
        vjp_of(args, wrt, f, |cx, res| {
            let mut cots = Vec::new();
            for t in res {
                let p = Param {
                    name: cx.names.fresh_typed("cot", t.clone()),
                    ty: t.clone(),
                };
                cots.push(SubExp::Var(p.name));
                extra.push(p);
            }
            Some(cots)
        })
        .unwrap_or_default()
    })
}

/// Forward mode: the entry point takes `params` and then one tangent per parameter
/// numbered in `wrt`; it returns the results of `f` followed by their tangents.
pub fn jvp(
    params: &[ParamSpec],
    wrt: &[usize],
    f: impl FnOnce(&[Tracer]) -> Vec<Tracer>,
) -> Result<Traced, TraceError> {
    build(params, |args, extra| {
        let Some((lam, primals, types)) = differentiable(args, wrt, f) else {
            return vec![];
        };
        ctx::with(|cx| {
            let mut tangents = Vec::new();
            for t in types {
                let p = Param {
                    name: cx.names.fresh_typed("tan", t.clone()),
                    ty: t,
                };
                tangents.push(SubExp::Var(p.name));
                extra.push(p);
            }
            let n = lam.ret.len() * 2;
            let exp = Exp::Jvp {
                lam,
                args: primals,
                tangents,
                vector: false,
            };
            cx.emit(n, |b| {
                Ok(b.let_exp("jvp", exp)?
                    .into_iter()
                    .map(SubExp::Var)
                    .collect())
            })
        })
    })
}

/// `f` traced as a lambda over the parameters numbered in `wrt` (the others are free in
/// it): the lambda, the operands of those parameters and their types.
fn differentiable(
    args: &[Tracer],
    wrt: &[usize],
    f: impl FnOnce(&[Tracer]) -> Vec<Tracer>,
) -> Option<(runic_ir::Lambda, Vec<SubExp>, Vec<Type>)> {
    let mut primals = Vec::new();
    let mut types = Vec::new();
    let ok = ctx::with(|cx| {
        for &i in wrt {
            let Some(&a) = args.get(i) else {
                cx.fail(format!("no parameter number {i} to differentiate"));
                return false;
            };
            let Some((s, t)) = cx.get(a) else {
                return false;
            };
            if !t.elem().is_some_and(PrimType::is_float) {
                cx.fail(format!(
                    "differentiation with respect to parameter {i}, not a float"
                ));
                return false;
            }
            primals.push(s);
            types.push(t);
        }
        true
    });
    if !ok {
        return None;
    }
    let lam = ctx::lambda(&types, |qs| {
        let mut all = args.to_vec();
        for (&i, &q) in wrt.iter().zip(qs) {
            all[i] = q;
        }
        f(&all)
    })?;
    Some((lam, primals, types))
}

/// `vjp f x ȳ` of the traced `f`, with the cotangents `seeds` makes from the result types;
/// the results of `f` followed by the cotangents of the parameters.
fn vjp_of(
    args: &[Tracer],
    wrt: &[usize],
    f: impl FnOnce(&[Tracer]) -> Vec<Tracer>,
    seeds: impl FnOnce(&mut ctx::Ctx, &[Type]) -> Option<Vec<SubExp>>,
) -> Option<Vec<Tracer>> {
    let (lam, primals, _) = differentiable(args, wrt, f)?;
    ctx::with(|cx| {
        let cotangents = seeds(cx, &lam.ret)?;
        let n = lam.ret.len() + primals.len();
        let exp = Exp::Vjp {
            lam,
            args: primals,
            cotangents,
            vector: false,
        };
        Some(cx.emit(n, |b| {
            Ok(b.let_exp("vjp", exp)?
                .into_iter()
                .map(SubExp::Var)
                .collect())
        }))
    })
}

/// Builds the entry point: its parameters with their sizes read (and named sizes checked
/// equal), then the body traced by `body`, which may add parameters after the declared
/// ones (seeds of `vjp`/`jvp`).
fn build(
    specs: &[ParamSpec],
    body: impl FnOnce(&[Tracer], &mut Vec<Param>) -> Vec<Tracer>,
) -> Result<Traced, TraceError> {
    let session =
        ctx::Session::start().ok_or_else(|| error("a trace was started inside another trace"))?;
    let (params, args, size_names) = ctx::with(|cx| entry_params(cx, specs));
    let mut extra = Vec::new();
    let results = body(&args, &mut extra);
    let resolved: Vec<(SubExp, Type)> =
        ctx::with(|cx| results.iter().filter_map(|&r| cx.get(r)).collect());
    let (names, stms, err) = session.finish();
    if let Some(e) = err {
        return Err(error(e));
    }
    if resolved.is_empty() {
        return Err(error("the traced function returned no values"));
    }
    let text = |t: &Type| type_text(t, &size_names);
    let mut all_specs = specs.to_vec();
    let mut entry_params: Vec<EntryParam> = params
        .iter()
        .map(|p| EntryParam::data(text(&p.ty)))
        .collect();
    for p in &extra {
        entry_params.push(EntryParam::data(text(&p.ty)));
        all_specs.push(spec_of(&p.ty, &size_names));
    }
    let results: Vec<EntryResult> = resolved
        .iter()
        .map(|(_, t)| EntryResult {
            type_text: text(t),
            num_values: 1,
            opaque: false,
            layout: None,
        })
        .collect();
    let ret: Vec<Type> = resolved.iter().map(|(_, t)| t.clone()).collect();
    let fun = FunDef {
        name: format!("entry_{ENTRY}"),
        params: params.into_iter().chain(extra).collect(),
        ret: ret.clone(),
        body: runic_ir::Body {
            stms,
            result: resolved.into_iter().map(|(s, _)| s).collect(),
        },
        entry: Some(EntryInfo {
            name: ENTRY.to_string(),
            params: entry_params,
            results,
        }),
        src: SrcInfo::default(),
    };
    let prog = Prog {
        funs: vec![fun],
        names,
    };
    runic_ir::verify(&prog).map_err(|es| {
        error(format!(
            "internal error: the traced program is invalid: {}",
            es.join("; ")
        ))
    })?;
    Ok(Traced {
        prog,
        entry: ENTRY.to_string(),
        params: all_specs,
        results: ret,
    })
}

/// The entry point's parameters (each with its own size variables, read by `size`
/// statements as the front end does), tracers for them whose types use the first
/// variable of each size name, and those variables' names.
fn entry_params(
    cx: &mut ctx::Ctx,
    specs: &[ParamSpec],
) -> (Vec<Param>, Vec<Tracer>, HashMap<VName, String>) {
    let mut sizes: HashMap<String, SubExp> = HashMap::new();
    let mut size_names = HashMap::new();
    let mut params = Vec::new();
    let mut tracers = Vec::new();
    for spec in specs {
        let name = cx.names.fresh("arg");
        let mut own = Vec::new();
        let mut canonical = Vec::new();
        for (k, dim) in spec.dims.iter().enumerate() {
            let d = cx.emit(1, |b| Ok(vec![b.array_size(name, k)]))[0];
            let d = cx.get(d).map(|(s, _)| s).unwrap_or(SubExp::i64(0));
            match sizes.get(dim) {
                Some(first) => {
                    let first = first.clone();
                    let same = d.clone();
                    cx.emit(0, |b| {
                        let c = b.op2(BinOp::Eq, first, same)?;
                        let msg = "entry point arguments have invalid sizes.".to_string();
                        b.let_basic(
                            "ok",
                            BasicOp::Assert {
                                cond: c,
                                message: msg,
                            },
                        )?;
                        Ok(vec![])
                    });
                }
                None => {
                    sizes.insert(dim.clone(), d.clone());
                    if let SubExp::Var(v) = &d {
                        size_names.insert(*v, dim.clone());
                    }
                }
            }
            own.push(d);
            canonical.push(sizes[dim].clone());
        }
        let shaped = |shape: Vec<SubExp>| match shape.is_empty() {
            true => Type::Prim(spec.elem),
            false => Type::Array {
                elem: spec.elem,
                shape,
            },
        };
        let ty = shaped(own);
        cx.names.set_type(name, ty.clone());
        params.push(Param { name, ty });
        tracers.push(cx.new_val(SubExp::Var(name), shaped(canonical)));
    }
    (params, tracers, size_names)
}

/// A type as the host sees it: `[n][m]f32`, with the size names of the parameters.
fn type_text(t: &Type, size_names: &HashMap<VName, String>) -> String {
    let mut s = String::new();
    if let Type::Array { shape, .. } = t {
        for d in shape {
            match d {
                SubExp::Var(v) => s.push_str(&format!(
                    "[{}]",
                    size_names.get(v).map(String::as_str).unwrap_or("")
                )),
                SubExp::Const(c) => s.push_str(&format!("[{}]", c.plain())),
            }
        }
    }
    s.push_str(t.elem().map(|p| p.name()).unwrap_or("acc"));
    s
}

/// The parameter description of a seed of type `t`.
fn spec_of(t: &Type, size_names: &HashMap<VName, String>) -> ParamSpec {
    let dims = match t {
        Type::Array { shape, .. } => shape
            .iter()
            .map(|d| match d {
                SubExp::Var(v) => size_names.get(v).cloned().unwrap_or_default(),
                SubExp::Const(c) => c.plain(),
            })
            .collect(),
        _ => vec![],
    };
    ParamSpec {
        elem: t.elem().unwrap_or(PrimType::F32),
        dims,
    }
}
