//! `runic dev grad-check FILE -e ENTRY [--eps E]`: check an entry point's derivatives,
//! computed by the interpreter's `jvp` and `vjp`, against central finite differences.

use crate::cli::GradCheckArgs;
use crate::driver;
use crate::error::{CliError, CliResult};
use runic_data::Reader;
use runic_interp::Interpreter;
use std::io::Read;

pub fn run(args: &GradCheckArgs) -> CliResult {
    let loaded = driver::load(&args.program)?;
    let entry = crate::cmd_run::find_entry(&loaded, &args.entry)?;
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::user(format!("Error: cannot read standard input: {e}")))?;
    let mut reader = Reader::new(&bytes, "<stdin>");
    let mut inputs = Vec::new();
    for p in &entry.params {
        let hint = crate::hints::hint_of(&p.ty);
        match reader.next_value(hint.as_ref()) {
            Ok(Some(v)) => inputs.push(v),
            Ok(None) => return Err(CliError::user("Error: too few arguments on standard input")),
            Err(e) => return Err(CliError::user(format!("Error: {e}"))),
        }
    }
    let interp = Interpreter::new(loaded.checked.clone(), loaded.sources.clone());
    let report = interp
        .grad_check(&entry.name, inputs, args.eps)
        .map_err(|e| CliError::user(e.render(&loaded.sources)))?;
    if report.is_empty() {
        return Err(CliError::user(
            "Error: the entry point has no input made only of floats",
        ));
    }
    let mut failed = Vec::new();
    for r in &report {
        let tol = args
            .tolerance
            .unwrap_or_else(|| runic_interp::default_tolerance(r.float_bits));
        println!(
            "input {} ({} f{} scalars, step {:e}): max abs error {:e}, max rel error {:e}",
            r.input + 1,
            r.scalars,
            r.float_bits,
            r.eps,
            r.max_abs,
            r.max_rel
        );
        if r.max_rel > tol || r.max_rel.is_nan() {
            failed.push(format!("input {}: {:e} > {tol:e}", r.input + 1, r.max_rel));
        }
    }
    if !failed.is_empty() {
        return Err(CliError::user(format!(
            "Error: derivative check failed (relative error above tolerance): {}",
            failed.join("; ")
        )));
    }
    Ok(())
}
