//! Turning a case's input and expected output into values (§5.4, §5.6, §5.7): parsing with
//! type hints, reading data files, generating random input, and dataset descriptions.

use super::report::truncate;
use super::spec::{Case, Expect, Input, Located};
use crate::hints::{hint_of, rank_only_name};
use runic_data::{DataError, Value, ValueType};
use runic_types::{EntryPoint, Type};
use std::path::Path;

/// The description of a case (§5.4), used in reports and as bench's dataset key.
pub fn describe(case: &Case) -> String {
    if let Some(name) = &case.name {
        return name.clone();
    }
    match &case.input {
        Input::Values(loc) => {
            let text = match runic_data::read_all(loc.text.as_bytes(), "input", &[]) {
                Ok(values) => values
                    .iter()
                    .map(runic_data::print_value_single_line)
                    .collect::<Vec<_>>()
                    .join(" "),
                Err(_) => loc.text.split_whitespace().collect::<Vec<_>>().join(" "),
            };
            format!("#{} (\"{}\")", case.index, truncate(&text, 50))
        }
        Input::File(f) => f.strip_suffix(".gz").unwrap_or(f).to_string(),
        Input::Random(items) => items
            .iter()
            .map(|i| describe_random_item(i))
            .collect::<Vec<_>>()
            .join(" "),
        Input::Script(expr) => expr.clone(),
    }
}

fn describe_random_item(item: &str) -> String {
    if let Ok(vt) = runic_data::parse_value_type(item) {
        return vt.to_string();
    }
    match runic_data::read_all(item.as_bytes(), "input", &[]) {
        Ok(v) if v.len() == 1 => runic_data::print_value_single_line(&v[0]),
        _ => item.to_string(),
    }
}

/// Where values in a test block are read from: a file position for error messages.
pub struct Origin<'a> {
    /// The program path as reported.
    pub path: &'a str,
    /// The directory `@ FILE` names are relative to.
    pub dir: &'a Path,
}

/// Render a value-reading error at its position in the `.fut` file: the text inside braces
/// started at `loc`, and each later line lost its leading `--`.
fn locate(err: &DataError, loc: &Located, origin: &Origin) -> String {
    let (line, col) = if err.line <= 1 {
        (loc.line, loc.col + err.col.saturating_sub(1))
    } else {
        (loc.line + err.line - 1, err.col + 2)
    };
    format!("{}:{}:{}: Error: {}", origin.path, line, col, err.message)
}

/// Read with hints; when that fails but the text reads without hints, return those values
/// so that the caller reports a type mismatch rather than a parse error (§5.7).
fn read_hinted(
    bytes: &[u8],
    name: &str,
    hints: &[Option<ValueType>],
) -> Result<Vec<Value>, DataError> {
    runic_data::read_all(bytes, name, hints)
        .or_else(|e| runic_data::read_all(bytes, name, &[]).map_err(|_| e))
}

fn read_located(
    loc: &Located,
    hints: &[Option<ValueType>],
    origin: &Origin,
) -> Result<Vec<Value>, String> {
    read_hinted(loc.text.as_bytes(), origin.path, hints).map_err(|e| locate(&e, loc, origin))
}

fn read_data_file(
    file: &str,
    hints: &[Option<ValueType>],
    origin: &Origin,
) -> Result<Vec<Value>, String> {
    let path = origin.dir.join(file);
    let bytes = runic_data::read_file_bytes(&path)
        .map_err(|e| format!("cannot read {}: {}", path.display(), e))?;
    read_hinted(&bytes, &path.display().to_string(), hints).map_err(|e| e.to_string())
}

/// Hints for reading values of these types (opaque positions get none).
pub fn hints_for(types: &[&Type]) -> Vec<Option<ValueType>> {
    types.iter().map(|t| hint_of(t)).collect()
}

/// The input values of a case for `entry`, checked against its parameter types.
pub fn build_input(case: &Case, entry: &EntryPoint, origin: &Origin) -> Result<Vec<Value>, String> {
    let param_types: Vec<&Type> = entry.params.iter().map(|p| &p.ty).collect();
    let hints = hints_for(&param_types);
    let values = match &case.input {
        Input::Values(loc) => read_located(loc, &hints, origin)?,
        Input::File(f) => read_data_file(f, &hints, origin)?,
        Input::Random(items) => random_values(items, &hints)?,
        Input::Script(_) => return Err("script input is not supported".into()),
    };
    check_input_types(&values, &param_types)?;
    Ok(values)
}

/// Each item is generated with seed 1 (§5.6), or read as a literal with its position's hint.
fn random_values(items: &[String], hints: &[Option<ValueType>]) -> Result<Vec<Value>, String> {
    let bounds = runic_data::Bounds::default();
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let hint = hints.get(i).cloned().flatten();
            match runic_data::parse_value_type(item) {
                Ok(vt) if vt.known_shape().is_some() => runic_data::generate(&vt, 1, &bounds),
                Ok(vt) => Err(format!("random input type {vt} needs constant sizes")),
                Err(_) => match runic_data::read_all(item.as_bytes(), "random input", &[hint]) {
                    Ok(mut v) if v.len() == 1 => Ok(v.remove(0)),
                    Ok(_) => Err(format!("invalid random input item \"{item}\"")),
                    Err(e) => Err(e.to_string()),
                },
            }
        })
        .collect()
}

/// §5.7: the count and the types (element type and rank) must match the parameters.
fn check_input_types(values: &[Value], params: &[&Type]) -> Result<(), String> {
    let fits = values.len() == params.len()
        && values
            .iter()
            .zip(params)
            .all(|(v, t)| match (v.value_type(), hint_of(t)) {
                (Some(got), Some(want)) => got.same_elem_and_rank(&want),
                _ => false,
            });
    if fits {
        return Ok(());
    }
    let expected: Vec<String> = params.iter().map(|t| rank_only_name(t)).collect();
    let provided: Vec<String> = values
        .iter()
        .map(|v| {
            v.value_type()
                .map(|vt| vt.rank_only_string())
                .unwrap_or_else(|| "<opaque>".into())
        })
        .collect();
    Err(format!(
        "expected input of types: {}\nprovided input of types: {}",
        expected.join(" "),
        provided.join(" ")
    ))
}

/// The expected results of a case, if it lists them (`output { }` or `output @ FILE`).
pub fn expected_output(
    case: &Case,
    entry: &EntryPoint,
    origin: &Origin,
) -> Option<Result<Vec<Value>, String>> {
    let result_types: Vec<&Type> = entry.results.iter().collect();
    let hints = hints_for(&result_types);
    match &case.expect {
        Expect::Values(loc) => Some(read_located(loc, &hints, origin)),
        Expect::File(f) => Some(read_data_file(f, &hints, origin)),
        _ => None,
    }
}
