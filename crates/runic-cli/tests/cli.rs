//! End-to-end tests of the `runic` binary: small programs written to a temporary directory,
//! run through the subcommands; exit statuses and outputs are checked exactly.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Out {
    status: i32,
    stdout: String,
    stderr: String,
}

fn runic_bytes(dir: &Path, args: &[&str], stdin: &[u8]) -> (i32, Vec<u8>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_runic"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start runic");
    let mut input = child.stdin.take().unwrap();
    let bytes = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&bytes);
    });
    let out = child.wait_with_output().expect("wait for runic");
    writer.join().unwrap();
    (
        out.status.code().unwrap_or(-1),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `runic` with native code on or off (whatever the environment of the test run says).
fn runic_jit(dir: &Path, args: &[&str], jit: bool) -> Out {
    let out = Command::new(env!("CARGO_BIN_EXE_runic"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("RUNIC_JIT", if jit { "1" } else { "0" })
        .output()
        .expect("run runic");
    Out {
        status: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn runic(dir: &Path, args: &[&str], stdin: &str) -> Out {
    let (status, stdout, stderr) = runic_bytes(dir, args, stdin.as_bytes());
    Out {
        status,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr,
    }
}

/// A fresh directory holding the given files.
fn dir_with(files: &[(&str, &str)]) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "runic-cli-test-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

// ---------------------------------------------------------------------------------------
// General conventions

#[test]
fn version_help_and_usage_errors() {
    let d = dir_with(&[]);
    let o = runic(&d, &["--version"], "");
    assert_eq!((o.status, o.stdout.as_str()), (0, "runic 0.1.0\n"));
    let o = runic(&d, &["--help"], "");
    assert_eq!(o.status, 0);
    assert!(o.stdout.contains("dataset"));
    let o = runic(&d, &["test", "--help"], "");
    assert_eq!(o.status, 0);
    assert!(o.stdout.contains("--max-mismatches"));
    assert_eq!(runic(&d, &["frobnicate"], "").status, 2);
    assert_eq!(
        runic(&d, &["run", "--no-such-option", "x.fut"], "").status,
        2
    );
    assert_eq!(runic(&d, &["run"], "").status, 2);
    let o = runic(&d, &["run", "--backend=jit", "x.fut"], "");
    assert_eq!(o.status, 2);
    assert!(o.stderr.contains("available: interp, ir"), "{}", o.stderr);
}

// ---------------------------------------------------------------------------------------
// check

#[test]
fn check_reports_diagnostics_with_locations() {
    let d = dir_with(&[
        ("ok.fut", "def main (x: i32) = x + 1\n"),
        ("bad.fut", "def main (x: i32) = x +\n"),
    ]);
    let o = runic(&d, &["check", "ok.fut"], "");
    assert_eq!(
        (o.status, o.stdout.as_str(), o.stderr.as_str()),
        (0, "", "")
    );
    let o = runic(&d, &["check", "bad.fut"], "");
    assert_eq!(o.status, 1);
    assert!(o.stderr.starts_with("bad.fut:"), "{}", o.stderr);
    assert!(o.stderr.contains(": Error: "), "{}", o.stderr);
    let o = runic(&d, &["check", "missing.fut"], "");
    assert_eq!(o.status, 1);
    assert!(o.stderr.contains("missing.fut"), "{}", o.stderr);
}

// ---------------------------------------------------------------------------------------
// dev

#[test]
fn dev_passes() {
    let d = dir_with(&[("p.fut", "def main (x: i32) = x + 1\n")]);
    let o = runic(&d, &["dev", "--list-passes"], "");
    assert_eq!((o.status, o.stdout.as_str()), (0, "parse\ntypecheck\n"));
    let o = runic(
        &d,
        &[
            "dev",
            "--print-ir-after=parse",
            "--stop-after=parse",
            "p.fut",
        ],
        "",
    );
    assert_eq!(o.status, 0, "{}", o.stderr);
    assert!(
        o.stdout.starts_with("=== after parse ===\n"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("def main"), "{}", o.stdout);
    assert!(o.stdout.ends_with("\n\n"));
    assert!(!o.stdout.contains("=== after typecheck"));
    let o = runic(&d, &["dev", "--print-ir-after=all", "p.fut"], "");
    assert_eq!(o.status, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("=== after parse ===\n")
            && o.stdout.contains("=== after typecheck ===\n")
    );
    let o = runic(&d, &["dev", "--print-ir-after=fuse", "p.fut"], "");
    assert_eq!(o.status, 2);
    assert!(o.stderr.contains("parse, typecheck"), "{}", o.stderr);
    let o = runic(&d, &["dev", "--backend=ir", "--list-passes"], "");
    assert_eq!(o.status, 0);
    assert!(
        o.stdout.starts_with("parse\ntypecheck\nlower\n"),
        "{}",
        o.stdout
    );
}

/// A construct the ir backend cannot compile: `dev` prints the located report once, as
/// `run` does (it printed "Error: tup.fut:1:1-40: Error: …").
#[test]
fn dev_reports_what_the_ir_backend_cannot_compile_once() {
    let d = dir_with(&[("tup.fut", "entry tup (p: []([2]f32, i32)) = p[0].1\n")]);
    let o = runic_jit(&d, &["dev", "--backend=ir", "tup.fut"], true);
    assert_eq!(o.status, 1, "{}", o.stderr);
    assert!(
        o.stderr
            .starts_with("tup.fut:1:1-40: Error: not yet supported by the ir backend"),
        "{}",
        o.stderr
    );
    assert_eq!(o.stderr.matches("Error:").count(), 1, "{}", o.stderr);
}

#[test]
fn dev_explain_exec() {
    let prog = "\
entry main (xs: []f32) =
  let ys = map (\\x -> x * 2 + 1) xs
  let zs = map (\\x -> loop acc = x for i < 3 do acc * x) xs
  in (ys, zs, reduce (+) 0 xs)
";
    let d = dir_with(&[("p.fut", prog)]);
    let args = ["dev", "--backend=ir", "--explain-exec", "p.fut"];
    let o = runic_jit(&d, &args, true);
    assert_eq!(o.status, 0, "{}", o.stderr);
    assert_eq!(
        o.stdout,
        "\
entry main:
  p.fut:2:12 map: native (runic-jit map kernel)
  p.fut:3:12 map: native (runic-jit map kernel)
  p.fut:4:15 reduce: built-in (a single operator, folded by the executor's loop)
  p.fut:2:12 tasks: 3 expensive statements, up to 3 independent: run as parallel tasks
"
    );
    let o = runic_jit(&d, &args, false);
    assert!(
        o.stdout
            .contains("p.fut:2:12 map: not native: native code is off (RUNIC_JIT=0)"),
        "{}",
        o.stdout
    );
    let o = runic(&d, &["dev", "--explain-exec", "p.fut"], "");
    assert_eq!(o.status, 2, "{}", o.stderr);
}

/// Maps over rows with inner reductions run as native kernels and agree with the
/// interpreter byte for byte, failures included.
#[test]
fn native_nested_kernels_agree_with_the_interpreter() {
    let prog = "\
entry rows (m: [][]f32) = map (\\r -> reduce (+) 0 (map (\\x -> x * x) r)) m
entry dot (m: [][]f64) (v: []f64) = map (\\r -> reduce (+) 0 (map2 (*) r v)) m
entry idx (m: [][]i32) (is: []i64) = map (\\i -> m[i, 0] + m[0, i] * 3) is
entry km (ps: [][]f32) (cs: [][]f32) =
  map (\\p -> reduce f32.min f32.inf (map (\\c -> reduce (+) 0 (map2 (\\x y -> (x-y)*(x-y)) p c)) cs)) ps
entry amax (m: [][]i64) = map (\\r -> reduce i64.max i64.lowest r + r[1] / r[0]) m
entry fl (xs: []f64) = map (\\x -> loop acc = x for i < 5 do acc * 0.5 + f64.i64 i) xs
entry wl (xs: []i32) = map (\\x -> (loop (n, k) = (x, 0) while n > 1 do
                                                 (if n % 2 == 0 then n / 2 else 3 * n + 1, k + 1)).1) xs
entry dz (xs: []i32) (d: i32) = map (\\x -> loop acc = x for i < 3 do acc + 100 / (x - d * i)) xs
entry dmat (ps: [][]f32) (cs: [][]f32) =
  map (\\p -> map (\\c -> reduce (+) 0 (map2 (\\x y -> (x - y) * (x - y)) p c)) cs) ps
entry twice (ps: [][]f32) (cs: [][]f32) =
  map (\\p -> let ds = map (\\c -> reduce (+) 0 (map2 (\\x y -> (x - y) * (x - y)) p c)) cs
             in reduce f32.min f32.inf ds + reduce (+) 0 ds) ps
entry divs (m: [][]i32) (ds: []i32) = map (\\r -> map2 (\\x d -> x / d + r[0]) r ds) m
entry pick (m: [][]i64) (is: []i64) = map (\\i -> m[i]) is
entry pair (m: [][]i64) = map (\\r -> let s = map (\\x -> x * 2) r in (s, s, reduce (+) 0 s)) m
entry tri (ns: []i64) = map (\\n -> reduce (+) 0 (map (\\i -> i * n) (iota n))) ns
entry reps (xs: []f32) (k: i64) =
  (map (\\x -> copy (replicate k x)) xs, map (\\x -> reduce (+) 0 (replicate k (x * 2))) xs)
entry ifs (m: [][]i64) (is: []i64) =
  ( map (\\i -> let r = if i % 2 == 0 then m[i] else map (\\x -> 10 / x) m[0]
               in reduce (+) 0 r + r[1]) is
  , map (\\i -> if i > 2 then m[i] else map (\\x -> x - i) m[1]) is )
entry lits (xs: []i64) = map (\\x -> let a = [x, x * 2, 7] in a[x % 3] + a[x] + reduce (+) 0 a) xs
entry cols (m: [][]i32) (js: []i64) = map (\\j -> reduce (+) 0 m[:, j] * 100 + reduce (+) 0 m[j, ::2]) js
entry revs (m: [][]i32) (a: i64) (b: i64) = map (\\r -> r[a:b]) m
entry back (m: [][]i32) = map (\\r -> copy r[::-1]) m
entry cube (xs: []i64) (ys: []i64) (zs: []i64) = map (\\a -> map (\\b -> map (\\c -> a * b / c) zs) ys) xs
entry mid (ps: []i32) (m: [][]i32) =
  map (\\p -> let t = map (\\r -> map (\\x -> x * p) r[1:]) m in reduce (+) 0 (map (\\r -> r[0]) t)) ps
";
    let d = dir_with(&[("n.fut", prog)]);
    let o = runic_jit(
        &d,
        &["dev", "--backend=ir", "--explain-exec", "n.fut"],
        true,
    );
    assert!(!o.stdout.contains("not native"), "{}", o.stdout);
    let cases: &[(&str, &str)] = &[
        ("rows", "[[1f32, 2, 3], [4, 5, 6.5]]"),
        ("rows", "empty([0][3]f32)"),
        ("dot", "[[1f64, 2, 3], [4, 5, 6]] [0.5f64, -1, 2]"),
        ("dot", "[[1f64, 2, 3], [4, 5, 6]] [0.5f64, -1]"),
        ("idx", "[[1, 2, 3], [4, 5, 6]] [0i64, 1]"),
        ("idx", "[[1, 2, 3], [4, 5, 6]] [0i64, 1, 2]"),
        ("idx", "[[1, 2, 3], [4, 5, 6]] [0i64, -1]"),
        ("km", "[[1f32, 2], [3, 4], [0, 0]] [[1f32, 1], [3, 5]]"),
        ("amax", "[[2i64, 7, 1], [5, 3, 9]]"),
        ("amax", "[[2i64, 7, 1], [0, 3, 9]]"),
        ("fl", "[1f64, -2.5, 1e300]"),
        ("wl", "[1, 6, 27, 97, -4]"),
        ("dz", "[5, 7, 9] 3"),
        ("dz", "[5, 6, 9] 3"),
        ("dz", "[5, 0, 9] 3"),
        ("dmat", "[[1f32, 2], [3, 4], [0, 0]] [[1f32, 1], [3, 5]]"),
        ("dmat", "[[1f32, 2], [3, 4]] empty([0][2]f32)"),
        ("dmat", "[[1f32, 2], [3, 4]] [[1f32, 1, 2], [3, 5, 6]]"),
        ("twice", "[[1f32, 2], [3, 4], [0, 0]] [[1f32, 1], [3, 5]]"),
        ("divs", "[[1, 2], [3, 4]] [1, 2]"),
        ("divs", "[[1, 2], [3, 4]] [1, 0]"),
        ("divs", "[[1, 2], [3, 4]] [1]"),
        ("pick", "[[1i64, 2], [3, 4]] [1i64, 0, 1]"),
        ("pick", "[[1i64, 2], [3, 4]] [1i64, 2]"),
        ("pair", "[[1i64, 2, 3], [4, 5, 6]]"),
        ("tri", "[0i64, 1, 5, 100]"),
        ("tri", "[3i64, -1]"),
        ("reps", "[1f32, -2.5] 3"),
        ("reps", "[1f32, -2.5] 0"),
        ("reps", "[1f32, -2.5] -1"),
        (
            "ifs",
            "[[1i64, 2], [3, 4], [5, 6], [7, 8], [9, 10]] [0i64, 1, 2, 3, 4]",
        ),
        ("ifs", "[[1i64, 2], [3, 4], [5, 6]] [0i64, 1, 3]"),
        ("ifs", "[[0i64, 2], [3, 4], [5, 6]] [0i64, 1]"),
        ("lits", "[0i64, 1, 2]"),
        ("lits", "[0i64, 1, 2, 3]"),
        ("cols", "[[1, 2, 3], [4, 5, 6], [7, 8, 9]] [0i64, 2, 1]"),
        ("cols", "[[1, 2, 3], [4, 5, 6]] [0i64, 2]"),
        ("revs", "[[1, 2, 3], [4, 5, 6]] 1 3"),
        ("revs", "[[1, 2, 3], [4, 5, 6]] 2 2"),
        ("revs", "[[1, 2, 3], [4, 5, 6]] 2 1"),
        ("revs", "[[1, 2, 3], [4, 5, 6]] 1 4"),
        ("back", "[[1, 2, 3], [4, 5, 6]]"),
        ("cube", "[1i64, 2] [3i64, -4, 5] [1i64, 2]"),
        // (A failure three maps deep is left out: the evaluator's backtrace repeats the
        // outer frames there, with native code off too.)
        ("cube", "[7i64] [3i64] [-2i64]"),
        ("mid", "[1, 2, 3] [[1, 2, 3], [4, 5, 6]]"),
        ("mid", "[1, 2, 3] [[1], [4]]"),
    ];
    for (entry, input) in cases {
        let run = |backend: &str| {
            runic(
                &d,
                &["run", "-b", "--backend", backend, "-e", entry, "n.fut"],
                input,
            )
        };
        let (i, x) = (run("interp"), run("ir"));
        assert_eq!(
            (i.status, &i.stdout, &i.stderr),
            (x.status, &x.stdout, &x.stderr),
            "{entry} {input}"
        );
    }
}

#[test]
fn dev_timings() {
    let d = dir_with(&[("p.fut", "entry main (xs: []i32) = map (+ 1) xs\n")]);
    let steps = |out: &str| -> Vec<String> {
        out.lines()
            .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
            .collect()
    };
    let o = runic(&d, &["dev", "--backend=ir", "--timings", "p.fut"], "");
    assert_eq!(o.status, 0, "{}", o.stderr);
    let mut want = vec!["===".to_string(), "parse".into(), "typecheck".into()];
    want.extend(
        runic(&d, &["dev", "--backend=ir", "--list-passes"], "")
            .stdout
            .lines()
            .skip(2)
            .map(String::from),
    );
    want.push("native".into());
    want.push("total".into());
    assert_eq!(steps(&o.stdout), want, "{}", o.stdout);
    assert!(
        o.stdout.lines().skip(1).all(|l| l.ends_with(" ms")),
        "{}",
        o.stdout
    );
    let o = runic(&d, &["dev", "--timings", "p.fut"], "");
    assert_eq!(steps(&o.stdout), ["===", "parse", "typecheck", "total"]);
    // `bench` prepares the program once and says how long that took, apart from the runs.
    let prog =
        "-- ==\n-- input { [1, 2] } output { [2, 3] }\nentry main (xs: []i32) = map (+ 1) xs\n";
    let d = dir_with(&[("b.fut", prog)]);
    let o = runic(&d, &["bench", "-r", "2", "--min-time=0", "b.fut"], "");
    assert_eq!(o.status, 0, "{}", o.stderr);
    let line = o.stdout.lines().nth(1).unwrap_or("");
    assert!(
        line.starts_with("b.fut: compiled in ")
            && [
                " ms (front end ",
                ", lower ",
                ", ad ",
                ", optimise ",
                ", native "
            ]
            .iter()
            .all(|p| line.contains(p)),
        "{}",
        o.stdout
    );
}

/// The profile line of the matrix product in `p.fut` under `bench --profile`.
fn profiled_product(d: &Path) -> String {
    let o = runic(
        d,
        &["bench", "--profile", "-r", "2", "--min-time=0", "p.fut"],
        "",
    );
    assert_eq!(o.status, 0, "{}", o.stderr);
    o.stdout
        .lines()
        .find(|l| l.contains("a matrix product"))
        .unwrap_or_else(|| panic!("no product line: {}", o.stdout))
        .to_string()
}

/// A matrix product's profile line says its shape (one source location may hold several
/// products, a primal's and its derivative's).
#[test]
fn bench_profile_gives_a_products_shape() {
    let prog = "-- ==\n-- input { [[1f32, 2f32, 3f32], [4f32, 5f32, 6f32]] [[1f32, 0f32], [0f32, 1f32], [1f32, 1f32]] }\n\
                entry main [n][k][m] (a: [n][k]f32) (b: [k][m]f32) : [n][m]f32 =\n\
                map (\\r -> map (\\c -> f32.sum (map2 (*) r c)) (transpose b)) a\n";
    let d = dir_with(&[("p.fut", prog)]);
    let product = profiled_product(&d);
    assert!(product.contains("2×3 · 3×2"), "{product}");
}

/// With sizes known only at run time, the column `c` of `transpose b` is checked against
/// the row's length in the lambda: the product still runs as a GEMM (once, the whole
/// column's length checked; it ran element by element in the evaluator, 70 times slower,
/// when the check was read as one of a row), and a mismatch still fails with the
/// program's shape error.
#[test]
fn products_of_columns_with_unknown_sizes_run_as_gemms() {
    let prog = "-- ==\n-- input { [[1f32, 2f32, 3f32], [4f32, 5f32, 6f32]] [[1f32, 0f32], [0f32, 1f32], [1f32, 1f32]] }\n\
                -- output { [[4f32, 5f32], [10f32, 11f32]] }\n\
                entry main (a: [][]f32) (b: [][]f32) : [][]f32 =\n\
                map (\\r -> map (\\c -> f32.sum (map2 (*) r c)) (transpose b)) a\n";
    let d = dir_with(&[("p.fut", prog)]);
    let product = profiled_product(&d);
    assert!(product.contains("2×3 · 3×2"), "{product}");
    let o = runic(&d, &["test", "p.fut"], "");
    assert_eq!(o.status, 0, "{}{}", o.stdout, o.stderr);
    let mismatched = "[[1f32, 2f32, 3f32]] [[1f32, 0f32], [0f32, 1f32]]";
    for backend in ["interp", "ir"] {
        let o = runic(&d, &["run", "--backend", backend, "p.fut"], mismatched);
        assert_eq!(o.status, 1, "{backend}: {}", o.stdout);
        assert!(
            o.stderr.contains("cannot match shape of type \"[3]f32\""),
            "{backend}: {}",
            o.stderr
        );
    }
}

/// `bench --profile` lists, after each dataset, the SOACs that took the time, with their
/// location and how the executor runs them.
#[test]
fn bench_profile_lists_soacs() {
    let prog = "-- ==\n-- input { [[1, 2, 3], [4, 5, 6]] }\n\
                entry main (xss: [][]i32) = let ys = map (\\r -> scan (+) 0 r) xss\n\
                in map (\\r -> reduce (*) 1 r) (transpose ys)\n";
    let d = dir_with(&[("b.fut", prog)]);
    let o = runic(
        &d,
        &["bench", "--profile", "-r", "2", "--min-time=0", "b.fut"],
        "",
    );
    assert_eq!(o.status, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("profile (time in top-level SOACs"),
        "{}",
        o.stdout
    );
    let rows: Vec<&str> = o
        .stdout
        .lines()
        .filter(|l| l.contains(" calls  b.fut:"))
        .collect();
    assert!(rows.len() >= 2, "the two maps: {}", o.stdout);
    // Three calls of each map: the warm-up and two measured runs.
    let maps: Vec<&&str> = rows.iter().filter(|r| r.contains(" map: ")).collect();
    assert_eq!(maps.len(), 2, "{}", o.stdout);
    assert!(maps.iter().all(|r| r.contains(" 3 calls")), "{}", o.stdout);
    assert!(
        maps.iter()
            .any(|r| r.contains("b.fut:4:") && r.contains("native")),
        "{}",
        o.stdout
    );
}

// ---------------------------------------------------------------------------------------
// dataset (golden vectors of §5.6, conversion)

#[test]
fn dataset_golden_vectors() {
    let d = dir_with(&[]);
    let cases: &[(&[&str], &str)] = &[
        (
            &["-g", "[3]i32"],
            "[151149761i32, -443618201i32, 2066896222i32]\n",
        ),
        (&["-g", "[4]u8"], "[193u8, 103u8, 94u8, 11u8]\n"),
        (
            &["--i64-bounds=0:9", "-g", "[5]i64"],
            "[5i64, 9i64, 0i64, 5i64, 1i64]\n",
        ),
        (
            &["-g", "[3]f32"],
            "[0.5665616f32, 0.7457818f32, 0.97100276f32]\n",
        ),
        (
            &["-g", "[2]f64"],
            "[0.5665615751722809f64, 0.7457817572627011f64]\n",
        ),
        (&["-g", "[4]bool"], "[true, true, true, false]\n"),
        (
            &["-s", "5", "-g", "i32", "-g", "[2]u8"],
            "596231002i32\n[0u8, 153u8]\n",
        ),
        (&["-g", "5i64", "-g", "[1,2]"], "5i64\n[1i32, 2i32]\n"),
    ];
    for (args, expected) in cases {
        let mut all = vec!["dataset"];
        all.extend_from_slice(args);
        let o = runic(&d, &all, "");
        assert_eq!(
            (o.status, o.stdout.as_str()),
            (0, *expected),
            "{args:?}: {}",
            o.stderr
        );
    }
}

#[test]
fn dataset_conversion_and_options_in_order() {
    let d = dir_with(&[]);
    let (status, bin, err) = runic_bytes(
        &d,
        &[
            "dataset",
            "-g",
            "[2][3]i32",
            "--f32-bounds=-1:1",
            "-b",
            "-g",
            "[4]f32",
        ],
        b"",
    );
    assert_eq!(status, 0, "{err}");
    // The first value is text (the -b comes after it), the second binary: 7 + 8 + 16 bytes.
    let text = "[[151149761i32, -443618201i32, 2066896222i32],\n [1849870603i32, 1359066553i32, 269812352i32]]\n";
    assert!(bin.starts_with(text.as_bytes()));
    assert_eq!(bin.len(), text.len() + 7 + 8 + 16);
    assert_eq!(&bin[text.len()..text.len() + 7], b"b\x02\x01 f32");
    let (_, types, _) = runic_bytes(&d, &["dataset", "-t"], &bin);
    assert_eq!(String::from_utf8_lossy(&types), "[2][3]i32\n[4]f32\n");
    // Every f32 is within the bounds.
    let (_, back, _) = runic_bytes(&d, &["dataset", "--text"], &bin[text.len()..]);
    let back = String::from_utf8_lossy(&back).into_owned();
    for x in back.trim().trim_matches(['[', ']']).split(", ") {
        let v: f32 = x.trim_end_matches("f32").parse().unwrap();
        assert!((-1.0..=1.0).contains(&v), "{v}");
    }
    // Text -> binary -> text is the identity (§4 example bytes for 5i32).
    let (_, b5, _) = runic_bytes(&d, &["dataset", "-b"], b"5");
    assert_eq!(b5, b"b\x02\x00 i32\x05\x00\x00\x00");
    let o = runic(&d, &["dataset"], "-- comment\n[[1, 2], [3, 4]] true 2.5f32");
    assert_eq!(o.stdout, "[[1i32, 2i32],\n [3i32, 4i32]]\ntrue\n2.5f32\n");
}

#[test]
fn dataset_errors() {
    let d = dir_with(&[]);
    let o = runic(&d, &["dataset"], "[1, 2");
    assert_eq!(o.status, 1);
    assert!(
        o.stderr
            .starts_with("Error: malformed data on standard input"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("<stdin>:1:"), "{}", o.stderr);
    assert_eq!(runic(&d, &["dataset", "-g", "[2]x"], "").status, 2);
    assert_eq!(
        runic(&d, &["dataset", "--i32-bounds=5:1", "-g", "i32"], "").status,
        2
    );
    assert_eq!(
        runic(&d, &["dataset", "--i32-bounds=oops", "-g", "i32"], "").status,
        2
    );
}

// ---------------------------------------------------------------------------------------
// run

const ADD: &str = "def main (x: i32) (y: []f32) = (x + 1, map (+ 1) y)\nentry grad (x: f64) = x\n";

#[test]
fn run_prints_results() {
    let d = dir_with(&[("add.fut", ADD)]);
    let o = runic(&d, &["run", "add.fut"], "1 [1, 2.5]");
    assert_eq!(
        (o.status, o.stdout.as_str()),
        (0, "2i32\n[2.0f32, 3.5f32]\n"),
        "{}",
        o.stderr
    );
    let o = runic(&d, &["run", "-e", "grad", "add.fut"], "3");
    assert_eq!(
        (o.status, o.stdout.as_str()),
        (0, "3.0f64\n"),
        "{}",
        o.stderr
    );
    let (status, bin, _) = runic_bytes(&d, &["run", "-b", "-e", "grad", "add.fut"], b"0");
    assert_eq!(status, 0);
    assert_eq!(bin, b"b\x02\x00 f64\x00\x00\x00\x00\x00\x00\x00\x00");
}

#[test]
fn run_input_errors() {
    let d = dir_with(&[
        ("add.fut", ADD),
        (
            "rec.fut",
            "def f (r: {x: i32}) = r.x\nentry g (r: {x: i32}) = r.x\n",
        ),
    ]);
    let o = runic(&d, &["run", "add.fut"], "1");
    assert_eq!(o.status, 1);
    assert_eq!(
        o.stderr,
        "Error: entry point \"main\" takes 2 arguments, but 1 value was given\n"
    );
    assert_eq!(o.stdout, "");
    let o = runic(&d, &["run", "add.fut"], "1\n[1f64]");
    assert_eq!(o.status, 1);
    assert_eq!(
        o.stderr,
        "<stdin>:2:1: Error: argument 2 of \"main\" must have type []f32, but has type []f64\n"
    );
    let o = runic(&d, &["run", "-e", "foo", "add.fut"], "");
    assert_eq!(o.status, 1);
    assert_eq!(
        o.stderr,
        "Error: no entry point named \"foo\"; entry points: main, grad\n"
    );
    let o = runic(&d, &["run", "-e", "g", "rec.fut"], "");
    assert_eq!(o.status, 1);
    assert_eq!(
        o.stderr,
        "Error: parameter 1 of \"g\" has type {x: i32} which cannot be given as input data\n"
    );
    let o = runic(&d, &["run", "add.fut"], "1 [1,");
    assert_eq!(o.status, 1);
    assert!(o.stderr.starts_with("<stdin>:1:"), "{}", o.stderr);
}

#[test]
fn run_runtime_error() {
    let d = dir_with(&[("idx.fut", "def main (xs: []i32) (i: i64) = xs[i]\n")]);
    let o = runic(&d, &["run", "idx.fut"], "[1,2,3] 5");
    assert_eq!(o.status, 1);
    assert_eq!(o.stdout, "");
    assert!(o.stderr.starts_with("idx.fut:1:"), "{}", o.stderr);
    assert!(
        o.stderr
            .contains("Error: Index [5] out of bounds for array of shape [3]."),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains("Backtrace:\n-> #0  idx.fut:1:"),
        "{}",
        o.stderr
    );
}

/// A construct the ir backend cannot differentiate, reached through the prelude's `vjp`:
/// the report points at the user's `vjp`, not into `<prelude>`, and has one `Error:`.
#[test]
fn unsupported_ad_through_the_prelude_is_located_in_user_code() {
    // The general scan rule takes operators on scalars, not on rows.
    let src = "entry main [n] (xs: [n][2]f64) =\n  vjp (\\xs -> scan (\\a b -> if a[0] < b[0] then a else b) [0, 0] xs) xs (replicate n [1, 1])\n";
    let d = dir_with(&[("scan.fut", src)]);
    let o = runic(&d, &["run", "--backend=ir", "scan.fut"], "[[1.0, 2.0]]");
    assert_eq!(o.status, 1, "{}", o.stderr);
    assert!(
        o.stderr.starts_with(
            "scan.fut:2:3-93: Error: not yet supported by the ir backend: vjp of a scan whose operator is not on scalars"
        ),
        "{}",
        o.stderr
    );
    assert!(!o.stderr.contains("<prelude>"), "{}", o.stderr);
    assert_eq!(o.stderr.matches("Error:").count(), 1, "{}", o.stderr);
}

/// A loop whose carried array changes shape is differentiated by the ir backend (a flat
/// tape): doubling twice sums four copies, so the gradient is 4 everywhere. A loop whose
/// size may change but does not runs too.
#[test]
fn a_loop_changing_shape_under_vjp_is_differentiated() {
    let src = "entry grow (xs: []f64) = vjp (\\xs -> f64.sum (loop ys = xs for i < 2 do ys ++ ys)) xs 1\n\
               entry keep (xs: []f64) = vjp (\\xs -> f64.sum (loop ys = xs for i < 2 do filter (> 0) (map (* 2) ys))) xs 1\n";
    let d = dir_with(&[("grow.fut", src)]);
    let o = runic(
        &d,
        &["run", "--backend=ir", "-e", "grow", "grow.fut"],
        "[1.0, 2.0]",
    );
    assert_eq!(
        (o.status, o.stdout.trim()),
        (0, "[4.0f64, 4.0f64]"),
        "{}",
        o.stderr
    );
    let o = runic(
        &d,
        &["run", "--backend=ir", "-e", "keep", "grow.fut"],
        "[1.0, 2.0]",
    );
    assert_eq!(
        (o.status, o.stdout.trim()),
        (0, "[4.0f64, 4.0f64]"),
        "{}",
        o.stderr
    );
}

// ---------------------------------------------------------------------------------------
// test

const TESTED: &str = "\
-- Addition.
-- ==
-- tags { example }
-- entry: add add2
-- input { 1 2 } output { 3 }
-- \"named\" input { 10 20 } output { 30 }
-- notest input { 0 0 } output { 1 }
-- input { 1 2 }

entry add (x: i32) (y: i32) = x + y
entry add2 (x: i32) (y: i32) = y + x

-- ==
-- entry: sum
-- input @ data/xs.txt output @ data/sum.txt
-- random input { [10]i32 } auto output
-- input { [1, 2] } error: out of bounds
-- input { [1, 2, 3] } error: out of bounds

entry sum (xs: []i32) = xs[0] + xs[2]
";

#[test]
fn test_passing_file() {
    let d = dir_with(&[
        ("t.fut", TESTED),
        ("data/xs.txt", "[1, 2, 3]\n"),
        ("data/sum.txt", "4"),
    ]);
    let o = runic(&d, &["test", "t.fut"], "");
    assert_eq!(o.stderr, "");
    // 2 entries x 4 cases (2 of them skipped by notest) + 4 cases of the second block, of
    // which the last one fails (no error happens).
    assert_eq!(
        o.stdout,
        "FAIL t.fut:18 entry=sum case=3 backend=interp\n  dataset: #3 (\"[1i32, 2i32, 3i32]\")\n  expected an error matching /out of bounds/, but execution succeeded\n2 skipped\n9 passed, 1 failed\n"
    );
    assert_eq!(o.status, 1);
    let o = runic(&d, &["test", "-v", "-e", "add", "t.fut"], "");
    assert!(
        o.stdout
            .contains("PASS t.fut:5 entry=add case=0 backend=interp\n"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout
            .contains("SKIP t.fut:7 entry=add case=2 backend=interp (tag notest)\n"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.ends_with("9 skipped\n3 passed, 0 failed\n"),
        "{}",
        o.stdout
    );
    assert_eq!(o.status, 0);
    let o = runic(&d, &["test", "--exclude=example", "t.fut"], "");
    assert_eq!(o.stdout, "12 skipped\n0 passed, 0 failed\n");
}

#[test]
fn test_failure_reports() {
    let prog = "\
-- ==
-- input { [1f32, 2, 3] } output { [1f32, 2, 4] }
-- input { [1f32] } output { [1f32] [2f32] }
-- input { [1i32] }
-- input { [1f32, 2] } output { [1f32, 2.0049] }
def main (xs: []f32) = xs
";
    let d = dir_with(&[("f.fut", prog)]);
    let o = runic(&d, &["test", "f.fut"], "");
    let expected = "\
FAIL f.fut:2 entry=main case=0 backend=interp
  dataset: #0 (\"[1.0f32, 2.0f32, 3.0f32]\")
  Value #0 index [2]: expected 4.0f32, got 3.0f32
  expected: [1.0f32, 2.0f32, 4.0f32]
  got:      [1.0f32, 2.0f32, 3.0f32]
FAIL f.fut:3 entry=main case=1 backend=interp
  dataset: #1 (\"[1.0f32]\")
  Expected 2 values, got 1
  expected: [1.0f32] [2.0f32]
  got:      [1.0f32]
FAIL f.fut:4 entry=main case=2 backend=interp
  dataset: #2 (\"[1i32]\")
  cannot construct input: expected input of types: []f32
  provided input of types: []i32
FAIL f.fut:5 entry=main case=3 backend=interp
  dataset: #3 (\"[1.0f32, 2.0f32]\")
  Value #0 index [1]: expected 2.0049f32, got 2.0f32
  expected: [1.0f32, 2.0049f32]
  got:      [1.0f32, 2.0f32]
0 passed, 4 failed
";
    assert_eq!(o.stdout, expected);
    assert_eq!(o.status, 1);
}

#[test]
fn test_compile_errors_and_compile_only() {
    let d = dir_with(&[
        ("a_err_ok.fut", "-- ==\n-- error: Error\ndef main = 1 +\n"),
        ("b_err_bad.fut", "-- ==\n-- error: Error\ndef main = 1\n"),
        ("c_only.fut", "-- ==\n-- structure { Map 1 }\ndef f (x: i32) = x\n"),
        ("d_broken.fut", "-- ==\n-- input { 1 } output { 1 }\n-- input { 2 } output { 2 }\ndef main (x: i32) = x +\n"),
        ("e_spec.fut", "-- ==\n-- input { 1 } outptu { 1 }\ndef main (x: i32) = x\n"),
        ("no_blocks.fut", "def main (x: i32) = x\n"),
    ]);
    let o = runic(&d, &["test", "."], "");
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(lines[0], "FAIL ./b_err_bad.fut:1 backend=interp");
    assert_eq!(
        lines[1],
        "  expected compilation to fail with an error matching /Error/, but it succeeded"
    );
    assert_eq!(lines[2], "FAIL ./d_broken.fut:1 backend=interp (2 cases)");
    assert_eq!(lines[3], "  program failed to compile:");
    assert!(
        lines[4].starts_with("    ./d_broken.fut:5:"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains(
            "FAIL ./e_spec.fut:2 backend=interp\n  test specification error: ./e_spec.fut:2:"
        ),
        "{}",
        o.stdout
    );
    assert!(o.stdout.ends_with("2 passed, 4 failed\n"), "{}", o.stdout);
    let o = runic(&d, &["test", "-t", "d_broken.fut", "c_only.fut"], "");
    assert!(o.stdout.ends_with("1 passed, 1 failed\n"), "{}", o.stdout);
    let o = runic(&d, &["test", "nowhere"], "");
    assert_eq!(o.status, 1);
    assert_eq!(o.stdout, "");
}

#[test]
fn test_the_repository_block_examples() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/blocks");
    if !root.exists() {
        return;
    }
    let o = runic(&root, &["test", "-j", "2", "."], "");
    assert!(o.stdout.ends_with(" failed\n"), "{}", o.stdout);
}

// ---------------------------------------------------------------------------------------
// bench

#[test]
fn bench_json() {
    let prog = "\
-- ==
-- entry: inc
-- input { [1, 2, 3] } output { [2, 3, 4] }
-- \"wrong\" input { [1] } output { [5] }
-- nobench input { [1] }
-- input { [1] } error: x
entry inc (xs: []i32) = map (+ 1) xs
";
    let d = dir_with(&[("b.fut", prog)]);
    let o = runic(
        &d,
        &[
            "bench",
            "--backend=interp",
            "-r",
            "3",
            "--min-time=0",
            "--json=out.json",
            "b.fut",
        ],
        "",
    );
    assert_eq!(o.status, 1, "{}", o.stderr);
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "Benchmarking with backend interp: at least 3 runs and 0 s per dataset."
    );
    // Preparing the program is timed apart from the runs.
    assert!(
        lines[1].starts_with("b.fut: compiled in ")
            && lines[1].contains(" ms (front end ")
            && lines[1].contains(", interpreter "),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2], "b.fut:inc:");
    assert!(
        lines[3].starts_with("  #0 (\"[1i32, 2i32, 3i32]\"): "),
        "{}",
        lines[3]
    );
    assert!(lines[3].ends_with("μs median (3 runs)"), "{}", lines[3]);
    assert_eq!(
        lines[4],
        "  wrong: FAILED: Value #0 index [0]: expected 5i32, got 2i32"
    );
    assert_eq!(lines.len(), 5);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("out.json")).unwrap()).unwrap();
    let ds = &json["b.fut:inc"]["datasets"];
    assert_eq!(ds.as_object().unwrap().len(), 2);
    let ok = &ds["#0 (\"[1i32, 2i32, 3i32]\")"];
    assert_eq!(ok["runtimes"].as_array().unwrap().len(), 3);
    assert!(ok["runtimes"][0].is_u64());
    assert_eq!(ok["bytes"], serde_json::json!({}));
    // The cores the measured calls kept busy, where the system tells it (Linux).
    if cfg!(target_os = "linux") {
        let cores = ok["cores"].as_f64().expect("a number of cores");
        assert!(cores > 0.0 && cores < 64.0, "{cores}");
    }
    assert_eq!(ds["wrong"], "Value #0 index [0]: expected 5i32, got 2i32");
}

// ---------------------------------------------------------------------------------------
// repl

#[test]
fn repl_scripted() {
    let d = dir_with(&[("lib.fut", "def sq (x: i32) = x * x\n")]);
    let script = "1 + 2\ndef f (x: i32) = x * 10\nf 4\n[1.5, 2]\n:type f 1\n:x\n1 +\nsq 3\n:load lib.fut\nsq 3\n:quit\n7\n";
    let o = runic(&d, &["repl"], script);
    assert_eq!(o.status, 0);
    assert_eq!(o.stdout, "3\n40\n[1.5, 2.0]\nf 1 : i32\n9\n");
    assert!(o.stderr.contains("Unknown command ':x'"), "{}", o.stderr);
    assert!(o.stderr.contains("Error"), "{}", o.stderr);
}

#[test]
fn test_timeout_interrupts_a_case() {
    let prog = "-- ==\n-- input { 1 }\n-- input { 2 } error: timed out\ndef main (n: i32) = loop x = n while x > 0 do x + 1\n";
    let d = dir_with(&[("loop.fut", prog)]);
    let o = runic(&d, &["test", "--timeout=0.3", "loop.fut"], "");
    assert_eq!(
        o.stdout,
        "FAIL loop.fut:2 entry=main case=0 backend=interp\n  dataset: #0 (\"1i32\")\n  expected success, but execution failed:\n    Error: timed out after 0.3 seconds\n1 passed, 1 failed\n"
    );
    assert_eq!(o.status, 1);
}

#[test]
fn test_reports_come_in_sorted_file_order_in_parallel() {
    let fail =
        |k: i32| format!("-- ==\n-- input {{ {k} }} output {{ 0 }}\ndef main (x: i32) = x\n");
    let (a, b, c) = (fail(1), fail(2), fail(3));
    let d = dir_with(&[("c.fut", &c), ("a.fut", &a), ("sub/b.fut", &b)]);
    let o = runic(&d, &["test", "-j", "3", "c.fut", "sub", "a.fut"], "");
    let headers: Vec<&str> = o.stdout.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert_eq!(
        headers,
        vec![
            "FAIL a.fut:2 entry=main case=0 backend=interp",
            "FAIL c.fut:2 entry=main case=0 backend=interp",
            "FAIL sub/b.fut:2 entry=main case=0 backend=interp",
        ]
    );
    assert!(o.stdout.ends_with("0 passed, 3 failed\n"));
}
