//! What the CLI shows of the ir backend: `runic dev --backend ir` (passes, timings, how the
//! executor runs each SOAC). The pipeline itself is the library's (`runic::pipeline`).

pub use runic::pipeline::{all_passes, compile, location, Timings};
use runic_ir::Prog;
use runic_syntax::SourceMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

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
            // Already a rendered report ("file:line:col: Error: …").
            return Err(CliError::user(m));
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
