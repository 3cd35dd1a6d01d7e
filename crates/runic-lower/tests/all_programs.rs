//! Lower every test program of the repository and verify the result.

mod common;

use std::path::Path;

/// Programs (by path under `tests/`) with a feature the IR backend cannot lower yet, and why.
const ALLOWED_FAILURES: &[(&str, &str)] = &[];

fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n == "errors") {
                continue;
            }
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "fut") {
            out.push(p);
        }
    }
}

#[test]
fn every_test_program_lowers_and_verifies() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests");
    let mut files = Vec::new();
    collect(&root, &mut files);
    let mut failures = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap().display().to_string();
        let text = std::fs::read_to_string(f).unwrap();
        let mut sources = runic_syntax::SourceMap::new();
        let file = sources.add(rel.clone(), text.clone());
        let Ok(program) = runic_syntax::parse_program(file, &text, 0) else {
            continue;
        };
        let Ok(checked) = runic_types::check_program(program, &sources) else {
            continue;
        };
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            runic_lower::lower_with_sources(&checked, Some(&sources))
        }));
        let outcome = match r {
            Err(_) => Err("panic".to_string()),
            Ok(Err(e)) => Err(format!("lower: {e}")),
            Ok(Ok(prog)) => {
                runic_ir::verify(&prog).map_err(|e| format!("verify: {}", e.join("\n  ")))
            }
        };
        if let Err(msg) = outcome {
            if !ALLOWED_FAILURES.iter().any(|(p, _)| *p == rel) {
                failures.push(format!("{rel}: {msg}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} programs fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
