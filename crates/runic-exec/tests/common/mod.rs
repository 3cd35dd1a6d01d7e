//! Running a source program on the ir backend with native code on and off, and on the
//! interpreter, in one process: the pipeline of `runic run --backend ir` (lower, AD, the
//! optimisation passes, the executor).

#![allow(dead_code)]

use runic_data::Value;
use std::sync::Arc;

pub mod data;

/// A program compiled for both backends.
pub struct Compiled {
    pub sources: Arc<runic_syntax::SourceMap>,
    pub interp: runic_interp::Interpreter,
    pub native: runic_exec::Executor,
    pub evaluator: runic_exec::Executor,
}

pub fn compile(src: &str) -> Compiled {
    let mut sources = runic_syntax::SourceMap::new();
    let file = sources.add("t.fut", src.to_string());
    // As the CLI does: user nodes numbered after the prelude's, the prelude registered so
    // that locations inside it render.
    let program = runic_syntax::parse_program(file, src, runic_types::first_user_node_id())
        .unwrap_or_else(|d| panic!("{}", runic_syntax::diag::render_all(&d, &sources)));
    let prelude = sources.add(runic_types::PRELUDE_NAME, runic_types::PRELUDE_SOURCE);
    let checked = runic_types::check_program_with_prelude_file(program, &sources, prelude)
        .unwrap_or_else(|d| panic!("{}", runic_syntax::diag::render_all(&d, &sources)));
    let prog = runic_lower::lower_with_sources(&checked, Some(&sources))
        .unwrap_or_else(|e| panic!("lowering: {}", e.message));
    let (prog, errors) = runic_ad::eliminate_where_possible(prog);
    assert!(errors.iter().all(|e| !e.is_internal()), "AD failed");
    let prog = runic_opt::pipeline()
        .iter()
        .fold(prog, |q, (_, pass)| pass(q));
    let prog = Arc::new(prog);
    let sources = Arc::new(sources);
    Compiled {
        interp: runic_interp::Interpreter::new(Arc::new(checked), sources.clone()),
        native: runic_exec::Executor::with_native(prog.clone(), true),
        evaluator: runic_exec::Executor::with_native(prog, false),
        sources,
    }
}

/// Values from their text form.
pub fn values(text: &str) -> Vec<Value> {
    runic_data::read_all(text.as_bytes(), "input", &[]).expect("valid input values")
}

/// A result as bytes (the binary value format: every bit of every element), or the
/// rendered error report.
pub fn outcome(
    r: Result<Vec<Value>, runic_exec::ExecError>,
    sources: &runic_syntax::SourceMap,
) -> Result<Vec<u8>, String> {
    match r {
        Ok(vs) => {
            let mut out = Vec::new();
            for v in &vs {
                write(v, &mut out);
            }
            Ok(out)
        }
        Err(e) => Err(render(&e, sources)),
    }
}

/// A value in the binary format (a tuple: its elements in order).
fn write(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Tuple(vs) => vs.iter().for_each(|x| write(x, out)),
        v => runic_data::write_binary(v, out).expect("writable value"),
    }
}

/// The error report as the CLI renders it.
pub fn render(e: &runic_exec::ExecError, sources: &runic_syntax::SourceMap) -> String {
    let span = |l: runic_ir::Loc| runic_syntax::Span {
        file: runic_syntax::FileId(l.file),
        start: l.start,
        end: l.end,
    };
    let backtrace: Vec<_> = e.backtrace.iter().map(|&l| span(l)).collect();
    runic_syntax::render_runtime_error(&e.message, e.loc.map(span), &backtrace, sources)
}

impl Compiled {
    /// Every SOAC of `entry` runs native code (nested ones as loops of their kernel).
    pub fn assert_native(&self, entry: &str) {
        for r in self.native.explain() {
            // A body's task schedule is reported beside its SOACs; it runs no code itself.
            if r.entry == entry && r.kind != "tasks" {
                assert!(
                    r.how.starts_with("native") || r.how.starts_with("built-in"),
                    "{entry}: {:?} {}: {}",
                    r.loc,
                    r.kind,
                    r.how
                );
            }
        }
    }

    /// Runs `entry` on `input` with native code on and off: the results must be the same
    /// bytes, or the same error report; with `interp`, the interpreter's error report (or
    /// values) too.
    pub fn agree(&self, entry: &str, input: &str, interp: bool) {
        let _native = self.compare(entry, input, interp);
    }

    /// [`Compiled::agree`], returning the native outcome.
    fn compare(&self, entry: &str, input: &str, interp: bool) -> Result<Vec<u8>, String> {
        let args = values(input);
        let before = self.native.native_runs();
        let n = outcome(self.native.run_entry(entry, args.clone()), &self.sources);
        // A kernel at the top level really ran (the route is decided at run time too).
        let kernels =
            self.native.explain().iter().any(|r| {
                r.entry == entry && r.depth == 0 && r.how.starts_with("native (runic-jit")
            });
        if n.is_ok() && kernels {
            assert!(
                self.native.native_runs() > before,
                "{entry} {input}: no native kernel ran"
            );
        }
        let e = outcome(self.evaluator.run_entry(entry, args.clone()), &self.sources);
        assert_eq!(n, e, "{entry} {input}: native and evaluator differ");
        if interp {
            let i = self.interp.call_entry(entry, args);
            match (&n, i) {
                (Err(a), Err(b)) => {
                    assert_eq!(
                        a,
                        &b.render(&self.sources),
                        "{entry} {input}: errors differ"
                    )
                }
                (Ok(a), Ok(b)) => {
                    let mut out = Vec::new();
                    for v in &b {
                        write(v, &mut out);
                    }
                    assert_eq!(a, &out, "{entry} {input}: ir and interpreter differ");
                }
                (a, b) => panic!("{entry} {input}: ir {a:?}, interpreter {:?}", b.is_ok()),
            }
        }
        n
    }

    /// As [`Compiled::agree`] with native code on and off; against the interpreter, only
    /// the error's message, location and source line (the ir backend's backtrace repeats
    /// frames through `vjp`, with native code off too).
    pub fn agree_message(&self, entry: &str, input: &str) {
        let n = self.compare(entry, input, false);
        let i = self.interp.call_entry(entry, values(input));
        let head = |s: &str| s.split("\nBacktrace:").next().unwrap_or("").to_string();
        match (n, i) {
            (Err(a), Err(b)) => assert_eq!(head(&a), head(&b.render(&self.sources))),
            (a, b) => panic!("{entry} {input}: ir {a:?}, interpreter {:?}", b.is_ok()),
        }
    }

    /// The native outcome of `entry` on `input`, as bytes.
    pub fn agree_native_runs(&self, entry: &str, input: &str) -> Result<Vec<u8>, String> {
        outcome(self.native.run_entry(entry, values(input)), &self.sources)
    }

    /// The native result as values.
    pub fn run(&self, entry: &str, input: &str) -> Vec<Value> {
        self.native
            .run_entry(entry, values(input))
            .unwrap_or_else(|e| panic!("{entry}: {}", render(&e, &self.sources)))
    }
}
