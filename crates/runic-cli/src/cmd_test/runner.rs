//! Testing one file: case selection and skipping (§5.3, §5.10), compile-time expectations
//! (§5.5), running cases and judging their results (§5.5, §5.8, §5.9).

use super::inputs::{build_input, describe, expected_output, Origin};
use super::report::{block, with_text, Subject};
use super::spec::{parse_spec, Block, Case, Expect, Input, SpecKind, TestSpec};
use crate::driver::{self, LoadError, Loaded};
use crate::exec::{CallError, Executor};
use crate::hints::value_type_of;
use runic_data::Value;
use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

/// Settings shared by every file of a `test` run.
pub struct Options {
    pub backend: String,
    pub reference_backend: String,
    pub entry: Option<String>,
    pub exclude: Vec<String>,
    pub skip_compiled: bool,
    /// `-t` or `-C`: only compile, one case per file.
    pub compile_only: bool,
    pub max_mismatches: usize,
    pub verbose: bool,
    pub timeout: Option<Duration>,
}

/// What testing one file produced: its report text (printed as a unit) and its counts.
#[derive(Default, Debug)]
pub struct FileReport {
    pub text: String,
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
}

impl FileReport {
    fn fail(&mut self, header: String, details: &[String], cases: usize) {
        self.text.push_str(&block(header, details));
        self.failed += cases;
    }
    fn pass(&mut self, opts: &Options, header: impl FnOnce() -> String) {
        if opts.verbose {
            self.text.push_str(&block(header(), &[]));
        }
        self.passed += 1;
    }
    fn skip(&mut self, opts: &Options, cases: usize, header: impl FnOnce() -> String) {
        if opts.verbose {
            self.text.push_str(&block(header(), &[]));
        }
        self.skipped += cases;
    }
}

/// Test one file; never panics on any input (panics in the backend are caught as failures).
pub fn test_file(path: &Path, opts: &Options) -> FileReport {
    let shown = path.display().to_string();
    let mut report = FileReport::default();
    let whole = |line: usize, cases: usize| Subject {
        path: &shown,
        line,
        case: None,
        backend: &opts.backend,
        cases,
    };
    let text = match driver::read_source(path) {
        Ok(t) => t,
        Err(e) => {
            report.fail(whole(1, 1).header("FAIL"), &[e.text().to_string()], 1);
            return report;
        }
    };
    let spec = match parse_spec(&text) {
        Ok(Some(spec)) => spec,
        Ok(None) => return report,
        Err(e) => {
            report.fail(
                whole(e.line, 1).header("FAIL"),
                &[format!("test specification error: {shown}:{e}")],
                1,
            );
            return report;
        }
    };
    let n = spec.case_count();
    if let Some(reason) = excluded_by(&spec.tags, opts, false) {
        let h = whole(spec.first_line, n).header("SKIP");
        report.skip(opts, n, || format!("{h} ({reason})"));
        return report;
    }
    let mut file = FileRun {
        shown: &shown,
        path,
        text: &text,
        spec: &spec,
        opts,
        report,
    };
    file.run();
    file.report
}

/// Why a tag set excludes a case or file, if it does.
fn excluded_by(tags: &[String], opts: &Options, is_case: bool) -> Option<String> {
    let backend_tag = format!("no_{}", opts.backend);
    for t in tags {
        if t == "disable" || t == "notest" || *t == backend_tag || opts.exclude.contains(t) {
            return Some(format!("tag {t}"));
        }
        if is_case && t == "compiled" && opts.skip_compiled && opts.backend == "interp" {
            return Some("compiled case, --skip-compiled".into());
        }
    }
    None
}

struct FileRun<'a> {
    shown: &'a str,
    path: &'a Path,
    text: &'a str,
    spec: &'a TestSpec,
    opts: &'a Options,
    report: FileReport,
}

/// One (entry point, case) pair to run.
struct Job<'a> {
    entry: &'a str,
    case: &'a Case,
    description: String,
}

impl<'a> FileRun<'a> {
    fn subject(&self, line: usize, case: Option<(&'a str, usize)>, cases: usize) -> Subject<'_> {
        Subject {
            path: self.shown,
            line,
            case,
            backend: &self.opts.backend,
            cases,
        }
    }

    fn compile(&self) -> Result<Loaded, LoadError> {
        driver::load_text(self.shown, self.text)
    }

    fn run(&mut self) {
        match &self.spec.kind {
            SpecKind::CompileError { regex, .. } => self.compile_error_case(regex),
            SpecKind::Blocks(_) if self.opts.compile_only => {
                if let Some(loaded) = self.compile_for_cases(1) {
                    self.warnings(&loaded);
                    let h = self.subject(self.spec.first_line, None, 1).header("PASS");
                    self.report.pass(self.opts, || h);
                }
            }
            SpecKind::Blocks(blocks) => self.blocks(blocks),
        }
    }

    fn warnings(&mut self, loaded: &Loaded) {
        if self.opts.verbose {
            let w = loaded.warnings();
            if !w.is_empty() {
                self.report
                    .text
                    .push_str(&crate::cmd_check::ensure_newline(&w));
            }
        }
    }

    /// Compile; on failure every one of `cases` fails with one report.
    fn compile_for_cases(&mut self, cases: usize) -> Option<Loaded> {
        match self.compile() {
            Ok(l) => Some(l),
            Err(e) => {
                let intro = match e {
                    LoadError::Io(_) => "cannot read the program:",
                    LoadError::Compile(_) => "program failed to compile:",
                };
                let h = self
                    .subject(self.spec.first_line, None, cases)
                    .header("FAIL");
                self.report.fail(h, &[with_text(intro, e.text())], cases);
                None
            }
        }
    }

    /// A first block `error: RE` (§5.5).
    fn compile_error_case(&mut self, regex: &str) {
        let h = self.subject(self.spec.first_line, None, 1);
        let (hp, hf) = (h.header("PASS"), h.header("FAIL"));
        let re = match compile_regex(regex) {
            Ok(re) => re,
            Err(e) => return self.report.fail(hf, &[e], 1),
        };
        match self.compile() {
            Ok(_) => self.report.fail(
                hf,
                &[format!("expected compilation to fail with an error matching /{regex}/, but it succeeded")],
                1,
            ),
            Err(e) if re.is_match(e.text()) => self.report.pass(self.opts, || hp),
            Err(e) => self.report.fail(
                hf,
                &[with_text(&format!("compilation failed, but the error does not match /{regex}/:"), e.text())],
                1,
            ),
        }
    }

    fn blocks(&mut self, blocks: &'a [Block]) {
        // Descriptions must be unique within a block (§5.4).
        let mut jobs: Vec<Job<'a>> = Vec::new();
        for b in blocks {
            let mut seen = HashSet::new();
            let described: Vec<(&Case, String)> =
                b.cases.iter().map(|c| (c, describe(c))).collect();
            for (c, d) in &described {
                if !seen.insert(d.clone()) {
                    let h = self.subject(c.line, None, 1).header("FAIL");
                    let msg = format!(
                        "test specification error: {}:{}: duplicate dataset description {d}",
                        self.shown, c.line
                    );
                    return self.report.fail(h, &[msg], 1);
                }
            }
            for entry in &b.entries {
                for (c, d) in &described {
                    jobs.push(Job {
                        entry,
                        case: c,
                        description: d.clone(),
                    });
                }
            }
        }
        // Decide what is skipped before compiling: a file whose cases are all skipped is
        // not compiled at all.
        let mut to_run = Vec::new();
        for job in jobs {
            match self.skip_reason(&job) {
                Some(reason) => {
                    let h = self
                        .subject(job.case.line, Some((job.entry, job.case.index)), 1)
                        .header("SKIP");
                    self.report.skip(self.opts, 1, || format!("{h} ({reason})"));
                }
                None => to_run.push(job),
            }
        }
        let compile_only = blocks.iter().all(|b| b.cases.is_empty());
        if to_run.is_empty() && !compile_only {
            return;
        }
        let Some(loaded) = self.compile_for_cases(to_run.len().max(1)) else {
            return;
        };
        self.warnings(&loaded);
        if compile_only {
            let h = self.subject(self.spec.first_line, None, 1).header("PASS");
            return self.report.pass(self.opts, || h);
        }
        let mut exec = match Executor::new(&self.opts.backend, &loaded) {
            Ok(e) => e,
            Err(m) => {
                let h = self
                    .subject(self.spec.first_line, None, to_run.len())
                    .header("FAIL");
                return self.report.fail(h, &[m], to_run.len());
            }
        };
        for job in &to_run {
            let outcome = self.run_case(job, &loaded, &mut exec);
            let subject = self.subject(job.case.line, Some((job.entry, job.case.index)), 1);
            match outcome {
                Ok(()) => {
                    let h = subject.header("PASS");
                    self.report.pass(self.opts, || h);
                }
                Err(mut details) => {
                    let h = subject.header("FAIL");
                    details.insert(0, format!("dataset: {}", job.description));
                    self.report.fail(h, &details, 1);
                }
            }
        }
    }

    fn skip_reason(&self, job: &Job) -> Option<String> {
        if let Some(only) = &self.opts.entry {
            if only != job.entry {
                return Some(format!("entry point is not {only}"));
            }
        }
        if let Input::Script(_) = job.case.input {
            return Some("script input is not supported".into());
        }
        excluded_by(&job.case.tags, self.opts, true)
    }

    /// Run one case; `Err` holds the detail lines of its failure report.
    fn run_case(&self, job: &Job, loaded: &Loaded, exec: &mut Executor) -> Result<(), Vec<String>> {
        let Some(entry) = loaded
            .checked
            .info
            .entries
            .iter()
            .find(|e| e.name == job.entry)
        else {
            let names: Vec<&str> = loaded
                .checked
                .info
                .entries
                .iter()
                .map(|e| e.name.as_str())
                .collect();
            return Err(vec![format!(
                "no entry point named \"{}\"; entry points: {}",
                job.entry,
                names.join(", ")
            )]);
        };
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let origin = Origin {
            path: self.shown,
            dir,
        };
        let args = build_input(job.case, entry, &origin)
            .map_err(|e| vec![format!("cannot construct input: {e}")])?;
        let expected = match expected_output(job.case, entry, &origin) {
            Some(Ok(v)) => Some(v),
            Some(Err(e)) => return Err(vec![format!("cannot read expected output: {e}")]),
            None => None,
        };
        let wants_auto =
            job.case.expect == Expect::Auto && self.opts.backend != self.opts.reference_backend;
        let reference_args = if wants_auto { Some(args.clone()) } else { None };
        let result = exec.call(job.entry, args, self.opts.timeout);
        if let Expect::Error(re) = &job.case.expect {
            let regex = compile_regex(re).map_err(|e| vec![e])?;
            return match result {
                Ok(_) => Err(vec![format!(
                    "expected an error matching /{re}/, but execution succeeded"
                )]),
                Err(e) if regex.is_match(&e.text()) => Ok(()),
                Err(e) => Err(vec![with_text(
                    &format!("expected an error matching /{re}/, but got:"),
                    &e.text(),
                )]),
            };
        }
        let got = result.map_err(|e| vec![failure_text(&e)])?;
        let expected = match (expected, reference_args) {
            (Some(v), _) => v,
            (None, Some(args)) => self.reference_results(loaded, job.entry, args)?,
            (None, None) => return Ok(()),
        };
        for (k, (v, ty)) in got.iter().zip(&entry.results).enumerate() {
            if !v.is_data() || value_type_of(ty).is_none() {
                return Err(vec![format!("result #{k} has opaque type {ty}")]);
            }
        }
        let mismatches = runic_data::compare_values(&expected, &got, self.opts.max_mismatches);
        if mismatches.is_empty() {
            return Ok(());
        }
        let mut details = mismatches;
        let single = |vs: &[Value]| {
            vs.iter()
                .map(runic_data::print_value_single_line)
                .collect::<Vec<_>>()
                .join(" ")
        };
        let (e, g) = (single(&expected), single(&got));
        if e.chars().count() <= 200 && g.chars().count() <= 200 {
            details.push(format!("expected: {e}"));
            details.push(format!("got:      {g}"));
        }
        Err(details)
    }

    /// `auto output` on a backend other than the reference: run the reference backend.
    fn reference_results(
        &self,
        loaded: &Loaded,
        entry: &str,
        args: Vec<Value>,
    ) -> Result<Vec<Value>, Vec<String>> {
        let backend = &self.opts.reference_backend;
        let failed = |m: String| vec![format!("reference backend {backend} failed: {m}")];
        let mut exec = Executor::new(backend, loaded).map_err(failed)?;
        exec.call(entry, args, self.opts.timeout)
            .map_err(|e| failed(e.text()))
    }
}

fn failure_text(e: &CallError) -> String {
    with_text("expected success, but execution failed:", &e.text())
}

/// §5.9: dot matches newline, unanchored search.
pub fn compile_regex(re: &str) -> Result<regex::Regex, String> {
    regex::RegexBuilder::new(re)
        .dot_matches_new_line(true)
        .build()
        .map_err(|e| {
            format!(
                "invalid regular expression /{re}/: {}",
                e.to_string().lines().last().unwrap_or("")
            )
        })
}
