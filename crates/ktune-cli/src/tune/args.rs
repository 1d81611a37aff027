//! The arguments of `ktune tune`, and the plan they resolve to over the spec (see
//! [`ktune_problem::Plan`]).

use std::path::PathBuf;

use ktune_problem::RunArgs;
use ktune_strategies::CheckedStrategy;

/// Arguments of `ktune tune`.
#[derive(clap::Args)]
pub struct TuneArgs {
    /// The problem: a `ktune.toml` with parameters, constraints and a `[runner]` section.
    pub(crate) spec: PathBuf,
    /// Refuse a group of linked parameters whose enumeration needs more constraint checks
    /// than this (estimated before it starts; the default, 1e9, takes up to about a minute).
    #[arg(long, default_value_t = ktune_space::DEFAULT_MAX_CHECKS, value_name = "CHECKS", allow_negative_numbers = true, value_parser = crate::numbers::limit)]
    pub(crate) max_enumeration: f64,
    /// Strategy, as `name` or `name:key=value:...`, or a `.toml` file whose `[strategy]` table
    /// names it (default: the spec's `[strategy]`, else auto).
    #[arg(long, value_parser = crate::bench::strategy)]
    pub(crate) strategy: Option<CheckedStrategy>,
    /// Stop after this many evaluations in total, resumed ones included.
    #[arg(long, allow_negative_numbers = true, value_parser = crate::numbers::count)]
    pub(crate) max_evals: Option<usize>,
    /// Stop after this many seconds of tuning (evaluation and strategy time).
    #[arg(long, allow_negative_numbers = true, value_parser = crate::numbers::seconds)]
    pub(crate) time_limit: Option<f64>,
    /// Seed of the strategy's random numbers. In a shared study the first worker to join
    /// uses it as given and each later worker a stream of its own derived from it and the
    /// order it joined in.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = crate::numbers::seed)]
    pub(crate) seed: u64,
    /// The results database (default: `<spec>.db` next to the spec).
    #[arg(long)]
    pub(crate) db: Option<PathBuf>,
    /// Do not measure the spec's default configuration.
    #[arg(long)]
    pub(crate) no_default: bool,
    /// Print nothing but errors and the final summary line.
    #[arg(long, conflicts_with = "json")]
    pub(crate) quiet: bool,
    /// Print one JSON object per evaluation and a final summary object (for scripts).
    #[arg(long)]
    pub(crate) json: bool,
    /// At the end, measure the best K configurations again, interleaved (A B C A B C ...),
    /// and report their final order with confidence intervals.
    #[arg(long, value_name = "K", allow_negative_numbers = true, value_parser = crate::numbers::count)]
    pub(crate) rerank: Option<usize>,
    /// Interleaved rounds of the re-ranking.
    #[arg(long, default_value_t = 10, value_name = "N", allow_negative_numbers = true, value_parser = crate::numbers::count)]
    pub(crate) rerank_rounds: usize,
    /// Work on a shared study in this storage (`sqlite:///path/to/file.db`, or
    /// `postgresql://user@host/db` across machines, with libpq's TLS parameters such as
    /// `?sslmode=verify-full&sslrootcert=ca.pem`; see docs/distributed.md): start the same
    /// command any number of times (one per GPU, node or Slurm task) and the workers share
    /// the study's budget, each configuration measured once.
    #[arg(long, value_name = "URL")]
    pub(crate) storage: Option<String>,
    /// The shared study's name (default: the spec's file stem).
    #[arg(long, value_name = "NAME")]
    pub(crate) study: Option<String>,
    /// Seconds a worker's claim on a configuration lasts without a heartbeat (a worker that
    /// dies holds its configurations this long); heartbeats renew it every third of it.
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS")]
    pub(crate) lease: f64,
    /// The device this worker measures on, as recorded with its results (default: the GPU's
    /// name for the cuda runner, else the CPU model).
    #[arg(long, value_name = "NAME")]
    pub(crate) device: Option<String>,
    /// Join a study whose other workers measured on different hardware.
    #[arg(long)]
    pub(crate) allow_mixed_hardware: bool,
    /// Earlier measurements to start from (repeat for several): a ktune study (its SQLite
    /// file, or a storage URL; `#study` picks one of several), a Kernel Tuner cache file or a
    /// T4 results file, of the same code on another device, problem size or version. Replaces
    /// the spec's `[transfer]` priors; recorded with the study, so that resuming it uses them
    /// again. `auto` starts from the configurations the priors rank best and trusts each prior
    /// as far as it ranks this study's own measurements.
    #[arg(long, value_name = "FILE|URL")]
    pub(crate) prior: Vec<String>,
    /// With several objectives: seek one configuration by this goal instead of the whole
    /// front, e.g. "energy within 5% of time" (the least energy within 5% of the fastest
    /// time) or "weighted time=1, energy=0.5" (each relative to its best). The strategy is
    /// told the goal's value of every result; `ktune results` and `ktune export` pick by
    /// it. Replaces the spec's `goal`; recorded with the study.
    #[arg(long, value_name = "GOAL")]
    pub(crate) goal: Option<String>,
}

impl TuneArgs {
    /// The arguments the plan resolves over the spec and the defaults.
    pub(crate) fn run_args(&self) -> RunArgs {
        RunArgs {
            strategy: self.strategy.clone(),
            max_evaluations: self.max_evals,
            max_seconds: self.time_limit,
            seed: self.seed,
            db: self.db.clone(),
            storage: self.storage.clone(),
            study: self.study.clone(),
            lease: self.lease,
            device: self.device.clone(),
            allow_mixed_hardware: self.allow_mixed_hardware,
            measure_default: !self.no_default,
            database_beside_spec: true,
            priors: (!self.prior.is_empty()).then(|| self.prior.clone()),
            goal: self.goal.clone(),
        }
    }

    /// Progress on the terminal, or lines in a log: not with `--quiet` or `--json`.
    pub(crate) fn chatty(&self) -> bool {
        !self.quiet && !self.json
    }
}
