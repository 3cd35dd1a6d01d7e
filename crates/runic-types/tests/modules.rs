//! What module resolution leaves for the backends: a flat program with one definition per
//! imported file's function (however often the file is imported), one copy of a parametric
//! module's body per application, and only concrete types.
mod common;

use runic_syntax::ast::Dec;
use runic_types::Type;

fn names(c: &runic_types::Checked) -> Vec<String> {
    c.program.decs[c.prelude_decs..]
        .iter()
        .filter_map(|d| match d {
            Dec::Val(v) => Some(v.name.clone()),
            _ => None,
        })
        .collect()
}

fn corpus(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests")
        .join(rel)
}

#[test]
fn a_file_imported_twice_is_checked_once() {
    let (c, _) = common::check_file(&corpus("modules/files.fut")).unwrap();
    let n = names(&c);
    let squares = n.iter().filter(|x| x.ends_with("square")).count();
    assert_eq!(squares, 1, "{n:?}");
    // The importer's own `describe` keeps its name; the imported one has another.
    assert!(n.iter().any(|x| x == "describe"));
    assert_eq!(n.iter().filter(|x| x.contains("describe")).count(), 2);
}

#[test]
fn each_application_is_a_separate_copy() {
    let (c, _) = common::check_file(&corpus("modules/functors.fut")).unwrap();
    let n = names(&c);
    let adds: Vec<_> = n.iter().filter(|x| x.ends_with(".add")).collect();
    // summer is applied three times: twice_applied's argument, s32 and s64.
    assert_eq!(adds.len(), 3, "{n:?}");
    let mut unique = adds.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 3);
}

fn concrete(t: &Type) -> bool {
    match t {
        Type::Sum(cs) => cs
            .iter()
            .all(|(c, ts)| !c.starts_with('\u{1}') && ts.iter().all(concrete)),
        Type::Array { elem, .. } => concrete(elem),
        Type::Record(fs) => fs.iter().all(|(_, t)| concrete(t)),
        Type::Arrow { param, ret, .. } => concrete(param) && concrete(ret),
        _ => true,
    }
}

#[test]
fn abstract_types_reach_the_backends_as_their_definitions() {
    let (c, _) = common::check_file(&corpus("modules/signatures.fut")).unwrap();
    assert!(c.info.exp_types.values().all(concrete));
    assert!(c.info.pat_types.values().all(concrete));
    let entry = c
        .info
        .entries
        .iter()
        .find(|e| e.name == "abstract_stack")
        .unwrap();
    assert_eq!(entry.results.len(), 2);
}

#[test]
fn matching_a_parametric_module_type_emits_nothing_of_its_own() {
    // spec_checks.fut matches mk_sum and mk_const against `summer` (each on an abstract
    // parameter) and applies each once: only the two applications' `sum`s are emitted.
    let (c, _) = common::check_file(&corpus("modules/spec_checks.fut")).unwrap();
    let n = names(&c);
    let sums: Vec<_> = n.iter().filter(|x| x.ends_with(".sum")).collect();
    assert_eq!(sums.len(), 2, "{n:?}");
    assert!(n.iter().all(|x| !x.contains('?')), "{n:?}");
}
