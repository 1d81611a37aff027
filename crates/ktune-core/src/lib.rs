//! The tuning loop and its extension points.
//!
//! One loop: a [`Strategy`] proposes configurations of a
//! [`SearchSpace`](ktune_space::SearchSpace), a [`Runner`] evaluates them, and the [`Tuner`]
//! records every [`Outcome`] in order and tells the strategy, until the [`Budget`] ends. A
//! configuration is never evaluated twice; failures (compile, runtime, timeout, wrong output,
//! invalid) are data, never errors that end the run.
//!
//! # Example
//! ```
//! use ktune_core::{Budget, Direction, Metric, Outcome, Runner, Strategy, Tuner, Rng, History, Observation, Timings};
//! use ktune_space::{Configuration, Parameter, SearchSpace};
//! use rand::SeedableRng;
//!
//! /// Evaluates `(x - 3)^2` in one simulated millisecond.
//! struct Quadratic(Vec<Metric>);
//! impl Runner for Quadratic {
//!     fn name(&self) -> &str { "quadratic" }
//!     fn metrics(&self) -> &[Metric] { &self.0 }
//!     fn evaluate(&mut self, space: &SearchSpace, configs: &[Configuration]) -> Result<Vec<Outcome>, ktune_core::CoreError> {
//!         Ok(configs.iter().map(|c| {
//!             let x = space.values(c)[0].as_f64().unwrap();
//!             Outcome::ok(vec![(x - 3.0).powi(2)], Timings { benchmark: 0.001, ..Timings::default() })
//!         }).collect())
//!     }
//! }
//!
//! /// Walks the space in rank order.
//! struct InOrder(u64);
//! impl Strategy for InOrder {
//!     fn name(&self) -> &str { "in-order" }
//!     fn ask(&mut self, space: &SearchSpace, _: &History, n: usize, _: &mut Rng) -> Vec<Configuration> {
//!         let out: Vec<_> = (self.0..space.size()).take(n).map(|r| space.configuration(r)).collect();
//!         self.0 += out.len() as u64;
//!         out
//!     }
//!     fn tell(&mut self, _: &SearchSpace, _: &[Observation]) {}
//! }
//!
//! let space = SearchSpace::new(vec![Parameter::integer_range("x", 0, 9, 1)?], &[] as &[&str])?;
//! let mut runner = Quadratic(vec![Metric::new("error", Direction::Minimize)]);
//! let budget = Budget::evaluations(5);
//! let run = Tuner::new(&space, &mut runner, budget).run(&mut InOrder(0), &mut Rng::seed_from_u64(1))?;
//! assert_eq!(run.records.len(), 5);
//! assert_eq!(space.describe(&run.best().unwrap().config), "x=3");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

pub mod conformance;
mod cooperate;
mod measurement;
mod observe;
mod outcome;
pub mod pareto;
mod prior;
mod rerank;
mod runner;
mod session;
mod simulated;
mod storage;
mod strategy;
mod study;
pub mod t4;
pub mod testing;
mod tuner;

pub use cooperate::{Cooperation, Kept, Participant, Turn, cooperate};
pub use measurement::{Samples, Statistic, Summary, median_of_sorted, t_quantile_975};
pub use observe::Observe;
pub use outcome::{Direction, FailureKind, Metric, Observed, Outcome, Timings};
pub use prior::{MatchReport, MatchedPrior, Prior, PriorError, PriorMeasurement};
pub use rerank::{Finalist, Reranking, rerank};
pub use runner::Runner;
pub use session::{Asked, RecordHook, Session, SpaceRef};
pub use simulated::{SimulatedRun, simulate_workers};
pub use storage::{Claim, Recorded, Storage, StudyRecord, Worker, worker_seed};
pub use strategy::{History, Observation, Rng, Strategy};
pub use study::{
    BUDGET_KEY, DIRECTION_KEY, GOAL_KEY, JoinNote, Joined, OBJECTIVE_KEY, OBJECTIVES_KEY,
    PRIORS_KEY, PriorFact, SEED_KEY, STRATEGY_KEY, StudyFacts, UNIT_KEY,
};
pub use tuner::{Budget, Record, StopReason, Tuner, TuningRun};

/// The longest duration ktune accepts anywhere (timeouts, time budgets), in seconds: about 31
/// years, far beyond any real limit and far below what a [`std::time::Duration`] holds.
pub const MAX_SECONDS: f64 = 1e9;

/// A number of seconds from a spec or a flag as a [`std::time::Duration`]: positive, finite and
/// at most [`MAX_SECONDS`]; the error says what is wrong with `value` (the caller names where
/// it came from).
pub fn checked_seconds(value: f64) -> Result<std::time::Duration, String> {
    if !(value > 0.0 && value <= MAX_SECONDS) {
        return Err(format!(
            "must be a positive number of seconds up to {MAX_SECONDS:e} (about 31 years), not {value}"
        ));
    }
    std::time::Duration::try_from_secs_f64(value).map_err(|e| format!("{value} s: {e}"))
}

/// Seconds since the Unix epoch as UTC text, `2026-11-26T11:20:00Z` (the civil-from-days
/// conversion of the proleptic Gregorian calendar, after Howard Hinnant; a date library for
/// the few timestamps ktune prints would be more than it is worth).
pub fn utc_text(seconds: f64) -> String {
    let secs = seconds.floor() as i64;
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// Checks a name people give and read back (a study's, a device's): not empty, no control
/// characters (a newline or a terminal escape code would garble every listing that prints
/// it), at most 200 characters. The error says which, quoting the name escaped.
pub fn checked_label(text: &str) -> Result<(), String> {
    if text.trim().is_empty() {
        return Err("cannot be empty".into());
    }
    if let Some(c) = text.chars().find(|c| c.is_control()) {
        return Err(format!(
            "{text:?} contains the control character U+{:04X}, which would garble every listing \
             that prints it",
            c as u32
        ));
    }
    let n = text.chars().count();
    if n > 200 {
        return Err(format!("is {n} characters long; at most 200"));
    }
    Ok(())
}

/// What differs, for [`CoreError::Conflict`]: "minimizes its objective and this process
/// would maximize it", "measures `time` and this process would measure `GFLOP/s`".
fn conflict(fact: &str, stored: &str, given: &str) -> String {
    match fact {
        "direction" => {
            let verb = |d: &str| d.strip_suffix('e').unwrap_or(d).to_string() + "es";
            format!(
                "{} its objective and this process would {given} it",
                verb(stored)
            )
        }
        _ => format!("measures `{stored}` and this process would measure `{given}`"),
    }
}

/// Errors that end a tuning run (a runner that cannot run at all, a strategy misconfigured).
/// A configuration that fails is not an error: it is an [`Outcome::Failed`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CoreError {
    /// The runner cannot evaluate anything (missing compiler or driver, unreadable cache, ...).
    #[error("runner `{runner}`: {message}")]
    Runner {
        /// The runner's name.
        runner: String,
        /// What went wrong.
        message: String,
    },
    /// The runner evaluated the first `outcomes.len()` configurations of a batch and then
    /// could not go on (a GPU left busy by a hung kernel, ...). The tuner records those
    /// outcomes before it stops with [`CoreError::Runner`], so nothing measured is lost.
    #[error("runner `{runner}`: {message}")]
    RunnerStopped {
        /// The runner's name.
        runner: String,
        /// What went wrong.
        message: String,
        /// Outcomes of the batch's first configurations, in order.
        outcomes: Vec<Outcome>,
    },
    /// The objectives asked for do not fit the runner or the session (more objectives than
    /// the runner has metrics, a first objective other than the session's).
    #[error("objectives: {0}")]
    Objectives(String),
    /// A limit of the budget is out of range (NaN, negative, too large to be a duration).
    #[error("budget: {0}")]
    Budget(String),
    /// The time budget ran out during a batch: the outcomes of its first configurations (the
    /// last one possibly cut short, as a timeout); the rest were not started. The tuner
    /// records them and stops as for a spent budget.
    #[error("the time budget ran out")]
    OutOfTime {
        /// Outcomes of the batch's first configurations, in order.
        outcomes: Vec<Outcome>,
    },
    /// The record hook (storage) failed: the run stops so that no result goes unrecorded.
    #[error("cannot record an evaluation: {0}")]
    Record(String),
    /// The storage failed (unreachable server, locked or damaged file, ...): the run stops so
    /// that no result goes unrecorded.
    #[error(transparent)]
    Storage(Box<dyn std::error::Error + Send + Sync>),
    /// A process joined a study with another objective, direction or list of objectives than the study's.
    #[error(
        "study `{study}` {}: a study keeps its {fact}; start another with another study name or database",
        conflict(fact, stored, given)
    )]
    Conflict {
        /// The study's name.
        study: String,
        /// `objective`, `direction` or `objectives`.
        fact: &'static str,
        /// What the study holds.
        stored: String,
        /// What this process gave.
        given: String,
    },
    /// A prior cannot be read or does not fit the study (no shared parameter, the other
    /// direction, a file that changed since the study recorded it).
    #[error(transparent)]
    Prior(Box<dyn std::error::Error + Send + Sync>),
    /// A runner returned a different number of outcomes than configurations it was given.
    #[error("runner `{runner}` returned {got} outcomes for {expected} configurations")]
    OutcomeCount {
        /// The runner's name.
        runner: String,
        /// Configurations given.
        expected: usize,
        /// Outcomes returned.
        got: usize,
    },
}

#[cfg(test)]
mod text_tests {
    #[test]
    fn utc_text_follows_the_calendar() {
        for (seconds, text) in [
            (0.0, "1970-01-01T00:00:00Z"),
            (951_782_400.0, "2000-02-29T00:00:00Z"),
            (1_795_692_000.9, "2026-11-26T11:20:00Z"),
            (-1.0, "1969-12-31T23:59:59Z"),
        ] {
            assert_eq!(super::utc_text(seconds), text, "{seconds}");
        }
    }
}
