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
    /// Take the spaces of the same parameters as instances of one configuration (devices or
    /// problem sizes): each group becomes one space, `KERNEL_xN`, whose objective is the
    /// geometric mean over its instances (a failure on any fails), so its optimum is the one
    /// configuration with the least geometric-mean slowdown against each instance's best.
    #[arg(long)]
    pub(crate) instances: bool,
}

impl Objective {
    /// Opens each space of `paths` with this objective, and its statistics, in parallel.
    pub(crate) fn open(&self, paths: &[PathBuf]) -> Result<Vec<(Simulation, SpaceStats)>> {
        let direction = self.maximize.then_some(Direction::Maximize);
        let sims = paths
            .par_iter()
            .map(|p| {
                let sim = Simulation::open(p, Some(&self.objective), direction)
                    .with_context(|| format!("cannot use `{}` as a space", p.display()))?;
                for w in sim.warnings() {
                    eprintln!("warning: {w}");
                }
                Ok(sim)
            })
            .collect::<Result<Vec<_>>>()?;
        let sims = if self.instances {
            as_instances(sims)?
        } else {
            sims
        };
        sims.into_iter()
            .map(|sim| {
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

/// The spaces of the same parameter names, each group as one space of instances
/// ([`Simulation::instances`]), named by the longest prefix of its members' names that ends
/// before a `_` and the number of instances (`convolution_x6`); groups in the order of their
/// first space.
fn as_instances(sims: Vec<Simulation>) -> Result<Vec<Simulation>> {
    let mut groups: Vec<Vec<Simulation>> = Vec::new();
    for sim in sims {
        let names = |s: &Simulation| -> Vec<String> {
            s.space()
                .params()
                .iter()
                .map(|p| p.name().to_string())
                .collect()
        };
        match groups.iter_mut().find(|g| names(&g[0]) == names(&sim)) {
            Some(g) => g.push(sim),
            None => groups.push(vec![sim]),
        }
    }
    groups
        .into_iter()
        .map(|g| {
            if g.len() == 1 {
                return Ok(g.into_iter().next().expect("one"));
            }
            let first = g[0].name();
            let common = g.iter().fold(first.len(), |n, s| {
                first
                    .bytes()
                    .zip(s.name().bytes())
                    .take(n)
                    .take_while(|(a, b)| a == b)
                    .count()
            });
            let stem = first[..common]
                .rsplit_once('_')
                .map_or(&first[..common], |(a, _)| a);
            let stem = if stem.is_empty() { "instances" } else { stem };
            let name = format!("{stem}_x{}", g.len());
            eprintln!(
                "{name}: one configuration for {}",
                g.iter()
                    .map(Simulation::name)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            Simulation::instances(&name, &g).with_context(|| format!("cannot make `{name}`"))
        })
        .collect()
}

/// The evaluations a run gets on a space: `budget` if given, else the space's own
/// (n_max, at least 220), never more than the space holds.
pub(crate) fn evaluations(budget: Option<usize>, stats: &SpaceStats) -> usize {
    budget.unwrap_or(stats.budget()).min(stats.n_total())
}
