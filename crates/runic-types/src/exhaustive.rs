//! Exhaustiveness of `match` (Section 7.15): does a list of pattern rows cover every value
//! of the given column types? The classic specialisation algorithm on pattern matrices.

use crate::infer_ty::T;
use runic_syntax::ast::{Literal, Pat, PatKind};

/// Strip attributes and ascriptions.
fn core(p: &Pat) -> &Pat {
    match &p.kind {
        PatKind::Ascribe(q, _) | PatKind::Attr(_, q) => core(q),
        _ => p,
    }
}

fn is_wild(p: &Pat) -> bool {
    matches!(core(p).kind, PatKind::Var(_) | PatKind::Wildcard)
}

pub(crate) fn covers(rows: &[Vec<&Pat>], tys: &[T]) -> bool {
    if tys.is_empty() {
        return !rows.is_empty();
    }
    if rows.is_empty() {
        return false;
    }
    let rest = &tys[1..];
    match &tys[0] {
        T::Sum(cs) => cs.iter().all(|(c, payload)| {
            let mut spec: Vec<Vec<&Pat>> = Vec::new();
            for row in rows {
                let p = core(row[0]);
                match &p.kind {
                    PatKind::Constr(d, args) if d == c && args.len() == payload.len() => {
                        let mut r: Vec<&Pat> = args.iter().collect();
                        r.extend(row[1..].iter().copied());
                        spec.push(r);
                    }
                    _ if is_wild(p) => {
                        let mut r: Vec<&Pat> = std::iter::repeat_n(p, payload.len()).collect();
                        r.extend(row[1..].iter().copied());
                        spec.push(r);
                    }
                    _ => {}
                }
            }
            let mut tys2 = payload.clone();
            tys2.extend(rest.iter().cloned());
            covers(&spec, &tys2)
        }),
        T::Record(fs) => {
            let names: Vec<&String> = fs.keys().collect();
            let mut spec: Vec<Vec<&Pat>> = Vec::new();
            for row in rows {
                let p = core(row[0]);
                let fields: Option<Vec<&Pat>> = match &p.kind {
                    PatKind::Tuple(ps) if ps.len() == names.len() => {
                        names.iter().map(|n| n.parse::<usize>().ok().and_then(|i| ps.get(i))).collect()
                    }
                    PatKind::Record(ps) => names.iter().map(|n| ps.iter().find(|(m, _)| m == *n).map(|(_, q)| q)).collect(),
                    _ if is_wild(p) => Some(vec![p; names.len()]),
                    _ => None,
                };
                if let Some(mut r) = fields {
                    r.extend(row[1..].iter().copied());
                    spec.push(r);
                }
            }
            let mut tys2: Vec<T> = fs.values().cloned().collect();
            tys2.extend(rest.iter().cloned());
            covers(&spec, &tys2)
        }
        T::Prim(runic_syntax::ast::PrimType::Bool) => [true, false].iter().all(|b| {
            let spec: Vec<Vec<&Pat>> = rows
                .iter()
                .filter(|row| {
                    let p = core(row[0]);
                    is_wild(p) || matches!(&p.kind, PatKind::Literal { lit: Literal::Bool(x), .. } if x == b)
                })
                .map(|row| row[1..].to_vec())
                .collect();
            covers(&spec, rest)
        }),
        _ => {
            // Infinite (or unknown) types: only wildcard rows can cover them.
            let spec: Vec<Vec<&Pat>> = rows.iter().filter(|row| is_wild(row[0])).map(|row| row[1..].to_vec()).collect();
            covers(&spec, rest)
        }
    }
}
