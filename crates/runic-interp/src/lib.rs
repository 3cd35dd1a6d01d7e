//! runic-interp: the reference interpreter over the typed AST.
//!
//! [`Interpreter`] evaluates a type-checked program ([`runic_types::Checked`]) directly on its
//! syntax tree. Each call runs on a fresh thread with a large stack, so deeply nested (or
//! recursive) programs do not overflow; loops are iterative.
//!
//! Values ([`value::Value`]) keep arrays of primitives in flat typed buffers and everything
//! else boxed; compound values are reference counted and updated in place when unshared.
//!
//! Automatic differentiation (`jvp2`, `jmp2`, `vjp2`, `mjp2`, `with_vjp`; language.md §11)
//! runs on active scalars (module `ad`), with the derivative rules shared with the compiler
//! in [`runic_prim::deriv`]; [`Interpreter::grad_check`] compares an entry point's `jvp` and
//! `vjp` with finite differences.

mod ad;
mod builtins;
mod consume;
mod convert;
mod env;
mod error;
mod eval;
mod gradcheck;
mod index;
pub use runic_prim as prim;
mod value;

pub use error::RuntimeError;
pub use gradcheck::{default_eps, default_tolerance, GradCheck};

use eval::Eval;
use runic_syntax::ast::Dec;
use runic_syntax::SourceMap;
use runic_types::{Checked, Size, Type};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Stack size of the evaluation thread.
const STACK_SIZE: usize = 1 << 30;

pub struct Interpreter {
    checked: Arc<Checked>,
    sources: Arc<SourceMap>,
    interrupt: Option<Arc<AtomicBool>>,
}

impl Interpreter {
    pub fn new(checked: Arc<Checked>, sources: Arc<SourceMap>) -> Interpreter {
        Interpreter {
            checked,
            sources,
            interrupt: None,
        }
    }

    /// A flag that, once set, makes running evaluations stop with the error "interrupted".
    pub fn set_interrupt(&mut self, flag: Arc<AtomicBool>) {
        self.interrupt = Some(flag);
    }

    /// Run `f` with an evaluator on a thread with a large stack.
    fn run<T: Send>(
        &self,
        f: impl FnOnce(&Eval) -> Result<T, RuntimeError> + Send,
    ) -> Result<T, RuntimeError> {
        let checked = &*self.checked;
        let sources = &*self.sources;
        let interrupt = self.interrupt.as_deref();
        std::thread::scope(|s| {
            let handle = std::thread::Builder::new()
                .stack_size(STACK_SIZE)
                .spawn_scoped(s, move || {
                    let ev = Eval::new(checked, sources, interrupt);
                    f(&ev)
                })
                .map_err(|e| {
                    RuntimeError::new(format!("cannot start the evaluation thread: {e}"))
                })?;
            handle.join().unwrap_or_else(|_| {
                Err(RuntimeError::new(
                    "internal error: the interpreter panicked",
                ))
            })
        })
    }

    /// Call an entry point (or `main`) with data values; returns the result split one level
    /// if it is a tuple. Argument shapes are checked against the entry point's sizes first.
    pub fn call_entry(
        &self,
        name: &str,
        args: Vec<runic_data::Value>,
    ) -> Result<Vec<runic_data::Value>, RuntimeError> {
        let checked = &*self.checked;
        let entry = checked.info.entries.iter().find(|e| e.name == name);
        let dec_index = match entry {
            Some(e) => e.dec_index,
            None => checked
                .program
                .decs
                .iter()
                .rposition(|d| matches!(d, Dec::Val(v) if v.name == name))
                .ok_or_else(|| RuntimeError::new(format!("no entry point named \"{name}\"")))?,
        };
        // Bind the entry point's size parameters from the argument shapes.
        let mut sizes = convert::SizeEnv::new();
        if let Some(e) = entry {
            if e.params.len() != args.len() {
                return Err(RuntimeError::new(format!(
                    "entry point \"{name}\" takes {} arguments, but {} were given",
                    e.params.len(),
                    args.len()
                )));
            }
            sizes = entry_sizes(e, &args)?;
        }
        let results: Option<Vec<Type>> = entry.map(|e| e.results.clone());
        self.run(move |ev| {
            let params = ev.checked.info.entries.iter().find(|e| e.name == name);
            let types = params.map(|e| e.params.iter().map(|p| &p.ty).collect::<Vec<_>>());
            let args: Vec<value::Value> = args
                .into_iter()
                .enumerate()
                .map(|(k, a)| convert::from_data(a, types.as_ref().map(|ts| ts[k])))
                .collect();
            let f = ev.global_value(dec_index, None, &env::Env::top(dec_index))?;
            let v = if args.is_empty() {
                f
            } else {
                ev.apply_many(f, args)?
            };
            let split = results.as_ref().map(|r| r.len() > 1).unwrap_or(false);
            match (&v, split) {
                (value::Value::Tuple(items), true) => {
                    let rs = results.as_ref();
                    Ok(items
                        .iter()
                        .enumerate()
                        .map(|(i, x)| convert::to_data(x, rs.and_then(|r| r.get(i)), &sizes))
                        .collect())
                }
                _ => {
                    let t = results.as_ref().and_then(|r| r.first());
                    Ok(vec![convert::to_data(&v, t, &sizes)])
                }
            }
        })
    }

    /// Check the derivatives of entry point `name` at `args` with respect to each of its
    /// float arguments: `jvp` and `vjp` against central differences with step `eps`
    /// ([`default_eps`] of each input's type when `None`).
    pub fn grad_check(
        &self,
        name: &str,
        args: Vec<runic_data::Value>,
        eps: Option<f64>,
    ) -> Result<Vec<GradCheck>, RuntimeError> {
        let checked = &*self.checked;
        let dec_index = checked
            .info
            .entries
            .iter()
            .find(|e| e.name == name)
            .map(|e| e.dec_index)
            .ok_or_else(|| RuntimeError::new(format!("no entry point named \"{name}\"")))?;
        self.run(move |ev| {
            let args: Vec<value::Value> = args
                .into_iter()
                .map(|a| convert::from_data(a, None))
                .collect();
            let f = ev.global_value(dec_index, None, &env::Env::top(dec_index))?;
            ev.grad_check(&f, &args, eps)
        })
    }

    /// Evaluate a top-level constant (the REPL wraps expressions as `def __replN = e`).
    pub fn eval_constant(&self, name: &str) -> Result<runic_data::Value, RuntimeError> {
        let checked = &*self.checked;
        let idx = checked
            .program
            .decs
            .iter()
            .rposition(|d| matches!(d, Dec::Val(v) if v.name == name))
            .ok_or_else(|| RuntimeError::new(format!("no definition named \"{name}\"")))?;
        self.run(move |ev| {
            let v = ev.global_value(idx, None, &env::Env::top(idx))?;
            Ok(convert::to_data(&v, None, &convert::SizeEnv::new()))
        })
    }
}

/// Check call arguments against the sizes in an entry point's parameter types. The ir
/// backend calls this before running, so that both backends report a mismatch with the
/// sizes involved; a wrong argument count is left to the backend.
pub fn check_entry_args(
    checked: &Checked,
    name: &str,
    args: &[runic_data::Value],
) -> Result<(), RuntimeError> {
    match checked.info.entries.iter().find(|e| e.name == name) {
        Some(e) if e.params.len() == args.len() => entry_sizes(e, args).map(|_| ()),
        _ => Ok(()),
    }
}

/// The entry point's size parameters, bound from the argument shapes.
fn entry_sizes(
    e: &runic_types::EntryPoint,
    args: &[runic_data::Value],
) -> Result<convert::SizeEnv, RuntimeError> {
    let mut sizes = convert::SizeEnv::new();
    for (p, a) in e.params.iter().zip(args) {
        // A scalar parameter may be the size of a later one (`entry f n (xs: [n]i32)`).
        if let (Some(n), runic_data::Value::Scalar(x)) = (&p.name, a) {
            if let Some(k) = x.to_i64() {
                sizes.entry(n.clone()).or_insert(k);
            }
        }
        if let Err(m) = bind_entry_sizes(&p.ty, a, &mut sizes) {
            let detail = match m {
                Some((want, got)) => {
                    format!(": expected size {want}, but an argument has size {got}")
                }
                None => String::new(),
            };
            return Err(RuntimeError::new(format!(
                "entry point arguments have invalid sizes{detail}."
            )));
        }
    }
    Ok(sizes)
}

/// A failed entry size check, with the expected and actual size when one dimension is off.
type SizeCheck = Result<(), Option<(i64, i64)>>;

/// Bind size variables of an entry parameter type from a data value.
fn bind_entry_sizes(t: &Type, v: &runic_data::Value, sizes: &mut convert::SizeEnv) -> SizeCheck {
    match (t, v) {
        (Type::Record(_), runic_data::Value::Tuple(items)) => {
            let types = t.as_tuple().unwrap_or_default();
            if types.len() != items.len() {
                return Err(None);
            }
            return types
                .iter()
                .zip(items)
                .try_for_each(|(t, v)| bind_entry_sizes(t, v, sizes));
        }
        (Type::Record(fields), runic_data::Value::Record(given)) => {
            if fields.len() != given.len() {
                return Err(None);
            }
            return fields.iter().try_for_each(|(name, t)| {
                match given.iter().find(|(n, _)| n == name) {
                    Some((_, v)) => bind_entry_sizes(t, v, sizes),
                    None => Err(None),
                }
            });
        }
        _ => {}
    }
    if let (Type::Array { shape, .. }, runic_data::Value::Array(a)) = (t, v) {
        if a.shape.len() < shape.len() {
            return Err(None);
        }
        for (s, &d) in shape.iter().zip(&a.shape) {
            let d = d as i64;
            match s {
                Size::Const(c) if *c != d => return Err(Some((*c, d))),
                Size::Var(n) => match sizes.get(n) {
                    Some(&x) if x != d => return Err(Some((x, d))),
                    Some(_) => {}
                    None => {
                        sizes.insert(n.clone(), d);
                    }
                },
                _ => {}
            }
        }
    }
    Ok(())
}
