//! Every program under `tests/errors/` has one mistake: parsing and checking it must give at
//! least one located error whose text matches the file's `-- error:` regex, and the rendered
//! diagnostics are snapshotted so that their wording is reviewed.

use runic_syntax::{Severity, SourceMap};
use runic_types::{check_program_at, first_user_node_id};

/// The rendered diagnostics of the program in `path` (shown as `name`; imports resolved
/// against its directory), and whether one of them is a located error.
fn diagnostics(path: &std::path::Path, name: &str, src: &str) -> (String, bool) {
    let mut sm = SourceMap::new();
    let f = sm.add(name, src);
    let ds = match runic_syntax::parse_program(f, src, first_user_node_id()) {
        Err(ds) => ds,
        Ok(p) => {
            let prelude = sm.add(runic_types::PRELUDE_NAME, runic_types::PRELUDE_SOURCE);
            match check_program_at(p, &mut sm, prelude, Some(path)) {
                Err(ds) => ds,
                Ok(_) => Vec::new(),
            }
        }
    };
    let located = ds
        .iter()
        .any(|d| d.severity == Severity::Error && d.span.is_some());
    // Imported files are named by their path: keep the snapshots independent of where the
    // repository is.
    let dir = path
        .parent()
        .and_then(|d| d.canonicalize().ok())
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    let text = runic_syntax::diag::render_all(&ds, &sm).replace(&format!("{dir}/"), "");
    (text, located)
}

#[test]
fn error_corpus() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/errors");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/errors exists")
        .flatten()
        .map(|e| e.path())
        // Subdirectories hold the files that the multi-file cases import.
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(files.len() >= 45);
    let mut problems = Vec::new();
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let bytes = std::fs::read(&path).unwrap();
        let src = String::from_utf8_lossy(&bytes).to_string();
        let regex_line = src
            .lines()
            .find_map(|l| l.strip_prefix("-- error:"))
            .unwrap_or("")
            .trim()
            .to_string();
        let (text, located) = diagnostics(&path, &name, &src);
        if !located {
            problems.push(format!("{name}: no located error\n{text}"));
            continue;
        }
        let re = regex::RegexBuilder::new(&regex_line)
            .dot_matches_new_line(true)
            .build()
            .expect("valid regex");
        if !re.is_match(&text) {
            problems.push(format!("{name}: /{regex_line}/ does not match\n{text}"));
        }
        insta::with_settings!({ snapshot_suffix => name.trim_end_matches(".fut").to_string(), prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!("error", text);
        });
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
