//! The brute-forced spaces of `ktune bench` and `ktune bench tune-strategy`: each opened
//! with its statistics, and the evaluations a run gets on it.

use std::path::PathBuf;

use anyhow::{Context, Result};
use ktune_bench::{Direction as BenchDirection, SpaceStats};
use ktune_core::Direction;
use ktune_runners::Simulation;
use rayon::prelude::*;

/// Which recorded key of the spaces is the objective, and its direction.
#[derive(clap::Args, Clone, Debug)]
pub(crate) struct Objective {
    /// The recorded key to optimise.
    #[arg(long, default_value = "time")]
    pub(crate) objective: String,
    /// Maximise the objective instead of minimising it (default: rates such as GFLOP/s are
    /// maximised, everything else minimised).
    #[arg(long)]
    pub(crate) maximize: bool,
}

impl Objective {
    /// Opens each space of `paths` with this objective, and its statistics, in parallel.
    pub(crate) fn open(&self, paths: &[PathBuf]) -> Result<Vec<(Simulation, SpaceStats)>> {
        let direction = self.maximize.then_some(Direction::Maximize);
        paths
            .par_iter()
            .map(|p| {
                let sim = Simulation::open(p, Some(&self.objective), direction)
                    .with_context(|| format!("cannot use `{}` as a space", p.display()))?;
                for w in sim.warnings() {
                    eprintln!("warning: {w}");
                }
                let dir = match sim.objective().direction {
                    Direction::Minimize => BenchDirection::Minimize,
                    Direction::Maximize => BenchDirection::Maximize,
                };
                let stats = SpaceStats::new(sim.name(), &sim.objective_values(), dir)?;
                Ok((sim, stats))
            })
            .collect()
    }
}

/// The evaluations a run gets on a space: `budget` if given, else the space's own
/// (n_max, at least 220), never more than the space holds.
pub(crate) fn evaluations(budget: Option<usize>, stats: &SpaceStats) -> usize {
    budget.unwrap_or(stats.budget()).min(stats.n_total())
}
