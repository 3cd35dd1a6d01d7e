//! Module types: elaborating them, and matching a module against one (ascription and the
//! arguments of parametric modules).

use super::elab::prim_env;
use super::{Env, Frame, ModVal, SigVal, ValRef};
use crate::check::{err, Anon, Checker, Scheme, TypeAbbr, R};
use crate::infer_ty::{Sz, T};
use crate::intrinsics::module_member;
use runic_syntax::ast::*;
use runic_syntax::{Diagnostic, Span};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;

/// Marks the constructor name that encodes an abstract type (no source constructor has it).
pub(crate) const ABSTRACT: char = '\u{1}';

/// What one matching run knows.
struct Match<'a> {
    actual: Option<&'a Env>,
    /// Make unspecified types abstract (opaque ascription, or no actual module).
    opaque: bool,
    who: String,
    /// The path of the module type being matched inside the outermost one (`bar.`), so
    /// that messages name nested members in full.
    path: String,
    span: Span,
    refine: Vec<(QualName, Rc<TypeAbbr>)>,
    /// Abstract types created by this run, to compare against the actual definitions.
    created: HashSet<Name>,
}

impl Checker {
    pub(crate) fn elab_sig(&mut self, mt: &ModTypeExp) -> R<Rc<SigVal>> {
        match mt {
            ModTypeExp::Var(q, span) => self.find_sig(q).or_else(|m| err(*span, m)),
            ModTypeExp::Sig(specs, span) => {
                let sig = Rc::new(SigVal::Specs {
                    specs: specs.clone(),
                    closure: self.frames.clone(),
                    refine: vec![],
                });
                // Check the specs once, where they are written.
                let out = self.out.len();
                self.generic += 1;
                self.prefix.push("?".into());
                let r = self.match_sig(None, &sig, true, *span, "?");
                self.prefix.pop();
                self.generic -= 1;
                self.out.truncate(out);
                r.map(|_| sig)
            }
            ModTypeExp::With(base, q, params, te, span) => {
                let base = self.elab_sig(base)?;
                let SigVal::Specs {
                    specs,
                    closure,
                    refine,
                } = &*base
                else {
                    return err(
                        *span,
                        "Only a module type with specifications can be refined with \"with\".",
                    );
                };
                let Some((lifted, spec_params)) = sig_type(self, specs, closure, q) else {
                    return err(
                        *span,
                        format!("The module type has no type \"{q}\" to refine."),
                    );
                };
                refinement_params(q, &spec_params, params, *span)?;
                // The refinement fixes the type, so its definition is read without the
                // refined spec's liftedness limits (`type~ t` may be refined to `[]i32`, and a
                // `type ctx` to a size-lifted parameter's type); its liftedness is set below.
                let _ = lifted;
                let lifted = Liftedness::Lifted;
                let abbr = self.abbr_of(&q.name, lifted, params, te, *span)?;
                // A refinement is lifted exactly when its definition holds functions.
                let abbr = Rc::new(TypeAbbr {
                    params: abbr.params.clone(),
                    body: abbr.body.clone(),
                    lifted: if has_arrow(&abbr.body) {
                        Liftedness::Lifted
                    } else {
                        Liftedness::Unlifted
                    },
                });
                let mut refine = refine.clone();
                refine.push((q.clone(), abbr));
                Ok(Rc::new(SigVal::Specs {
                    specs: specs.clone(),
                    closure: closure.clone(),
                    refine,
                }))
            }
            ModTypeExp::Arrow(param, a, b, _) => self.elab_arrow_sig(param.as_ref(), a, b),
        }
    }

    /// A written type with parameters, as an abbreviation.
    fn abbr_of(
        &mut self,
        name: &str,
        lifted: Liftedness,
        params: &[TypeParam],
        te: &TypeExp,
        span: Span,
    ) -> R<Rc<TypeAbbr>> {
        let errors = self.errors.len();
        let mut tb = TypeBind {
            name: name.to_string(),
            lifted,
            params: params.to_vec(),
            def: te.clone(),
            attrs: vec![],
            doc: None,
            span,
        };
        let abbr = self.check_typebind(&mut tb);
        if self.errors.len() > errors {
            let e = self.errors.remove(errors);
            self.errors.truncate(errors);
            return Err(Box::new(e));
        }
        Ok(abbr)
    }

    /// Matches a module against a module type, giving the module as seen through it: only
    /// the specified names, with unspecified types abstract when `opaque`. Without an actual
    /// module, gives an abstract module with the module type (a parameter seen from inside
    /// its parametric module).
    pub(crate) fn match_sig(
        &mut self,
        actual: Option<&ModVal>,
        sig: &SigVal,
        opaque: bool,
        span: Span,
        who: &str,
    ) -> R<ModVal> {
        self.match_sig_at(actual, sig, opaque, span, who, String::new())
    }

    pub(super) fn match_sig_at(
        &mut self,
        actual: Option<&ModVal>,
        sig: &SigVal,
        opaque: bool,
        span: Span,
        who: &str,
        path: String,
    ) -> R<ModVal> {
        let (specs, closure, refine) = match sig {
            SigVal::Specs {
                specs,
                closure,
                refine,
            } => (specs, closure, refine),
            SigVal::Arrow {
                param,
                param_sig,
                result,
                closure,
            } => {
                return match actual {
                    Some(ModVal::Functor(f)) => {
                        let arrow = super::arrow::ArrowSig {
                            param: param.as_ref(),
                            param_sig,
                            result,
                            closure,
                        };
                        self.match_functor(f, &arrow, opaque, span, who, path)
                    }
                    Some(ModVal::Broken) => Ok(ModVal::Broken),
                    Some(_) => err(
                        span,
                        "A parametric module is required here, but this module is not parametric.",
                    ),
                    // A parametric module specified by a module type, seen from inside (a
                    // parameter of a body checked on its own): applications are checked
                    // against its parameter type and give abstract modules of its result
                    // type.
                    None => Ok(ModVal::Functor(Rc::new(super::Functor {
                        param: ModParam {
                            name: param.clone().unwrap_or_else(|| "%param".to_string()),
                            name_span: span,
                            sig: ModTypeExp::Sig(vec![], span),
                            span,
                        },
                        param_sig: param_sig.clone(),
                        result: Some(result.clone()),
                        body: ModExp::Struct(vec![], span),
                        closure: closure.clone(),
                        dir: self.files.dir.clone(),
                        broken: std::cell::Cell::new(false),
                        abstract_result: true,
                    }))),
                };
            }
        };
        let prim;
        let actual_env = match actual {
            Some(ModVal::Broken) => return Ok(ModVal::Broken),
            None => None,
            Some(ModVal::Struct(env)) => Some(&**env),
            Some(ModVal::Prim(p)) => {
                prim = prim_env(*p);
                Some(&prim)
            }
            Some(ModVal::Functor(_)) => {
                return err(
                    span,
                    "This is a parametric module, but the module type describes a module: apply it first.",
                )
            }
        };
        let mut m = Match {
            actual: actual_env,
            opaque: opaque || actual.is_none(),
            who: who.to_string(),
            path,
            span,
            refine: refine.clone(),
            created: HashSet::new(),
        };
        let mut view = Env::default();
        let saved = std::mem::replace(&mut self.frames, closure.clone());
        self.frames.push(Frame::default());
        let r = self.match_specs(&mut m, specs, &mut view);
        self.frames = saved;
        r?;
        Ok(ModVal::Struct(Rc::new(view)))
    }

    fn match_specs(&mut self, m: &mut Match, specs: &[Spec], view: &mut Env) -> R<()> {
        for spec in specs {
            match spec {
                Spec::Type {
                    name,
                    lifted,
                    params,
                    def,
                    span,
                } => self.match_type_spec(m, name, *lifted, params, def.as_ref(), *span, view)?,
                Spec::Val {
                    name,
                    name_span,
                    type_params,
                    ty,
                    ..
                } => self.match_val_spec(m, name, *name_span, type_params, ty, view)?,
                Spec::Module { name, sig, span } => {
                    let inner_sig = self.elab_sig(sig)?;
                    let inner = match m.actual {
                        None => None,
                        Some(env) => match env.mods.get(name) {
                            Some(x) => Some(x.clone()),
                            None => return Err(missing(m, "module", name, *span)),
                        },
                    };
                    let who = format!("{}.{name}", m.who);
                    let prefix = format!("{name}.");
                    let refine: Vec<_> = m
                        .refine
                        .iter()
                        .filter(|(q, _)| q.quals.first() == Some(name))
                        .map(|(q, a)| {
                            let q = QualName {
                                quals: q.quals[1..].to_vec(),
                                name: q.name.clone(),
                            };
                            (q, a.clone())
                        })
                        .collect();
                    let _ = prefix;
                    let sig = match &*inner_sig {
                        SigVal::Specs {
                            specs,
                            closure,
                            refine: r0,
                        } => Rc::new(SigVal::Specs {
                            specs: specs.clone(),
                            closure: closure.clone(),
                            refine: r0.iter().cloned().chain(refine).collect(),
                        }),
                        _ => inner_sig.clone(),
                    };
                    let path = format!("{}{name}.", m.path);
                    let mv =
                        self.match_sig_at(inner.as_ref(), &sig, m.opaque, m.span, &who, path)?;
                    view.mods.insert(name.clone(), mv);
                }
                Spec::Include(mt, _) => {
                    let inner = self.elab_sig(mt)?;
                    let SigVal::Specs {
                        specs,
                        closure,
                        refine,
                    } = &*inner
                    else {
                        return err(
                            spec.span(),
                            "Only a module type with specifications can be included.",
                        );
                    };
                    let outer_refine = m.refine.clone();
                    m.refine.extend(refine.iter().cloned());
                    let saved = std::mem::replace(&mut self.frames, closure.clone());
                    self.frames.push(Frame {
                        vis: view.clone(),
                        ..Frame::default()
                    });
                    let r = self.match_specs(m, specs, view);
                    self.frames = saved;
                    m.refine = outer_refine;
                    r?;
                }
            }
            // Later specs see the names specified so far.
            let f = self.frame();
            f.vis.vals.extend(view.vals.clone());
            f.vis.types.extend(view.types.clone());
            f.vis.mods.extend(view.mods.clone());
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn match_type_spec(
        &mut self,
        m: &mut Match,
        name: &Name,
        lifted: Liftedness,
        params: &[TypeParam],
        def: Option<&TypeExp>,
        span: Span,
        view: &mut Env,
    ) -> R<()> {
        let refined = m
            .refine
            .iter()
            .rev()
            .find(|(q, _)| q.quals.is_empty() && q.name == *name)
            .map(|(_, a)| a.clone());
        let spec_def = match (def, refined) {
            (Some(te), _) => Some(self.abbr_of(name, lifted, params, te, span)?),
            (None, r) => r,
        };
        let actual = match m.actual {
            None => None,
            Some(env) => match env.types.get(name) {
                Some(a) => Some(a.clone()),
                None => return Err(missing(m, "type", name, span)),
            },
        };
        if let (Some(a), None, true) = (&actual, &spec_def, m.opaque) {
            if let Some(msg) = self.spec_constructive(&format!("{}{name}", m.path), a) {
                return Err(mismatch(m, span, msg));
            }
        }
        if let Some(a) = &actual {
            // A definition or refinement in the module type fixes the type instead.
            if spec_def.is_none() && rank(a.lifted) > rank(lifted) {
                let word = |l| match l {
                    Liftedness::Unlifted => "non-lifted (type)",
                    Liftedness::SizeLifted => "size-lifted (type~)",
                    Liftedness::Lifted => "lifted (type^)",
                };
                return Err(mismatch(
                    m,
                    span,
                    format!(
                        "Type \"{}{name}\" is {} in the module, but the module type specifies a {} type.",
                        m.path,
                        word(a.lifted),
                        word(lifted)
                    ),
                ));
            }
            if a.params.len() != params.len() {
                return Err(mismatch(
                    m,
                    span,
                    format!(
                        "Type \"{}{name}\" takes {} parameter(s) in the module but {} in the module type.",
                        m.path,
                        a.params.len(),
                        params.len()
                    ),
                ));
            }
            if let Some(d) = &spec_def {
                if !self.same_abbr(a, d, params) {
                    let args = param_args(params);
                    let at = self.apply_abbr(name, a, &args, span)?;
                    let dt = self.apply_abbr(name, d, &args, span)?;
                    return Err(mismatch(
                        m,
                        span,
                        format!(
                            "Type \"{}{name}\" is \"{}\" in the module, but the module type requires \"{}\".",
                            m.path,
                            self.s.show(&at),
                            self.s.show(&dt)
                        ),
                    ));
                }
            }
        }
        let bound = match (spec_def, actual) {
            (Some(d), _) => d,
            (None, Some(a)) if !m.opaque => a,
            (None, a) => {
                let abs = self.fresh_abstract(&format!("{}.{name}", m.who), params, lifted);
                if let (Some(a), T::Sum(cs)) = (a, &abs.body) {
                    if let Some(c) = cs.keys().next() {
                        self.abstract_defs.insert(c.clone(), a);
                        m.created.insert(c.clone());
                    }
                }
                abs
            }
        };
        view.types.insert(name.clone(), bound);
        Ok(())
    }

    fn match_val_spec(
        &mut self,
        m: &mut Match,
        name: &Name,
        span: Span,
        type_params: &[TypeParam],
        ty: &TypeExp,
        view: &mut Env,
    ) -> R<()> {
        let (tparams, sparams, spec_t) = self.spec_type(type_params, ty)?;
        let Some(env) = m.actual else {
            let flat = self.flat_name(name);
            let sc = Scheme {
                tparams,
                sparams,
                poly: true,
                ty: spec_t,
                ..Scheme::default()
            };
            view.vals
                .insert(name.clone(), ValRef::Def(flat, Rc::new(sc)));
            return Ok(());
        };
        let Some(v) = env.vals.get(name).cloned() else {
            return Err(missing(m, "value", name, span));
        };
        let conc = self.expand_abstract(&spec_t, Some(&m.created));
        let (actual_sc, member_sizes) = match &v {
            ValRef::Def(_, sc) => ((**sc).clone(), vec![]),
            ValRef::Member(p, n) => match module_member(*p, n) {
                Some((t, sp)) => (
                    Scheme {
                        sparams: sp.iter().map(|s| s.to_string()).collect(),
                        poly: true,
                        ty: t,
                        ..Scheme::default()
                    },
                    sp,
                ),
                None => return Err(missing(m, "value", name, span)),
            },
        };
        let _ = member_sizes;
        let before = self.unlifted.len();
        let (inst, sizes) = self.instantiate(&actual_sc);
        let unified = self.s.unify(&inst, &conc);
        let own_unlifted: Vec<(T, Name)> = self.unlifted[before..]
            .iter()
            .map(|(v, p, _)| (v.clone(), p.clone()))
            .collect();
        if unified.is_ok() {
            let failed = self
                .spec_uniqueness(name, &v, ty)
                .or_else(|| self.spec_lifted_params(name, type_params, &own_unlifted))
                .or_else(|| self.spec_size_lifted(name, &spec_t, &actual_sc, &m.created))
                .or_else(|| self.spec_exist_sizes(name, &spec_t, &actual_sc));
            if let Some(msg) = failed {
                return Err(mismatch(m, span, msg));
            }
        }
        if unified.is_err() {
            let shown_actual = self.s.show(&actual_sc.ty);
            let shown_spec = self.s.show(&spec_t);
            return Err(mismatch(
                m,
                span,
                format!(
                    "Value \"{}{name}\" has type \"{shown_actual}\" in the module, but the module type requires \"{shown_spec}\".",
                    m.path
                ),
            ));
        }
        // An existential or unknown size of the spec (`?[n].[n]i32`) hides the value's own
        // size (`[1]i32`) as an abstract type hides a definition.
        let mut unknown_size = false;
        crate::infer_ty::map_sizes(&spec_t, &mut |s| {
            unknown_size |= matches!(s, Sz::Unknown(_));
            s.clone()
        });
        if conc == spec_t && !unknown_size {
            view.vals.insert(name.clone(), v);
            return Ok(());
        }
        // The module type hides a type or a size this value mentions: uses see the specified type,
        // with the size parameters of the definition (named as the definition names them,
        // so that the backends bind them as usual).
        let mut rename: HashMap<Name, Sz> = HashMap::new();
        for (n, s, _) in &sizes {
            if let Sz::Name(k) = self.s.size(s) {
                rename.insert(k, Sz::Name(n.clone()));
            }
        }
        let hidden: Vec<Name> = sparams
            .iter()
            .filter(|k| !rename.contains_key(*k))
            .cloned()
            .collect();
        let ty = crate::infer_ty::map_sizes(&spec_t, &mut |s| rename_size(s, &rename));
        let (flat, sc) = match &v {
            ValRef::Def(flat, sc) => (flat.clone(), sc.clone()),
            ValRef::Member(..) => {
                view.vals.insert(name.clone(), v);
                return Ok(());
            }
        };
        let view_sc = Scheme {
            tparams,
            sparams: sc.sparams.clone(),
            hidden,
            poly: true,
            ty,
            ..Scheme::default()
        };
        view.vals
            .insert(name.clone(), ValRef::Def(flat, Rc::new(view_sc)));
        Ok(())
    }

    /// The type of a value spec, with its type and size parameters.
    fn spec_type(
        &mut self,
        type_params: &[TypeParam],
        ty: &TypeExp,
    ) -> R<(Vec<Name>, Vec<Name>, T)> {
        if let Some(s) = anonymous_param_size(ty) {
            return err(
                s,
                "In a value specification, sizes in parameter types must be named: write \"val f [n]: [n]t -> ...\".",
            );
        }
        let depth = self.scopes.len();
        let (tparams, sparams) = self.push_type_params(type_params);
        let mut te = ty.clone();
        let r = self.convert_type(&mut te, Anon::Exist);
        self.scopes.truncate(depth);
        let t = r?;
        Ok((tparams, sparams, self.s.zonk(&t)))
    }

    /// Do two abbreviations with the given parameters denote the same type?
    fn same_abbr(&mut self, a: &TypeAbbr, b: &TypeAbbr, params: &[TypeParam]) -> bool {
        let args = param_args(params);
        let (Ok(x), Ok(y)) = (
            self.apply_abbr("", a, &args, Span::default()),
            self.apply_abbr("", b, &args, Span::default()),
        ) else {
            return false;
        };
        let x = self.expand_abstract(&x, None);
        let y = self.expand_abstract(&y, None);
        self.s.unify(&x, &y).is_ok()
    }

    /// A new abstract type named `shown` with the given parameters.
    fn fresh_abstract(
        &mut self,
        shown: &str,
        params: &[TypeParam],
        lifted: Liftedness,
    ) -> Rc<TypeAbbr> {
        // A fresh number keeps abstract types of the same name apart (node ids are a handy
        // counter: skipping one costs nothing); `^` and `~` mark lifted and size-lifted ones.
        let id = format!(
            "{ABSTRACT}{shown}{ABSTRACT}{}{}",
            self.fresh_id().0,
            match lifted {
                Liftedness::Lifted => "^",
                Liftedness::SizeLifted => "~",
                Liftedness::Unlifted => "",
            }
        );
        let payload = params
            .iter()
            .map(|p| match p {
                TypeParam::Type(n, _, _) => T::Param(n.clone()),
                TypeParam::Size(n, _) => T::Array(Sz::Name(n.clone()), Box::new(T::unit())),
            })
            .collect();
        let mut cs = BTreeMap::new();
        cs.insert(id.clone(), payload);
        // Registered without a definition until one is known.
        Rc::new(TypeAbbr {
            params: params.to_vec(),
            body: T::Sum(cs),
            lifted,
        })
    }

    /// Replaces abstract types by their definitions (all of them, or those in `only`).
    pub(crate) fn expand_abstract(&mut self, t: &T, only: Option<&HashSet<Name>>) -> T {
        let t = self.s.zonk(t);
        self.expand_in(&t, only, 0)
    }

    fn expand_in(&mut self, t: &T, only: Option<&HashSet<Name>>, depth: u32) -> T {
        match t {
            T::Sum(cs) if cs.len() == 1 && depth < 64 => {
                let (c, args) = cs
                    .iter()
                    .next()
                    .map(|(c, a)| (c.clone(), a.clone()))
                    .unwrap_or_default();
                let def = self.abstract_defs.get(&c).cloned();
                match def {
                    Some(def) if c.starts_with(ABSTRACT) && only.is_none_or(|o| o.contains(&c)) => {
                        let targs: Vec<Result<T, Sz>> = def
                            .params
                            .iter()
                            .zip(&args)
                            .map(|(p, a)| match (p, a) {
                                (TypeParam::Size(..), T::Array(s, _)) => Err(s.clone()),
                                _ => Ok(a.clone()),
                            })
                            .collect();
                        match self.apply_abbr("", &def, &targs, Span::default()) {
                            Ok(x) => self.expand_in(&x, only, depth + 1),
                            Err(_) => t.clone(),
                        }
                    }
                    _ => T::Sum(
                        cs.iter()
                            .map(|(c, ts)| {
                                (
                                    c.clone(),
                                    ts.iter().map(|x| self.expand_in(x, only, depth)).collect(),
                                )
                            })
                            .collect(),
                    ),
                }
            }
            T::Sum(cs) => T::Sum(
                cs.iter()
                    .map(|(c, ts)| {
                        (
                            c.clone(),
                            ts.iter().map(|x| self.expand_in(x, only, depth)).collect(),
                        )
                    })
                    .collect(),
            ),
            T::Array(s, e) => T::Array(s.clone(), Box::new(self.expand_in(e, only, depth))),
            T::Record(fs) => T::Record(
                fs.iter()
                    .map(|(n, x)| (n.clone(), self.expand_in(x, only, depth)))
                    .collect(),
            ),
            T::Arrow(n, a, b) => T::Arrow(
                n.clone(),
                Box::new(self.expand_in(a, only, depth)),
                Box::new(self.expand_in(b, only, depth)),
            ),
            _ => t.clone(),
        }
    }
}

/// The liftedness and number of parameters of the type the module type specifies at `q`
/// (directly or through an include), if it specifies one.
fn sig_type(
    ck: &mut Checker,
    specs: &[Spec],
    closure: &[Frame],
    q: &QualName,
) -> Option<(Liftedness, Vec<TypeParam>)> {
    specs.iter().find_map(|s| match s {
        Spec::Type {
            name,
            lifted,
            params,
            ..
        } if q.quals.is_empty() && *name == q.name => Some((*lifted, params.clone())),
        Spec::Module { name, sig, .. } if q.quals.first() == Some(name) => {
            let inner = QualName {
                quals: q.quals[1..].to_vec(),
                name: q.name.clone(),
            };
            sig_exp_type(ck, sig, closure, &inner)
        }
        Spec::Include(mt, _) => sig_exp_type(ck, mt, closure, q),
        _ => None,
    })
}

fn sig_exp_type(
    ck: &mut Checker,
    mt: &ModTypeExp,
    closure: &[Frame],
    q: &QualName,
) -> Option<(Liftedness, Vec<TypeParam>)> {
    let saved = std::mem::replace(&mut ck.frames, closure.to_vec());
    let r = ck.elab_sig(mt);
    ck.frames = saved;
    match r.as_deref() {
        Ok(SigVal::Specs { specs, closure, .. }) => sig_type(ck, specs, closure, q),
        _ => None,
    }
}

/// A refinement takes the refined type's parameters, in kind and order, each at least as
/// lifted as specified (it may expand `'a` to `'^a`, never narrow it).
fn refinement_params(q: &QualName, spec: &[TypeParam], given: &[TypeParam], span: Span) -> R<()> {
    if spec.len() != given.len() {
        return err(
            span,
            format!(
                "Cannot refine a type with {} parameter(s) by a definition with {}: \"{q}\" takes {} in the module type.",
                spec.len(),
                given.len(),
                spec.len()
            ),
        );
    }
    for (s, g) in spec.iter().zip(given) {
        let narrower = match (s, g) {
            (TypeParam::Size(..), TypeParam::Size(..)) => false,
            (TypeParam::Type(_, ls, _), TypeParam::Type(_, lg, _)) => rank(*lg) < rank(*ls),
            _ => true,
        };
        if narrower {
            return err(
                span,
                format!(
                    "Cannot refine a type whose parameter is \"{}\" by one whose parameter is \"{}\": a refinement of \"{q}\" may not narrow its parameters.",
                    show_param(s),
                    show_param(g)
                ),
            );
        }
    }
    Ok(())
}

fn show_param(p: &TypeParam) -> String {
    match p {
        TypeParam::Size(n, _) => format!("[{n}]"),
        TypeParam::Type(n, l, _) => match l {
            Liftedness::Unlifted => format!("'{n}"),
            Liftedness::SizeLifted => format!("'~{n}"),
            Liftedness::Lifted => format!("'^{n}"),
        },
    }
}

fn has_arrow(t: &T) -> bool {
    match t {
        T::Arrow(..) => true,
        T::Array(_, e) => has_arrow(e),
        T::Record(fs) => fs.values().any(has_arrow),
        T::Sum(cs) => cs.values().flatten().any(has_arrow),
        _ => false,
    }
}

fn rank(l: Liftedness) -> u8 {
    match l {
        Liftedness::Unlifted => 0,
        Liftedness::SizeLifted => 1,
        Liftedness::Lifted => 2,
    }
}

fn param_args(params: &[TypeParam]) -> Vec<Result<T, Sz>> {
    params
        .iter()
        .map(|p| match p {
            TypeParam::Type(n, _, _) => Ok(T::Param(n.clone())),
            TypeParam::Size(n, _) => Err(Sz::Name(n.clone())),
        })
        .collect()
}

fn rename_size(s: &Sz, map: &HashMap<Name, Sz>) -> Sz {
    match s {
        Sz::Name(n) => map.get(n).cloned().unwrap_or_else(|| s.clone()),
        Sz::Op(o, a, b) => Sz::Op(
            o,
            Box::new(rename_size(a, map)),
            Box::new(rename_size(b, map)),
        ),
        _ => s.clone(),
    }
}

/// The first `[]` in a parameter position of a function type.
fn anonymous_param_size(t: &TypeExp) -> Option<Span> {
    match t {
        TypeExp::Arrow(_, a, b, _) => any_anon(a).or_else(|| anonymous_param_size(b)),
        _ => None,
    }
}

fn any_anon(t: &TypeExp) -> Option<Span> {
    match t {
        TypeExp::Array(SizeExp::Anon(s), _, _) => Some(*s),
        TypeExp::Array(_, e, _) | TypeExp::Unique(e, _) | TypeExp::Exists(_, e, _) => any_anon(e),
        TypeExp::Tuple(ts, _) => ts.iter().find_map(any_anon),
        TypeExp::Record(fs, _) => fs.iter().find_map(|(_, t)| any_anon(t)),
        TypeExp::Apply(f, a, _) => any_anon(f).or(match &**a {
            TypeArg::Size(SizeExp::Anon(s)) => Some(*s),
            TypeArg::Type(t) => any_anon(t),
            _ => None,
        }),
        _ => None,
    }
}

fn missing(m: &Match, what: &str, name: &str, spec_span: Span) -> Box<Diagnostic> {
    let d = Diagnostic::error(
        m.span,
        format!(
            "The module does not define the {what} \"{}{name}\" that its module type specifies.",
            m.path
        ),
    );
    Box::new(d.with_related(spec_span, format!("the {what} is specified here")))
}

fn mismatch(m: &Match, spec_span: Span, msg: String) -> Box<Diagnostic> {
    let d = Diagnostic::error(m.span, msg);
    Box::new(d.with_related(spec_span, "specified here"))
}
