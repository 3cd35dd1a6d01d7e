//! The `runic` command: check, run, test, bench, dataset, repl and dev.

// Large arrays are allocated and freed all the time (each SOAC's result, each loop's tape).
// The system allocator gives every large block back to the kernel when it is freed, and the
// next one pays a page fault per 4 KiB page (measured: a loop updating a 320 MB array in
// place spent 2/3 of its time there). mimalloc, told never to purge, reuses freed memory;
// the process keeps its peak memory.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay` (its index in the enum of the vendored headers, v3
/// and v2 alike): milliseconds before freed memory goes back to the kernel, -1 for never.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Keep freed memory for reuse (see `ALLOC`).
fn keep_freed_memory() {
    // SAFETY: setting an option is a store into mimalloc's option table.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
}

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

fn main() {
    keep_freed_memory();
    exec::install_panic_hook();
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // Everything runs on a thread with a large stack: the interpreter recurses deeply.
    let status = driver::with_big_stack(|| {
        join_the_pool();
        match dispatch(&cli, &matches) {
            Ok(()) => 0,
            Err(e) => {
                let text = e.to_string();
                if !text.is_empty() {
                    eprintln!("{}", text.trim_end());
                }
                e.exit_status()
            }
        }
    });
    std::process::exit(status);
}

/// Makes this thread one of the rayon pool's workers (the first), so that the calls it
/// makes run their parallel SOACs as a worker does: its own part first, the others
/// stolen, no sleeping on a latch until a worker thread finishes (~30 µs a call on a
/// 2-vCPU VM, or a SOAC for calls too small to move to a worker).
fn join_the_pool() {
    // Already built (it cannot be, this early): the default pool stays.
    let _ = rayon::ThreadPoolBuilder::new()
        .use_current_thread()
        .build_global();
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

#[cfg(test)]
mod tests {
    #[test]
    fn option_15_is_the_purge_delay() {
        // Its documented default (1000 ms in v3, 10 in v2) unless the environment or the
        // program set it: the enum index the constant relies on names that option.
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            let v = unsafe { libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY) };
            assert!(matches!(v, 1000 | 10 | -1), "{v}");
        }
        super::keep_freed_memory();
        let v = unsafe { libmimalloc_sys::mi_option_get(super::MI_OPTION_PURGE_DELAY) };
        assert_eq!(v, -1);
    }
}
