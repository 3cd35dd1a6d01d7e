//! The `runic` command: check, run, test, bench, dataset, repl and dev.

mod cli;
mod cmd_test;
mod error;

use clap::{CommandFactory, FromArgMatches};
use cli::{Cli, Command};
use error::{CliError, CliResult};

fn main() {
    let matches = Cli::command().get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    let status = match dispatch(&cli) {
        Ok(()) => 0,
        Err(e) => {
            let text = e.to_string();
            if !text.is_empty() {
                eprintln!("{}", text.trim_end());
            }
            e.exit_status()
        }
    };
    std::process::exit(status);
}

fn dispatch(cli: &Cli) -> CliResult {
    match &cli.command {
        _ => Err(CliError::user("Error: not supported yet in this build")),
    }
}
