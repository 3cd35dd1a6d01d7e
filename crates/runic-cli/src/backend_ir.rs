//! The ir backend: typed AST → IR (runic-lower) → optimisation passes (runic-opt) →
//! parallel execution (runic-exec), and its pass list for `runic dev`.

use crate::driver::Loaded;
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
        if cfg!(debug_assertions) {
            runic_ir::verify(prog).map_err(|errs| {
                format!(
                    "Error: internal compiler error: the IR after pass \"{name}\" is invalid:\n{}",
                    errs.join("\n")
                )
            })?;
        }
        t0 = Instant::now();
        Ok(())
    };
    let mut prog = lower(loaded)?;
    after("lower", &prog)?;
    if stop_after == Some("lower") {
        return Ok(prog);
    }
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

/// The `--timings` table: one line per step, then the total.
pub fn timings_table(times: &[(String, Duration)]) -> String {
    let width = times.iter().map(|(p, _)| p.len()).max().unwrap_or(0).max(5);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mut out = String::from("=== timings ===\n");
    for (p, d) in times {
        out.push_str(&format!("{p:<width$} {:>10.3} ms\n", ms(*d)));
    }
    let total: Duration = times.iter().map(|(_, d)| *d).sum();
    out.push_str(&format!("{:<width$} {:>10.3} ms\n", "total", ms(total)));
    out
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

/// The `--explain-exec` listing: per entry point, every SOAC in program order (nested ones
/// indented), and how the executor runs it.
pub fn explain(exec: &runic_exec::Executor, sources: &SourceMap) -> String {
    let mut out = String::new();
    let mut entry: Option<&str> = None;
    let reports = exec.explain();
    for r in &reports {
        if entry != Some(r.entry.as_str()) {
            out.push_str(&format!("entry {}:\n", r.entry));
            entry = Some(r.entry.as_str());
        }
        out.push_str(&format!(
            "{}{} {}: {}\n",
            "  ".repeat(r.depth + 1),
            location(r.loc, sources),
            r.kind,
            r.how
        ));
    }
    if reports.is_empty() {
        out.push_str("no SOACs\n");
    }
    out
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

/// The program text printed by `runic dev` after an ir pass.
pub fn print(prog: &Prog) -> String {
    prog.to_string()
}

/// `runic dev --backend ir`: the front end, lowering and the optimisation passes, printing
/// the program after the chosen passes.
pub fn dev(args: &crate::cli::DevArgs) -> crate::error::CliResult {
    use crate::cmd_dev::section;
    use crate::driver;
    use crate::error::CliError;
    let passes = all_passes();
    let unknown = |p: &str| {
        CliError::usage(format!(
            "unknown pass \"{p}\"; valid passes: {}, all",
            passes.join(", ")
        ))
    };
    for p in &args.print_after {
        if p != "all" && !passes.iter().any(|q| q == p) {
            return Err(unknown(p));
        }
    }
    if let Some(p) = &args.stop_after {
        if !passes.iter().any(|q| q == p) {
            return Err(unknown(p));
        }
    }
    if args.list_passes {
        for p in &passes {
            println!("{p}");
        }
        return Ok(());
    }
    let Some(path) = &args.program else {
        return Err(CliError::usage(
            "a program file is required (unless --list-passes)",
        ));
    };
    let wants = |pass: &str| args.print_after.iter().any(|p| p == pass || p == "all");
    let last = args
        .stop_after
        .clone()
        .unwrap_or_else(|| passes.last().cloned().unwrap_or_default());
    let print_final = args.print_after.is_empty() && !args.timings && !args.explain_exec;
    let mut out = String::new();
    let mut times = Timings::new();
    let text = driver::read_source(path)?;
    let t0 = Instant::now();
    let (sources, program) = driver::parse_text(&path.display().to_string(), &text)?;
    times.push(("parse".into(), t0.elapsed()));
    if wants("parse") || (print_final && last == "parse") {
        out.push_str(&section(
            "parse",
            &runic_syntax::pretty::print_program(&program),
        ));
    }
    let finish = |mut out: String, times: &Timings| {
        if args.timings {
            out.push_str(&timings_table(times));
        }
        print!("{out}");
    };
    if last == "parse" {
        finish(out, &times);
        return Ok(());
    }
    let t0 = Instant::now();
    let loaded = match driver::check(sources, program) {
        Ok(l) => l,
        Err(e) => {
            print!("{out}");
            return Err(e.into());
        }
    };
    times.push(("typecheck".into(), t0.elapsed()));
    let warnings = loaded.warnings();
    if !warnings.is_empty() {
        eprint!("{}", crate::cmd_check::ensure_newline(&warnings));
    }
    if wants("typecheck") || (print_final && last == "typecheck") {
        let mut user = loaded.checked.program.clone();
        user.decs
            .drain(..loaded.checked.prelude_decs.min(user.decs.len()));
        out.push_str(&section(
            "typecheck",
            &runic_syntax::pretty::print_program(&user),
        ));
    }
    if last == "typecheck" {
        finish(out, &times);
        return Ok(());
    }
    let result = compile(&loaded, Some(&last), |pass, prog, t| {
        times.push((pass.to_string(), t));
        if wants(pass) || (print_final && pass == last) {
            out.push_str(&section(pass, &print(prog)));
        }
    });
    let prog = match result {
        Ok(p) => p,
        Err(m) => {
            print!("{out}");
            return Err(CliError::user(format!("Error: {m}")));
        }
    };
    // The executor's preparation (native kernels) follows the last pass.
    if args.timings || args.explain_exec {
        let t0 = Instant::now();
        let exec = runic_exec::Executor::new(Arc::new(prog));
        times.push(("native".into(), t0.elapsed()));
        if args.explain_exec {
            out.push_str(&explain(&exec, &loaded.sources));
        }
    }
    finish(out, &times);
    Ok(())
}
