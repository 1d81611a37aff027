//! The brute-forced spaces of `ktune bench` and `ktune bench tune-strategy`: each opened
//! with its statistics, and the evaluations a run gets on it.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use ktune_bench::{Direction as BenchDirection, FrontStats, SpaceStats};
use ktune_core::Direction;
use ktune_runners::Simulation;
use rayon::prelude::*;

/// Which recorded key of the spaces is the objective, and its direction.
#[derive(clap::Args, Clone, Debug)]
pub(crate) struct Objective {
    /// The recorded key to optimise; several, comma-separated (`time,compile_time`), make
    /// each space one of several objectives: runs record every objective of each evaluation
    /// and are also scored on the Pareto front of the first two (`fronts.md`). A key may end
    /// in `:min` or `:max` to set its direction (default: rates such as GFLOP/s are
    /// maximised, everything else minimised).
    #[arg(
        long,
        default_value = "time",
        value_delimiter = ',',
        value_name = "KEY[:min|:max],..."
    )]
    pub(crate) objective: Vec<String>,
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
        Ok(self.open_with_fronts(paths)?.0)
    }

    /// [`open`](Self::open), and with two or more objectives each space's two-objective
    /// statistics (of the first two; `None` with one), computed once for the budget and the
    /// scores.
    pub(crate) fn open_with_fronts(&self, paths: &[PathBuf]) -> Result<Opened> {
        let objectives = self.objectives()?;
        if objectives.len() > 1 && self.instances {
            bail!("--instances takes one objective, not {}", objectives.len());
        }
        let sims = paths
            .par_iter()
            .map(|p| {
                let sim = Simulation::open_objectives(p, &objectives)
                    .with_context(|| format!("cannot use `{}` as a space", p.display()))?;
                for w in sim.warnings() {
                    note!("warning: {w}");
                }
                Ok(sim)
            })
            .collect::<Result<Vec<_>>>()?;
        let sims = if self.instances {
            as_instances(sims)?
        } else {
            sims
        };
        let opened: Vec<(Simulation, SpaceStats, Option<FrontStats>)> = sims
            .into_par_iter()
            .map(|sim| {
                let dir = bench_direction(sim.objective().direction);
                let stats = SpaceStats::new(sim.name(), &sim.objective_values(), dir)?;
                let front = front_of(&sim)?;
                // runs as long as the front's score needs too
                let stats = match &front {
                    Some(front) => stats.with_budget_at_least(front.n_max()),
                    None => stats,
                };
                Ok((sim, stats, front))
            })
            .collect::<Result<_>>()?;
        let several = objectives.len() > 1;
        let mut spaces = Vec::with_capacity(opened.len());
        let mut fronts = Vec::new();
        for (sim, stats, front) in opened {
            spaces.push((sim, stats));
            fronts.extend(front);
        }
        Ok((spaces, several.then_some(fronts)))
    }
}

/// The spaces opened, and with two or more objectives their fronts (in the same order).
pub(crate) type Opened = (Vec<(Simulation, SpaceStats)>, Option<Vec<FrontStats>>);

impl Objective {
    /// The objectives asked for: each key and its direction (`None`: what its name
    /// suggests); `--maximize` sets the first's.
    pub(crate) fn objectives(&self) -> Result<Vec<(&str, Option<Direction>)>> {
        let mut out: Vec<(&str, Option<Direction>)> = Vec::new();
        for text in &self.objective {
            let (key, direction) = match text.rsplit_once(':') {
                Some((key, "min")) => (key, Some(Direction::Minimize)),
                Some((key, "max")) => (key, Some(Direction::Maximize)),
                _ => (text.as_str(), None),
            };
            if key.trim().is_empty() {
                bail!(
                    "--objective: an empty key in `{}`",
                    self.objective.join(",")
                );
            }
            if out.iter().any(|(k, _)| *k == key) {
                bail!("--objective: `{key}` is given twice");
            }
            out.push((key, direction));
        }
        if self.maximize
            && let Some(first) = out.first_mut()
        {
            first.1 = Some(Direction::Maximize);
        }
        Ok(out)
    }
}

/// The Pareto-front statistics of a simulation's first two metrics (`None` with one).
fn front_of(sim: &Simulation) -> Result<Option<FrontStats>> {
    let metrics = sim.metrics();
    if metrics.len() < 2 {
        return Ok(None);
    }
    let directions = [&metrics[0], &metrics[1]].map(|m| bench_direction(m.direction));
    let points: Vec<Option<[f64; 2]>> = sim
        .metric_values()
        .into_iter()
        .map(|v| v.map(|v| [v[0], v[1]]))
        .collect();
    Ok(Some(FrontStats::new(sim.name(), &points, directions)?))
}

fn bench_direction(d: Direction) -> BenchDirection {
    match d {
        Direction::Minimize => BenchDirection::Minimize,
        Direction::Maximize => BenchDirection::Maximize,
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
            note!(
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
