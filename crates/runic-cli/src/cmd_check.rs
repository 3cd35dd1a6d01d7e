//! `runic check` (§6.3): parse and type-check, print warnings, report errors.

use crate::cli::CheckArgs;
use crate::driver;
use crate::error::{CliError, CliResult};

pub fn run(args: &CheckArgs) -> CliResult {
    let loaded = driver::load(&args.program)?;
    let warnings = loaded.warnings();
    if warnings.is_empty() {
        return Ok(());
    }
    if !args.no_warnings || args.werror {
        eprint!("{}", ensure_newline(&warnings));
    }
    if args.werror {
        return Err(CliError::user(
            "Error: treating the warnings above as errors (--Werror)",
        ));
    }
    Ok(())
}

pub fn ensure_newline(s: &str) -> String {
    if s.is_empty() || s.ends_with('\n') {
        s.to_string()
    } else {
        format!("{s}\n")
    }
}
