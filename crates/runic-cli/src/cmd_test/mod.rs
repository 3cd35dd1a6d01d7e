//! `runic test` (data-tests-cli.md §5, §6.2).

pub mod spec;
