//! Loops (`for`, `for … in`, `while`), with sizes that change across iterations as parameters.

use super::*;
use crate::val::{Env, Val};
use runic_ir::traverse::{type_mut, Substitute};
use runic_ir::*;
use runic_syntax::ast::{self, PatKind};
use std::collections::HashMap;

impl<'a> Lower<'a> {
    pub(super) fn loop_exp(
        &mut self,
        e: &'a ast::Exp,
        pat: &'a ast::Pat,
        init: Option<&'a ast::Exp>,
        form: &'a ast::LoopForm,
        body: &'a ast::Exp,
        env: &Env<'a>,
    ) -> R<Val<'a>> {
        let initv = match init {
            Some(x) => self.exp(x, env)?,
            // `loop (x, i) while …`: each parameter starts as the variable of its name.
            None => match initial_from_scope(pat, env) {
                Some(v) => v,
                None => return unsupported("loop without initial value", Some(e.span)),
            },
        };
        let init_leaves = self.leaves(&initv, e.span)?;
        // First try with the initial shapes; if the body changes them, carry the sizes as
        // loop parameters: first those not known statically, then also the constant ones
        // (`loop xs = [0] ... do xs ++ xs`).
        for generalise in [Generalise::None, Generalise::Dynamic, Generalise::All] {
            let attempt =
                self.loop_attempt(e, pat, &initv, &init_leaves, form, body, env, generalise)?;
            if let Some(v) = attempt {
                return Ok(v);
            }
        }
        unsupported("a loop whose parameters change rank", Some(e.span))
    }

    #[allow(clippy::too_many_arguments)]
    fn loop_attempt(
        &mut self,
        e: &'a ast::Exp,
        pat: &'a ast::Pat,
        initv: &Val<'a>,
        init_leaves: &[(SubExp, Type)],
        form: &'a ast::LoopForm,
        body: &'a ast::Exp,
        env: &Env<'a>,
        generalise: Generalise,
    ) -> R<Option<Val<'a>>> {
        let mut params: Vec<(Param, SubExp)> = Vec::new();
        // Size parameters (generalised loops only).
        let mut size_of: Vec<Vec<Option<usize>>> = Vec::new();
        if generalise != Generalise::None {
            for (_, t) in init_leaves {
                let mut slots = Vec::new();
                if let Type::Array { shape, .. } = t {
                    for d in shape {
                        if matches!(d, SubExp::Const(_)) && generalise == Generalise::Dynamic {
                            slots.push(None);
                        } else {
                            slots.push(Some(params.len()));
                            let sz = self.b().param("sz", Type::Prim(PrimType::I64));
                            params.push((sz, d.clone()));
                        }
                    }
                }
                size_of.push(slots);
            }
        }
        let mut leaf_params = Vec::new();
        for (k, (s, t)) in init_leaves.iter().enumerate() {
            let ty = match (t, size_of.get(k)) {
                (Type::Array { elem, shape }, Some(slots)) => Type::Array {
                    elem: *elem,
                    shape: shape
                        .iter()
                        .zip(slots)
                        .map(|(d, sl)| match sl {
                            Some(i) => SubExp::Var(params[*i].0.name),
                            None => d.clone(),
                        })
                        .collect(),
                },
                _ => t.clone(),
            };
            let p = self.b().param("acc", ty);
            leaf_params.push((SubExp::Var(p.name), p.ty.clone()));
            params.push((p, s.clone()));
        }
        let pval = initv.rebuild(&mut leaf_params.clone().into_iter());
        let loc = self.loc;
        let (lform, cond_param, extra) = match form {
            ast::LoopForm::For { bound, .. } => {
                let bv = self.exp(bound, env)?;
                // The counter has the type of the bound.
                let (b, it) = self.prim_leaf(&bv, bound.span)?;
                let i = self.names.fresh_typed("i", Type::Prim(it));
                (Some((i, b)), None, None)
            }
            ast::LoopForm::ForIn { array, .. } => {
                let av = self.exp(array, env)?;
                let n = match av.first_leaf() {
                    Some((_, Type::Array { shape, .. })) => shape[0].clone(),
                    _ => return unsupported("for-in over a non-array", Some(array.span)),
                };
                let i = self.names.fresh_typed("i", Type::Prim(PrimType::I64));
                (Some((i, n)), None, Some(av))
            }
            ast::LoopForm::While(c) => {
                // The condition on the initial values decides the first iteration.
                let env0 = self.bind_pat(pat, initv.clone(), env)?;
                let cv = self.exp(c, &env0)?;
                let (c0, _) = self.prim_leaf(&cv, c.span)?;
                let cp = self.b().param("cond", Type::Prim(PrimType::Bool));
                (None, Some((cp, c0)), None)
            }
        };
        self.loc = loc;
        let (stms, res) = self.nested(|l| {
            let mut benv = env.clone();
            if let (ast::LoopForm::For { var, .. }, Some((i, _))) = (form, &lform) {
                benv = benv.bind(var, l.leaf_of(SubExp::Var(*i))?);
            }
            if let (ast::LoopForm::ForIn { pat: ip, .. }, Some((i, _)), Some(av)) =
                (form, &lform, &extra)
            {
                let x = l.index_val(av, &[DimIndex::Fix(SubExp::Var(*i))], e.span)?;
                benv = l.bind_pat(ip, x, &benv)?;
            }
            benv = l.bind_pat(pat, pval.clone(), &benv)?;
            let nv = l.exp(body, &benv)?;
            let mut res = Vec::new();
            if let ast::LoopForm::While(c) = form {
                let env1 = l.bind_pat(pat, nv.clone(), env)?;
                let cv = l.exp(c, &env1)?;
                res.push(l.prim_leaf(&cv, c.span)?.0);
            }
            Ok((nv, res))
        })?;
        self.loc = loc;
        let (nv, cres) = res;
        let nl = self.leaves(&nv, e.span)?;
        if nl.len() != leaf_params.len() {
            return Ok(None);
        }
        let mut size_res = Vec::new();
        for (k, ((_, nt), (_, pt))) in nl.iter().zip(&leaf_params).enumerate() {
            if nt.rank() != pt.rank() {
                return Ok(None);
            }
            if let (Type::Array { shape: ns, .. }, Type::Array { shape: ps, .. }) = (nt, pt) {
                if generalise == Generalise::None {
                    if ns != ps {
                        return Ok(None);
                    }
                    continue;
                }
                for ((d, p), slot) in ns.iter().zip(ps).zip(&size_of[k]) {
                    match slot {
                        Some(_) => size_res.push(d.clone()),
                        // A size kept fixed must stay what it was.
                        None if d != p => return Ok(None),
                        None => {}
                    }
                }
            }
        }
        let mut result = size_res;
        result.extend(nl.iter().map(|(s, _)| s.clone()));
        let mut all_params = params;
        let lform = match (lform, cond_param) {
            (Some((i, b)), _) => LoopForm::For { i, bound: b },
            (None, Some((cp, c0))) => {
                let cv = cp.name;
                all_params.insert(0, (cp, c0));
                let mut r = cres;
                r.extend(result);
                result = r;
                LoopForm::While { cond: cv }
            }
            _ => return Ok(None),
        };
        // The statement's pattern: the sizes first, then the values, whose types name the
        // sizes of the pattern instead of the loop's size parameters.
        let skip = all_params.len() - leaf_params.len();
        let mut pat: Vec<Param> = all_params
            .iter()
            .map(|(p, _)| Param {
                name: self.names.fresh("loop"),
                ty: p.ty.clone(),
            })
            .collect();
        let subst: HashMap<VName, SubExp> = all_params
            .iter()
            .zip(&pat)
            .take(skip)
            .map(|((p, _), q)| (p.name, SubExp::Var(q.name)))
            .collect();
        for p in &mut pat {
            type_mut(&mut Substitute(&subst), &mut p.ty);
        }
        let out_leaves: Vec<(SubExp, Type)> = pat
            .iter()
            .skip(skip)
            .map(|p| (SubExp::Var(p.name), p.ty.clone()))
            .collect();
        let exp = Exp::Loop {
            params: all_params,
            form: lform,
            body: Body { stms, result },
        };
        let src = self.src();
        self.b().add(Stm { pat, exp, src });
        Ok(Some(initv.rebuild(&mut out_leaves.into_iter())))
    }
}

/// Which sizes of the loop parameters become loop parameters themselves.
#[derive(Clone, Copy, PartialEq)]
enum Generalise {
    None,
    /// The sizes that are not constants.
    Dynamic,
    All,
}

/// The value of a loop pattern without an initial value: every variable of the pattern
/// names a variable in scope (tuples, records, ascriptions and attributes nest).
fn initial_from_scope<'a>(pat: &ast::Pat, env: &Env<'a>) -> Option<Val<'a>> {
    match &pat.kind {
        PatKind::Var(n) => env.lookup(n).cloned(),
        PatKind::Ascribe(p, _) | PatKind::Attr(_, p) => initial_from_scope(p, env),
        PatKind::Tuple(ps) => ps
            .iter()
            .enumerate()
            .map(|(i, p)| Some((i.to_string(), initial_from_scope(p, env)?)))
            .collect::<Option<_>>()
            .map(Val::Rec),
        PatKind::Record(fs) => {
            let mut out: Vec<(String, Val<'a>)> = fs
                .iter()
                .map(|(n, p)| Some((n.clone(), initial_from_scope(p, env)?)))
                .collect::<Option<_>>()?;
            out.sort_by(|a, b| runic_types::ty::canonical_field_order(&a.0, &b.0));
            Some(Val::Rec(out))
        }
        _ => None,
    }
}
