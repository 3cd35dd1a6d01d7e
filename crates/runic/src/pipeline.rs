//! The compiled pipeline: typed AST → IR (runic-lower) → AD (runic-ad) → optimisation passes
//! (runic-opt) → parallel execution (runic-exec). The one implementation of it: the library's
//! [`Program`](crate::Program) and every CLI subcommand use these functions.

use crate::load::Loaded;
use runic_exec::ExecError;
use runic_ir::{Loc, Prog};
use runic_syntax::{FileId, SourceMap, Span};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The time each step of preparing a program took, in order: (step, time).
pub type Timings = Vec<(String, Duration)>;

/// Passes of the ir pipeline after the front end, in order.
pub fn ir_passes() -> Vec<String> {
    let mut p = vec!["lower".to_string(), "ad".to_string()];
    p.extend(
        runic_opt::pipeline()
            .iter()
            .map(|(name, _)| name.to_string()),
    );
    p
}

/// Every pass name `runic dev --backend ir` knows, in execution order.
pub fn all_passes() -> Vec<String> {
    let mut p = vec!["parse".to_string(), "typecheck".to_string()];
    p.extend(ir_passes());
    p
}

/// Lower and optimise a checked program, calling `after(pass, prog, time)` after every
/// pass with the time the pass took; stops after `stop_after` when given.
pub fn compile(
    loaded: &Loaded,
    stop_after: Option<&str>,
    mut after_pass: impl FnMut(&str, &Prog, Duration),
) -> Result<Prog, String> {
    let mut t0 = Instant::now();
    // Debug builds (and so every test run) verify the IR after every pass: a pass that
    // breaks an invariant is caught where it happens, not as a wrong answer later. The
    // verification is not part of the pass's time.
    let mut after = |name: &str, prog: &Prog| -> Result<(), String> {
        after_pass(name, prog, t0.elapsed());
        verify_after(name, prog)?;
        t0 = Instant::now();
        Ok(())
    };
    let prog = lower(loaded)?;
    after("lower", &prog)?;
    if stop_after == Some("lower") {
        return Ok(prog);
    }
    transform(prog, stop_after, &mut after)
}

/// The passes after lowering (AD, then the optimisation pipeline), calling `after` after each.
fn transform(
    mut prog: Prog,
    stop_after: Option<&str>,
    after: &mut impl FnMut(&str, &Prog) -> Result<(), String>,
) -> Result<Prog, String> {
    // AD as a program transformation. A construct that cannot be differentiated stays in
    // the program; the executor reports it if it is reached.
    let (differentiated, errors) = runic_ad::eliminate_where_possible(prog);
    if let Some(e) = errors.iter().find(|e| e.is_internal()) {
        return Err(format!(
            "Error: internal compiler error in automatic differentiation: {}",
            e.message
        ));
    }
    prog = differentiated;
    after("ad", &prog)?;
    if stop_after == Some("ad") {
        return Ok(prog);
    }
    for (name, pass) in runic_opt::pipeline() {
        prog = pass(prog);
        after(name, &prog)?;
        if stop_after == Some(name) {
            break;
        }
    }
    Ok(prog)
}

/// AD and the optimisation passes on IR built by other means than the front end (e.g.
/// tracing), verified like [`compile`] does: the input after a `given` step, then every pass.
pub fn optimise(prog: Prog) -> Result<Prog, String> {
    let mut after = |name: &str, prog: &Prog| verify_after(name, prog);
    after("given", &prog)?;
    transform(prog, None, &mut after)
}

/// In debug builds, check the IR's invariants after a pass.
fn verify_after(name: &str, prog: &Prog) -> Result<(), String> {
    if cfg!(debug_assertions) {
        runic_ir::verify(prog).map_err(|errs| {
            format!(
                "Error: internal compiler error: the IR after pass \"{name}\" is invalid:\n{}",
                errs.join("\n")
            )
        })?;
    }
    Ok(())
}

/// Typed AST to IR. A construct the ir backend cannot lower yet is reported as an error
/// at its location (never a wrong program).
fn lower(loaded: &Loaded) -> Result<Prog, String> {
    runic_lower::lower_with_sources(&loaded.checked, Some(&loaded.sources)).map_err(|e| {
        match e.span {
            Some(span) => runic_syntax::Diagnostic::error(span, e.message).render(&loaded.sources),
            None => format!("Error: {}", e.message),
        }
    })
}

/// A program prepared for calls on the ir backend, with the time of every pass and of
/// the executor's preparation (`native`: slots, column programs and native kernels).
pub fn executor(loaded: &Loaded) -> Result<(runic_exec::Executor, Timings), String> {
    let mut times = Timings::new();
    let prog = compile(loaded, None, |pass, _, t| times.push((pass.to_string(), t)))?;
    let t0 = Instant::now();
    let exec = runic_exec::Executor::new(Arc::new(prog));
    times.push(("native".to_string(), t0.elapsed()));
    Ok((exec, times))
}

/// `FILE:LINE:COL` of an IR location.
pub fn location(l: Option<Loc>, sources: &SourceMap) -> String {
    match l {
        Some(l) => {
            let f = sources.get(FileId(l.file));
            let lc = f.line_col(l.start as usize);
            format!("{}:{}:{}", f.name, lc.line, lc.col)
        }
        None => "(no location)".to_string(),
    }
}

/// The report of a run-time error of the ir backend: the interpreter's layout
/// (data-tests-cli.md §6.1.3), with the IR locations read as spans of the loaded sources.
pub fn render_error(e: &ExecError, sources: &SourceMap) -> String {
    let span = |l: Loc| Span {
        file: FileId(l.file),
        start: l.start,
        end: l.end,
    };
    let backtrace: Vec<Span> = e.backtrace.iter().map(|&l| span(l)).collect();
    runic_syntax::render_runtime_error(&e.message, e.loc.map(span), &backtrace, sources)
}
