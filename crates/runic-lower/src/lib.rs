//! runic-lower: typed AST → core IR.
//!
//! Every function is specialised at its call site (monomorphisation and
//! defunctionalisation by inlining: the language has no recursion, so this terminates):
//! function values are known statically and never reach the IR, lambdas appear only as
//! SOAC operators, records/tuples/sums are flattened into several variables, and arrays of
//! records become records of arrays. Each entry point becomes one IR function whose
//! parameters are exactly its external data values. Statements that can fail carry the
//! source location and the call sites they were inlined through.

mod fallible;
mod intrinsics;
mod lower;
mod sizes;
mod val;

use lower::{loc_of, Lower};
use runic_ir::*;
use runic_syntax::ast::Dec;
use runic_syntax::{SourceMap, Span};
use runic_types::Checked;
use val::{Env, Fun, Val};

/// Why a program could not be lowered (a construct the IR backend does not handle yet).
#[derive(Clone, Debug, PartialEq)]
pub struct LowerError {
    pub message: String,
    pub span: Option<Span>,
}

impl std::fmt::Display for LowerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for LowerError {}

/// IR the lowering built whose types cannot be inferred: a bug in the lowering.
impl From<TypeError> for LowerError {
    fn from(e: TypeError) -> Self {
        LowerError {
            message: format!("internal error in the ir backend's lowering: {e}"),
            span: None,
        }
    }
}

/// Lower a checked program. Without the source map, assertion messages quote the
/// condition pretty-printed rather than as written: prefer [`lower_with_sources`].
pub fn lower(checked: &Checked) -> Result<Prog, LowerError> {
    lower_with_sources(checked, None)
}

pub fn lower_with_sources(
    checked: &Checked,
    sources: Option<&SourceMap>,
) -> Result<Prog, LowerError> {
    let mut l = Lower::new(checked, sources);
    let mut funs = Vec::new();
    for e in &checked.info.entries {
        funs.push(lower_entry(&mut l, e)?);
    }
    Ok(Prog {
        funs,
        names: l.names,
    })
}

fn lower_entry<'a>(
    l: &mut Lower<'a>,
    e: &'a runic_types::EntryPoint,
) -> Result<FunDef, LowerError> {
    l.reset_function();
    // An entry point sees the definitions before it, not itself.
    l.pos = e.dec_index;
    let vb = match &l.ck.program.decs[e.dec_index] {
        Dec::Val(vb) => vb,
        _ => return lower::unsupported("an entry point that is not a value", Some(e.span)),
    };
    // The interpreter reports argument size mismatches without a location.
    l.loc = None;
    let mut params = Vec::new();
    let mut args = Vec::new();
    let mut env = Env::default();
    let mut entry_params = Vec::new();
    for p in &e.params {
        let Some(layout) = data_layout(&p.ty) else {
            return lower::unsupported(
                "entry parameters that are not data values or tuples and records of them",
                Some(e.span),
            );
        };
        let hint = p.name.as_deref().unwrap_or("arg");
        let arg = lower_entry_param(l, &mut env, &mut params, hint, &p.ty, e.span)?;
        // A scalar parameter may be the size of a later one (`entry f n (xs: [n]i32)`).
        if let (Some(pn), Val::Leaf(s, ty @ Type::Prim(_))) = (&p.name, &arg) {
            env = env.bind(pn, Val::Leaf(s.clone(), ty.clone()));
        }
        entry_params.push(EntryParam {
            type_text: p.ty.to_string(),
            layout,
        });
        args.push(arg);
    }
    l.loc = Some(loc_of(e.span));
    let f = if vb.params.is_empty() {
        l.constant(e.dec_index, None, &env)?
    } else {
        let mut sizes = Vec::new();
        for tp in &vb.type_params {
            if let runic_syntax::ast::TypeParam::Size(n, _) = tp {
                if let Some(v) = env.lookup(n) {
                    sizes.push((n.clone(), v.clone()));
                }
            }
        }
        Val::Fun(std::rc::Rc::new(Fun::Closure {
            params: &vb.params,
            body: &vb.body,
            env: Env::default(),
            args: Vec::new(),
            type_params: &vb.type_params,
            sizes,
            ret: vb.ret.as_ref(),
            scope: e.dec_index,
        }))
    };
    let v = if args.is_empty() {
        f
    } else {
        l.apply_many(f, args, e.span)?
    };
    let parts: Vec<Val> = if e.results.len() > 1 {
        (0..e.results.len())
            .map(|i| v.field(&i.to_string()).cloned().unwrap_or(Val::unit()))
            .collect()
    } else {
        vec![v]
    };
    let mut result = Vec::new();
    let mut ret = Vec::new();
    let mut results = Vec::new();
    for (k, part) in parts.iter().enumerate() {
        let leaves = l.leaves(part, e.span)?;
        let ty = e
            .results
            .get(k)
            .cloned()
            .unwrap_or(runic_types::Type::unit());
        let opaque = !matches!(part, Val::Leaf(..));
        results.push(EntryResult {
            type_text: ty.to_string(),
            num_values: leaves.len(),
            opaque,
            layout: if opaque { data_layout(&ty) } else { None },
        });
        for (s, t) in leaves {
            result.push(s);
            ret.push(t);
        }
    }
    let mut stms = std::mem::take(&mut l.prefix);
    stms.extend(l.frames.pop().unwrap_or_default());
    l.frames.push(Vec::new());
    // Sizes of the parameters are computed at the start of the body.
    Ok(FunDef {
        name: format!("entry_{}", e.name),
        params,
        ret,
        body: Body { stms, result },
        entry: Some(EntryInfo {
            name: e.name.clone(),
            params: entry_params,
            results,
        }),
        src: SrcInfo {
            loc: Some(loc_of(e.span)),
            inlined_from: vec![],
            stripmine: None,
        },
    })
}

/// One IR parameter per data value inside an entry parameter's type (fields in canonical
/// order, as lowering flattens records), with the sizes its arrays name bound or checked;
/// the parameter's value as the function body sees it.
fn lower_entry_param<'a>(
    l: &mut Lower<'a>,
    env: &mut Env<'a>,
    params: &mut Vec<Param>,
    hint: &str,
    ty: &runic_types::Type,
    span: Span,
) -> Result<Val<'a>, LowerError> {
    use runic_types::Type as T;
    let (elem, dims) = match ty {
        T::Prim(t) => (*t, vec![]),
        T::Array { elem, shape } => match &**elem {
            T::Prim(t) => (*t, shape.clone()),
            _ => return lower::unsupported("entry parameters of non-primitive arrays", Some(span)),
        },
        T::Record(fields) => {
            let mut vals = Vec::new();
            for (field, fty) in fields {
                let hint = format!("{hint}_{field}");
                vals.push((
                    field.clone(),
                    lower_entry_param(l, env, params, &hint, fty, span)?,
                ));
            }
            return Ok(Val::Rec(vals));
        }
        _ => return lower::unsupported("entry parameters that are not data values", Some(span)),
    };
    let name = l.names.fresh(hint);
    let mut shape = Vec::new();
    for (k, s) in dims.iter().enumerate() {
        let d = l.b().array_size(name, k);
        match s {
            runic_types::Size::Var(n) => match env.lookup(n) {
                Some(Val::Leaf(prev, _)) => {
                    // Checked equal to the size that named it first, the dimension is that
                    // size from here on: one variable per size of the entry's type, so that
                    // what the body builds from one parameter has the type of what it builds
                    // from another (an RNN's state from `replicate h` and from the rows of
                    // its weights: a loop whose state keeps its shape).
                    let prev = prev.clone();
                    let c = l.b().op2(BinOp::Eq, prev.clone(), d)?;
                    l.assert(c, "entry point arguments have invalid sizes.")?;
                    shape.push(prev);
                    continue;
                }
                _ => *env = env.bind(n, l.leaf_of(d.clone())?),
            },
            runic_types::Size::Const(k) => {
                let c = l.b().op2(BinOp::Eq, SubExp::i64(*k), d.clone())?;
                l.assert(c, "entry point arguments have invalid sizes.")?;
            }
            _ => {}
        }
        shape.push(d);
    }
    let ty = if shape.is_empty() {
        Type::Prim(elem)
    } else {
        Type::Array { elem, shape }
    };
    l.names.set_type(name, ty.clone());
    params.push(Param {
        name,
        ty: ty.clone(),
    });
    Ok(Val::Leaf(SubExp::Var(name), ty))
}

/// How a tuple or record of data values maps onto its leaves (in the order lowering
/// flattens it: fields in canonical order); `None` for anything else (sums, functions,
/// arrays of records), which stays opaque.
fn data_layout(t: &runic_types::Type) -> Option<ValueLayout> {
    use runic_types::Type as T;
    match t {
        T::Prim(_) => Some(ValueLayout::Value),
        T::Array { elem, .. } if matches!(**elem, T::Prim(_)) => Some(ValueLayout::Value),
        T::Record(fs) if !fs.is_empty() => {
            let parts = fs
                .iter()
                .map(|(n, ft)| Some((n.clone(), data_layout(ft)?)))
                .collect::<Option<Vec<_>>>()?;
            Some(match t.as_tuple() {
                Some(_) => ValueLayout::Tuple(parts.into_iter().map(|(_, l)| l).collect()),
                None => ValueLayout::Record(parts),
            })
        }
        _ => None,
    }
}
