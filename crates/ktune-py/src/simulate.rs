//! Notebook helpers: `ktune.simulate` replays a brute-forced space to compare strategies,
//! `ktune.study_summaries` lists the studies of a storage.

use ktune_core::{Budget, Direction, Rng};
use ktune_store::Location;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rand::SeedableRng;

use crate::KtuneError;
use crate::convert::{Whole, core_error, load_priors, parse_direction, prior_names, strategy_of};

/// Replays a brute-forced space (a Kernel Tuner cache file, `.json` or `.json.gz`): runs
/// `strategy` (with `strategy_options`) once per seed `0..seeds` with `budget` evaluations
/// (default: the score's, at least 220) and returns per run the objective values in
/// evaluation order (`None` where a configuration failed), the simulated seconds, and the
/// performance score (0: random search, 1: the optimum at once), with the space's summary.
/// `priors` (paths of ktune studies, Kernel Tuner caches or T4 files, or storage URLs) are
/// told to the strategy of every run, as `ktune bench --transfer` does.
#[pyfunction]
#[pyo3(signature = (cache_file, strategy="auto", strategy_options=None, *, seeds=Whole::of(10), budget=None, objective="time", direction=None, priors=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn simulate<'py>(
    py: Python<'py>,
    cache_file: std::path::PathBuf,
    strategy: &str,
    strategy_options: Option<&Bound<'py, PyDict>>,
    seeds: Whole,
    budget: Option<Whole>,
    objective: &str,
    direction: Option<&str>,
    priors: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let priors = load_priors(&prior_names(priors)?, objective)?;
    let seeds = seeds.get("seeds")?;
    if seeds > 100_000 {
        return Err(PyValueError::new_err(format!(
            "seeds={seeds} runs are too many for one call (at most 100000)"
        )));
    }
    let budget = budget.map(|b| b.count("budget")).transpose()?;
    if budget == Some(0) {
        return Err(PyValueError::new_err(
            "budget=0 evaluates nothing: give at least 1 (or None: the space's own budget)",
        ));
    }
    let direction = direction.map(parse_direction).transpose()?;
    let sim =
        ktune_runners::Simulation::open(&cache_file, Some(objective), direction).map_err(|e| {
            // Most of its errors name the file; those about a parameter do not.
            let (message, file) = (e.to_string(), cache_file.display().to_string());
            PyValueError::new_err(if message.contains(&file) {
                message
            } else {
                format!("{file}: {message}")
            })
        })?;
    let bench_direction = match sim.objective().direction {
        Direction::Minimize => ktune_bench::Direction::Minimize,
        Direction::Maximize => ktune_bench::Direction::Maximize,
    };
    let stats = ktune_bench::SpaceStats::new(sim.name(), &sim.objective_values(), bench_direction)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let budget = budget.unwrap_or(stats.budget()).min(stats.n_total());
    // Checked once, before any run.
    let strategy = strategy_of(strategy, strategy_options)?;
    let matched = priors
        .iter()
        .map(|p| p.prior.match_onto(sim.space(), sim.objective().direction))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let runs = PyList::empty(py);
    for seed in 0..seeds {
        let mut s = strategy.build();
        let mut runner = sim.runner();
        let run = py
            .detach(|| {
                ktune_core::Tuner::new(sim.space(), &mut runner, Budget::evaluations(budget))
                    .priors(&matched)
                    .run(s.as_mut(), &mut Rng::seed_from_u64(seed))
            })
            .map_err(core_error)?;
        let values = run.objective_values();
        let score = ktune_bench::score_run(&stats, &values);
        let d = PyDict::new(py);
        d.set_item("seed", seed)?;
        d.set_item("values", values)?;
        d.set_item("simulated_seconds", run.clock)?;
        d.set_item("score", score.score)?;
        d.set_item("found_optimum_at", score.found_optimum_at)?;
        runs.append(d)?;
        py.check_signals()?;
    }
    let out = PyDict::new(py);
    out.set_item("space", sim.name())?;
    out.set_item("configurations", stats.n_total())?;
    out.set_item("valid", stats.n_valid())?;
    out.set_item("optimum", stats.optimum())?;
    out.set_item("median", stats.median())?;
    out.set_item("budget", budget)?;
    out.set_item(
        "priors",
        priors
            .iter()
            .map(|p| p.fact.source.clone())
            .collect::<Vec<_>>(),
    )?;
    out.set_item("runs", runs)?;
    Ok(out)
}

/// The studies of a storage (`sqlite:///path.db` or `postgresql://...`), oldest first: per
/// study its name, evaluations, failures, best objective value (in its direction), direction,
/// budget, workers and when it was made (seconds since the Unix epoch), as dicts.
#[pyfunction]
pub(crate) fn study_summaries<'py>(py: Python<'py>, storage: &str) -> PyResult<Bound<'py, PyList>> {
    let location = Location::parse(storage).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let studies = py
        .detach(|| location.studies())
        .map_err(|e| KtuneError::new_err(e.to_string()))?;
    let out = PyList::empty(py);
    for s in studies {
        let d = PyDict::new(py);
        d.set_item("name", s.name)?;
        d.set_item("evaluations", s.evaluations)?;
        d.set_item("failed", s.failed)?;
        d.set_item("best", s.best)?;
        d.set_item("direction", s.direction)?;
        d.set_item("budget", s.budget)?;
        d.set_item("workers", s.workers)?;
        d.set_item("created", s.created)?;
        out.append(d)?;
    }
    Ok(out)
}
