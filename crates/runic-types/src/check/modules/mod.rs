//! The module system (spec §4.7, §4.9), resolved away during checking.
//!
//! Modules never reach the later stages. Every definition inside a module, an imported file or
//! an applied parametric module is checked like a top-level definition and emitted into one
//! flat program under a unique *flat name* (`M.x`, `utils.dot`, `la.matmul`); every use is
//! rewritten to that name. A parametric module is applied by checking a fresh copy of its body
//! with the parameter bound to the (signature-restricted) argument. Abstract types are
//! distinct types during checking and are replaced by their definitions when types are
//! exported, so the backends only ever see concrete types.

mod arrow;
mod elab;
mod files;
mod sig;
mod spec_checks;

pub(crate) use files::FileCtx;
pub(crate) use sig::ABSTRACT;

use super::{Checker, Scheme, TypeAbbr};
use runic_syntax::ast::*;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// What a value name in a module denotes.
#[derive(Clone, Debug)]
pub(crate) enum ValRef {
    /// A definition of the flat program (or, while a parametric module's body is checked on
    /// its own, a stand-in for a parameter's value), with its scheme.
    Def(Name, Rc<Scheme>),
    /// A member of a built-in numeric module.
    Member(PrimType, Name),
}

/// A module value.
#[derive(Clone, Debug)]
pub(crate) enum ModVal {
    Struct(Rc<Env>),
    Functor(Rc<Functor>),
    /// A built-in numeric module (`f64`, `i32`, ...).
    Prim(PrimType),
    /// What a module declaration with an error binds: uses of it are not reported again.
    Broken,
}

/// The names a module (or a scope) binds, one map per namespace.
#[derive(Clone, Debug, Default)]
pub(crate) struct Env {
    pub vals: HashMap<Name, ValRef>,
    pub types: HashMap<Name, Rc<TypeAbbr>>,
    pub mods: HashMap<Name, ModVal>,
    pub sigs: HashMap<Name, Rc<SigVal>>,
}

impl Env {
    /// Adds everything `other` binds, shadowing.
    fn extend(&mut self, other: &Env) {
        self.vals
            .extend(other.vals.iter().map(|(k, v)| (k.clone(), v.clone())));
        self.types
            .extend(other.types.iter().map(|(k, v)| (k.clone(), v.clone())));
        self.mods
            .extend(other.mods.iter().map(|(k, v)| (k.clone(), v.clone())));
        self.sigs
            .extend(other.sigs.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
}

/// One lexical level of declarations: the prelude, a file, or a module body.
#[derive(Clone, Debug, Default)]
pub(crate) struct Frame {
    /// Everything visible here.
    pub vis: Env,
    /// What the enclosing file or module exports (everything but `local` and `import`).
    pub exports: Env,
    /// Names defined (not opened) at this level, per namespace, for "duplicate definition".
    pub defined: HashSet<(Ns, Name)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Ns {
    Val,
    Type,
    Mod,
    Sig,
}

impl Ns {
    fn word(self) -> &'static str {
        match self {
            Ns::Val => "",
            Ns::Type => "type ",
            Ns::Mod => "module ",
            Ns::Sig => "module type ",
        }
    }
}

/// A parametric module: its parameter, optional result signature and body, with the
/// declarations that were visible where it was defined.
#[derive(Debug)]
pub(crate) struct Functor {
    pub param: ModParam,
    pub param_sig: Rc<SigVal>,
    /// Read where the parameter is in scope (it may mention it: `: S with t = P.t`).
    pub result: Option<ModTypeExp>,
    pub body: ModExp,
    pub closure: Vec<Frame>,
    /// The directory imports in the body are resolved against.
    pub dir: std::path::PathBuf,
    /// Set when the body has errors of its own (reported once, not at every application).
    pub broken: std::cell::Cell<bool>,
    /// A parametric module known only by its module type (a parameter `F: (P: A) -> B`
    /// inside a body checked on its own): applied, it gives an abstract module of type
    /// `result`; `body` is not used.
    pub abstract_result: bool,
}

/// An elaborated module type: the written specs, read in the scope where they were written,
/// plus the `with` refinements applied to it.
#[derive(Debug)]
pub(crate) enum SigVal {
    Specs {
        specs: Vec<Spec>,
        closure: Vec<Frame>,
        refine: Vec<(QualName, Rc<TypeAbbr>)>,
    },
    /// `(p: A) -> B`: the signature of a parametric module. `B` is read where it was
    /// written, with `p` bound to the module its parameter stands for.
    Arrow {
        param: Option<Name>,
        param_sig: Rc<SigVal>,
        result: ModTypeExp,
        closure: Vec<Frame>,
    },
}

impl Checker {
    /// Starts checking the main file's declarations.
    pub(crate) fn enter_main_file(&mut self) {
        self.frames.push(Frame::default());
        self.in_main = true;
    }

    /// The module a name denotes: local opens, then enclosing declarations, then the numeric
    /// modules.
    pub(crate) fn find_module(&self, name: &str) -> Option<ModVal> {
        for sc in self.scopes.iter().rev() {
            if let super::Scope::OpenEnv(env) = sc {
                if let Some(m) = env.mods.get(name) {
                    return Some(m.clone());
                }
            }
        }
        for f in self.frames.iter().rev() {
            if let Some(m) = f.vis.mods.get(name) {
                return Some(m.clone());
            }
        }
        PrimType::from_name(name).map(ModVal::Prim)
    }

    /// Does a module of this name hide a value of the same name, for a dotted use `name.x`?
    /// A local variable always hides modules; of two declarations, the inner one wins, and
    /// at the same level (or against a built-in) the module does.
    pub(crate) fn module_hides_value(&self, name: &str) -> bool {
        if self.lookup_local(name).is_some() {
            return false;
        }
        let fm = self
            .frames
            .iter()
            .rposition(|f| f.vis.mods.contains_key(name));
        let fv = self
            .frames
            .iter()
            .rposition(|f| f.vis.vals.contains_key(name));
        match (fm, fv) {
            (Some(m), Some(v)) => m >= v,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }

    /// The module at a dotted path, or why there is none.
    pub(crate) fn module_path(&self, path: &[Name]) -> Result<ModVal, String> {
        let Some((first, rest)) = path.split_first() else {
            return Err("empty module path".into());
        };
        let mut m = self
            .find_module(first)
            .ok_or_else(|| format!("Unknown module \"{first}\"."))?;
        for (i, n) in rest.iter().enumerate() {
            let shown = path[..=i].join(".");
            m = match &m {
                ModVal::Broken => ModVal::Broken,
                ModVal::Struct(env) => env
                    .mods
                    .get(n)
                    .cloned()
                    .ok_or_else(|| format!("Module \"{shown}\" has no submodule \"{n}\"."))?,
                _ => return Err(format!("Module \"{shown}\" has no submodule \"{n}\".")),
            };
        }
        Ok(m)
    }

    /// A type bound in the enclosing declarations or a local open.
    pub(crate) fn find_type(&self, name: &str) -> Option<Rc<TypeAbbr>> {
        for sc in self.scopes.iter().rev() {
            if let super::Scope::OpenEnv(env) = sc {
                if let Some(t) = env.types.get(name) {
                    return Some(t.clone());
                }
            }
        }
        self.frames
            .iter()
            .rev()
            .find_map(|f| f.vis.types.get(name).cloned())
    }

    /// A value bound in the enclosing declarations (not locals).
    pub(crate) fn find_val(&self, name: &str) -> Option<ValRef> {
        self.frames
            .iter()
            .rev()
            .find_map(|f| f.vis.vals.get(name).cloned())
    }

    fn find_sig(&self, q: &QualName) -> Result<Rc<SigVal>, String> {
        if q.quals.is_empty() {
            return self
                .frames
                .iter()
                .rev()
                .find_map(|f| f.vis.sigs.get(&q.name).cloned())
                .ok_or_else(|| format!("Unknown module type \"{q}\"."));
        }
        match self.module_path(&q.quals)? {
            ModVal::Struct(env) => env
                .sigs
                .get(&q.name)
                .cloned()
                .ok_or_else(|| format!("Unknown module type \"{q}\".")),
            _ => Err(format!("Unknown module type \"{q}\".")),
        }
    }

    fn frame(&mut self) -> &mut Frame {
        if self.frames.is_empty() {
            self.frames.push(Frame::default());
        }
        let last = self.frames.len() - 1;
        &mut self.frames[last]
    }

    /// A fresh flat name for `name` defined under the current prefix. At the top level of the
    /// main file (and in the prelude) names are kept, so entry points keep theirs.
    fn flat_name(&mut self, name: &str) -> Name {
        if self.prefix.is_empty() {
            self.flat_used.insert(name.to_string());
            return name.to_string();
        }
        self.unique_flat(format!("{}.{name}", self.prefix.join(".")))
    }

    /// `base`, or `base#k` if `base` is taken.
    fn unique_flat(&mut self, base: String) -> Name {
        let mut cand = base.clone();
        let mut k = 1;
        while self.flat_used.contains(&cand) {
            k += 1;
            cand = format!("{base}#{k}");
        }
        self.flat_used.insert(cand.clone());
        cand
    }
}
