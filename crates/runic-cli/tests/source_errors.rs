//! Source files that are not text: the error names the file, line and column of the first
//! bad byte and exits with status 1 (never a panic).

use std::process::Command;

#[test]
fn invalid_utf8_is_located() {
    let dir = std::env::temp_dir().join(format!("runic-source-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.fut");
    std::fs::write(&file, b"def main = 1\n  \xff\xfe\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_runic"))
        .args(["check", "bad.fut"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "bad.fut:2:3: Error: invalid UTF-8 (runic source files must be UTF-8)"
    );
}
