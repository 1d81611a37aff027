//! `ktune report`: one self-contained HTML file that shows what the tuner did in a study.
//!
//! The page has no script and loads nothing: styles are inline, figures are inline SVG, and
//! each mark carries a `<title>` as its tooltip, so the file opens offline, prints, and can be
//! mailed. It shows, in order:
//! - a summary (evaluations, failures, the best and the default configuration's values);
//! - convergence: the best value so far against evaluations, with the default's value and the
//!   budget, and against each worker's wall-clock time;
//! - every measurement against evaluations, failures as marks by kind; beyond
//!   [`Options::max_points`] the successful ones are decimated (the lowest and highest of each
//!   interval of evaluations, and every new best: the shape is kept), and the caption says
//!   how many are drawn;
//! - in a study of several objectives, the Pareto front: every successful measurement of the
//!   first objective against the second, the front marked, and a table of the front with
//!   every objective;
//! - failures by kind, with the most common messages and an example configuration each;
//! - parameter importance and marginal effects ([`importance`]);
//! - the best configurations: parallel coordinates and a table with their statistics, and the
//!   stored re-ranking where there is one;
//! - the study's facts (its metadata as stored, its workers).
//!
//! The front ends gather a [`Study`] (from SQLite, PostgreSQL, or a cache file) and call
//! [`render`].

mod figures;
pub mod importance;
mod page;
pub mod svg;
#[cfg(test)]
mod tests;

use ktune_store::{Row, WorkerRow};
use serde_json::Value as Json;

pub use page::{fragment, render};

/// A study as the report reads it.
#[derive(Clone, Debug, Default)]
pub struct Study {
    /// The study's name.
    pub name: String,
    /// Where it was read from, as shown (passwords left out).
    pub source: String,
    /// When it was made (seconds since the epoch).
    pub created: Option<f64>,
    /// Its metadata by key (objective, direction, unit, strategy, seed, budget, priors,
    /// spec, re-ranking, ...).
    pub meta: Vec<(String, String)>,
    /// Its workers.
    pub workers: Vec<WorkerRow>,
    /// Every evaluation, in order.
    pub rows: Vec<Row>,
    /// The default configuration's values, where the spec could be read.
    pub default: Option<Vec<(String, Json)>>,
    /// What the front end could not find out, shown in the facts (e.g. why the default is
    /// unknown).
    pub notes: Vec<String>,
}

impl Study {
    /// The metadata under `key`.
    pub fn meta(&self, key: &str) -> Option<&str> {
        self.meta
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the objective is maximised (as stored; a name that suggests it otherwise).
    pub fn maximize(&self) -> bool {
        match self.meta(ktune_core::DIRECTION_KEY) {
            Some(d) => d == "maximize",
            None => {
                ktune_core::Direction::guess(self.objective()) == ktune_core::Direction::Maximize
            }
        }
    }

    /// The objective's name.
    pub fn objective(&self) -> &str {
        self.meta(ktune_core::OBJECTIVE_KEY).unwrap_or("objective")
    }
}

/// How the report is drawn.
#[derive(Clone, Debug)]
pub struct Options {
    /// Most successful measurements drawn one by one in the measurements figure.
    pub max_points: usize,
    /// Configurations in the table and the parallel coordinates of the best.
    pub top: usize,
    /// What made the report, shown at its foot (`ktune 0.1.0`).
    pub generator: String,
    /// When it was made, shown at its foot.
    pub generated: String,
    /// A script of the page's own origin that keeps it current (the dashboard's); without
    /// one the page has no script and may load nothing.
    pub live_script: Option<Live>,
}

/// Where a live page (the dashboard's) finds its script and what it polls.
#[derive(Clone, Debug)]
pub struct Live {
    /// The script's URL.
    pub script: String,
    /// The URL of the study's state (JSON).
    pub state: String,
    /// The URL of the page itself, fetched again when the study changed.
    pub body: String,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_points: 4000,
            top: 20,
            generator: format!("ktune-report {}", env!("CARGO_PKG_VERSION")),
            generated: String::new(),
            live_script: None,
        }
    }
}

/// Why no report could be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The study holds no evaluation.
    #[error("study `{study}` has no evaluations yet: there is nothing to report")]
    Empty {
        /// The study's name.
        study: String,
    },
}
