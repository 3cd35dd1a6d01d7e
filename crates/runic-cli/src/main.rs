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

fn main() {
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
