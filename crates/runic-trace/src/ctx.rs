//! The tracing context: one per thread while a function is being traced. It owns the
//! program's [`NameSource`], a stack of open bodies (the entry's, then one per lambda being
//! traced) and the table of traced values, so that [`Tracer`]s can be small `Copy` handles
//! and operators need no explicit context argument.
//!
//! Operations never panic on bad use inside a trace: the first error is kept, later
//! operations return placeholders, and [`crate::trace`] returns the error.

use crate::Tracer;
use runic_ir::traverse::{binders, uses};
use runic_ir::{Body, Builder, Lambda, NameSource, Param, Prim, PrimType, Stm, SubExp, Type};
use std::cell::{Cell, RefCell};

/// A traced value: its operand, its type and the body that bound it (0: constants, which
/// live everywhere).
struct Entry {
    se: SubExp,
    ty: Type,
    frame: u32,
}

/// A body being built: its statements.
struct Frame {
    id: u32,
    stms: Vec<Stm>,
}

pub(crate) struct Ctx {
    pub names: NameSource,
    frames: Vec<Frame>,
    vals: Vec<Entry>,
    error: Option<String>,
    gen: u32,
    next_frame: u32,
}

thread_local! {
    static CTX: RefCell<Option<Ctx>> = const { RefCell::new(None) };
    static GEN: Cell<u32> = const { Cell::new(0) };
}

/// Runs `f` with the current context. Using a traced value outside any trace is a bug of
/// the calling program (like using a `RefCell` twice): it panics with a message saying so.
pub(crate) fn with<R>(f: impl FnOnce(&mut Ctx) -> R) -> R {
    CTX.with(|c| {
        let mut c = c.borrow_mut();
        let cx = c
            .as_mut()
            .expect("runic-trace: a traced value was used outside runic_trace::trace/grad/vjp/jvp");
        f(cx)
    })
}

/// Clears the thread's context when a trace ends, also when the user's closure panics.
pub(crate) struct Session;

impl Session {
    /// Starts a trace on this thread; `None` if one is already running (traces do not nest).
    pub fn start() -> Option<Session> {
        CTX.with(|c| {
            let mut c = c.borrow_mut();
            if c.is_some() {
                return None;
            }
            let gen = GEN.with(|g| {
                g.set(g.get().wrapping_add(1));
                g.get()
            });
            *c = Some(Ctx {
                names: NameSource::default(),
                frames: vec![Frame {
                    id: 1,
                    stms: Vec::new(),
                }],
                vals: Vec::new(),
                error: None,
                gen,
                next_frame: 2,
            });
            Some(Session)
        })
    }

    /// Ends the trace: the name source, the entry body's statements and the first error.
    pub fn finish(self) -> (NameSource, Vec<Stm>, Option<String>) {
        let cx = CTX
            .with(|c| c.borrow_mut().take())
            .expect("a running trace");
        std::mem::forget(self);
        let mut frames = cx.frames;
        let stms = frames.pop().map(|f| f.stms).unwrap_or_default();
        (cx.names, stms, cx.error)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        CTX.with(|c| c.borrow_mut().take());
    }
}

impl Ctx {
    /// Records `msg` unless an earlier error is already recorded.
    pub fn fail(&mut self, msg: impl Into<String>) {
        if self.error.is_none() {
            self.error = Some(msg.into());
        }
    }

    pub fn failed(&self) -> bool {
        self.error.is_some()
    }

    fn top(&self) -> u32 {
        self.frames.last().map(|f| f.id).unwrap_or(0)
    }

    /// A tracer for `se` of type `ty`, bound in the innermost open body.
    pub fn new_val(&mut self, se: SubExp, ty: Type) -> Tracer {
        let frame = match se {
            SubExp::Const(_) => 0,
            SubExp::Var(_) => self.top(),
        };
        self.push(se, ty, frame)
    }

    fn push(&mut self, se: SubExp, ty: Type, frame: u32) -> Tracer {
        self.vals.push(Entry { se, ty, frame });
        Tracer {
            id: self.vals.len() as u32 - 1,
            gen: self.gen,
        }
    }

    /// A placeholder after an error (never part of a program that is returned).
    pub fn dummy(&mut self) -> Tracer {
        self.new_val(SubExp::Const(Prim::F32(0.0)), Type::Prim(PrimType::F32))
    }

    /// The operand and type of `t`, if it belongs to this trace and to a body still open.
    pub fn get(&mut self, t: Tracer) -> Option<(SubExp, Type)> {
        let e = match self.vals.get(t.id as usize) {
            Some(e) if t.gen == self.gen => e,
            _ => {
                self.fail("a traced value from another trace was used");
                return None;
            }
        };
        if e.frame != 0 && !self.frames.iter().any(|f| f.id == e.frame) {
            self.fail(
                "a traced value was used outside the closure that made it (a map, reduce or \
                 scan body's values cannot escape it)",
            );
            return None;
        }
        Some((e.se.clone(), e.ty.clone()))
    }

    /// The type of `t` (a placeholder type after an error).
    pub fn ty(&mut self, t: Tracer) -> Type {
        self.get(t)
            .map(|(_, ty)| ty)
            .unwrap_or(Type::Prim(PrimType::F32))
    }

    /// A tracer with the same binding body as `t` but another operand (sizes of an array
    /// are in scope wherever the array is).
    pub fn sibling(&mut self, t: Tracer, se: SubExp, ty: Type) -> Tracer {
        let frame = match (&se, self.vals.get(t.id as usize)) {
            (SubExp::Var(_), Some(e)) => e.frame,
            _ => 0,
        };
        self.push(se, ty, frame)
    }

    /// Runs `f` with a builder over this trace's names, appends what it built to the
    /// innermost body and returns tracers for the operands `f` returns (their types from
    /// the builder). An error becomes the trace's error and `n_dummies` placeholders.
    pub fn emit(
        &mut self,
        n_dummies: usize,
        f: impl FnOnce(&mut Builder) -> Result<Vec<SubExp>, runic_ir::TypeError>,
    ) -> Vec<Tracer> {
        if self.failed() {
            return (0..n_dummies).map(|_| self.dummy()).collect();
        }
        let mut b = Builder::new(&mut self.names);
        let res = f(&mut b);
        let stms = b.take_stms();
        match res.and_then(|rs| {
            rs.into_iter()
                .map(|r| subexp_type(&self.names, &r).map(|t| (r, t)))
                .collect::<Result<Vec<_>, _>>()
        }) {
            Ok(rs) => {
                if let Some(fr) = self.frames.last_mut() {
                    fr.stms.extend(stms);
                }
                rs.into_iter().map(|(r, t)| self.new_val(r, t)).collect()
            }
            Err(e) => {
                self.fail(format!("internal error while tracing: {}", e.0));
                (0..n_dummies).map(|_| self.dummy()).collect()
            }
        }
    }

    /// Opens the body of a lambda with parameters of the given types; returns the tracers
    /// of its parameters.
    pub fn open(&mut self, param_types: &[Type]) -> (Vec<Param>, Vec<Tracer>) {
        let id = self.next_frame;
        self.next_frame += 1;
        self.frames.push(Frame {
            id,
            stms: Vec::new(),
        });
        let params: Vec<Param> = param_types
            .iter()
            .map(|t| Param {
                name: self.names.fresh_typed("x", t.clone()),
                ty: t.clone(),
            })
            .collect();
        let tracers = params
            .iter()
            .map(|p| self.new_val(SubExp::Var(p.name), p.ty.clone()))
            .collect();
        (params, tracers)
    }

    /// Closes the innermost body, returning `results` from it: the lambda (`None` after an
    /// error, the body dropped either way).
    pub fn close(&mut self, params: Vec<Param>, results: &[Tracer]) -> Option<Lambda> {
        let mut res = Vec::new();
        let mut ret = Vec::new();
        let resolved: Option<Vec<_>> = results.iter().map(|&r| self.get(r)).collect();
        let frame = self.frames.pop()?;
        for (se, ty) in resolved? {
            res.push(se);
            ret.push(ty);
        }
        let body = Body {
            stms: frame.stms,
            result: res,
        };
        let inner = binders(&body);
        for t in &ret {
            if uses(t).iter().any(|v| inner.contains(v)) {
                self.fail(
                    "a closure returned an array whose size is computed inside it; \
                     return arrays whose sizes are known outside",
                );
                return None;
            }
        }
        if results.is_empty() {
            self.fail("a closure returned no values");
            return None;
        }
        Some(Lambda::new(params, body, ret))
    }

    /// Drops the innermost body after an error in its closure.
    pub fn abandon(&mut self) {
        if self.frames.len() > 1 {
            self.frames.pop();
        }
    }
}

fn subexp_type(names: &NameSource, s: &SubExp) -> Result<Type, runic_ir::TypeError> {
    runic_ir::typing::subexp_type(names, s)
}

/// Traces `f` as the body of a lambda over parameters of the given types.
pub(crate) fn lambda(
    param_types: &[Type],
    f: impl FnOnce(&[Tracer]) -> Vec<Tracer>,
) -> Option<Lambda> {
    let (params, args) = with(|cx| cx.open(param_types));
    let results = f(&args);
    with(|cx| {
        if cx.failed() {
            cx.abandon();
            return None;
        }
        cx.close(params, &results)
    })
}
