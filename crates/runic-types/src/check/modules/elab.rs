//! Declarations and module expressions: checking them in order and emitting the flat program.

use super::files::{FetchError, Fetched};
use super::{Env, Frame, Functor, ModVal, Ns, ValRef};
use crate::check::{err, Checker, TypeAbbr, R};
use crate::infer_ty::T;
use crate::intrinsics::{module_member_names, module_type_member};
use runic_syntax::ast::*;
use runic_syntax::{Diagnostic, Span};
use std::rc::Rc;

/// The name a value declaration defines (through `local`).
fn val_name(d: &Dec) -> Option<(Name, Span)> {
    match d {
        Dec::Val(vb) => Some((vb.name.clone(), vb.name_span)),
        Dec::Local(d, _) => val_name(d),
        _ => None,
    }
}

impl Checker {
    /// Checks declarations into the current frame, emitting their flat definitions.
    pub(crate) fn elab_decs(&mut self, decs: Vec<Dec>) {
        let names: Vec<Option<(Name, Span)>> = decs.iter().map(val_name).collect();
        let listed = Rc::new(names.iter().flatten().cloned().collect::<Vec<_>>());
        self.later.push((listed, 0));
        for (d, name) in decs.into_iter().zip(names) {
            if let Some(n) = &name {
                self.defining.push(n.clone());
                if let Some(l) = self.later.last_mut() {
                    l.1 += 1;
                }
            }
            self.elab_dec(d, false);
            if name.is_some() {
                self.defining.pop();
            }
        }
        self.later.pop();
    }

    fn elab_dec(&mut self, d: Dec, local: bool) {
        let r = match d {
            Dec::Val(vb) => {
                self.elab_val(vb, local);
                Ok(())
            }
            Dec::Type(tb) => {
                self.elab_type(tb, local);
                Ok(())
            }
            Dec::Local(d, _) => {
                self.elab_dec(*d, true);
                Ok(())
            }
            // `import "p"` is `local open import "p"`.
            Dec::Import(path, span) => match self.import(&path, span) {
                Some(m) => self.open_module(&m, true, span),
                None => Ok(()),
            },
            Dec::Open(m, span) => match self.elab_mod_exp(m) {
                Ok(m) => self.open_module(&m, local, span),
                Err(e) => Err(e),
            },
            Dec::Module(mb) => self.elab_mod_bind(mb, local),
            Dec::ModType(mtb) => match self.elab_sig(&mtb.def) {
                Ok(sig) => {
                    self.bind(Ns::Sig, &mtb.name, mtb.name_span, local, |e| {
                        e.sigs.insert(mtb.name.clone(), sig.clone());
                    });
                    Ok(())
                }
                Err(e) => Err(e),
            },
        };
        if let Err(e) = r {
            self.errors.push(*e);
        }
    }

    /// Binds a name in the current frame (and its exports unless `local`), reporting a
    /// second definition of the name at the same level.
    pub(super) fn bind(
        &mut self,
        ns: Ns,
        name: &str,
        span: Span,
        local: bool,
        insert: impl Fn(&mut Env),
    ) {
        let frame = self.frame();
        if !frame.defined.insert((ns, name.to_string())) {
            let d = Diagnostic::error(
                span,
                format!("Duplicate definition of {}\"{name}\".", ns.word()),
            );
            self.errors.push(d);
        }
        let frame = self.frame();
        insert(&mut frame.vis);
        if !local {
            insert(&mut frame.exports);
        }
    }

    fn elab_val(&mut self, mut vb: ValBind, local: bool) {
        let name = vb.name.clone();
        let top_of_main = self.in_main && self.prefix.is_empty() && self.generic == 0;
        let entry_like = top_of_main && (vb.kind == ValKind::Entry || name == "main");
        let idx = self.out.len();
        let sc = Rc::new(self.check_valbind(&mut vb, top_of_main, idx));
        // A definition of the main file that reuses a name the flat program already has (a
        // prelude function, an intrinsic) gets a name of its own, so that code emitted later
        // which means the older one still finds it.
        let taken = self.flat_used.contains(&name) || self.intrinsics.contains_key(&name);
        let flat = if self.prefix.is_empty() && taken && self.in_main && !entry_like {
            self.unique_flat(name.clone())
        } else {
            self.flat_name(&name)
        };
        vb.name = flat.clone();
        self.flat.insert(flat.clone(), sc.clone());
        let v = ValRef::Def(flat, sc);
        self.bind(Ns::Val, &name, vb.name_span, local, |e| {
            e.vals.insert(name.clone(), v.clone());
        });
        self.out.push(Dec::Val(vb));
    }

    fn elab_type(&mut self, mut tb: TypeBind, local: bool) {
        let abbr = self.check_typebind(&mut tb);
        let name = tb.name.clone();
        self.bind(Ns::Type, &name, tb.span, local, |e| {
            e.types.insert(name.clone(), abbr.clone());
        });
        self.out.push(Dec::Type(tb));
    }

    /// Brings a module's names into scope (and re-exports them unless `local`).
    fn open_module(&mut self, m: &ModVal, local: bool, span: Span) -> R<()> {
        let env = match m {
            ModVal::Struct(env) => (**env).clone(),
            ModVal::Prim(p) => prim_env(*p),
            ModVal::Broken => Env::default(),
            ModVal::Functor(_) => {
                return err(
                    span,
                    "A parametric module cannot be opened: apply it to a module first.",
                )
            }
        };
        let frame = self.frame();
        frame.vis.extend(&env);
        if !local {
            frame.exports.extend(&env);
        }
        Ok(())
    }

    fn elab_mod_bind(&mut self, mb: ModBind, local: bool) -> R<()> {
        // `module F (A: S) (B: T) : R = m` is `module F = \(A: S) -> \(B: T) : R -> m`.
        let mut body = mb.body;
        let mut sig = mb.sig;
        if mb.params.is_empty() {
            if let Some(mt) = sig.take() {
                // Mismatches are reported at the module's name.
                body = ModExp::Ascribe(Box::new(body), mt, false, mb.name_span);
            }
        } else {
            for p in mb.params.into_iter().rev() {
                let span = p.span.to(body.span());
                body = ModExp::Lambda(p, sig.take(), Box::new(body), span);
            }
        }
        self.prefix.push(mb.name.clone());
        let r = self.elab_mod_exp(body);
        self.prefix.pop();
        let m = r.unwrap_or_else(|e| {
            self.errors.push(*e);
            ModVal::Broken
        });
        let name = mb.name;
        self.bind(Ns::Mod, &name, mb.name_span, local, |e| {
            e.mods.insert(name.clone(), m.clone());
        });
        Ok(())
    }

    pub(super) fn elab_mod_exp(&mut self, m: ModExp) -> R<ModVal> {
        match m {
            ModExp::Var(q, span) => {
                let mut path = q.quals.clone();
                path.push(q.name.clone());
                self.module_path(&path).or_else(|msg| err(span, msg))
            }
            ModExp::Struct(decs, _) => {
                self.frames.push(Frame::default());
                self.elab_decs(decs);
                let f = self.frames.pop().unwrap_or_default();
                Ok(ModVal::Struct(Rc::new(f.exports)))
            }
            ModExp::Import(path, span) => match self.import(&path, span) {
                Some(m) => Ok(m),
                // The import's own errors are already recorded.
                None => Ok(ModVal::Broken),
            },
            ModExp::Ascribe(m, mt, transparent, span) => {
                let who = self.prefix.last().cloned().unwrap_or_default();
                let m = self.elab_mod_exp(*m)?;
                let sig = self.elab_sig(&mt)?;
                self.match_sig(Some(&m), &sig, !transparent, span, &who)
            }
            ModExp::Apply(f, a, span) => {
                let f = self.elab_mod_exp(*f)?;
                let a = self.elab_mod_exp(*a)?;
                self.apply_functor(&f, &a, span)
            }
            ModExp::Lambda(param, result, body, span) => {
                let param_sig = self.elab_sig(&param.sig)?;
                let f = Rc::new(Functor {
                    param,
                    param_sig,
                    result,
                    body: *body,
                    closure: self.frames.clone(),
                    dir: self.files.dir.clone(),
                    broken: std::cell::Cell::new(false),
                    abstract_result: false,
                });
                self.check_functor_alone(&f, span);
                Ok(ModVal::Functor(f))
            }
        }
    }

    fn apply_functor(&mut self, f: &ModVal, a: &ModVal, span: Span) -> R<ModVal> {
        if matches!(f, ModVal::Broken) || matches!(a, ModVal::Broken) {
            return Ok(ModVal::Broken);
        }
        let ModVal::Functor(f) = f else {
            if self.generic > 0 {
                // A specified parametric module (see `match_sig`), applied inside a body that
                // is checked on its own.
                return Ok(ModVal::Struct(Rc::new(Env::default())));
            }
            return err(span, "Only a parametric module can be applied to a module.");
        };
        let view = self
            .match_sig(Some(a), &f.param_sig, false, span, &f.param.name)
            .map_err(|d| {
                Box::new(d.with_note(format!(
                    "in the argument of a parametric module, whose parameter \"{}\" must match its module type",
                    f.param.name
                )))
            })?;
        if !f.broken.get() {
            return self.instantiate_functor(f, view, span);
        }
        // The body has errors of its own, already reported once.
        let before = self.errors.len();
        let r = self.instantiate_functor(f, view, span);
        self.errors.truncate(before);
        r.or(Ok(ModVal::Broken))
    }

    /// Checks a fresh copy of a parametric module's body with its parameter bound to `arg`,
    /// in the scope where the parametric module was defined.
    pub(super) fn instantiate_functor(
        &mut self,
        f: &Functor,
        arg: ModVal,
        span: Span,
    ) -> R<ModVal> {
        let mut body = f.body.clone();
        runic_syntax::normalize::renumber_mod_exp(&mut body, &mut self.next_id);
        let frames = std::mem::replace(&mut self.frames, f.closure.clone());
        let dir = std::mem::replace(&mut self.files.dir, f.dir.clone());
        let mut pf = Frame::default();
        pf.vis.mods.insert(f.param.name.clone(), arg);
        self.frames.push(pf);
        let made = match (&f.result, f.abstract_result) {
            (Some(mt), true) => self.elab_sig(mt).and_then(|sig| {
                let who = self.prefix.last().cloned().unwrap_or_default();
                self.match_sig(None, &sig, true, span, &who)
            }),
            _ => self.elab_mod_exp(body),
        };
        let r = made.and_then(|m| match (&f.result, f.abstract_result) {
            (_, true) => Ok(m),
            (Some(mt), false) => {
                let sig = self.elab_sig(mt)?;
                let who = self.prefix.last().cloned().unwrap_or_default();
                self.match_sig(Some(&m), &sig, true, span, &who)
            }
            (None, false) => Ok(m),
        });
        self.frames = frames;
        self.files.dir = dir;
        r
    }

    /// Checks a parametric module's body once on its own, its parameter an abstract module
    /// built from the parameter's module type, so that mistakes in the body are reported
    /// where they are even if the module is never applied (or applied to a module with
    /// which they happen to type-check). What it emits is dropped.
    fn check_functor_alone(&mut self, f: &Functor, span: Span) {
        let errors = self.errors.len();
        let out = self.out.len();
        self.generic += 1;
        self.prefix.push(format!("{}?", f.param.name));
        let arg = self.match_sig(None, &f.param_sig, true, f.param.span, &f.param.name);
        if let Ok(arg) = arg {
            if let Err(e) = self.instantiate_functor(f, arg, span) {
                self.errors.push(*e);
            }
        }
        self.prefix.pop();
        self.generic -= 1;
        self.out.truncate(out);
        if self.errors.len() > errors {
            f.broken.set(true);
        }
    }

    /// The module of an imported file, checking the file the first time it is imported.
    /// Errors are recorded; `None` after one.
    fn import(&mut self, path: &str, span: Span) -> Option<ModVal> {
        let fetched = self.files.fetch(path, &mut self.next_id);
        let (full, prog) = match fetched {
            Ok(Fetched::Done(m)) => return Some(m),
            Ok(Fetched::Parsed(full, prog)) => (full, prog),
            Err(FetchError::Import(msg)) => {
                self.errors.push(Diagnostic::error(span, msg));
                return None;
            }
            Err(FetchError::Syntax(ds)) => {
                self.errors.extend(ds);
                return None;
            }
        };
        let stem = std::path::Path::new(path)
            .file_name()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        let global = self.frames.first().cloned().unwrap_or_default();
        let frames = std::mem::replace(&mut self.frames, vec![global, Frame::default()]);
        let prefix = std::mem::replace(&mut self.prefix, vec![stem]);
        let in_main = std::mem::replace(&mut self.in_main, false);
        let dir = full.parent().map(|p| p.to_path_buf()).unwrap_or_default();
        let dir = std::mem::replace(&mut self.files.dir, dir);
        self.files.stack.push(full.clone());
        self.elab_decs(prog.decs);
        self.files.stack.pop();
        let file = self.frames.pop().unwrap_or_default();
        self.frames = frames;
        self.prefix = prefix;
        self.in_main = in_main;
        self.files.dir = dir;
        let m = ModVal::Struct(Rc::new(file.exports));
        self.files.done.insert(full, m.clone());
        Some(m)
    }
}

/// The names of a numeric module, for `open f64`.
pub(super) fn prim_env(p: PrimType) -> Env {
    let mut env = Env::default();
    for n in module_member_names(p) {
        env.vals
            .insert(n.to_string(), ValRef::Member(p, n.to_string()));
    }
    for t in ["t", "int_t"] {
        if let Some(pt) = module_type_member(p, t) {
            env.types.insert(
                t.to_string(),
                Rc::new(TypeAbbr {
                    params: vec![],
                    body: T::Prim(pt),
                    lifted: Liftedness::Unlifted,
                }),
            );
        }
    }
    env
}
