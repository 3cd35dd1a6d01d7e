//! runic as a library: compile a runic program once, then call its entry points — and so
//! its gradients — from Rust, with `ndarray` arrays and scalars in and out.
//!
//! ```
//! let program = runic::Program::from_source("loss.fut", "
//!     def loss (w: []f32) (x: []f32): f32 = f32.sum (map2 (\\a b -> (a * b - 1) ** 2) w x)
//!     entry grad_loss (w: []f32) (x: []f32): []f32 = vjp (\\w -> loss w x) w 1")?;
//! let grad = program.entry("grad_loss")?;
//! let w = ndarray::arr1(&[1.0f32, 2.0]);
//! let x = ndarray::arr1(&[3.0f32, 0.5]);
//! let g = grad.call((&w, &x))?.into_array::<f32, ndarray::Ix1>(0)?;
//! assert_eq!(g, ndarray::arr1(&[12.0f32, 0.0])); // 2·(w·x − 1)·x
//! # Ok::<(), runic::Error>(())
//! ```
//!
//! - [`Program`] compiles a program ([`Program::from_file`], [`Program::from_source`], or
//!   from IR with [`Program::from_ir`]) for a [`Backend`]: [`Backend::Compiled`] (the
//!   default: lowering, AD and optimisation to IR run by the parallel executor) or
//!   [`Backend::Interpreter`] (the reference interpreter).
//! - [`Program::entry`] checks an entry point's name and gives an [`Entry`]; [`Entry::call`]
//!   checks the arguments against the entry's signature (element type, rank, sizes) and
//!   runs it. Arguments are anything [`IntoValue`] — scalars of the twelve primitive types,
//!   `ndarray` arrays and views of them, slices, Rust tuples (for a tuple parameter),
//!   [`Record`]s (for a record parameter), [`Value`]s — grouped in a tuple ([`IntoArgs`]);
//!   results come back as [`Outputs`], taken out by type ([`FromValue`]): arrays, scalars,
//!   tuples, [`Record`]s.
//! - Every failure is an [`Error`] whose text is what the `runic` command prints for it:
//!   located compile diagnostics, located run-time reports, the argument that does not
//!   fit, the entry points that exist. A panic inside runic becomes [`Error::Internal`].
//! - A `Program` is `Send + Sync` and cheap to clone; calls take `&self`, so threads may
//!   call the same program at once. The compiled code is made once and reused by every call.
//!
//! - [`trace()`], [`grad`], [`vjp`] and [`jvp`] build an entry point from a Rust closure over
//!   traced values (seed 000's tracing API, [`trace`] module): `runic::grad(&params, &[0],
//!   |a| dot(a[0], a[0]))` is the compiled gradient of `x·x`.
//!
//! The lower-level stages are public for tools built on them (the `runic` command):
//! [`load`] (read, parse, type-check), [`pipeline`] (lower, AD, optimise) and [`engine`]
//! (run on a backend, with time limits and panics caught).

mod convert;
pub mod engine;
mod error;
pub mod load;
mod outputs;
pub mod pipeline;
mod sig;
pub mod trace;
mod watchdog;

pub use convert::{Element, FromValue, IntoArgs, IntoValue, Record};
pub use error::Error;
pub use outputs::Outputs;
pub use runic_data::{f16, Array as DataArray, Buffer, Prim, PrimType, Store, Value};
pub use sig::{Dim, Param, ParamType, Signature};
pub use trace::{grad, jvp, trace, vjp};

use std::path::Path;
use std::sync::Arc;

/// Which backend runs a program's calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    /// Lowered to IR, differentiated and optimised once, then run by the parallel executor
    /// (native kernels, GEMM): the `runic` command's `--backend ir`.
    #[default]
    Compiled,
    /// The reference interpreter over the checked program: `--backend interp`.
    Interpreter,
}

impl Backend {
    /// The backend's name on the command line.
    pub fn cli_name(self) -> &'static str {
        match self {
            Backend::Compiled => "ir",
            Backend::Interpreter => "interp",
        }
    }
}

/// A compiled program: cheap to clone (clones share the compiled code), `Send + Sync`.
///
/// ```
/// use runic::{Backend, Program};
/// let src = "entry add (x: i32) (y: i32): i32 = x + y";
/// let compiled = Program::from_source("add.fut", src)?;
/// let interpreted = Program::from_source_with("add.fut", src, Backend::Interpreter)?;
/// for p in [&compiled, &interpreted] {
///     assert_eq!(p.call("add", (2i32, 3i32))?.get::<i32>(0)?, 5);
/// }
/// # Ok::<(), runic::Error>(())
/// ```
#[derive(Clone)]
pub struct Program {
    inner: Arc<Inner>,
}

struct Inner {
    exec: engine::Executor,
    entries: Vec<Signature>,
    warnings: String,
    backend: Backend,
}

impl Program {
    /// Read, check and compile a program file for the compiled backend. Diagnostics name
    /// the file as `path` is written; imports are resolved relative to it.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Program, Error> {
        Program::from_file_with(path, Backend::default())
    }

    /// [`Program::from_file`] for a chosen backend.
    pub fn from_file_with(path: impl AsRef<Path>, backend: Backend) -> Result<Program, Error> {
        let path = path.as_ref();
        let text = load::read_source(path)?;
        Program::from_source_with(&path.display().to_string(), &text, backend)
    }

    /// Check and compile program text for the compiled backend; `name` is the file name
    /// diagnostics show (and imports are resolved against).
    ///
    /// ```
    /// let err = runic::Program::from_source("bad.fut", "entry f (x: i32) = x + true")
    ///     .err().unwrap();
    /// assert!(matches!(err, runic::Error::Compile(_)));
    /// assert!(err.to_string().starts_with("bad.fut:1:"));
    /// ```
    pub fn from_source(name: &str, text: &str) -> Result<Program, Error> {
        Program::from_source_with(name, text, Backend::default())
    }

    /// [`Program::from_source`] for a chosen backend.
    pub fn from_source_with(name: &str, text: &str, backend: Backend) -> Result<Program, Error> {
        engine::install_quiet_hook();
        // The front end and the passes recurse on the program's structure: they run on a
        // thread with a large stack, once per program.
        load::with_big_stack(|| {
            let loaded = load::load_text(name, text)?;
            let exec = engine::Executor::new(backend.cli_name(), &loaded).map_err(compile_error)?;
            let entries = loaded
                .checked
                .info
                .entries
                .iter()
                .map(sig::of_entry)
                .collect();
            Ok(Program::new(exec, entries, loaded.warnings(), backend))
        })
    }

    /// A program given as IR (e.g. built by tracing host code) rather than source: runs
    /// runic-ad's elimination of the AD constructs and the runic-opt pipeline (verifying
    /// the IR after each pass in debug builds), then prepares the executor. Its entry points
    /// are the functions with [`runic_ir::EntryInfo`]; its parameters are unnamed in error
    /// messages, and its run-time errors are located only if its `Loc`s say so. Always the
    /// compiled backend.
    pub fn from_ir(prog: runic_ir::Prog) -> Result<Program, Error> {
        engine::install_quiet_hook();
        let entries = prog
            .funs
            .iter()
            .filter_map(|f| f.entry.as_ref().map(|e| sig::of_ir(f, e)))
            .collect();
        load::with_big_stack(|| {
            let exec = engine::Executor::from_ir(prog, Arc::default()).map_err(compile_error)?;
            Ok(Program::new(
                exec,
                entries,
                String::new(),
                Backend::Compiled,
            ))
        })
    }

    fn new(
        exec: engine::Executor,
        entries: Vec<Signature>,
        warnings: String,
        backend: Backend,
    ) -> Program {
        Program {
            inner: Arc::new(Inner {
                exec,
                entries,
                warnings,
                backend,
            }),
        }
    }

    /// The entry point `name`, or [`Error::UnknownEntry`] listing the ones there are.
    ///
    /// ```
    /// let p = runic::Program::from_source("m.fut", "entry sq (x: f64) = x * x")?;
    /// let sq = p.entry("sq")?;
    /// assert_eq!(sq.signature().results, ["f64"]);
    /// let err = p.entry("cube").err().unwrap();
    /// assert_eq!(err.to_string(), r#"Error: no entry point named "cube"; entry points: sq"#);
    /// # Ok::<(), runic::Error>(())
    /// ```
    pub fn entry(&self, name: &str) -> Result<Entry, Error> {
        match self.inner.entries.iter().position(|e| e.name == name) {
            Some(index) => Ok(Entry {
                program: self.clone(),
                index,
            }),
            None => Err(Error::UnknownEntry {
                name: name.to_string(),
                available: self.inner.entries.iter().map(|e| e.name.clone()).collect(),
            }),
        }
    }

    /// Look up an entry point and call it once (see [`Entry::call`]).
    pub fn call(&self, entry: &str, args: impl IntoArgs) -> Result<Outputs, Error> {
        self.entry(entry)?.call(args)
    }

    /// Every entry point's signature, in program order.
    pub fn entries(&self) -> &[Signature] {
        &self.inner.entries
    }

    /// The compiler's warnings, rendered as `runic check` prints them (empty if none).
    pub fn warnings(&self) -> &str {
        &self.inner.warnings
    }

    pub fn backend(&self) -> Backend {
        self.inner.backend
    }
}

/// An error of preparing a program after the front end: a construct the compiled backend
/// cannot lower (a located diagnostic), or a bug.
fn compile_error(text: String) -> Error {
    if text.starts_with("Error: internal") {
        Error::Internal(text)
    } else {
        Error::Compile(text)
    }
}

/// An entry point of a [`Program`]: its checked name and signature. Cheap to clone; keeps
/// the program alive.
#[derive(Clone)]
pub struct Entry {
    program: Program,
    index: usize,
}

impl Entry {
    pub fn name(&self) -> &str {
        &self.signature().name
    }

    /// The parameters (names and types) and result types.
    pub fn signature(&self) -> &Signature {
        &self.program.inner.entries[self.index]
    }

    /// Call the entry point. The arguments are checked against the signature first: a
    /// wrong count is [`Error::Arity`]; a wrong element type, rank, or size (a literal size,
    /// or a size name whose uses disagree) is [`Error::Argument`] naming the argument. A
    /// run-time error of the program is [`Error::Runtime`], located in the source.
    ///
    /// ```
    /// use ndarray::array;
    /// let p = runic::Program::from_source("dot.fut",
    ///     "entry dot [n] (a: [n]f32) (b: [n]f32): f32 = f32.sum (map2 (*) a b)")?;
    /// let dot = p.entry("dot")?;
    /// let (a, b) = (array![1.0f32, 2.0, 3.0], array![4.0f32, 5.0, 6.0]);
    /// assert_eq!(dot.call((&a, &b))?.get::<f32>(0)?, 32.0);
    /// let err = dot.call((&a, array![1.0f32, 2.0])).err().unwrap();
    /// assert!(matches!(err, runic::Error::Argument { index: 1, .. }));
    /// assert!(err.to_string().contains("size n is 3"));
    /// # Ok::<(), runic::Error>(())
    /// ```
    pub fn call(&self, args: impl IntoArgs) -> Result<Outputs, Error> {
        let values = self.call_values(args.into_args())?;
        Ok(Outputs::new(self.name(), values))
    }

    /// [`Entry::call`] on values, returning values.
    pub fn call_values(&self, args: Vec<Value>) -> Result<Vec<Value>, Error> {
        let sig = self.signature();
        sig::check_args(sig, &args)?;
        Ok(self.program.inner.exec.run(&sig.name, args)?)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn programs_and_entries_can_be_shared_between_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<super::Program>();
        shared::<super::Entry>();
    }
}
