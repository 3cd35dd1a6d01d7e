//! `runic test` (data-tests-cli.md §5, §6.2): find programs, test them (files in parallel),
//! print every report as a unit in sorted file order, then the summary.

pub mod inputs;
pub mod report;
pub mod runner;
pub mod spec;

use crate::cli::TestArgs;
use crate::driver::BIG_STACK;
use crate::error::{check_backend, CliError, CliResult};
use rayon::prelude::*;
use runner::{FileReport, Options};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub fn run(args: &TestArgs) -> CliResult {
    let backend = if args.interp {
        "interp".to_string()
    } else {
        args.backend.clone()
    };
    check_backend(&backend)?;
    check_backend(&args.reference_backend)?;
    let timeout = match args.timeout {
        Some(s) if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
        Some(s) if s <= 0.0 => None,
        Some(_) => return Err(CliError::usage("--timeout must be a number of seconds")),
        None => None,
    };
    let files = collect_files(&args.paths)?;
    let opts = Options {
        backend,
        reference_backend: args.reference_backend.clone(),
        entry: args.entry.clone(),
        exclude: args.exclude.clone(),
        skip_compiled: args.skip_compiled,
        compile_only: args.typecheck || args.compile,
        max_mismatches: args.max_mismatches,
        verbose: args.verbose,
        timeout,
    };
    let threads = args.concurrency.filter(|&n| n > 0).unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let totals = run_files(&files, &opts, threads)?;
    print!(
        "{}",
        report::summary(totals.passed, totals.failed, totals.skipped)
    );
    let _ = std::io::stdout().flush();
    if totals.failed > 0 {
        Err(CliError::Reported)
    } else {
        Ok(())
    }
}

/// Test the files on a pool of `threads` workers and print each report as soon as every
/// earlier file's report has been printed (so the output is in file order).
fn run_files(files: &[PathBuf], opts: &Options, threads: usize) -> CliResult<FileReport> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(BIG_STACK)
        .build()
        .map_err(|e| CliError::user(format!("Error: cannot start worker threads: {e}")))?;
    let (tx, rx) = std::sync::mpsc::channel::<(usize, FileReport)>();
    let mut totals = FileReport::default();
    std::thread::scope(|s| {
        s.spawn(move || {
            pool.install(|| {
                files
                    .par_iter()
                    .enumerate()
                    .for_each_with(tx, |tx, (i, f)| {
                        let _ = tx.send((i, runner::test_file(f, opts)));
                    })
            })
        });
        let mut pending: Vec<Option<FileReport>> = (0..files.len()).map(|_| None).collect();
        let mut next = 0;
        let mut out = std::io::stdout();
        for (i, r) in rx {
            pending[i] = Some(r);
            while let Some(r) = pending.get_mut(next).and_then(Option::take) {
                let _ = out.write_all(r.text.as_bytes());
                let _ = out.flush();
                totals.passed += r.passed;
                totals.failed += r.failed;
                totals.skipped += r.skipped;
                next += 1;
            }
        }
    });
    Ok(totals)
}

/// Every PATH: a file as given, or a directory searched recursively for `.fut` files; the
/// result is sorted byte-wise and without duplicates. A missing PATH is an error (§6.2.2).
pub fn collect_files(paths: &[PathBuf]) -> CliResult<Vec<PathBuf>> {
    let mut files = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| {
            CliError::user(format!(
                "Error: {}: {}",
                p.display(),
                crate::driver::io_reason(&e)
            ))
        })?;
        if meta.is_dir() {
            walk(p, &mut files).map_err(|e| {
                CliError::user(format!(
                    "Error: cannot read directory {}: {}",
                    p.display(),
                    crate::driver::io_reason(&e)
                ))
            })?;
        } else {
            files.push(p.clone());
        }
    }
    files.sort_by(|a, b| {
        a.as_os_str()
            .as_encoded_bytes()
            .cmp(b.as_os_str().as_encoded_bytes())
    });
    files.dedup();
    Ok(files)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "fut") {
            out.push(path);
        }
    }
    Ok(())
}
