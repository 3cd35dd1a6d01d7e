//! The `runic` command: check, run, test, bench, dataset, repl and dev.

mod backend_ir;
mod cli;
mod cmd_bench;
mod cmd_check;
mod cmd_dataset;
mod cmd_dev;
mod cmd_gradcheck;
mod cmd_repl;
mod cmd_run;
mod cmd_test;
mod driver;
mod error;
mod hints;

// Calling entry points (time limits, panics caught) is the library's.
use runic::engine as exec;

use clap::{ArgMatches, CommandFactory, FromArgMatches};
use cli::{Cli, Command};
use error::CliResult;

/// Large arrays are allocated and freed all the time (each SOAC's result, each loop's
/// tape). glibc's malloc gives every large block back to the kernel when it is freed, and
/// the next one pays a page fault per 4 KiB page (measured: an LSTM gradient spends ~15%
/// there, a loop updating a 320 MB array in place 2/3 of its time). One arena that keeps
/// what is freed lets the next allocation reuse it; the process keeps its peak memory.
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets allocator parameters; it runs before any other thread.
    unsafe {
        // Each returns 0 when a value is refused; the defaults then stay, which is only slower.
        libc::mallopt(libc::M_ARENA_MAX, 1);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 30);
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
    }
}

fn main() {
    keep_freed_memory();
    exec::install_panic_hook();
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // Everything runs on a thread with a large stack: the interpreter recurses deeply.
    let status = driver::with_big_stack(|| match dispatch(&cli, &matches) {
        Ok(()) => 0,
        Err(e) => {
            let text = e.to_string();
            if !text.is_empty() {
                eprintln!("{}", text.trim_end());
            }
            e.exit_status()
        }
    });
    std::process::exit(status);
}

fn dispatch(cli: &Cli, matches: &ArgMatches) -> CliResult {
    match &cli.command {
        Command::Check(a) => cmd_check::run(a),
        Command::Run(a) => cmd_run::run(a),
        Command::Test(a) => cmd_test::run(a),
        Command::Bench(a) => cmd_bench::run(a),
        Command::Dataset(_) => match matches.subcommand_matches("dataset") {
            Some(m) => cmd_dataset::run(m),
            None => Ok(()),
        },
        Command::Repl(a) => cmd_repl::run(a),
        Command::Dev(a) => match &a.command {
            Some(cli::DevCommand::GradCheck(g)) => cmd_gradcheck::run(g),
            None => cmd_dev::run(a),
        },
    }
}
