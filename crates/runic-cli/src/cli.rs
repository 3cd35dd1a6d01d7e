//! Command-line definitions (clap derive). Parsing only; the `cmd_*` modules do the work.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "runic",
    version,
    about = "runic: a differentiable data-parallel array language"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Parse and type-check a program.
    Check(CheckArgs),
    /// Run an entry point on arguments read from standard input.
    Run(RunArgs),
    /// Run the test cases embedded in programs' `-- ==` blocks.
    Test(TestArgs),
    /// Benchmark the test cases of programs.
    Bench(BenchArgs),
    /// Generate random values, or convert values between text and binary.
    Dataset(DatasetArgs),
    /// Interactive evaluation with the interpreter.
    Repl(ReplArgs),
    /// Compiler-developer tool: run passes and print intermediate programs.
    Dev(DevArgs),
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Do not print warnings.
    #[arg(short = 'w', long = "no-warnings")]
    pub no_warnings: bool,
    /// Treat warnings as errors.
    #[arg(long = "Werror")]
    pub werror: bool,
    pub program: PathBuf,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Entry point to call.
    #[arg(short = 'e', long = "entry-point", default_value = "main")]
    pub entry: String,
    /// Backend to run with (available: interp, ir).
    #[arg(long, default_value = "interp")]
    pub backend: String,
    /// Print results in the binary value format.
    #[arg(short = 'b', long = "binary-output")]
    pub binary: bool,
    /// Do not print compiler warnings.
    #[arg(short = 'w', long = "no-warnings")]
    pub no_warnings: bool,
    pub program: PathBuf,
}

#[derive(Args, Debug)]
pub struct TestArgs {
    /// Backend to test (available: interp, ir).
    #[arg(long, default_value = "interp")]
    pub backend: String,
    /// Same as --backend=interp.
    #[arg(short = 'i')]
    pub interp: bool,
    /// Backend producing `auto output` expectations.
    #[arg(long = "reference-backend", default_value = "interp")]
    pub reference_backend: String,
    /// Only cases of this entry point.
    #[arg(short = 'e', long = "entry-point")]
    pub entry: Option<String>,
    /// Skip files and cases carrying this tag (repeatable).
    #[arg(long = "exclude")]
    pub exclude: Vec<String>,
    /// Skip `compiled` cases when the backend is interp.
    #[arg(long = "skip-compiled")]
    pub skip_compiled: bool,
    /// Only type-check each program.
    #[arg(short = 't', long = "typecheck")]
    pub typecheck: bool,
    /// Only compile each program for the backend.
    #[arg(short = 'C', long = "compile")]
    pub compile: bool,
    /// Test up to N files in parallel (default: number of CPUs).
    #[arg(short = 'j', long = "concurrency")]
    pub concurrency: Option<usize>,
    /// Element mismatches listed per failing case.
    #[arg(long = "max-mismatches", default_value_t = 5)]
    pub max_mismatches: usize,
    /// Also report passed and skipped cases, and compiler warnings.
    #[arg(short = 'v', long = "verbose")]
    pub verbose: bool,
    /// Accepted for compatibility (runic never draws progress animations).
    #[arg(long = "no-terminal", visible_alias = "notty")]
    pub no_terminal: bool,
    /// Abort a case after this many seconds (runic extension).
    #[arg(long = "timeout")]
    pub timeout: Option<f64>,
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Backend to benchmark (available: interp, ir).
    #[arg(long, default_value = "ir")]
    pub backend: String,
    /// Minimum number of measured runs per dataset.
    #[arg(short = 'r', long = "runs", default_value_t = 10)]
    pub runs: usize,
    /// Minimum total measured time per dataset, in seconds.
    #[arg(long = "min-time", default_value_t = 0.5)]
    pub min_time: f64,
    /// Abort a dataset after this many seconds in total (negative: no limit).
    #[arg(long = "timeout", allow_negative_numbers = true)]
    pub timeout: Option<f64>,
    /// Write the results as JSON to FILE.
    #[arg(long = "json")]
    pub json: Option<PathBuf>,
    /// Only this entry point.
    #[arg(short = 'e', long = "entry-point")]
    pub entry: Option<String>,
    /// After each dataset, list the SOACs that took the most time (ir backend).
    #[arg(long = "profile")]
    pub profile: bool,
    /// Skip cases with this tag (repeatable).
    #[arg(long = "exclude-case")]
    pub exclude_case: Vec<String>,
    /// Skip files whose path matches this regular expression (repeatable).
    #[arg(long = "ignore-files")]
    pub ignore_files: Vec<String>,
    /// Accepted; the convergence phase is not implemented yet.
    #[arg(long = "no-convergence-phase")]
    pub no_convergence_phase: bool,
    /// Accepted; the convergence phase is not implemented yet.
    #[arg(long = "convergence-max-seconds")]
    pub convergence_max_seconds: Option<f64>,
    /// Print each measured run time.
    #[arg(short = 'v', long = "verbose")]
    pub verbose: bool,
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
}

/// `dataset` options are order-sensitive; `cmd_dataset` re-reads them from the raw matches
/// in command-line order. These fields exist for `--help` and validation.
#[derive(Args, Debug)]
pub struct DatasetArgs {
    /// Emit one value: literal data values, or a random value of type [d1]...[dr]t.
    #[arg(short = 'g', long = "generate", action = clap::ArgAction::Append, allow_hyphen_values = true)]
    pub generate: Vec<String>,
    /// Seed of the first -g (the k-th -g uses seed N+k).
    #[arg(short = 's', long = "seed", default_value_t = 1)]
    pub seed: u64,
    /// Binary output for the following -g (or for conversion).
    #[arg(short = 'b', long = "binary", action = clap::ArgAction::Count)]
    pub binary: u8,
    /// Text output (the default) for the following -g.
    #[arg(long = "text", action = clap::ArgAction::Count)]
    pub text: u8,
    /// Print the types of the values instead of the values.
    #[arg(short = 't', long = "type", action = clap::ArgAction::Count)]
    pub types: u8,
    #[command(flatten)]
    pub bounds: DatasetBounds,
}

macro_rules! bounds_args {
    ($($field:ident = $long:literal for $prim:literal),* $(,)?) => {
        /// Inclusive ranges `MIN:MAX` for later `-g`, one option per primitive type.
        #[derive(Args, Debug)]
        pub struct DatasetBounds {
            $(
                #[arg(long = $long, value_name = "MIN:MAX", action = clap::ArgAction::Append,
                      allow_hyphen_values = true)]
                pub $field: Vec<String>,
            )*
        }
        /// (clap argument id, primitive type name) of every bounds option.
        pub const BOUNDS_OPTIONS: &[(&str, &str)] = &[$((stringify!($field), $prim)),*];
    };
}

bounds_args!(
    i8_bounds = "i8-bounds" for "i8",
    i16_bounds = "i16-bounds" for "i16",
    i32_bounds = "i32-bounds" for "i32",
    i64_bounds = "i64-bounds" for "i64",
    u8_bounds = "u8-bounds" for "u8",
    u16_bounds = "u16-bounds" for "u16",
    u32_bounds = "u32-bounds" for "u32",
    u64_bounds = "u64-bounds" for "u64",
    f16_bounds = "f16-bounds" for "f16",
    f32_bounds = "f32-bounds" for "f32",
    f64_bounds = "f64-bounds" for "f64",
);

#[derive(Args, Debug)]
pub struct ReplArgs {
    pub program: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum DevCommand {
    /// Check an entry point's jvp/vjp derivatives against central finite differences.
    GradCheck(GradCheckArgs),
}

#[derive(Args, Debug)]
pub struct GradCheckArgs {
    pub program: PathBuf,
    /// The entry point to check.
    #[arg(short = 'e', long = "entry")]
    pub entry: String,
    /// Finite-difference step (default: by float type, 1e-5 for f64, 5e-3 for f32).
    #[arg(long)]
    pub eps: Option<f64>,
    /// Largest relative error accepted (default: by float type, 1e-4 for f64, 1e-2 for f32).
    #[arg(long)]
    pub tolerance: Option<f64>,
}

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct DevArgs {
    #[command(subcommand)]
    pub command: Option<DevCommand>,
    /// Whose pipeline to run (available: interp, ir).
    #[arg(long, default_value = "interp")]
    pub backend: String,
    /// Print the pass names of the pipeline, one per line.
    #[arg(long = "list-passes")]
    pub list_passes: bool,
    /// Print the program after PASS (repeatable; `all` for every pass).
    #[arg(long = "print-ir-after")]
    pub print_after: Vec<String>,
    /// Do not run the passes after PASS.
    #[arg(long = "stop-after")]
    pub stop_after: Option<String>,
    /// List every SOAC of every entry point and how the executor runs it (native code or
    /// not, and why); `--backend ir` only.
    #[arg(long = "explain-exec")]
    pub explain_exec: bool,
    /// Print the time each pass takes (instead of the program, unless asked for).
    #[arg(long = "timings")]
    pub timings: bool,
    pub program: Option<PathBuf>,
}
