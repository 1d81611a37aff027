//! `ktune.Study`: an ask/tell study on the one study path of `ktune-problem`. Without a
//! storage it lives in memory; with one it is opened and joined as every other front end
//! joins a study (the same facts and join rule as `ktune tune`), and each configuration is
//! claimed before it is handed out.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

use ktune_core::{
    Asked, Budget, Direction, FailureKind, Outcome, Rng, Session, SpaceRef, StopReason, StudyFacts,
    Timings, Turn,
};
use ktune_problem::{OpenStudy, Opening, Participation, Plan, RunArgs, StudyPlace};
use ktune_space::{Configuration, SearchSpace};
use ktune_store::{Fingerprint, Location};
use ktune_strategies::CheckedStrategy;
use pyo3::exceptions::{
    PyKeyboardInterrupt, PyRuntimeError, PyRuntimeWarning, PySystemExit, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rand::SeedableRng;

use crate::convert::{
    Whole, config_dict, config_of, core_error, failure_kind, load_priors, parse_direction,
    prior_names, short_repr, strategy_of, time_limit_of,
};
use crate::space::{SearchSpacePy, build_space};

/// An ask/tell tuning study: a strategy proposes configurations (`ask`), you measure them
/// and report (`tell`), or `optimize(fn)` does both. With `storage="sqlite:///path.db"` (or
/// `"postgresql://..."`) every result is committed there before the strategy hears of it, a
/// study opened again on it resumes where it stopped, and any number of processes (and
/// `ktune tune --storage` workers of the same problem) share it: each configuration is
/// claimed before it is handed out, so none is measured twice and the budget holds for all.
/// A study's objective and direction are its first writer's: another is refused; another
/// budget or strategy is a warning.
///
/// A study may be used from several threads (a thread pool measuring what one thread asks
/// for, or each thread asking and telling): its calls take turns. `optimize` does not hold
/// the study while the objective runs, so the objective may read `results` or `best`, and
/// other threads may ask and tell meanwhile.
#[pyclass(module = "ktune", subclass)]
pub(crate) struct Study {
    space: Arc<SearchSpace>,
    objective: String,
    /// A study of several objectives: all of them, in order (empty: one objective).
    objectives: Vec<ktune_core::Metric>,
    /// The goal it seeks one configuration by (its own, or the stored study's).
    goal: Option<String>,
    /// The priors its strategy was told, and how much of each maps onto the space.
    priors: Vec<(ktune_core::PriorFact, ktune_core::MatchReport)>,
    /// What calls change, one call at a time.
    state: Mutex<State>,
}

/// The part of a study that its calls change.
struct State {
    backing: Backing,
    /// Asked and not yet handed out.
    queue: Vec<Configuration>,
    /// Why the study is over (`None` while it goes on).
    stopped: Option<StopReason>,
    /// Why the last `optimize` returned on its own limits while the study goes on.
    paused: Option<StopReason>,
    /// Configurations this object recorded (told or measured by `optimize`).
    told: HashSet<Configuration>,
}

/// Where a study keeps its results.
enum Backing {
    /// In memory only.
    Memory(Box<Session<'static>>),
    /// In a storage, shared with any other process that opens the same study.
    Stored(Box<OpenStudy<'static>>),
}

/// What a study is made of, whichever constructor resolved it.
struct Setup {
    space: Arc<SearchSpace>,
    strategy: CheckedStrategy,
    budget: Budget,
    facts: StudyFacts,
    /// The priors `facts.priors` name, read.
    priors: Vec<ktune_core::Prior>,
    /// Where it is stored, for which problem, and how this process takes part.
    stored: Option<(StudyPlace, Fingerprint, Participation)>,
}

impl Drop for State {
    fn drop(&mut self) {
        // Claims on configurations handed out and never told go back at once rather than
        // when their lease expires.
        if let Backing::Stored(study) = &mut self.backing {
            let _ = study.storage.release(&study.worker.id);
        }
    }
}

#[pymethods]
impl Study {
    #[new]
    #[pyo3(signature = (
        tune_params, restrictions=None, *, strategy="auto", strategy_options=None,
        objective="time", direction="minimize", storage=None, study_name="default",
        max_evals=None, time_limit=None, seed=Whole::ZERO, device=None, allow_mixed_hardware=false,
        lease=600.0, priors=None, objectives=None, goal=None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        tune_params: &Bound<'_, PyAny>,
        restrictions: Option<&Bound<'_, PyAny>>,
        strategy: &str,
        strategy_options: Option<&Bound<'_, PyDict>>,
        objective: &str,
        direction: &str,
        storage: Option<&str>,
        study_name: &str,
        max_evals: Option<Whole>,
        time_limit: Option<f64>,
        seed: Whole,
        device: Option<String>,
        allow_mixed_hardware: bool,
        lease: f64,
        priors: Option<&Bound<'_, PyAny>>,
        objectives: Option<&Bound<'_, PyAny>>,
        goal: Option<String>,
    ) -> PyResult<Self> {
        let seed = seed.get("seed")?;
        let several = objectives_of(objectives)?;
        if let Some(text) = &goal {
            if several.len() < 2 {
                return Err(PyValueError::new_err(format!(
                    "goal `{text}` picks among several objectives: give objectives= too"
                )));
            }
            ktune_core::pareto::Goal::parse(text, &several)
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
        }
        let (objective, direction) = match several.first() {
            None => (objective.to_string(), parse_direction(direction)?),
            Some(_) if objective != "time" || direction != "minimize" => {
                return Err(PyValueError::new_err(
                    "give either objective= (with direction=) or objectives=, not both",
                ));
            }
            Some(first) => (first.name.clone(), first.direction),
        };
        let objective = objective.as_str();
        if objective.trim().is_empty() {
            return Err(PyValueError::new_err(
                "objective names what is measured (e.g. \"time\"); it cannot be empty",
            ));
        }
        let several = if several.len() > 1 {
            several
        } else {
            Vec::new()
        };
        let space = space_of(tune_params, restrictions)?;
        let loaded = load_priors(&prior_names(priors)?, objective)?;
        let strategy = strategy_of(strategy, strategy_options)?;
        let budget = Budget {
            max_evaluations: max_evals.map(|m| m.count("max_evals")).transpose()?,
            max_seconds: time_limit_of(time_limit)?,
            ..Budget::default()
        };
        let stored = match storage {
            None => None,
            Some(url) => {
                let location =
                    Location::parse(url).map_err(|e| PyValueError::new_err(e.to_string()))?;
                // The fingerprint of earlier versions, so that their studies open again.
                let runner = if several.is_empty() {
                    format!(
                        r#"{{"runner":"python","direction":"{}"}}"#,
                        direction.name()
                    )
                } else {
                    serde_json::json!({"runner": "python", "direction": direction.name(), "objectives": several})
                        .to_string()
                };
                ktune_core::checked_label(study_name)
                    .map_err(|m| PyValueError::new_err(format!("study_name {m}")))?;
                let place = StudyPlace::Shared {
                    location,
                    study: study_name.to_string(),
                };
                let fingerprint = Fingerprint::new(&space, &runner, objective);
                Some((
                    place,
                    fingerprint,
                    participation(device, allow_mixed_hardware, lease)?,
                ))
            }
        };
        let facts = StudyFacts {
            objective: objective.to_string(),
            direction,
            unit: None,
            budget: budget.max_evaluations,
            strategy: strategy.canonical().to_string(),
            seed,
            priors: loaded.iter().map(|p| p.fact.clone()).collect(),
            objectives: several,
            goal,
        };
        let setup = Setup {
            space,
            strategy,
            budget,
            facts,
            priors: loaded.into_iter().map(|p| p.prior).collect(),
            stored,
        };
        Study::open(py, setup, seed, None)
    }

    /// A study of the problem a `ktune.toml` describes: its search space, `[strategy]`,
    /// `[budget]`, `[storage]` and the objective (with its direction) of its `[runner]`,
    /// read and checked as `ktune tune` reads them. Keyword arguments override the file.
    /// With a storage, the study is the one `ktune tune` records into (the same study name
    /// and problem fingerprint), so it resumes or extends a run of the command line; a
    /// `direction` other than that study's is refused.
    #[staticmethod]
    #[pyo3(signature = (
        path, *, strategy=None, strategy_options=None, storage=None, study_name=None,
        max_evals=None, time_limit=None, seed=Whole::ZERO, device=None, allow_mixed_hardware=false,
        lease=600.0, direction=None, priors=None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn from_spec(
        py: Python<'_>,
        path: std::path::PathBuf,
        strategy: Option<&str>,
        strategy_options: Option<&Bound<'_, PyDict>>,
        storage: Option<&str>,
        study_name: Option<String>,
        max_evals: Option<Whole>,
        time_limit: Option<f64>,
        seed: Whole,
        device: Option<String>,
        allow_mixed_hardware: bool,
        lease: f64,
        direction: Option<&str>,
        priors: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<Study>> {
        let seed = seed.get("seed")?;
        let problem = ktune_problem::ProblemSpec::from_path(&path)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let args = RunArgs {
            strategy: match (strategy, strategy_options) {
                (Some(name), options) => Some(strategy_of(name, options)?),
                (None, Some(options)) => Some(strategy_of("auto", Some(options))?),
                (None, None) => None,
            },
            max_evaluations: max_evals.map(|m| m.count("max_evals")).transpose()?,
            max_seconds: time_limit_of(time_limit)?,
            seed,
            storage: storage.map(str::to_string),
            study: study_name,
            lease,
            device,
            allow_mixed_hardware,
            measure_default: false,
            database_beside_spec: false,
            priors: priors.map(|p| prior_names(Some(p))).transpose()?,
            ..RunArgs::default()
        };
        let plan = Plan::resolve(&problem, args, &ktune_problem::PYTHON)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let space = Arc::new(
            problem
                .space
                .build()
                .map_err(|e| PyValueError::new_err(e.to_string()))?,
        );
        let mut facts = plan.facts(&problem);
        if let Some(d) = direction {
            facts.direction = parse_direction(d)?;
        }
        let stored = plan.place.clone().map(|place| {
            let fingerprint = problem.fingerprint(&space, &facts.objective);
            let who = Participation {
                device: plan.device.clone(),
                allow_mixed_hardware: plan.allow_mixed_hardware,
                lease: plan.lease,
                batch: 1,
            };
            (place, fingerprint, who)
        });
        let setup = Setup {
            space,
            strategy: plan.strategy.clone(),
            budget: plan.budget.clone(),
            facts,
            priors: plan.priors.iter().map(|p| p.prior.clone()).collect(),
            stored,
        };
        Py::new(py, Study::open(py, setup, plan.seed, Some(&problem))?)
    }

    /// Queues `config` to be measured before anything the strategy proposes (Optuna's
    /// `enqueue_trial`): a default, or a configuration you expect to be good. Returns False
    /// when it is already recorded or queued; a configuration outside the search space is a
    /// `ValueError`.
    fn enqueue(&self, config: &Bound<'_, PyDict>) -> PyResult<bool> {
        let c = config_of(&self.space, config)?;
        if !self.space.contains(&c) {
            return Err(PyValueError::new_err(format!(
                "{} is not in the search space",
                short_repr(config.as_any())
            )));
        }
        Ok(self.state(config.py())?.session_mut().enqueue(c))
    }

    /// The next configuration to measure, as a dict, or `None` when the study is over (its
    /// budget spent, the space exhausted, or the strategy done).
    fn ask<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let next = self.state(py)?.next(py)?;
        match next {
            Some(c) => Ok(Some(config_dict(py, &self.space, &c)?)),
            None => Ok(None),
        }
    }

    /// Up to `n` configurations to measure at once (fewer near the end of the budget, an
    /// empty list when the study is over); tell each before the study's budget counts it.
    fn ask_batch<'py>(&self, py: Python<'py>, n: Whole) -> PyResult<Bound<'py, PyList>> {
        let n = n.count("n")?;
        let list = PyList::empty(py);
        if n == 0 {
            return Ok(list);
        }
        let batch: Vec<Configuration> = {
            let mut state = self.state(py)?;
            state.refill(py, n)?;
            let take = state.queue.len().min(n);
            let at = state.queue.len() - take;
            state.queue.split_off(at).into_iter().rev().collect()
        };
        for c in &batch {
            list.append(config_dict(py, &self.space, c)?)?;
        }
        Ok(list)
    }

    /// Reports the measurement of `config`: its `value`, or `failure` (`"compile"`,
    /// `"runtime"`, `"timeout"`, `"wrong_output"`) with a `reason`. `seconds` is how long
    /// the measurement took (for the study's time limit). A configuration is told once, and
    /// only one in the search space: otherwise `ValueError` (naming the broken restriction).
    /// One that another process or an earlier run recorded keeps that record (a
    /// `RuntimeWarning` says so).
    #[pyo3(signature = (config, value=None, *, failure=None, reason="", seconds=0.0))]
    fn tell(
        &self,
        config: &Bound<'_, PyDict>,
        value: Option<&Bound<'_, PyAny>>,
        failure: Option<&str>,
        reason: &str,
        seconds: f64,
    ) -> PyResult<()> {
        let c = config_of(&self.space, config)?;
        if !(seconds >= 0.0 && seconds.is_finite()) {
            return Err(PyValueError::new_err(format!(
                "seconds is how long the measurement took: a number, at least 0, not {seconds}"
            )));
        }
        let t = Timings {
            benchmark: seconds,
            ..Timings::default()
        };
        let outcome = match (value, failure) {
            (Some(_), Some(_)) => {
                return Err(PyValueError::new_err(
                    "give either a value or a failure, not both",
                ));
            }
            (Some(v), None) => match self.values_of(v, "was") {
                Ok(values) => Outcome::ok(values, t),
                Err(Reading::NotFinite(why)) => Outcome::failed(FailureKind::Runtime, why, t),
                Err(Reading::Wrong(why)) => return Err(PyValueError::new_err(why)),
            },
            (None, Some(kind)) => Outcome::failed(failure_kind(kind)?, reason, t),
            (None, None) => {
                return Err(PyValueError::new_err(
                    "give the measured value, or failure=\"compile\" (\"runtime\", \"timeout\", \"wrong_output\")",
                ));
            }
        };
        if !self.space.contains(&c) {
            // Recorded, it could become the best result of a space it is not in.
            let broken: Vec<String> = self
                .space
                .unsatisfied_constraints(&c)
                .iter()
                .map(|k| format!("`{}`", k.source()))
                .collect();
            return Err(PyValueError::new_err(format!(
                "{} is not in the search space: it breaks {}",
                short_repr(config.as_any()),
                if broken.is_empty() {
                    "its restrictions".to_string()
                } else {
                    broken.join(", ")
                }
            )));
        }
        let py = config.py();
        let mut state = self.state(py)?;
        let recorded = state.session().history().contains(&c);
        if let Some(r) = recorded
            .then(|| state.session().records().iter().find(|r| r.config == c))
            .flatten()
        {
            let was = r
                .outcome
                .objective()
                .map_or_else(|| "as failed".to_string(), |v| format!("value {v}"));
            // The core drops a repeated record without a word. Told twice here, it is a
            // mistake to show; recorded elsewhere (another worker took over a claim that ran
            // out, an earlier run of a stored study), the first record stands, with a warning.
            if state.told.contains(&c) {
                return Err(PyValueError::new_err(format!(
                    "{} is already recorded ({was}): a study records each configuration once",
                    short_repr(config.as_any()),
                )));
            }
            drop(state);
            let message = format!(
                "{} was already recorded ({was}) by another process or an earlier run of this \
                 study; this measurement is not kept",
                short_repr(config.as_any())
            );
            let message = std::ffi::CString::new(message.replace('\0', " "))
                .unwrap_or_else(|_| c"a configuration was already recorded".to_owned());
            PyErr::warn(py, &py.get_type::<PyRuntimeWarning>(), &message, 1)?;
            return Ok(());
        }
        state.record(c, outcome)
    }

    /// Tunes `fn(config: dict) -> float` until the study's budget, `max_evals` more
    /// evaluations or `time_limit` more seconds are spent, whichever comes first (`stopped`
    /// then says which). An exception raised by `fn` records the configuration as failed
    /// with its message and goes on; Ctrl-C (`KeyboardInterrupt`) and `SystemExit` stop after
    /// recording everything finished, and are raised again. Returns the best result.
    ///
    /// `instances` (a dict of names to dicts of variables, e.g. `{"n512": {"N": 512}}`)
    /// measures one configuration for several instances: `fn` is called once per instance
    /// with the configuration and that instance's variables in one dict; the value recorded
    /// is the geometric mean (each instance's value beside it, as `value@name` in the
    /// result's `observed`), and a failure on any instance fails the configuration, naming it.
    #[pyo3(signature = (func, max_evals=None, time_limit=None, instances=None))]
    fn optimize<'py>(
        &self,
        py: Python<'py>,
        func: &Bound<'py, PyAny>,
        max_evals: Option<Whole>,
        time_limit: Option<f64>,
        instances: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let instances = instances_of(instances, &self.space)?;
        let max_evals = max_evals.map(|m| m.count("max_evals")).transpose()?;
        let time_limit = time_limit_of(time_limit)?;
        let started = Instant::now();
        let mut done = 0usize;
        self.state(py)?.paused = None;
        loop {
            let limit = if max_evals.is_some_and(|m| done >= m) {
                Some(StopReason::Evaluations)
            } else if time_limit.is_some_and(|t| started.elapsed().as_secs_f64() >= t) {
                Some(StopReason::Time)
            } else {
                None
            };
            if let Some(reason) = limit {
                self.state(py)?.paused = Some(reason);
                break;
            }
            if let Err(e) = py.check_signals() {
                self.state(py)?.abandon_queue();
                return Err(e);
            }
            // The study is held only to ask and to record: the objective may read it, and
            // other threads use it, while it runs.
            let next = self.state(py)?.next(py)?;
            let Some(c) = next else { break };
            let arg = config_dict(py, &self.space, &c)?;
            let t = Instant::now();
            let result = match &instances {
                None => func.call1((arg,)),
                Some(list) => on_instances(py, func, &arg, list),
            };
            let seconds = t.elapsed().as_secs_f64();
            let timings = Timings {
                benchmark: seconds,
                ..Timings::default()
            };
            let outcome = match result {
                Ok(v) if instances.is_some() => instances_outcome(py, &v, timings)?,
                Ok(v) => match self.values_of(&v, "returned") {
                    Ok(values) => Outcome::ok(values, timings),
                    Err(Reading::NotFinite(why) | Reading::Wrong(why)) => {
                        Outcome::failed(FailureKind::Runtime, why, timings)
                    }
                },
                Err(e)
                    if e.is_instance_of::<PyKeyboardInterrupt>(py)
                        || e.is_instance_of::<PySystemExit>(py) =>
                {
                    // Ctrl-C, or the program exiting: the interrupted measurement is not
                    // recorded (a later run measures it), everything before it is.
                    let mut state = self.state(py)?;
                    state.session_mut().abandon(std::slice::from_ref(&c), false);
                    state.abandon_queue();
                    return Err(e);
                }
                Err(e) => {
                    let name = e
                        .get_type(py)
                        .name()
                        .map_or_else(|_| "Exception".into(), |n| n.to_string());
                    Outcome::failed(
                        FailureKind::Runtime,
                        format!("{name}: {}", e.value(py)),
                        timings,
                    )
                }
            };
            self.state(py)?.record(c, outcome)?;
            done += 1;
        }
        self.best(py)
    }

    /// The best result so far: `{"config": {...}, "value": float}`, or `None`.
    #[getter]
    fn best<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let best = self
            .state(py)?
            .session()
            .best()
            .map(|r| (r.config.clone(), r.outcome.objective()));
        let Some((config, value)) = best else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("config", config_dict(py, &self.space, &config)?)?;
        d.set_item("value", value)?;
        Ok(Some(d))
    }

    /// A study of several objectives: the results on its Pareto front (the successful ones
    /// no other beats on every objective), as `results` gives them, by the first objective.
    #[getter]
    fn pareto_front<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        if self.objectives.len() < 2 {
            return Err(PyValueError::new_err(format!(
                "the study has one objective (`{}`); the Pareto front is for a study of several (objectives=...)",
                self.objective
            )));
        }
        let records = self.state(py)?.session().records().to_vec();
        let values: Vec<Option<&[f64]>> = records.iter().map(|r| r.outcome.values()).collect();
        let front = ktune_core::pareto::front_of(&values, &self.objectives);
        let all = self.results(py)?;
        let out = PyList::empty(py);
        for i in front {
            out.append(all.get_item(i)?)?;
        }
        Ok(out)
    }

    /// A study of several objectives: the result a goal picks, as `results` gives it, or
    /// `None` when nothing ran: `"energy within 5% of time"` (the least energy among the
    /// results at most 5% slower than the fastest) or `"weighted time=1, energy=0.5"` (each
    /// objective relative to its best); without one, the study's own `goal`.
    #[pyo3(signature = (goal=None))]
    fn pick<'py>(
        &self,
        py: Python<'py>,
        goal: Option<&str>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(goal) = goal.or(self.goal.as_deref()) else {
            return Err(PyValueError::new_err(
                "the study seeks no goal: give one, e.g. pick(\"energy within 5% of time\")",
            ));
        };
        if self.objectives.len() < 2 {
            return Err(PyValueError::new_err(format!(
                "the study has one objective (`{}`); a goal picks among several (objectives=...)",
                self.objective
            )));
        }
        let goal = ktune_core::pareto::Goal::parse(goal, &self.objectives)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let records = self.state(py)?.session().records().to_vec();
        let points: Vec<Option<Vec<f64>>> = records
            .iter()
            .map(|r| r.outcome.values().map(<[f64]>::to_vec))
            .collect();
        let directions: Vec<Direction> = self.objectives.iter().map(|m| m.direction).collect();
        match goal.pick(&points, &directions) {
            Some(i) => Ok(Some(self.results(py)?.get_item(i)?)),
            None => Ok(None),
        }
    }

    /// The goal the study seeks one configuration by (`goal=`, or the one a stored study
    /// was started with), or `None`.
    #[getter]
    fn goal(&self) -> Option<&str> {
        self.goal.as_deref()
    }

    /// The study's objectives and their directions, in order: `{"time": "minimize"}` for a
    /// study of one.
    #[getter]
    fn objectives<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        if self.objectives.is_empty() {
            let direction = self.state(py)?.session().direction();
            d.set_item(&self.objective, direction.name())?;
        }
        for m in &self.objectives {
            d.set_item(&m.name, m.direction.name())?;
        }
        Ok(d)
    }

    /// Every result of the study, in order: dicts with `config`, `value` (or `None`),
    /// `status` (`"ok"` or the failure's kind), `reason` and `observed` (what was measured
    /// beside the value, e.g. each instance's value; an empty dict where nothing).
    #[getter]
    fn results<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let list = PyList::empty(py);
        let records = self.state(py)?.session().records().to_vec();
        for r in &records {
            let d = PyDict::new(py);
            d.set_item("config", config_dict(py, &self.space, &r.config)?)?;
            d.set_item("value", r.outcome.objective())?;
            if !self.objectives.is_empty() {
                let values = PyDict::new(py);
                if let Outcome::Ok { values: v, .. } = &r.outcome {
                    for (m, x) in self.objectives.iter().zip(v) {
                        values.set_item(&m.name, x)?;
                    }
                }
                d.set_item("objectives", values)?;
            }
            match &r.outcome {
                Outcome::Ok { .. } => {
                    d.set_item("status", "ok")?;
                    d.set_item("reason", py.None())?;
                }
                Outcome::Failed { kind, reason, .. } => {
                    d.set_item("status", kind.name())?;
                    d.set_item("reason", reason)?;
                }
            }
            let observed = serde_json::to_string(r.outcome.observed())
                .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
            d.set_item(
                "observed",
                py.import("json")?.call_method1("loads", (observed,))?,
            )?;
            list.append(d)?;
        }
        // `ktune.ResultList`: a list with `to_pandas()`.
        py.import("ktune")?.getattr("ResultList")?.call1((list,))
    }

    /// Writes the study's HTML report (as `ktune report` does) to `path` and returns the path:
    /// a stored study's every record and facts, or this object's records where the study has
    /// no storage. `max_points` successful measurements are drawn one by one (beyond, the
    /// figure is decimated and says so); `top` configurations are listed as the best.
    #[pyo3(signature = (path = std::path::PathBuf::from("report.html"), *, max_points = 4000, top = 20))]
    fn report(
        &self,
        py: Python<'_>,
        path: std::path::PathBuf,
        max_points: usize,
        top: usize,
    ) -> PyResult<String> {
        let state = self.state(py)?;
        match &state.backing {
            Backing::Stored(study) => {
                let place = study.place().clone();
                drop(state);
                crate::report::of_study(py, Some(&place), None, &path, max_points, top)
            }
            Backing::Memory(session) => {
                let records = session.records().to_vec();
                let direction = session.direction();
                drop(state);
                let memory = (
                    &*self.space,
                    records.as_slice(),
                    self.objective.as_str(),
                    direction,
                );
                crate::report::of_study(py, None, Some(memory), &path, max_points, top)
            }
        }
    }

    /// Jupyter's view of a study: its counts, the best value and configuration, the best five.
    fn _repr_html_(&self, py: Python<'_>) -> PyResult<String> {
        let state = self.state(py)?;
        let session = state.session();
        let records = session.records().to_vec();
        let direction = session.direction();
        drop(state);
        Ok(crate::report::fragment(
            &self.space,
            &records,
            &self.objective,
            direction,
        ))
    }

    /// The objective's name.
    #[getter]
    fn objective(&self) -> &str {
        &self.objective
    }

    /// Why the study stopped (`"evaluations"`, `"time"`, `"space_exhausted"`, ...), or why
    /// the last `optimize` returned on its own `max_evals` or `time_limit` (`"evaluations"`,
    /// `"time"`; the study goes on), or `None`.
    #[getter]
    fn stopped(&self, py: Python<'_>) -> PyResult<Option<String>> {
        let state = self.state(py)?;
        Ok(state.stopped.or(state.paused).map(|s| s.name().to_string()))
    }

    /// The search space.
    #[getter]
    fn space(&self) -> SearchSpacePy {
        SearchSpacePy {
            space: self.space.clone(),
        }
    }

    /// The priors the strategy was told (given, or the ones a stored study recorded), each
    /// as a dict: `source`, `fingerprint`, `measurements`, and how many of them `matched`
    /// the search space onto how many `configurations`.
    #[getter]
    fn priors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for (fact, report) in &self.priors {
            let d = PyDict::new(py);
            d.set_item("source", &fact.source)?;
            d.set_item("fingerprint", &fact.fingerprint)?;
            d.set_item("measurements", fact.measurements)?;
            d.set_item("matched", report.matched)?;
            d.set_item("configurations", report.configurations)?;
            out.append(d)?;
        }
        Ok(out)
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.state(py)?.session().records().len())
    }
}

impl Study {
    /// Opens the study `setup` describes (joining its storage, when it has one, and saying
    /// what joining noticed as `RuntimeWarning`s), this process's random numbers from `seed`.
    fn open(
        py: Python<'_>,
        setup: Setup,
        seed: u64,
        problem: Option<&ktune_problem::ProblemSpec>,
    ) -> PyResult<Study> {
        let objective = setup.facts.objective.clone();
        let objectives = setup.facts.objectives.clone();
        let strategy_name = setup.strategy.canonical().to_string();
        let priors;
        let goal;
        let backing = match setup.stored {
            None => {
                let mut session = Session::new(
                    SpaceRef::Shared(setup.space.clone()),
                    setup.strategy.build(),
                    setup.budget,
                    setup.facts.direction,
                    Rng::seed_from_u64(seed),
                )
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
                if objectives.len() > 1 {
                    let directions: Vec<Direction> =
                        objectives.iter().map(|m| m.direction).collect();
                    session
                        .set_objectives(&directions)
                        .map_err(|e| PyValueError::new_err(e.to_string()))?;
                }
                if let Some(text) = &setup.facts.goal {
                    let goal = ktune_core::pareto::Goal::parse(text, &objectives)
                        .map_err(|e| PyValueError::new_err(e.to_string()))?;
                    session
                        .set_goal(&goal)
                        .map_err(|e| PyValueError::new_err(e.to_string()))?;
                }
                priors = ktune_problem::prior::tell_priors(
                    &mut session,
                    &setup.priors,
                    &setup.facts.priors,
                )
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
                goal = setup.facts.goal.clone();
                Backing::Memory(Box::new(session))
            }
            Some((place, fingerprint, participation)) => {
                let mut study = place
                    .join(Opening {
                        space: SpaceRef::Shared(setup.space.clone()),
                        fingerprint,
                        facts: setup.facts,
                        budget: setup.budget,
                        // A Python study works to its study's budget, as before.
                        cap: None,
                        strategy: setup.strategy.build(),
                        seed,
                        participation,
                        priors: setup.priors,
                    })
                    .map_err(core_error)?;
                for note in &study.joined.notes {
                    warn(py, note)?;
                }
                goal = study.joined.facts.goal.clone();
                priors = study.priors.clone();
                if let Some(p) = problem
                    && let Some(w) =
                        ktune_problem::note_inputs(study.storage.as_mut(), p, study.resumed)
                            .map_err(core_error)?
                {
                    warn(py, &w)?;
                }
                Backing::Stored(Box::new(study))
            }
        };
        let sought = match &backing {
            Backing::Memory(session) => session.goal_sought(),
            Backing::Stored(study) => study.session.goal_sought(),
        };
        if let (Some(false), Some(text)) = (sought, &goal) {
            warn(
                py,
                &format!(
                    "strategy {} does not seek the goal `{text}`: it optimises `{objective}`, and the goal picks from what it finds (`auto` and `bayes_opt` seek it)",
                    strategy_name
                ),
            )?;
        }
        Ok(Study {
            space: setup.space,
            objective,
            objectives,
            goal,
            priors,
            state: Mutex::new(State {
                backing,
                queue: Vec::new(),
                stopped: None,
                paused: None,
                told: HashSet::new(),
            }),
        })
    }

    /// The study's state, once no other call holds it. Waiting lets go of the GIL, so the
    /// call that holds it (in another thread) can finish.
    fn state(&self, py: Python<'_>) -> PyResult<MutexGuard<'_, State>> {
        loop {
            match self.state.try_lock() {
                Ok(state) => return Ok(state),
                Err(TryLockError::Poisoned(_)) => {
                    return Err(PyRuntimeError::new_err(
                        "this study can no longer be used: a call failed inside ktune while \
                         changing it (a bug: please report it); its stored results are intact",
                    ));
                }
                Err(TryLockError::WouldBlock) => {
                    py.check_signals()?;
                    py.detach(|| std::thread::sleep(Duration::from_micros(200)));
                }
            }
        }
    }
}

impl State {
    fn session(&self) -> &Session<'static> {
        match &self.backing {
            Backing::Memory(s) => s,
            Backing::Stored(study) => &study.session,
        }
    }

    fn session_mut(&mut self) -> &mut Session<'static> {
        match &mut self.backing {
            Backing::Memory(s) => s,
            Backing::Stored(study) => &mut study.session,
        }
    }

    /// Fills the queue with up to `n` configurations to measure (claimed in the storage,
    /// when there is one); false when the study is over.
    fn refill(&mut self, py: Python<'_>, n: usize) -> PyResult<bool> {
        while self.queue.is_empty() {
            if self.stopped.is_some() {
                return Ok(false);
            }
            let turn = match &mut self.backing {
                Backing::Memory(session) => match session.ask(n).map_err(core_error)? {
                    Asked::Evaluate(configs) => Turn::Evaluate(configs),
                    Asked::Stop(reason) => Turn::Stop(reason),
                },
                Backing::Stored(study) => {
                    let (session, storage, me) = study.parts();
                    me.how.batch = n.max(1);
                    me.turn(session, storage, &mut ()).map_err(core_error)?
                }
            };
            match turn {
                Turn::Evaluate(configs) => self.queue.extend(configs.into_iter().rev()),
                Turn::Stop(reason) => self.stopped = Some(reason),
                Turn::Wait => {
                    // Other processes hold the rest of the budget: their records, or the
                    // expiry of their claims, free it. Ctrl-C interrupts the wait.
                    py.check_signals()?;
                    py.detach(|| std::thread::sleep(std::time::Duration::from_millis(200)));
                }
            }
        }
        Ok(true)
    }

    /// Records the outcome of a configuration this study handed out (in the storage first).
    fn record(&mut self, config: Configuration, outcome: Outcome) -> PyResult<()> {
        self.queue.retain(|q| *q != config);
        self.told.insert(config.clone());
        match &mut self.backing {
            Backing::Memory(session) => session.tell(vec![(config, outcome)]).map_err(core_error),
            Backing::Stored(study) => {
                let (session, storage, me) = study.parts();
                // A handed-out configuration's claim lives until its lease runs out; a
                // heartbeat on every tell keeps the others alive while they are measured.
                storage
                    .heartbeat(&me.how.worker, me.how.lease)
                    .map_err(core_error)?;
                me.record(session, storage, vec![(config, outcome)], &mut ())
                    .map_err(core_error)
            }
        }
    }

    fn next(&mut self, py: Python<'_>) -> PyResult<Option<Configuration>> {
        if !self.refill(py, 1)? {
            return Ok(None);
        }
        Ok(self.queue.pop())
    }

    fn abandon_queue(&mut self) {
        let rest = std::mem::take(&mut self.queue);
        self.session_mut().abandon(&rest, false);
        if let Backing::Stored(study) = &mut self.backing {
            let _ = study.storage.release(&study.worker.id);
        }
    }
}

/// The search space of `Study(tune_params, restrictions)`: a `SearchSpace`, or a dict built
/// into one.
fn space_of(
    tune_params: &Bound<'_, PyAny>,
    restrictions: Option<&Bound<'_, PyAny>>,
) -> PyResult<Arc<SearchSpace>> {
    if let Ok(space) = tune_params.cast::<SearchSpacePy>() {
        if restrictions.is_some_and(|r| !r.is_none()) {
            return Err(PyValueError::new_err(
                "restrictions belong to the SearchSpace given as tune_params; give them there",
            ));
        }
        return Ok(space.get().space.clone());
    }
    let dict = tune_params.cast::<PyDict>().map_err(|_| {
        PyTypeError::new_err(
            "tune_params must be a dict of parameter values or a ktune.SearchSpace",
        )
    })?;
    Ok(Arc::new(build_space(dict, restrictions)?))
}

/// How a Python process takes part in a shared study.
fn participation(
    device: Option<String>,
    allow_mixed_hardware: bool,
    lease: f64,
) -> PyResult<Participation> {
    let lease = ktune_core::checked_seconds(lease)
        .map_err(|m| PyValueError::new_err(format!("lease {m}")))?;
    if let Some(d) = &device {
        ktune_core::checked_label(d).map_err(|m| PyValueError::new_err(format!("device {m}")))?;
    }
    Ok(Participation {
        device,
        allow_mixed_hardware,
        lease,
        batch: 1,
    })
}

/// A `RuntimeWarning` saying `what`.
fn warn(py: Python<'_>, what: &impl std::fmt::Display) -> PyResult<()> {
    let message = std::ffi::CString::new(what.to_string().replace('\0', " "))
        .unwrap_or_else(|_| c"ktune: see the study".to_owned());
    PyErr::warn(py, &py.get_type::<PyRuntimeWarning>(), &message, 1)
}

/// `optimize`'s instances: each name and its variables.
type InstanceList<'py> = Vec<(String, Bound<'py, PyDict>)>;

/// `optimize`'s instances (a dict of names to dicts of variables), checked before anything
/// runs.
fn instances_of<'py>(
    given: Option<&Bound<'py, PyAny>>,
    space: &SearchSpace,
) -> PyResult<Option<InstanceList<'py>>> {
    let Some(given) = given.filter(|g| !g.is_none()) else {
        return Ok(None);
    };
    let Ok(d) = given.cast::<PyDict>() else {
        return Err(PyTypeError::new_err(format!(
            "instances must be a dict of names to dicts of variables, e.g. {{\"n512\": {{\"N\": 512}}}}, not {}",
            short_repr(given)
        )));
    };
    if d.is_empty() {
        return Err(PyValueError::new_err(
            "instances is empty: give at least one",
        ));
    }
    let mut out = Vec::new();
    for (name, vars) in d.iter() {
        let name: String = name.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "instance name {} is not a string",
                short_repr(&name)
            ))
        })?;
        let vars = vars.cast_into::<PyDict>().map_err(|e| {
            PyTypeError::new_err(format!(
                "instances['{name}'] must be a dict of variables, not {}",
                short_repr(e.into_inner().as_any())
            ))
        })?;
        for key in vars.keys() {
            let key: String = key.extract().map_err(|_| {
                PyTypeError::new_err(format!(
                    "instances['{name}'] has a variable name that is not a string"
                ))
            })?;
            if space.param_index(&key).is_some() {
                return Err(PyValueError::new_err(format!(
                    "instances['{name}']: variable '{key}' is also a parameter"
                )));
            }
        }
        out.push((name, vars));
    }
    Ok(Some(out))
}

/// Calls the objective on every instance: a list of (name, value) pairs, or the first
/// exception, its message prefixed with the instance's name.
fn on_instances<'py>(
    py: Python<'py>,
    func: &Bound<'py, PyAny>,
    config: &Bound<'py, PyDict>,
    instances: &[(String, Bound<'py, PyDict>)],
) -> PyResult<Bound<'py, PyAny>> {
    let values = pyo3::types::PyList::empty(py);
    for (name, vars) in instances {
        let arg = config.copy()?;
        arg.update(vars.as_mapping())?;
        match func.call1((arg,)) {
            Ok(v) => values.append((name, v))?,
            Err(e)
                if e.is_instance_of::<PyKeyboardInterrupt>(py)
                    || e.is_instance_of::<PySystemExit>(py) =>
            {
                return Err(e);
            }
            Err(e) => {
                let kind = e.get_type(py);
                let message = format!("instance {name}: {}", e.value(py));
                return Err(PyErr::from_type(kind, message));
            }
        }
    }
    Ok(values.into_any())
}

/// The outcome of one configuration on every instance: the geometric mean, each instance's
/// value observed beside it; a value that is no positive number fails it, naming the instance.
fn instances_outcome(
    py: Python<'_>,
    values: &Bound<'_, PyAny>,
    timings: Timings,
) -> PyResult<Outcome> {
    let mut logs = 0.0;
    let mut observed = ktune_core::Observed::new();
    let pairs: Vec<(String, Bound<'_, PyAny>)> = values.extract()?;
    for (name, v) in &pairs {
        match v.extract::<f64>() {
            Ok(x) if x.is_finite() && x > 0.0 => {
                logs += x.ln();
                observed.insert(format!("value@{name}"), serde_json::json!(x));
            }
            Ok(x) => {
                return Ok(Outcome::failed(
                    FailureKind::Runtime,
                    format!(
                        "instance {name}: the objective returned {x}, which has no geometric mean (it needs values above 0)"
                    ),
                    timings,
                ));
            }
            Err(why) => {
                return Ok(Outcome::failed(
                    FailureKind::Runtime,
                    format!(
                        "instance {name}: the objective returned {}, not a number ({})",
                        short_repr(v),
                        why.value(py)
                    ),
                    timings,
                ));
            }
        }
    }
    let mean = (logs / pairs.len() as f64).exp();
    Ok(Outcome::ok(vec![mean], timings).with_observed(observed))
}

/// Why a measured value cannot be recorded as given: a number that is not finite (recorded
/// as a failure), or a value of the wrong shape (refused by `tell`, a failure in `optimize`).
enum Reading {
    NotFinite(String),
    Wrong(String),
}

impl Study {
    /// The values of a measurement as the study records them: one number for a study of one
    /// objective; for a study of several, a dict with a number for every objective's name, or
    /// a sequence of one number per objective, in order.
    fn values_of(&self, v: &Bound<'_, PyAny>, verb: &str) -> Result<Vec<f64>, Reading> {
        let number = |x: &Bound<'_, PyAny>, what: &str| -> Result<f64, Reading> {
            match x.extract::<f64>() {
                Ok(f) if f.is_finite() => Ok(f),
                Ok(f) => Err(Reading::NotFinite(format!(
                    "the objective {what}{verb} {f}"
                ))),
                Err(why) => Err(Reading::Wrong(format!(
                    "the objective {what}{verb} {}, not a number ({})",
                    short_repr(x),
                    why.value(x.py())
                ))),
            }
        };
        if self.objectives.is_empty() {
            return number(v, "").map(|x| vec![x]);
        }
        let names: Vec<&str> = self.objectives.iter().map(|m| m.name.as_str()).collect();
        let shape = || {
            Reading::Wrong(format!(
                "the study has the objectives {names:?}: give a dict with a number for each, or a sequence of {} numbers in that order, not {}",
                names.len(),
                short_repr(v)
            ))
        };
        if let Ok(d) = v.cast::<PyDict>() {
            let mut values = Vec::with_capacity(names.len());
            for name in &names {
                let x = d.get_item(name).ok().flatten().ok_or_else(|| {
                    Reading::Wrong(format!(
                        "the value {} has no `{name}`: the study has the objectives {names:?}",
                        short_repr(v)
                    ))
                })?;
                values.push(number(&x, &format!("`{name}` "))?);
            }
            return Ok(values);
        }
        if v.extract::<f64>().is_ok() || v.is_instance_of::<pyo3::types::PyString>() {
            return Err(shape());
        }
        let items: Vec<Bound<'_, PyAny>> = v
            .try_iter()
            .map_err(|_| shape())?
            .collect::<Result<_, _>>()
            .map_err(|_| shape())?;
        if items.len() != names.len() {
            return Err(shape());
        }
        items
            .iter()
            .zip(&names)
            .map(|(x, name)| number(x, &format!("`{name}` ")))
            .collect()
    }
}

/// `objectives=`: a dict of names to `"minimize"`/`"maximize"` (or, as Kernel Tuner 1.5
/// spells it, `True` where higher is better), or a list of names (directions guessed from
/// them: rates are maximised); none: one objective.
fn objectives_of(objectives: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<ktune_core::Metric>> {
    let Some(o) = objectives else {
        return Ok(Vec::new());
    };
    let mut out: Vec<ktune_core::Metric> = Vec::new();
    let mut push = |name: String, direction: Direction| -> PyResult<()> {
        if name.trim().is_empty() {
            return Err(PyValueError::new_err(
                "objectives: a name is empty; name what is measured (e.g. \"time\")",
            ));
        }
        if out.iter().any(|m| m.name == name) {
            return Err(PyValueError::new_err(format!(
                "objectives: `{name}` is given twice"
            )));
        }
        out.push(ktune_core::Metric::new(name, direction));
        Ok(())
    };
    if let Ok(d) = o.cast::<PyDict>() {
        for (k, v) in d.iter() {
            let name: String = k.extract().map_err(|_| {
                PyValueError::new_err(format!(
                    "objectives: the names are strings, not {}",
                    short_repr(&k)
                ))
            })?;
            let direction = if let Ok(higher_is_better) = v.extract::<bool>() {
                if higher_is_better {
                    Direction::Maximize
                } else {
                    Direction::Minimize
                }
            } else if let Ok(text) = v.extract::<String>() {
                parse_direction(&text)?
            } else {
                return Err(PyValueError::new_err(format!(
                    "objectives[{name:?}]: \"minimize\" or \"maximize\" (or True where higher is better), not {}",
                    short_repr(&v)
                )));
            };
            push(name, direction)?;
        }
    } else {
        let names: Vec<String> = o.extract().map_err(|_| {
            PyValueError::new_err(format!(
                "objectives: a dict of names to \"minimize\"/\"maximize\", or a list of names, not {}",
                short_repr(o)
            ))
        })?;
        for name in names {
            let direction = Direction::guess(&name);
            push(name, direction)?;
        }
    }
    if out.is_empty() {
        return Err(PyValueError::new_err(
            "objectives: empty; give at least one (or leave it out for objective=)",
        ));
    }
    Ok(out)
}
