//! Shared by the IR snapshot tests: what `runic dev --backend ir` prints for a program.
//! (Each test binary uses part of it.)
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// `runic dev --backend ir ARGS FILE`, run from the repository root; its standard output.
pub fn dev_ir(args: &[&str], file: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new(env!("CARGO_BIN_EXE_runic"))
        .args(["dev", "--backend", "ir"])
        .args(args)
        .arg(file)
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The IR of `tests/ad_rules/{name}.fut` after `pass`.
pub fn ir_after(pass: &str, name: &str) -> String {
    dev_ir(
        &["--print-ir-after", pass],
        &format!("tests/ad_rules/{name}.fut"),
    )
}
