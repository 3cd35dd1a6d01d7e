//! `runic bench` (§6.4): time the entry point on every benchmarkable case, print a table,
//! optionally write the reference-compatible JSON.

use crate::cli::BenchArgs;
use crate::cmd_test::collect_files;
use crate::cmd_test::inputs::{build_input, describe, expected_output, Origin};
use crate::cmd_test::report::truncate;
use crate::cmd_test::runner::compile_regex;
use crate::cmd_test::spec::{parse_spec, Case, Expect, Input, SpecKind};
use crate::driver::{self, Loaded};
use crate::error::{check_backend, CliError, CliResult};
use crate::exec::Executor;
use runic_data::Value;
use serde_json::{json, Map};
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::time::{Duration, Instant};

struct Settings {
    backend: String,
    runs: usize,
    min_time: Duration,
    timeout: Option<Duration>,
    entry: Option<String>,
    exclude_case: Vec<String>,
    verbose: bool,
    progress: bool,
    profile: bool,
}

/// The outcome of one dataset: measured run times in microseconds, or an error message.
/// The measured calls' times in microseconds, and the CPU time the process spent in them
/// over their wall time (how many cores they kept busy), where the system tells it.
type Outcome = Result<(Vec<u64>, Option<f64>), String>;

pub fn run(args: &BenchArgs) -> CliResult {
    check_backend(&args.backend)?;
    let secs = |s: f64, what: &str| {
        Duration::try_from_secs_f64(s).map_err(|_| {
            CliError::usage(format!("{what} must be a non-negative number of seconds"))
        })
    };
    let settings = Settings {
        profile: args.profile,
        backend: args.backend.clone(),
        runs: args.runs,
        min_time: secs(args.min_time, "--min-time")?,
        timeout: match args.timeout {
            Some(t) if t >= 0.0 => Some(secs(t, "--timeout")?),
            _ => None,
        },
        entry: args.entry.clone(),
        exclude_case: args.exclude_case.clone(),
        verbose: args.verbose,
        progress: std::io::stderr().is_terminal(),
    };
    let ignore = args
        .ignore_files
        .iter()
        .map(|re| compile_regex(re).map_err(CliError::usage))
        .collect::<CliResult<Vec<_>>>()?;
    let files: Vec<_> = collect_files(&args.paths)?
        .into_iter()
        .filter(|f| {
            !ignore
                .iter()
                .any(|re| re.is_match(&f.display().to_string()))
        })
        .collect();
    println!(
        "Benchmarking with backend {}: at least {} runs and {} s per dataset.",
        settings.backend, settings.runs, args.min_time
    );
    let mut json = Map::new();
    let mut any_failed = false;
    for file in &files {
        any_failed |= bench_file(file, &settings, &mut json)?;
    }
    if let Some(path) = &args.json {
        let text =
            serde_json::to_string_pretty(&serde_json::Value::Object(json)).unwrap_or_default();
        std::fs::write(path, text + "\n").map_err(|e| {
            CliError::user(format!(
                "Error: cannot write {}: {}",
                path.display(),
                driver::io_reason(&e)
            ))
        })?;
    }
    if any_failed {
        Err(CliError::Reported)
    } else {
        Ok(())
    }
}

fn excluded(tags: &[String], s: &Settings) -> bool {
    let backend_tag = format!("no_{}", s.backend);
    tags.iter().any(|t| {
        t == "disable" || t == "nobench" || *t == backend_tag || s.exclude_case.contains(t)
    })
}

/// Benchmark one file; returns whether any dataset failed. A compile error stops `bench`.
fn bench_file(
    path: &Path,
    s: &Settings,
    json: &mut Map<String, serde_json::Value>,
) -> CliResult<bool> {
    let shown = path.display().to_string();
    let text = driver::read_source(path)?;
    let spec = match parse_spec(&text) {
        Ok(Some(spec)) => spec,
        Ok(None) => return Ok(false),
        Err(e) => {
            return Err(CliError::user(format!(
                "{shown}:{e}: test specification error"
            )))
        }
    };
    let SpecKind::Blocks(blocks) = &spec.kind else {
        return Ok(false);
    };
    if excluded(&spec.tags, s) {
        return Ok(false);
    }
    // (entry point, its cases) in file order.
    let mut groups: Vec<(&str, Vec<&Case>)> = Vec::new();
    for b in blocks {
        for entry in &b.entries {
            if s.entry.as_ref().is_some_and(|only| only != entry) {
                continue;
            }
            let cases: Vec<&Case> = b
                .cases
                .iter()
                .filter(|c| {
                    !matches!(c.expect, Expect::Error(_)) && !matches!(c.input, Input::Script(_))
                })
                .filter(|c| !excluded(&c.tags, s))
                .collect();
            if !cases.is_empty() {
                groups.push((entry, cases));
            }
        }
    }
    if groups.is_empty() {
        return Ok(false);
    }
    // The program is prepared once (front end, lowering, AD, optimisation, native code) and
    // every dataset runs on it: the runs below never compile.
    let t0 = Instant::now();
    let loaded = driver::load_text(&shown, &text)?;
    let front = t0.elapsed();
    let mut exec = Executor::new(&s.backend, &loaded).map_err(CliError::user)?;
    println!("{shown}: {}", compile_line(front, &exec.timings));
    let dir = path.parent().unwrap_or(Path::new("."));
    let origin = Origin { path: &shown, dir };
    let mut failed = false;
    for (entry, cases) in groups {
        let key = if entry == "main" {
            shown.clone()
        } else {
            format!("{shown}:{entry}")
        };
        println!("{key}:");
        let descriptions: Vec<String> = cases.iter().map(|c| describe(c)).collect();
        let width = descriptions
            .iter()
            .map(|d| truncate(d, 37).chars().count() + 1)
            .max()
            .unwrap_or(0);
        // Results for the same key from several blocks are merged (§6.4.2).
        let mut datasets = json
            .get(&key)
            .and_then(|v| v.get("datasets"))
            .and_then(|d| d.as_object())
            .cloned()
            .unwrap_or_default();
        for (case, desc) in cases.iter().zip(&descriptions) {
            let shown_desc = format!("{}:", short_description(desc));
            runic_exec::set_profiling(s.profile);
            runic_exec::take_profile();
            let outcome = bench_case(&loaded, &mut exec, entry, case, &origin, s);
            runic_exec::set_profiling(false);
            match outcome {
                Ok((times, cores)) => {
                    let (mean, median) = mean_median(&times);
                    println!(
                        "  {shown_desc:<width$} {mean:>7}μs mean, {median:>7}μs median ({} runs)",
                        times.len()
                    );
                    let mut result = json!({ "runtimes": times, "bytes": {} });
                    if let Some(c) = cores {
                        result["cores"] = json!(c);
                    }
                    datasets.insert(desc.clone(), result);
                    if s.profile {
                        if let Some(c) = cores {
                            println!("    cores busy: {c:.2} (CPU time over wall time of the measured calls)");
                        }
                        print!("{}", profile_table(&loaded.sources, &exec));
                    }
                }
                Err(reason) => {
                    failed = true;
                    println!(
                        "  {shown_desc} FAILED: {}",
                        reason.lines().next().unwrap_or("")
                    );
                    datasets.insert(desc.clone(), serde_json::Value::String(reason));
                }
            }
            let _ = std::io::stdout().flush();
        }
        json.insert(key, json!({ "datasets": datasets }));
    }
    Ok(failed)
}

/// `compiled in T ms (front end …, lower …, ad …, optimise …, native …)`: the passes of
/// runic-opt are summed into `optimise`.
fn compile_line(front: Duration, steps: &[(String, Duration)]) -> String {
    let mut parts: Vec<(String, Duration)> = vec![("front end".into(), front)];
    for (name, t) in steps {
        let group = match name.as_str() {
            "lower" | "ad" | "native" | "interpreter" => name.clone(),
            _ => "optimise".to_string(),
        };
        match parts.iter_mut().find(|(g, _)| *g == group) {
            Some(p) => p.1 += *t,
            None => parts.push((group, *t)),
        }
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let total: Duration = parts.iter().map(|(_, t)| *t).sum();
    let detail: Vec<String> = parts
        .iter()
        .map(|(g, t)| format!("{g} {:.1}", ms(*t)))
        .collect();
    format!("compiled in {:.1} ms ({} ms)", ms(total), detail.join(", "))
}

/// A description longer than 40 characters is cut to its first 37 plus `...`.
fn short_description(d: &str) -> String {
    if d.chars().count() > 40 {
        truncate(d, 37)
    } else {
        d.to_string()
    }
}

/// Arithmetic mean and median, rounded to whole microseconds.
fn mean_median(times: &[u64]) -> (u64, u64) {
    if times.is_empty() {
        return (0, 0);
    }
    let mean = (times.iter().map(|&t| t as f64).sum::<f64>() / times.len() as f64).round() as u64;
    let mut sorted = times.to_vec();
    sorted.sort_unstable();
    let n = sorted.len();
    let median = if n % 2 == 1 {
        sorted[n / 2]
    } else {
        ((sorted[n / 2 - 1] + sorted[n / 2]) as f64 / 2.0).round() as u64
    };
    (mean, median)
}

/// §6.4.1: warm-up, then measured calls until both the run count and the minimum time are
/// reached; then the last result is checked.
fn bench_case(
    loaded: &Loaded,
    exec: &mut Executor,
    entry_name: &str,
    case: &Case,
    origin: &Origin,
    s: &Settings,
) -> Outcome {
    let entry = loaded
        .checked
        .info
        .entries
        .iter()
        .find(|e| e.name == entry_name)
        .ok_or_else(|| format!("no entry point named \"{entry_name}\""))?;
    let args =
        build_input(case, entry, origin).map_err(|e| format!("cannot construct input: {e}"))?;
    let expected = expected_output(case, entry, origin)
        .transpose()
        .map_err(|e| format!("cannot read expected output: {e}"))?;
    let start = Instant::now();
    let remaining = |s: &Settings| -> Result<Option<Duration>, String> {
        match s.timeout {
            None => Ok(None),
            Some(t) => t
                .checked_sub(start.elapsed())
                .map(Some)
                .ok_or_else(|| timeout_message(t)),
        }
    };
    let cpu = std::cell::Cell::new(Some(Duration::ZERO));
    let call = |exec: &mut Executor, args: Vec<Value>| -> Result<(Vec<Value>, u64), String> {
        let limit = remaining(s)?;
        let c0 = process_cpu_time();
        let t0 = Instant::now();
        let r = exec.call(entry_name, args, limit);
        let us = t0.elapsed().as_micros() as u64;
        let spent = c0.zip(process_cpu_time()).map(|(a, b)| b.saturating_sub(a));
        cpu.set(cpu.get().zip(spent).map(|(a, b)| a + b));
        match r {
            Ok(v) => Ok((v, us)),
            Err(crate::exec::CallError::Timeout(_)) => {
                Err(timeout_message(s.timeout.unwrap_or_default()))
            }
            Err(e) => Err(e.text()),
        }
    };
    let (mut last, _) = call(exec, args.clone())?;
    cpu.set(Some(Duration::ZERO));
    let mut times = Vec::new();
    let mut measured = Duration::ZERO;
    while times.len() < s.runs || measured < s.min_time {
        let fresh = args.clone();
        // The previous result is freed first, as a caller that drops it would: kept, it
        // made every call write its output into memory that was not the last call's, and
        // a 32 MB result twice as slow to write (two buffers taking turns in the cache).
        drop(std::mem::take(&mut last));
        let (result, us) = call(exec, fresh)?;
        last = result;
        measured += Duration::from_micros(us);
        times.push(us);
        if s.verbose {
            println!("    run {}: {us}μs", times.len());
        }
        if s.progress {
            eprint!("\r  {} runs", times.len());
        }
    }
    if s.progress {
        eprint!("\r\x1b[K");
    }
    if let Some(exp) = expected {
        let mismatches = runic_data::compare_values(&exp, &last, 5);
        if !mismatches.is_empty() {
            return Err(mismatches.join("; "));
        }
    }
    let cores = cpu
        .get()
        .filter(|_| !measured.is_zero())
        .map(|c| c.as_secs_f64() / measured.as_secs_f64());
    Ok((times, cores))
}

/// CPU time of every thread of this process so far (Linux: the first field of each
/// thread's `schedstat`, in nanoseconds); `None` elsewhere.
fn process_cpu_time() -> Option<Duration> {
    let mut total = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let stat = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
        total += stat.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(Duration::from_nanos(total))
}

fn timeout_message(t: Duration) -> String {
    format!("timed out after {} seconds", t.as_secs_f64())
}

/// `--profile`: the SOACs that took the most time over the dataset's calls (warm-up
/// included), with their share of the time of all top-level SOACs.
fn profile_table(sources: &runic_syntax::SourceMap, exec: &Executor) -> String {
    let entries = runic_exec::take_profile();
    let reports = exec.explain_reports();
    let total: f64 = entries.iter().map(|e| e.time.as_secs_f64()).sum();
    let mut out = String::from("    profile (time in top-level SOACs, all calls):\n");
    for e in entries.iter().take(12) {
        let ms = e.time.as_secs_f64() * 1e3;
        let share = if total > 0.0 {
            100.0 * e.time.as_secs_f64() / total
        } else {
            0.0
        };
        let detail = e
            .detail
            .as_ref()
            .map_or(String::new(), |d| format!(", {d}"));
        out.push_str(&format!(
            "    {ms:>10.1} ms {share:>5.1}% {:>6} calls  {} {}: {}{detail}\n",
            e.calls,
            crate::backend_ir::location(e.loc, sources),
            e.kind,
            reports
                .iter()
                .find(|r| r.lambda.is_some() && r.lambda == e.lambda)
                .map_or("", |r| r.how.as_str())
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_median() {
        assert_eq!(
            mean_median(&[12, 11, 11, 13, 11, 12, 11, 11, 12, 11]),
            (12, 11)
        );
        assert_eq!(mean_median(&[1, 2, 3, 10]), (4, 3));
        assert_eq!(mean_median(&[5]), (5, 5));
    }

    #[test]
    fn descriptions_are_cut_at_forty() {
        let d = "#0 (\"[1.0f32, 2.0f32, 3.0f32] [4.0f32, 5.0f32, 6.0f32]\")";
        assert_eq!(
            short_description(d),
            "#0 (\"[1.0f32, 2.0f32, 3.0f32] [4.0f32..."
        );
        assert_eq!(
            short_description("[100000]f32 [100000]f32"),
            "[100000]f32 [100000]f32"
        );
    }
}
