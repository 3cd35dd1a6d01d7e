//! `runic dataset` (§6.5): generate random values or convert between text and binary.
//! Options act in command-line order (a format flag or bound affects the `-g` after it), so
//! the raw matches are walked by position rather than read from the derived struct.

use crate::cli::BOUNDS_OPTIONS;
use crate::error::{CliError, CliResult};
use clap::parser::ValueSource;
use clap::ArgMatches;
use runic_data::{Bounds, PrimType, Value};
use std::io::{Read, Write};

/// One order-sensitive option occurrence.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Generate(String),
    Binary,
    Text,
    Types,
    Bounds(PrimType, String),
}

/// The options of the `dataset` subcommand in command-line order.
fn steps(m: &ArgMatches) -> Vec<Step> {
    let mut steps: Vec<(usize, Step)> = Vec::new();
    let mut valued = |id: &str, make: &dyn Fn(String) -> Step| {
        if let (Some(idx), Some(vals)) = (m.indices_of(id), m.get_many::<String>(id)) {
            for (i, v) in idx.zip(vals) {
                steps.push((i, make(v.clone())));
            }
        }
    };
    valued("generate", &Step::Generate);
    for &(id, prim) in BOUNDS_OPTIONS {
        if let Some(elem) = PrimType::from_name(prim) {
            valued(id, &move |v| Step::Bounds(elem, v));
        }
    }
    for (id, step) in [
        ("binary", Step::Binary),
        ("text", Step::Text),
        ("types", Step::Types),
    ] {
        // A flag's default value also has an index; only occurrences on the command line count.
        if m.value_source(id) != Some(ValueSource::CommandLine) {
            continue;
        }
        if let Some(idx) = m.indices_of(id) {
            steps.extend(idx.map(|i| (i, step.clone())));
        }
    }
    steps.sort_by_key(|(i, _)| *i);
    steps.into_iter().map(|(_, s)| s).collect()
}

#[derive(Clone, Copy, PartialEq)]
enum Format {
    Text,
    Binary,
    Types,
}

pub fn run(m: &ArgMatches) -> CliResult {
    let seed = m.get_one::<u64>("seed").copied().unwrap_or(1);
    let mut format = Format::Text;
    let mut bounds = Bounds::new();
    let mut out = Vec::new();
    let mut generated = 0u64;
    for step in steps(m) {
        match step {
            Step::Binary => format = Format::Binary,
            Step::Text => format = Format::Text,
            Step::Types => format = Format::Types,
            Step::Bounds(elem, text) => {
                let (lo, hi) = split_bounds(&text).ok_or_else(|| {
                    CliError::usage(format!(
                        "invalid bounds \"{text}\" for {elem}: expected MIN:MAX"
                    ))
                })?;
                bounds.set(elem, lo, hi).map_err(CliError::usage)?;
            }
            Step::Generate(what) => {
                let values = generate(&what, seed.wrapping_add(generated), &bounds)?;
                generated += 1;
                for v in &values {
                    emit(v, format, &mut out)?;
                }
            }
        }
    }
    if generated == 0 {
        let mut input = Vec::new();
        std::io::stdin()
            .read_to_end(&mut input)
            .map_err(|e| CliError::user(format!("Error: cannot read standard input: {e}")))?;
        let values = runic_data::read_all(&input, "<stdin>", &[])
            .map_err(|e| CliError::user(format!("Error: malformed data on standard input\n{e}")))?;
        for v in &values {
            emit(v, format, &mut out)?;
        }
    }
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(&out)
        .and_then(|_| stdout.flush())
        .map_err(|e| CliError::user(format!("Error: cannot write output: {e}")))
}

/// `MIN:MAX`, where MIN may be negative (`-1:1`).
fn split_bounds(text: &str) -> Option<(&str, &str)> {
    let i = text.get(1..)?.find(':')? + 1;
    Some((&text[..i], &text[i + 1..]))
}

/// `-g T`: literal data values as they are, else a random value of the type T.
fn generate(what: &str, seed: u64, bounds: &Bounds) -> CliResult<Vec<Value>> {
    if let Ok(values) = runic_data::read_all(what.as_bytes(), "-g", &[]) {
        if !values.is_empty() {
            return Ok(values);
        }
    }
    let vt = runic_data::parse_value_type(what)
        .map_err(|e| CliError::usage(format!("-g {what}: not a value and not a type: {e}")))?;
    if vt.known_shape().is_none() {
        return Err(CliError::usage(format!(
            "-g {what}: every dimension needs a constant size"
        )));
    }
    runic_data::generate(&vt, seed, bounds)
        .map(|v| vec![v])
        .map_err(CliError::usage)
}

fn emit(v: &Value, format: Format, out: &mut Vec<u8>) -> CliResult {
    match format {
        Format::Text => {
            out.extend_from_slice(runic_data::print_value(v).as_bytes());
            out.push(b'\n');
        }
        Format::Binary => {
            runic_data::write_binary(v, out).map_err(|m| CliError::user(format!("Error: {m}")))?
        }
        Format::Types => {
            let t = v
                .value_type()
                .map(|t| t.to_string())
                .unwrap_or_else(|| "<opaque>".into());
            out.extend_from_slice(t.as_bytes());
            out.push(b'\n');
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, FromArgMatches};

    fn dataset_matches(args: &[&str]) -> ArgMatches {
        let mut all = vec!["runic", "dataset"];
        all.extend_from_slice(args);
        let m = crate::cli::Cli::command()
            .try_get_matches_from(all)
            .unwrap();
        crate::cli::Cli::from_arg_matches(&m).unwrap();
        m.subcommand_matches("dataset").unwrap().clone()
    }

    #[test]
    fn steps_follow_the_command_line() {
        let m = dataset_matches(&[
            "-g",
            "[2]i32",
            "--f32-bounds=-1:1",
            "-b",
            "-g",
            "[3]f32",
            "--text",
            "-t",
            "-g",
            "i8",
        ]);
        assert_eq!(
            steps(&m),
            vec![
                Step::Generate("[2]i32".into()),
                Step::Bounds(PrimType::F32, "-1:1".into()),
                Step::Binary,
                Step::Generate("[3]f32".into()),
                Step::Text,
                Step::Types,
                Step::Generate("i8".into()),
            ]
        );
    }

    #[test]
    fn flags_alone() {
        assert_eq!(steps(&dataset_matches(&["-t"])), vec![Step::Types]);
        assert_eq!(steps(&dataset_matches(&[])), vec![]);
    }

    #[test]
    fn bounds_split_with_negative_minimum() {
        assert_eq!(split_bounds("-1:1"), Some(("-1", "1")));
        assert_eq!(split_bounds("0:9"), Some(("0", "9")));
        assert_eq!(split_bounds("-2.5:-1"), Some(("-2.5", "-1")));
        assert_eq!(split_bounds("5"), None);
    }
}
