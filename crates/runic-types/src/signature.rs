//! Turning the intrinsic signatures of `intrinsics.rs` (runic type syntax) into schemes.

use crate::check::Scheme;
use crate::infer_ty::{Sz, T};
use crate::intrinsics::INTRINSICS;
use runic_syntax::ast::{ExpKind, Literal, Name, PrimType, SizeExp, TypeExp};
use runic_syntax::FileId;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

struct Ctx {
    tparams: Vec<Name>,
    hidden: Vec<Name>,
    exist: Vec<Name>,
}

pub(crate) fn intrinsic_schemes() -> Result<HashMap<Name, Rc<Scheme>>, String> {
    let mut out = HashMap::new();
    for (name, params, ty) in INTRINSICS {
        let te = runic_syntax::parse_type(FileId(u32::MAX), ty)
            .map_err(|_| format!("bad intrinsic type for {name}"))?;
        let mut ctx = Ctx {
            tparams: vec![],
            hidden: vec![],
            exist: vec![],
        };
        let mut sparams = Vec::new();
        for p in params.split_whitespace() {
            if let Some(s) = p.strip_prefix('[').and_then(|p| p.strip_suffix(']')) {
                sparams.push(s.to_string());
            } else {
                ctx.tparams
                    .push(p.trim_start_matches(['\'', '^', '~']).to_string());
            }
        }
        let t = convert(&te, &mut ctx, false);
        let sc = Scheme {
            tparams: ctx.tparams,
            sparams,
            hidden: ctx.hidden,
            exist: ctx.exist,
            implicit: vec![],
            no_fun: vec![],
            strict: vec![],
            poly: true,
            arity: None,
            ty: t,
        };
        out.insert(name.to_string(), Rc::new(sc));
    }
    Ok(out)
}

fn convert(te: &TypeExp, ctx: &mut Ctx, param_pos: bool) -> T {
    match te {
        TypeExp::Var(q, _) => match PrimType::from_name(&q.name) {
            Some(p) if !ctx.tparams.contains(&q.name) => T::Prim(p),
            _ => T::Param(q.name.clone()),
        },
        TypeExp::Apply(f, _, _) => convert(f, ctx, param_pos),
        TypeExp::Tuple(ts, _) => T::tuple(ts.iter().map(|t| convert(t, ctx, param_pos)).collect()),
        TypeExp::Record(fs, _) => T::Record(
            fs.iter()
                .map(|(n, t)| (n.clone(), convert(t, ctx, param_pos)))
                .collect(),
        ),
        TypeExp::Array(s, e, _) => {
            let sz = match s {
                SizeExp::Anon(_) => {
                    let n = format!("_anon{}", ctx.hidden.len() + ctx.exist.len());
                    if param_pos {
                        ctx.hidden.push(n.clone());
                    } else {
                        ctx.exist.push(n.clone());
                    }
                    Sz::Name(n)
                }
                SizeExp::Exp(e) => static_size(e),
            };
            T::Array(sz, Box::new(convert(e, ctx, param_pos)))
        }
        TypeExp::Unique(t, _) => convert(t, ctx, param_pos),
        TypeExp::Arrow(n, a, b, _) => T::Arrow(
            n.clone(),
            Box::new(convert(a, ctx, true)),
            Box::new(convert(b, ctx, param_pos)),
        ),
        TypeExp::Sum(cs, _) => {
            let m: BTreeMap<Name, Vec<T>> = cs
                .iter()
                .map(|(c, ts)| {
                    (
                        c.clone(),
                        ts.iter().map(|t| convert(t, ctx, param_pos)).collect(),
                    )
                })
                .collect();
            T::Sum(m)
        }
        TypeExp::Exists(names, t, _) => {
            ctx.exist.extend(names.iter().cloned());
            convert(t, ctx, param_pos)
        }
    }
}

fn static_size(e: &runic_syntax::ast::Exp) -> Sz {
    match &e.kind {
        ExpKind::Var(q) => Sz::Name(q.name.clone()),
        ExpKind::Literal(Literal::Int { value, .. }) => Sz::Const(*value as i64),
        ExpKind::BinOp { op, lhs, rhs } => {
            let o: &'static str = match op.name.name.as_str() {
                "+" => "+",
                "-" => "-",
                _ => "*",
            };
            Sz::Op(o, Box::new(static_size(lhs)), Box::new(static_size(rhs)))
        }
        _ => Sz::Const(0),
    }
}
