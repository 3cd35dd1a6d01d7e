//! `runic run` (§6.1): read the entry point's arguments from stdin with type hints, call it,
//! print the results.

use crate::cli::RunArgs;
use crate::driver::{self, Loaded};
use crate::error::{check_backend, CliError, CliResult};
use crate::exec::Executor;
use crate::hints::{hint_of, rank_only_name};
use runic_data::{Reader, Value};
use runic_types::EntryPoint;
use std::io::{Read, Write};

pub fn run(args: &RunArgs) -> CliResult {
    check_backend(&args.backend)?;
    let loaded = driver::load(&args.program)?;
    if !args.no_warnings {
        let w = loaded.warnings();
        if !w.is_empty() {
            eprint!("{}", crate::cmd_check::ensure_newline(&w));
        }
    }
    let entry = find_entry(&loaded, &args.entry)?;
    for (i, p) in entry.params.iter().enumerate() {
        if hint_of(&p.ty).is_none() {
            return Err(CliError::user(format!(
                "Error: parameter {} of \"{}\" has type {} which cannot be given as input data",
                i + 1,
                entry.name,
                p.ty
            )));
        }
    }
    let inputs = if entry.params.is_empty() {
        Vec::new()
    } else {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| CliError::user(format!("Error: cannot read standard input: {e}")))?;
        read_arguments(&bytes, entry)?
    };
    let mut exec = Executor::new(&args.backend, &loaded).map_err(CliError::user)?;
    let results = exec
        .call(&entry.name, inputs, None)
        .map_err(|e| CliError::user(e.text()))?;
    print_results(&results, args.binary)
}

/// The entry point, or the error of §6.1.1 listing the ones that exist.
pub fn find_entry<'a>(loaded: &'a Loaded, name: &str) -> CliResult<&'a EntryPoint> {
    let entries = &loaded.checked.info.entries;
    entries.iter().find(|e| e.name == name).ok_or_else(|| {
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        let list = if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        };
        CliError::user(format!(
            "Error: no entry point named \"{name}\"; entry points: {list}"
        ))
    })
}

/// Read exactly one value per parameter, each with its parameter's hint (§6.1.1).
fn read_arguments(bytes: &[u8], entry: &EntryPoint) -> CliResult<Vec<Value>> {
    let mut reader = Reader::new(bytes, "<stdin>");
    let mut values = Vec::new();
    loop {
        let at = reader.position();
        let hint = entry.params.get(values.len()).and_then(|p| hint_of(&p.ty));
        match reader.next_value(hint.as_ref()) {
            Ok(Some(v)) => values.push(v),
            Ok(None) => break,
            Err(e) => {
                let index = values.len();
                return Err(wrong_type(bytes, at, entry, index)
                    .unwrap_or_else(|| CliError::user(naming_argument(&e, entry, index))));
            }
        }
    }
    let (n, k) = (entry.params.len(), values.len());
    if n != k {
        return Err(CliError::user(format!(
            "Error: entry point \"{}\" takes {n} argument{}, but {k} value{} given",
            entry.name,
            if n == 1 { "" } else { "s" },
            if k == 1 { " was" } else { "s were" }
        )));
    }
    Ok(values)
}

/// A reader error, reworded to say which argument was being read (malformed, ragged or
/// truncated input): `<stdin>:2:1: Error: argument 1 of "f": expected ...`.
fn naming_argument(e: &runic_data::DataError, entry: &EntryPoint, index: usize) -> String {
    let what = match entry.params.get(index) {
        Some(_) => format!("argument {} of \"{}\": ", index + 1, entry.name),
        None => format!(
            "extra value after the {} argument(s) of \"{}\": ",
            entry.params.len(),
            entry.name
        ),
    };
    e.to_string()
        .replacen("Error: ", &format!("Error: {what}"), 1)
}

/// When a value failed to read with its hint but reads fine without one, its type is wrong:
/// say so in the words of §6.1.1, at the position where the value starts.
fn wrong_type(bytes: &[u8], at: usize, entry: &EntryPoint, index: usize) -> Option<CliError> {
    let param = entry.params.get(index)?;
    let start = skip_blank(bytes, at);
    let value = Reader::new(&bytes[start..], "<stdin>")
        .next_value(None)
        .ok()??;
    let found = value.value_type()?;
    if hint_of(&param.ty).is_some_and(|h| h.same_elem_and_rank(&found)) {
        return None;
    }
    let (line, col) = line_col(&bytes[..start]);
    Some(CliError::user(format!(
        "<stdin>:{line}:{col}: Error: argument {} of \"{}\" must have type {}, but has type {}",
        index + 1,
        entry.name,
        rank_only_name(&param.ty),
        found.rank_only_string()
    )))
}

/// Skip whitespace and `--` comments.
fn skip_blank(bytes: &[u8], mut i: usize) -> usize {
    loop {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if bytes[i..].starts_with(b"--") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else {
            return i;
        }
    }
}

/// 1-based line and column of the position just after `before`.
fn line_col(before: &[u8]) -> (usize, usize) {
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let last = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map(|i| i + 1)
        .unwrap_or(0);
    let col = String::from_utf8_lossy(&before[last..]).chars().count() + 1;
    (line, col)
}

/// §3.4: each value on its own line(s), or binary values back to back.
pub fn print_results(results: &[Value], binary: bool) -> CliResult {
    let mut out = Vec::new();
    for v in results {
        if binary {
            runic_data::write_binary(v, &mut out)
                .map_err(|m| CliError::user(format!("Error: {m}")))?;
        } else {
            out.extend_from_slice(runic_data::print_value(v).as_bytes());
            out.push(b'\n');
        }
    }
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(&out)
        .and_then(|_| stdout.flush())
        .map_err(|e| CliError::user(format!("Error: cannot write output: {e}")))
}
