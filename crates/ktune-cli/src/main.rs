//! `ktune`: the auto-tuner's command-line tool. Library errors are typed; this is the one
//! place where they become friendly messages.

#[macro_use]
mod output;
mod bench;
mod brute_forced;
mod dashboard;
mod devices;
mod export;
mod numbers;
mod report;
mod results;
mod space;
mod spec;
mod tune;
mod tune_strategy;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Auto-tuning for GPU and HPC code: find the fastest configuration in as few evaluations as
/// possible.
#[derive(Parser)]
#[command(name = "ktune", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build a search space from a spec and describe it: parameters, constraints, sizes,
    /// groups, build time and memory.
    Space(space::SpaceArgs),
    /// Compare strategies on brute-forced spaces in simulation: runs strategies x spaces x
    /// seeds, writes traces, the score table and convergence plots.
    Bench(bench::BenchArgs),
    /// List the GPUs (CUDA) and OpenCL devices of this machine, with the `[runner]` keys that
    /// pick each one.
    Devices(devices::DevicesArgs),
    /// List the optimisation strategies and their options (with defaults).
    Strategies,
    /// Tune a program described by a ktune.toml: every measurement is stored, and running the
    /// same command again resumes.
    Tune(tune::TuneArgs),
    /// List, filter and export the results stored by `ktune tune`.
    Results(results::ResultsArgs),
    /// Take tuned configurations into the application: a wisdom file, a header of
    /// `#define`s per device, a C header that selects at run time.
    Export(export::ExportArgs),
    /// Write one self-contained HTML file showing what the tuner did in a study: convergence,
    /// every measurement, failures, parameter importance, the best configurations, its facts.
    Report(report::ReportArgs),
    /// Serve a storage's studies read-only on a local web page: each study's report, updated
    /// live while workers tune it.
    Dashboard(dashboard::DashboardArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Space(args) => space::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Tune(args) => tune::run(&args),
        Command::Results(args) => results::results(&args),
        Command::Export(args) => export::run(&args),
        Command::Report(args) => report::run(&args),
        Command::Dashboard(args) => dashboard::run(&args),
        Command::Devices(args) => devices::run(&args),
        Command::Strategies => out!("{}", ktune_strategies::markdown()).map_err(Into::into),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of our output has gone (`ktune results db | head -1`): end quietly.
        Err(e) if output::is_broken_pipe(&e) => ExitCode::from(output::BROKEN_PIPE_STATUS),
        // Said already ("stopped because interrupted"), with everything measured recorded.
        Err(e) if e.is::<Interrupted>() => ExitCode::from(INTERRUPTED_STATUS),
        Err(e) => {
            note!("error: {}", render(&e));
            ExitCode::FAILURE
        }
    }
}

/// A run that Ctrl-C stopped after recording what it measured: not an error to
/// report, but not a finished run either.
#[derive(Debug)]
struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}

/// The exit status of a tool ended by SIGINT, as shells report it (128 + 2).
const INTERRUPTED_STATUS: u8 = 130;

/// An error and its causes on one line, `outer: cause: cause`, leaving out a cause whose text
/// the line already says (many errors quote their source, e.g. an I/O error's message).
fn render(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        // SQLite's codes ("Error code 14: unable to open database file") restate the message.
        let core = text
            .strip_prefix("Error code ")
            .and_then(|t| t.split_once(": "))
            .map_or(text.as_str(), |(_, m)| m);
        // tokio-postgres's "db error" only labels the server's message, which is already said.
        if line.contains(core) || text == "db error" {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}
