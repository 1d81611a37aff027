//! The benchmarking methodology of ktune: how optimisation strategies are compared on
//! brute-forced search spaces.
//!
//! The measure is the *performance score* of the auto-tuning community: for every number of
//! evaluations `n` up to a budget `n_max`, how much of the way from random search to the optimum a
//! run's best value so far has come, averaged over `n`. 0 is as good as random search, 1 means the
//! optimum was found at once, below 0 is worse than random search.
//!
//! - [`SpaceStats`]: a space's optimum, median, the exact random-search baseline `B(n)` (expected
//!   best of `n` uniform draws without replacement, failing configurations included) and
//!   `n_max`, the smallest `n` where `B(n)` has come 95 % of the way from the median to the
//!   optimum (at most 1000).
//! - [`score_run`]: the score and MAE@220 of one run.
//! - [`Trace`], [`read_traces`], [`write_traces`]: runs as JSON Lines, shared with other tools.
//! - [`score_traces`] and [`ScoreTable`]: rows per (tool, strategy, space), means over spaces,
//!   Markdown.
//! - [`FrontStats`] and [`score_front_run`]: the same for two objectives at once, on the
//!   hypervolume of the Pareto front against the exact expected hypervolume of random search.
//! - [`plot_convergence`]: PNG and SVG convergence plots.
//!
//! The crate works on plain numbers and depends on no other ktune crate. An objective to maximise
//! (e.g. GFLOP/s) is handled by negation ([`Direction::Maximize`]). The numbers agree with the
//! Python reference scorer kt-peer (`score.py`, `baseline.py`) to about `1e-11`; see
//! `tests/golden.rs`.
//!
//! ```
//! use ktune_bench::{score_traces, Direction, SpaceStats, Trace};
//!
//! let space: Vec<Option<f64>> = (0..500)
//!     .map(|i| (i % 7 != 0).then(|| 1.0 + ((i * 37) % 101) as f64))
//!     .collect();
//! let stats = SpaceStats::new("toy", &space, Direction::Minimize)?;
//! let run = |seed, values| Trace {
//!     tool: "ktune-0.1.0".into(),
//!     strategy: "greedy".into(),
//!     space: "toy".into(),
//!     seed,
//!     values,
//!     wall_seconds: 1.0,
//!     points: Vec::new(),
//!     meta: None,
//! };
//! let traces = [run(0, vec![Some(50.0), Some(3.0), Some(1.0)]), run(1, vec![None, Some(9.0)])];
//! let table = score_traces(&traces, &[stats])?;
//! let score = table.mean_over_spaces("ktune-0.1.0", "greedy").unwrap();
//! assert!(score > 0.0 && score < 1.0);
//! println!("{}", table.to_markdown());
//! # Ok::<(), ktune_bench::BenchError>(())
//! ```
//!
//! ## References
//! - The constraint-aware evolutionary algorithm paper, section V-A, for the methodology.
//! - kt-peer (`tools/kt-peer/`): the Python reference implementation whose conventions are
//!   followed (the `1e-12 · |opt|` floor of the denominator, numpy's median, a horizon of
//!   `max(n_max, 220)` for MAE@220, `n > N` read as `N`, one run per seed).
#![deny(missing_docs)]

mod error;
mod front;
mod plot;
mod score;
mod space;
mod special;
mod table;
mod time;
mod trace;
mod workers;

pub use error::BenchError;
pub use front::{FrontScore, FrontStats, front_report, score_front_run};
pub use plot::plot_convergence;
pub use score::{RunScore, score_run};
pub use space::{Direction, MAE_CHECKPOINTS, MIN_HORIZON, N_MAX_CAP, N_MAX_FRACTION, SpaceStats};
pub use table::{ScoreRow, ScoreTable, SpaceSummary, SummaryRow, score_traces};
pub use time::{TimeModel, TimeScore, time_report, time_score_run};
pub use trace::{Trace, TraceAppender, doubts, read_finished_traces, read_traces, write_traces};
pub use workers::{label as workers_label, parse_label as parse_workers_label, workers_report};

/// Fails naming the first of `parts` that `text` lacks, and showing the text.
#[cfg(test)]
fn contains_all(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "no {part:?} in:\n{text}");
    }
}
