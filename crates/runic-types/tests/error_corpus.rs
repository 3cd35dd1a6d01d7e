//! Every program under `tests/errors/` has one mistake: parsing and checking it must give at
//! least one located error whose text matches the file's `-- error:` regex, and the rendered
//! diagnostics are snapshotted so that their wording is reviewed.

use runic_syntax::{Severity, SourceMap};
use runic_types::{check_program, first_user_node_id};

fn diagnostics(name: &str, src: &str) -> (String, bool) {
    let mut sm = SourceMap::new();
    let f = sm.add(name, src);
    let ds = match runic_syntax::parse_program(f, src, first_user_node_id()) {
        Err(ds) => ds,
        Ok(p) => match check_program(p, &sm) {
            Err(ds) => ds,
            Ok(_) => Vec::new(),
        },
    };
    let located = ds
        .iter()
        .any(|d| d.severity == Severity::Error && d.span.is_some());
    (runic_syntax::diag::render_all(&ds, &sm), located)
}

#[test]
fn error_corpus() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/errors");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/errors exists")
        .flatten()
        .map(|e| e.path())
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
        let (text, located) = diagnostics(&name, &src);
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
