//! The problem description: a `ktune.toml` read once into typed sections, which the command
//! line (`ktune tune`) and the Python bindings (`ktune.Study.from_spec`) both start from.
//!
//! ```toml
//! constraints = ["block_size_x * block_size_y <= 1024"]
//!
//! [[parameter]]                 # the search space (ktune_space::spec)
//! name = "block_size_x"
//! values = [32, 64, 128]
//!
//! [runner]                      # how a configuration is measured: kind = "command" | "cuda" | "opencl"
//! kind = "command"
//! run = "./bench {block_size_x}"
//! objective = { name = "time", regex = 'time: (?P<value>[0-9.]+)' }
//!
//! [strategy]                    # optional: the strategy and its options (default auto)
//! name = "bayes_opt"
//!
//! [budget]                      # optional: max_evaluations, max_seconds, target
//! max_evaluations = 100
//!
//! [storage]                     # optional: a shared study instead of a database beside the spec
//! url = "sqlite:///tuning.db"   # or postgresql://...
//! study = "gemm"
//! ```
//!
//! Each section is checked when the file is read: the runner's kind and its fields, the
//! strategy's name and options (checked once into a
//! [`CheckedStrategy`](ktune_strategies::CheckedStrategy)), the budget's limits and the
//! storage's URL. An error names the section and the file.
//!
//! On top of it, the one study path every front end takes:
//! - [`Plan::resolve`]: the front end's arguments over the file's sections over the defaults,
//!   resolved once into a [`Plan`];
//! - [`ProblemSpec::open_runner`]: the runner of the `[runner]` section (which may need a
//!   compiler or a GPU);
//! - [`StudyPlace::join`]: the study opened in its storage and joined under its facts (one
//!   rule for every front end, see [`ktune_core::StudyFacts::join`]), its records told to the
//!   session; [`OpenStudy::run`] runs it;
//! - [`note_inputs`]: whether the program changed under the study's results;
//! - [`prior`]: earlier measurements (`[transfer]`, `--prior`) read from a ktune study, a
//!   Kernel Tuner cache or a T4 file, recorded with the study and told to its strategy.
#![deny(missing_docs)]

mod error;
pub mod export;
mod inputs;
mod plan;
pub mod prior;
pub mod report;
mod runner;
mod spec;
mod study;
#[cfg(test)]
mod tests;

pub use error::ProblemError;
pub use inputs::{check_inputs, note_inputs};
pub use plan::{COMMAND_LINE, PYTHON, Plan, PlanError, RunArgs, Spelling};
pub use prior::{LoadedPrior, PriorLoadError, PriorSource};
pub use runner::OpenedRunner;
pub use spec::{BudgetSpec, InstanceSpec, ProblemSpec, RunnerSpec, StorageSpec, TransferSpec};
pub use study::{Ended, OpenStudy, Opening, Participation, StudyPlace};
