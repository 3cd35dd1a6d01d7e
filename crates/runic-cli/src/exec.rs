//! Calling entry points on a backend, with a time limit and with interpreter panics turned
//! into reportable failures (a panic is a runic bug, but one bad case must not take down a
//! whole `test` or `bench` run).

use crate::driver::Loaded;
use runic_data::Value;
use runic_interp::Interpreter;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
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
    loaded: Loaded,
    /// The time each step of preparing the program took (after the front end).
    pub timings: crate::backend_ir::Timings,
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
                let (x, t) = quietly(|| crate::backend_ir::executor(loaded))
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
        Ok(Executor {
            backend,
            loaded: loaded.clone(),
            timings,
        })
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
        // The watchdog sets the flag unless the call finishes first (dropping `done`).
        let (done, wait) = mpsc::channel::<()>();
        let watchdog = limit.map(|d| {
            let flag = flag.clone();
            std::thread::spawn(move || {
                if let Err(mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(d) {
                    flag.store(true, Ordering::SeqCst);
                }
            })
        });
        let sources = &self.loaded.sources;
        let result = match &self.backend {
            Backend::Interp(i) => {
                quietly(|| i.call_entry(entry, args).map_err(|e| e.render(sources)))
            }
            Backend::Ir(x) => quietly(|| {
                x.run_entry(entry, args)
                    .map_err(|e| crate::backend_ir::render_error(&e, sources))
            }),
        };
        drop(done);
        if let Some(w) = watchdog {
            let _ = w.join();
        }
        match result {
            Err(m) => Err(CallError::Internal(m)),
            Ok(Ok(values)) => Ok(values),
            Ok(Err(report)) => {
                if flag.load(Ordering::SeqCst) {
                    Err(CallError::Timeout(
                        limit.map(|d| d.as_secs_f64()).unwrap_or(0.0),
                    ))
                } else {
                    Err(CallError::Runtime(report))
                }
            }
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
