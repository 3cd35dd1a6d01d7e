//! `runic run` names the parameter being read when the input is malformed, ragged or
//! truncated, not only when it has the wrong type (issue: errors at the program boundary).

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Each call gets its own directory: the tests of this file run in parallel.
fn run_with_stdin(program: &str, entry: &str, stdin: &[u8]) -> (i32, String, String) {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("runic-input-errors-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{entry}.fut"));
    std::fs::write(&file, program).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_runic"))
        .args(["run", "-e", entry, file.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // runic may stop reading at the first bad value; a closed pipe is not a failure here.
    let _ = child.stdin.take().unwrap().write_all(stdin);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const PROGRAM: &str = "entry f (xs: []f32) (n: i64) = map (+ f32.i64 n) xs\n";

#[test]
fn truncated_text_names_the_argument() {
    let (status, stdout, stderr) = run_with_stdin(PROGRAM, "f", b"[1f32, 2");
    assert_eq!(status, 1);
    assert_eq!(stdout, "");
    assert_eq!(
        stderr.trim_end(),
        "<stdin>:1:9: Error: argument 1 of \"f\": expected `,` or `]` in array, found end of input"
    );
}

#[test]
fn ragged_array_names_the_argument() {
    let (status, _, stderr) = run_with_stdin(PROGRAM, "f", b"[1f32, 2] [[1], [2, 3]]");
    assert_eq!(status, 1);
    assert!(stderr.starts_with("<stdin>:1:"), "{stderr}");
    assert!(stderr.contains("argument 2 of \"f\""), "{stderr}");
}

#[test]
fn truncated_binary_names_the_argument_and_byte_offset() {
    let mut bytes = b"b\x02\x01 f32".to_vec();
    bytes.extend_from_slice(&5u64.to_le_bytes());
    bytes.extend_from_slice(&[0, 0]);
    let (status, _, stderr) = run_with_stdin(PROGRAM, "f", &bytes);
    assert_eq!(status, 1);
    assert!(stderr.contains("byte 15"), "{stderr}");
    assert!(
        stderr.contains("argument 1 of \"f\": truncated binary value"),
        "{stderr}"
    );
}

#[test]
fn good_input_still_runs() {
    let (status, stdout, _) = run_with_stdin(PROGRAM, "f", b"[1f32, 2] 1");
    assert_eq!(status, 0);
    assert_eq!(stdout, "[2.0f32, 3.0f32]\n");
}
