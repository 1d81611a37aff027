//! Simulation mode: evaluate configurations by looking them up in a brute-forced Kernel Tuner
//! cache file.
//!
//! The search space is exactly the configurations recorded in the cache (they are the ones
//! that satisfy the kernel's known constraints), over the parameter domains of `tune_params`.
//! Each evaluation returns the recorded objective (`time` by default, or any other recorded
//! key such as `GFLOP/s`), or a failure for non-numeric entries (`CompilationFailedConfig`,
//! `RuntimeFailedConfig`, ...), and costs its recorded compile, benchmark, verification and
//! framework time on the tuning clock.

use std::path::Path;

use ktune_core::{CoreError, Direction, FailureKind, Metric, Outcome, Runner, Timings};
use ktune_space::spec::{CacheData, read_cache_file};
use ktune_space::{Configuration, SearchSpace, SpaceError};
use serde_json::Value as Json;

/// Errors opening a simulation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimulationError {
    /// The cache file cannot be read or is not a cache file.
    #[error(transparent)]
    Cache(#[from] SpaceError),
    /// The cache records no configuration.
    #[error("`{file}` records no configurations")]
    Empty {
        /// The file.
        file: String,
    },
    /// No record has the requested objective.
    #[error("`{file}` has no objective `{objective}`; its records have: {available}")]
    NoObjective {
        /// The file.
        file: String,
        /// The key asked for.
        objective: String,
        /// The numeric keys the records do have.
        available: String,
    },
    /// Instances of one configuration must share their parameters.
    #[error(
        "`{first}` and `{other}` have other parameters: they cannot be instances of one configuration"
    )]
    Instances {
        /// The first instance.
        first: String,
        /// The other.
        other: String,
    },
    /// Every configuration failed: there is nothing to optimise.
    #[error("every configuration in `{file}` failed; there is no valid `{objective}` value")]
    NoValidValue {
        /// The file.
        file: String,
        /// The objective.
        objective: String,
    },
}

/// A brute-forced space, ready to replay.
#[derive(Debug)]
pub struct Simulation {
    name: String,
    space: SearchSpace,
    /// The outcome of every configuration, by rank.
    outcomes: Vec<Outcome>,
    metrics: Vec<Metric>,
    warnings: Vec<String>,
    device: Option<String>,
}

impl Simulation {
    /// Opens a cache file (`.json` or `.json.gz`; a file cut off while being written is
    /// repaired with a warning). `objective` defaults to `time`; `direction` defaults to what
    /// the objective's name suggests (rates such as `GFLOP/s` are maximised).
    pub fn open(
        path: &Path,
        objective: Option<&str>,
        direction: Option<Direction>,
    ) -> Result<Simulation, SimulationError> {
        let objective = objective.unwrap_or("time");
        Simulation::open_objectives(path, &[(objective, direction)])
    }

    /// Opens a cache file for a study of several objectives: each a recorded key and its
    /// direction (`None`: what its name suggests), the first being the objective that
    /// single-objective statistics use. A configuration that lacks a finite value of any of
    /// them counts as failed.
    pub fn open_objectives(
        path: &Path,
        objectives: &[(&str, Option<Direction>)],
    ) -> Result<Simulation, SimulationError> {
        let data = read_cache_file(path)?;
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .map(|n| {
                n.trim_end_matches(".gz")
                    .trim_end_matches(".json")
                    .to_string()
            })
            .unwrap_or_default();
        Simulation::from_cache_objectives(data, &name, &path.display().to_string(), objectives)
    }

    /// Builds a simulation from cache contents already read; `name` names the space in
    /// traces (the file stem).
    pub fn from_cache(
        data: CacheData,
        name: &str,
        file: &str,
        objective: Option<&str>,
        direction: Option<Direction>,
    ) -> Result<Simulation, SimulationError> {
        let objective = objective.unwrap_or("time");
        Simulation::from_cache_objectives(data, name, file, &[(objective, direction)])
    }

    /// [`from_cache`](Self::from_cache) for several objectives (see
    /// [`open_objectives`](Self::open_objectives)).
    pub fn from_cache_objectives(
        data: CacheData,
        name: &str,
        file: &str,
        objectives: &[(&str, Option<Direction>)],
    ) -> Result<Simulation, SimulationError> {
        if objectives.is_empty() || data.configurations.is_empty() {
            return Err(SimulationError::Empty {
                file: file.to_string(),
            });
        }
        for &(objective, _) in objectives {
            Simulation::has_key(&data, file, objective)?;
        }
        let space = SearchSpace::from_configurations(data.parameters, &data.configurations)?;
        let names: Vec<&str> = objectives.iter().map(|(n, _)| *n).collect();
        let mut outcomes: Vec<Option<Outcome>> = vec![None; space.size() as usize];
        for (config, record) in data.configurations.iter().zip(&data.records) {
            if let Some(rank) = space.rank(config) {
                outcomes[rank as usize].get_or_insert_with(|| outcome_of_all(record, &names));
            }
        }
        let outcomes: Vec<Outcome> = outcomes
            .into_iter()
            .map(|o| o.unwrap_or_else(unreachable_outcome))
            .collect();
        if outcomes.iter().all(|o| o.objective().is_none()) {
            return Err(SimulationError::NoValidValue {
                file: file.to_string(),
                objective: names.join(", "),
            });
        }
        let metrics = objectives
            .iter()
            .map(|&(n, d)| Metric::new(n, d.unwrap_or_else(|| Direction::guess(n))))
            .collect();
        Ok(Simulation {
            name: name.to_string(),
            space,
            outcomes,
            metrics,
            warnings: data.warnings,
            device: data.device_name,
        })
    }

    /// Fails naming the numeric keys the records have when none records `objective`.
    fn has_key(data: &CacheData, file: &str, objective: &str) -> Result<(), SimulationError> {
        let objective = objective.to_string();
        if !data.records.iter().any(|r| r.contains_key(&objective)) {
            let mut keys: Vec<&str> = data
                .records
                .iter()
                .flat_map(|r| {
                    r.iter()
                        .filter(|(_, v)| v.is_number())
                        .map(|(k, _)| k.as_str())
                })
                .filter(|k| data.parameters.iter().all(|p| p.name() != *k))
                .collect();
            keys.sort_unstable();
            keys.dedup();
            return Err(SimulationError::NoObjective {
                file: file.to_string(),
                objective,
                available: keys.join(", "),
            });
        }
        Ok(())
    }

    /// One configuration for several instances (devices or problem sizes), each a brute-forced
    /// space of the same parameters: a configuration's objective is the geometric mean of its
    /// values on every instance, and it fails where it fails (or was not recorded) on any one,
    /// the reason naming the instance. The geometric mean of raw values orders configurations
    /// exactly as the geometric mean of each instance's value relative to any fixed reference
    /// (that instance's optimum, its default) does, so its optimum is the configuration with
    /// the least geometric-mean slowdown against every instance's own best. Its space is the
    /// first instance's; a configuration's compile and run times are the instances' summed.
    pub fn instances(name: &str, parts: &[Simulation]) -> Result<Simulation, SimulationError> {
        let first = parts.first().ok_or_else(|| SimulationError::Empty {
            file: name.to_string(),
        })?;
        let names: Vec<&str> = first.space.params().iter().map(|p| p.name()).collect();
        for p in &parts[1..] {
            let theirs: Vec<&str> = p.space.params().iter().map(|q| q.name()).collect();
            if theirs != names {
                return Err(SimulationError::Instances {
                    first: first.name.clone(),
                    other: p.name.clone(),
                });
            }
        }
        let direction = first.objective().direction;
        let mut outcomes = Vec::with_capacity(first.outcomes.len());
        let not_recorded = Outcome::failed(
            FailureKind::Runtime,
            "not recorded there",
            Timings::default(),
        );
        for rank in 0..first.space.size() {
            let values: Vec<ktune_space::Value> = first
                .space
                .values(&first.space.configuration(rank))
                .into_iter()
                .cloned()
                .collect();
            let on_each: Vec<(&str, &Outcome)> = parts
                .iter()
                .map(|p| {
                    let o = p
                        .space
                        .configuration_of(&values)
                        .and_then(|c| p.outcome(&c));
                    (p.name.as_str(), o.unwrap_or(&not_recorded))
                })
                .collect();
            outcomes.push(match crate::instances::combine(on_each) {
                Ok((mean, _, timings)) => Outcome::ok(vec![mean], timings),
                Err(failed) => failed,
            });
        }
        if outcomes.iter().all(|o| o.objective().is_none()) {
            return Err(SimulationError::NoValidValue {
                file: name.to_string(),
                objective: first.objective().name.clone(),
            });
        }
        Ok(Simulation {
            name: name.to_string(),
            space: first.space.clone(),
            outcomes,
            metrics: vec![Metric::new(first.objective().name.clone(), direction)],
            warnings: Vec::new(),
            device: None,
        })
    }

    /// The space's name (the cache file's stem).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The device the cache was recorded on, when it says.
    pub fn device(&self) -> Option<&str> {
        self.device.as_deref()
    }

    /// The search space: exactly the recorded configurations.
    pub fn space(&self) -> &SearchSpace {
        &self.space
    }

    /// The objective.
    pub fn objective(&self) -> &Metric {
        &self.metrics[0]
    }

    /// Every metric the simulation replays: the objectives it was opened with, in order.
    pub fn metrics(&self) -> &[Metric] {
        &self.metrics
    }

    /// Every configuration's values of all [`metrics`](Self::metrics), by rank (`None` where
    /// it failed).
    pub fn metric_values(&self) -> Vec<Option<Vec<f64>>> {
        self.outcomes
            .iter()
            .map(|o| o.values().map(<[f64]>::to_vec))
            .collect()
    }

    /// The objective value of every configuration, by rank (`None` where it failed), in the
    /// objective's own units.
    pub fn objective_values(&self) -> Vec<Option<f64>> {
        self.outcomes.iter().map(Outcome::objective).collect()
    }

    /// The recorded outcome of `config`.
    pub fn outcome(&self, config: &[u32]) -> Option<&Outcome> {
        self.space.rank(config).map(|r| &self.outcomes[r as usize])
    }

    /// Warnings from reading the cache (repairs, skipped records).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Every recorded configuration and its objective, as a prior for another study (of the
    /// same code on another device or problem size), named by this simulation.
    pub fn prior(&self) -> ktune_core::Prior {
        let params = self.space.params().iter().map(|p| p.name().to_string());
        let items = self
            .space
            .params()
            .iter()
            .filter_map(|p| match p.kind() {
                ktune_space::ParamKind::Permutation { items } => {
                    Some((p.name().to_string(), items.clone()))
                }
                _ => None,
            })
            .collect();
        let mut prior = ktune_core::Prior::new(
            self.name.clone(),
            params.collect(),
            self.objective().direction,
        )
        .with_items(items);
        for (r, outcome) in self.outcomes.iter().enumerate() {
            let config = self.space.configuration(r as u64);
            let values = self.space.values(&config).into_iter().cloned().collect();
            prior.push(values, outcome.objective());
        }
        prior
    }

    /// A runner that replays this simulation (cheap; many may replay one simulation at once).
    pub fn runner(&self) -> SimulationRunner<'_> {
        SimulationRunner { simulation: self }
    }
}

/// Every rank gets a record by construction (the space is built from the records).
fn unreachable_outcome() -> Outcome {
    Outcome::failed(
        FailureKind::Runtime,
        "no record for this configuration",
        Timings::default(),
    )
}

/// The outcome a cache record describes. Kernel Tuner records times in milliseconds.
pub fn outcome_of(record: &serde_json::Map<String, Json>, objective: &str) -> Outcome {
    let ms = |key: &str| record.get(key).and_then(Json::as_f64).unwrap_or(0.0) / 1000.0;
    let timings = Timings {
        compile: ms("compile_time"),
        benchmark: ms("benchmark_time"),
        verification: ms("verification_time"),
        framework: ms("framework_time"),
    };
    // Kernel Tuner 1.x marks a failure with `__error__` and records no objective.
    let value = match record.get("__error__") {
        Some(e @ Json::String(_)) => Some(e),
        _ => record.get(objective),
    };
    match value {
        Some(Json::Number(n)) => match n.as_f64().filter(|v| v.is_finite()) {
            Some(v) => Outcome::ok(vec![v], timings),
            None => Outcome::failed(
                FailureKind::Runtime,
                format!("`{objective}` is not finite"),
                timings,
            ),
        },
        Some(Json::String(s)) => {
            let kind = match s.as_str() {
                "CompilationFailedConfig" => FailureKind::Compile,
                "InvalidConfig" => FailureKind::Invalid,
                _ => FailureKind::Runtime,
            };
            Outcome::failed(kind, s.clone(), timings)
        }
        Some(other) => Outcome::failed(
            FailureKind::Runtime,
            format!("`{objective}` is {other}"),
            timings,
        ),
        None => Outcome::failed(
            FailureKind::Runtime,
            format!("no `{objective}` recorded"),
            timings,
        ),
    }
}

/// The outcome a cache record describes for several metrics: [`outcome_of`] for the first,
/// then each further one's value; a record without a finite value of one fails.
fn outcome_of_all(record: &serde_json::Map<String, Json>, names: &[&str]) -> Outcome {
    let mut outcome = outcome_of(record, names[0]);
    if let Outcome::Ok {
        values, timings, ..
    } = &mut outcome
    {
        for name in &names[1..] {
            match record
                .get(*name)
                .and_then(Json::as_f64)
                .filter(|v| v.is_finite())
            {
                Some(v) => values.push(v),
                None => {
                    return Outcome::failed(
                        FailureKind::Runtime,
                        format!("no finite `{name}` recorded"),
                        *timings,
                    );
                }
            }
        }
    }
    outcome
}

/// Replays a [`Simulation`].
#[derive(Clone, Copy, Debug)]
pub struct SimulationRunner<'a> {
    simulation: &'a Simulation,
}

impl Runner for SimulationRunner<'_> {
    fn name(&self) -> &str {
        "simulate"
    }

    fn metrics(&self) -> &[Metric] {
        &self.simulation.metrics
    }

    fn evaluate(
        &mut self,
        _space: &SearchSpace,
        configs: &[Configuration],
    ) -> Result<Vec<Outcome>, CoreError> {
        Ok(configs
            .iter()
            .map(|c| match self.simulation.outcome(c) {
                Some(o) => o.clone(),
                None => Outcome::failed(
                    FailureKind::Invalid,
                    "not a configuration of the cache",
                    Timings::default(),
                ),
            })
            .collect())
    }
}

#[cfg(test)]
mod tests;
