//! `runic dev` (§6.7): run the front end (and, later, a backend pipeline) and print the
//! program after chosen passes.

use crate::cli::DevArgs;
use crate::driver;
use crate::error::{check_backend, CliError, CliResult};
use runic_syntax::pretty;

/// The passes of the interp backend's pipeline, in execution order.
const INTERP_PASSES: &[&str] = &["parse", "typecheck"];

pub fn run(args: &DevArgs) -> CliResult {
    if args.backend == "ir" {
        return crate::backend_ir::dev(args);
    }
    check_backend(&args.backend)?;
    if args.explain_exec {
        return Err(CliError::usage(
            "--explain-exec describes the ir backend's executor: use it with --backend ir",
        ));
    }
    let passes = INTERP_PASSES;
    let unknown = |p: &str| {
        CliError::usage(format!(
            "unknown pass \"{p}\"; valid passes: {}, all",
            passes.join(", ")
        ))
    };
    for p in &args.print_after {
        if p != "all" && !passes.contains(&p.as_str()) {
            return Err(unknown(p));
        }
    }
    if let Some(p) = &args.stop_after {
        if !passes.contains(&p.as_str()) {
            return Err(unknown(p));
        }
    }
    if args.list_passes {
        for p in passes {
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
    let last = args.stop_after.as_deref().unwrap_or("typecheck");
    // Without any print option, the final program is printed (§6.7).
    let print_final = args.print_after.is_empty() && !args.timings;
    let mut out = String::new();
    let mut times = crate::backend_ir::Timings::new();

    let text = driver::read_source(path)?;
    let name = path.display().to_string();
    let t0 = std::time::Instant::now();
    let (sources, program) = driver::parse_text(&name, &text)?;
    times.push(("parse".into(), t0.elapsed()));
    if wants("parse") || (print_final && last == "parse") {
        out.push_str(&section("parse", &pretty::print_program(&program)));
    }
    if last != "parse" {
        let t0 = std::time::Instant::now();
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
        if wants("typecheck") || print_final {
            let mut user = loaded.checked.program.clone();
            user.decs
                .drain(..loaded.checked.prelude_decs.min(user.decs.len()));
            out.push_str(&section("typecheck", &pretty::print_program(&user)));
        }
    }
    if args.timings {
        out.push_str(&crate::backend_ir::timings_table(&times));
    }
    print!("{out}");
    Ok(())
}

/// `=== after PASS ===`, the program, then an empty line.
pub fn section(pass: &str, program: &str) -> String {
    let mut s = format!("=== after {pass} ===\n{program}");
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s.push('\n');
    s
}
