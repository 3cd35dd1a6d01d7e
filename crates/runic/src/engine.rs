//! Calling entry points on a backend, with an optional time limit and with panics turned
//! into reportable failures (a panic is a runic bug, but one bad case must not take down a
//! whole `test` or `bench` run, nor a program that uses the library).

use crate::load::Loaded;
use runic_data::Value;
use runic_interp::Interpreter;
use runic_syntax::SourceMap;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Once};
use std::time::Duration;

/// Why a call produced no results.
#[derive(Debug, Clone, PartialEq)]
pub enum CallError {
    /// A runtime error: the full report of §6.1.3.
    Runtime(String),
    /// The time limit passed (seconds).
    Timeout(f64),
    /// The backend panicked: a bug in runic.
    Internal(String),
}

impl CallError {
    /// The text as it would be printed to stderr (and matched by `error:` regexes).
    pub fn text(&self) -> String {
        match self {
            CallError::Runtime(r) => r.clone(),
            CallError::Timeout(s) => format!("Error: timed out after {s} seconds"),
            CallError::Internal(m) => format!("Error: internal error (a bug in runic): {m}"),
        }
    }
}

/// A program prepared for calls on one backend.
pub struct Executor {
    backend: Backend,
    /// What run-time error locations are rendered against.
    sources: Arc<SourceMap>,
    /// The time each step of preparing the program took (after the front end).
    pub timings: crate::pipeline::Timings,
    /// For the ir backend, the checked program whose entry sizes are checked before a call
    /// (with the interpreter's messages, which name the sizes).
    entry_check: Option<Arc<runic_types::Checked>>,
    /// The thread that ends calls with a time limit (started by the first).
    watchdog: Option<crate::watchdog::Watchdog>,
}

enum Backend {
    Interp(Interpreter),
    Ir(runic_exec::Executor),
}

impl Executor {
    /// How the ir backend runs each SOAC (`--explain-exec`); nothing for the interpreter.
    pub fn explain_reports(&self) -> Vec<runic_exec::SoacReport> {
        match &self.backend {
            Backend::Ir(e) => e.explain(),
            Backend::Interp(_) => Vec::new(),
        }
    }

    /// The error is a complete report (it starts with `Error:` or is a rendered
    /// diagnostic): callers print it as it is.
    pub fn new(backend: &str, loaded: &Loaded) -> Result<Executor, String> {
        let mut timings = Vec::new();
        let backend = match backend {
            "interp" => {
                let t0 = std::time::Instant::now();
                let i =
                    quietly(|| Interpreter::new(loaded.checked.clone(), loaded.sources.clone()))
                        .map_err(|m| format!("Error: internal error (a bug in runic): {m}"))?;
                timings.push(("interpreter".to_string(), t0.elapsed()));
                Backend::Interp(i)
            }
            "ir" => {
                let (x, t) = quietly(|| crate::pipeline::executor(loaded))
                    .map_err(|m| format!("Error: internal error (a bug in runic): {m}"))??;
                timings = t;
                Backend::Ir(x)
            }
            _ => {
                return Err(format!(
                    "Error: backend {backend} is not available in this build"
                ))
            }
        };
        let entry_check = match backend {
            Backend::Ir(_) => Some(loaded.checked.clone()),
            Backend::Interp(_) => None,
        };
        Ok(Executor {
            backend,
            sources: loaded.sources.clone(),
            timings,
            entry_check,
            watchdog: None,
        })
    }

    /// A program given as IR (not from source): AD and the optimisation passes, then the
    /// ir backend. Its locations, if any, are rendered against `sources`.
    pub fn from_ir(prog: runic_ir::Prog, sources: Arc<SourceMap>) -> Result<Executor, String> {
        let exec = quietly(|| {
            crate::pipeline::optimise(prog).map(|p| runic_exec::Executor::new(Arc::new(p)))
        })
        .map_err(|m| format!("Error: internal error (a bug in runic): {m}"))??;
        Ok(Executor {
            backend: Backend::Ir(exec),
            sources,
            timings: Vec::new(),
            entry_check: None,
            watchdog: None,
        })
    }

    /// Call an entry point without a time limit; `&self`, so calls may run from several
    /// threads at once.
    pub fn run(&self, entry: &str, args: Vec<Value>) -> Result<Vec<Value>, CallError> {
        let sources = &self.sources;
        if let Some(checked) = &self.entry_check {
            if let Err(e) = runic_interp::check_entry_args(checked, entry, &args) {
                return Err(CallError::Runtime(e.render(sources)));
            }
        }
        let result = match &self.backend {
            Backend::Interp(i) => {
                quietly(|| i.call_entry(entry, args).map_err(|e| e.render(sources)))
            }
            Backend::Ir(x) => quietly(|| {
                x.run_entry(entry, args)
                    .map_err(|e| crate::pipeline::render_error(&e, sources))
            }),
        };
        match result {
            Err(m) => Err(CallError::Internal(m)),
            Ok(r) => r.map_err(CallError::Runtime),
        }
    }

    /// Call an entry point; with a limit, the call is interrupted once it has passed.
    pub fn call(
        &mut self,
        entry: &str,
        args: Vec<Value>,
        limit: Option<Duration>,
    ) -> Result<Vec<Value>, CallError> {
        let flag = Arc::new(AtomicBool::new(false));
        match &mut self.backend {
            Backend::Interp(i) => i.set_interrupt(flag.clone()),
            Backend::Ir(x) => x.set_interrupt(flag.clone()),
        }
        let Some(limit) = limit else {
            return self.run(entry, args);
        };
        // The watchdog raises the flag unless the call finishes first. Without it (its
        // thread could not be started; tried again at the next call) there is no limit.
        if self.watchdog.is_none() {
            self.watchdog = crate::watchdog::Watchdog::start();
        }
        let result = match &self.watchdog {
            Some(w) => {
                let _armed = w.arm(limit, flag.clone());
                self.run(entry, args)
            }
            None => self.run(entry, args),
        };
        match result {
            Err(CallError::Runtime(_)) if flag.load(Ordering::SeqCst) => {
                Err(CallError::Timeout(limit.as_secs_f64()))
            }
            r => r,
        }
    }
}

thread_local! {
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Install the process-wide panic hook: silent inside [`quietly`], otherwise a short
/// "internal error" line (never Rust's default panic text, which looks like a crash report).
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        if !QUIET.with(|q| q.get()) {
            eprintln!(
                "Error: internal error (a bug in runic): {}",
                panic_text(info.payload())
            );
        }
    }));
}

/// For the library: a process-wide hook, installed once, that is silent inside [`quietly`]
/// and hands every other panic to the hook that was there before (the host program's).
pub fn install_quiet_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(|q| q.get()) {
                previous(info);
            }
        }));
    });
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_string()
    }
}

/// Run `f`, turning a panic into `Err(message)` without printing anything.
pub fn quietly<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    let was = QUIET.with(|q| q.replace(true));
    let r = catch_unwind(AssertUnwindSafe(f));
    QUIET.with(|q| q.set(was));
    r.map_err(|p| panic_text(&*p))
}
