//! ktune from Python: `ktune.SearchSpace` (Kernel Tuner's `tune_params` and `restrictions`)
//! and `ktune.Study`, an ask/tell study on the same [`Session`] the command line drives, with
//! every measurement recorded in an SQLite file when a storage is given.

use std::sync::Arc;
use std::time::Instant;

use ktune_core::{
    Asked, Budget, Direction, FailureKind, Outcome, Rng, Session, SpaceRef, StopReason, Timings,
};
use ktune_space::{Configuration, Neighbourhood, Parameter, SearchSpace, Value};
use ktune_store::{Fingerprint, Location};
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeWarning, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use pyo3::{IntoPyObjectExt, create_exception};
use rand::{RngExt as _, SeedableRng};

mod kernel;

create_exception!(
    ktune,
    KtuneError,
    pyo3::exceptions::PyException,
    "An error of ktune (a storage that cannot be opened or written, a study of another problem)."
);

/// A Python value of a tunable parameter.
fn value_of(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Value> {
    // bool before int: a Python bool is an int.
    if let Ok(b) = obj.extract::<bool>()
        && obj.is_instance_of::<pyo3::types::PyBool>()
    {
        return Ok(Value::Bool(b));
    }
    if let Ok(i) = obj.extract::<i64>() {
        return Ok(Value::Int(i));
    }
    if let Ok(x) = obj.extract::<f64>() {
        return Ok(Value::Real(x));
    }
    if let Ok(s) = obj.extract::<String>() {
        return Ok(Value::Str(s));
    }
    Err(PyTypeError::new_err(format!(
        "tune_params[{name:?}]: the value {} is not an int, float, bool or str",
        obj.repr().map_or_else(|_| "?".into(), |r| r.to_string())
    )))
}

fn value_to_py(py: Python<'_>, v: &Value) -> PyResult<Py<PyAny>> {
    match v {
        Value::Int(i) => i.into_py_any(py),
        Value::Real(x) => x.into_py_any(py),
        Value::Bool(b) => b.into_py_any(py),
        Value::Str(s) => s.into_py_any(py),
        Value::Perm(p) => p.clone().into_py_any(py),
    }
}

/// The parameters of a `tune_params` dict, in its order: integers, reals, strings, or a
/// mixture (kept as ordered values).
fn parameters(tune_params: &Bound<'_, PyDict>) -> PyResult<Vec<Parameter>> {
    let mut params = Vec::with_capacity(tune_params.len());
    for (key, values) in tune_params.iter() {
        let name: String = key
            .extract()
            .map_err(|_| PyTypeError::new_err("tune_params: every key must be a str"))?;
        let values: Vec<Value> = values
            .try_iter()
            .map_err(|_| {
                PyTypeError::new_err(format!("tune_params[{name:?}] must be a list of values"))
            })?
            .map(|v| value_of(&v?, &name))
            .collect::<PyResult<_>>()?;
        let bad = |e: ktune_space::SpaceError| PyValueError::new_err(e.to_string());
        let param = if values.iter().all(|v| matches!(v, Value::Int(_))) {
            Parameter::integer(
                name,
                values.iter().filter_map(|v| match v {
                    Value::Int(i) => Some(*i),
                    _ => None,
                }),
            )
        } else if values
            .iter()
            .all(|v| matches!(v, Value::Int(_) | Value::Real(_)))
        {
            Parameter::real(name, values.iter().filter_map(Value::as_f64))
        } else if values.iter().all(|v| matches!(v, Value::Str(_))) {
            Parameter::categorical(
                name,
                values.iter().filter_map(|v| match v {
                    Value::Str(s) => Some(s.clone()),
                    _ => None,
                }),
            )
        } else {
            Parameter::ordinal(name, values)
        }
        .map_err(bad)?;
        params.push(param);
    }
    Ok(params)
}

/// The restrictions as expressions: a list of strings, or one string (as Kernel Tuner takes).
fn restriction_list(restrictions: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<String>> {
    let Some(r) = restrictions.filter(|r| !r.is_none()) else {
        return Ok(Vec::new());
    };
    if let Ok(one) = r.extract::<String>() {
        return Ok(vec![one]);
    }
    r.extract::<Vec<String>>().map_err(|_| {
        PyTypeError::new_err(format!(
            "restrictions must be a list of strings (expressions such as \"x * y <= 1024\"), not {}",
            short_repr(r)
        ))
    })
}

/// Builds the space; a large one on a thread of its own, so that Ctrl-C (checked every 50 ms
/// while the build runs) cancels a long enumeration instead of waiting for it.
fn build_space(
    tune_params: &Bound<'_, PyDict>,
    restrictions: Option<&Bound<'_, PyAny>>,
) -> PyResult<SearchSpace> {
    let py = tune_params.py();
    let params = parameters(tune_params)?;
    let restrictions = restriction_list(restrictions)?;
    // Below a million combinations a build takes milliseconds: no thread for it.
    let combinations: f64 = params.iter().map(|p| p.len() as f64).product();
    if combinations <= 1e6 {
        return SearchSpace::new(params, &restrictions)
            .map_err(|e| PyValueError::new_err(e.to_string()));
    }
    let progress = ktune_space::BuildProgress::new();
    let built = std::thread::scope(|s| -> PyResult<_> {
        let (tx, rx) = std::sync::mpsc::channel();
        let (progress, restrictions) = (&progress, &restrictions);
        s.spawn(move || {
            let _ = tx.send(SearchSpace::new_observed(
                params,
                restrictions,
                ktune_space::DEFAULT_MAX_CHECKS,
                progress,
            ));
        });
        // A Receiver is not Sync; the GIL is released around the wait, so it goes in a Mutex.
        let rx = std::sync::Mutex::new(rx);
        loop {
            let waited = py.detach(|| {
                rx.lock()
                    .map_err(|_| std::sync::mpsc::RecvTimeoutError::Disconnected)?
                    .recv_timeout(std::time::Duration::from_millis(50))
            });
            match waited {
                Ok(result) => return Ok(result),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    if let Err(e) = py.check_signals() {
                        progress.cancel();
                        return Err(e);
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(KtuneError::new_err("the search-space build failed"));
                }
            }
        }
    })?;
    built.map_err(|e| PyValueError::new_err(e.to_string()))
}

/// A configuration as a dict of parameter values.
fn config_dict<'py>(
    py: Python<'py>,
    space: &SearchSpace,
    config: &[u32],
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (p, v) in space.params().iter().zip(space.values(config)) {
        d.set_item(p.name(), value_to_py(py, v)?)?;
    }
    Ok(d)
}

/// A count from Python (`n`, `max_evals`, `seeds`): a whole number, at least 0, named when
/// it is not (pyo3's own message for a negative `usize` names neither the argument nor why).
fn count(name: &str, v: i64) -> PyResult<usize> {
    usize::try_from(v).map_err(|_| {
        PyValueError::new_err(format!(
            "{name} must be a whole number, at least 0, not {v}"
        ))
    })
}

/// A time limit from Python: positive (a NaN one would never be reached); infinity is none.
fn time_limit_of(v: Option<f64>) -> PyResult<Option<f64>> {
    match v {
        Some(t) if t == f64::INFINITY => Ok(None),
        Some(t) if !(t.is_finite() && t > 0.0) => Err(PyValueError::new_err(format!(
            "time_limit must be a positive number of seconds, not {t}"
        ))),
        _ => Ok(v),
    }
}

/// `repr(value)`, cut to 80 characters (an objective may return anything, of any size).
fn short_repr(value: &Bound<'_, PyAny>) -> String {
    let r = value.repr().map_or_else(|_| "?".into(), |r| r.to_string());
    match r.char_indices().nth(80) {
        Some((cut, _)) => format!("{}...", &r[..cut]),
        None => r,
    }
}

/// A dict of parameter values as a configuration of `space` (constraints not checked).
fn config_of(space: &SearchSpace, config: &Bound<'_, PyDict>) -> PyResult<Configuration> {
    let mut values = Vec::with_capacity(space.dims());
    for p in space.params() {
        let v = config.get_item(p.name())?.ok_or_else(|| {
            PyValueError::new_err(format!("the configuration has no `{}`", p.name()))
        })?;
        values.push(value_of(&v, p.name())?);
    }
    if config.len() != space.dims() {
        let known: Vec<&str> = space.params().iter().map(|p| p.name()).collect();
        return Err(PyValueError::new_err(format!(
            "the configuration has parameters that are not in the search space (its parameters: {})",
            known.join(", ")
        )));
    }
    space.configuration_of(&values).ok_or_else(|| {
        PyValueError::new_err(format!(
            "{} is not a configuration of the search space (a value outside its parameter's list)",
            config.repr().map_or_else(|_| "?".into(), |r| r.to_string())
        ))
    })
}

/// A search space: the configurations of `tune_params` that satisfy every restriction.
///
/// `tune_params` maps each parameter to its list of values (ints, floats, strs or bools);
/// `restrictions` are expressions over the parameters (`"block_size_x * block_size_y <=
/// 1024"`), all of which a configuration must satisfy.
#[pyclass(name = "SearchSpace", module = "ktune", frozen)]
struct SearchSpacePy {
    space: Arc<SearchSpace>,
}

#[pymethods]
impl SearchSpacePy {
    #[new]
    #[pyo3(signature = (tune_params, restrictions=None))]
    fn new(
        tune_params: &Bound<'_, PyDict>,
        restrictions: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Ok(SearchSpacePy {
            space: Arc::new(build_space(tune_params, restrictions)?),
        })
    }

    /// The number of valid configurations.
    #[getter]
    fn size(&self) -> u64 {
        self.space.size()
    }

    fn __len__(&self) -> usize {
        usize::try_from(self.space.size()).unwrap_or(usize::MAX)
    }

    /// The parameter names, in order.
    #[getter]
    fn params(&self) -> Vec<String> {
        self.space
            .params()
            .iter()
            .map(|p| p.name().to_string())
            .collect()
    }

    fn __contains__(&self, config: &Bound<'_, PyDict>) -> bool {
        config_of(&self.space, config).is_ok_and(|c| self.space.contains(&c))
    }

    /// The `rank`-th valid configuration (0-based, in a fixed order).
    fn __getitem__<'py>(&self, py: Python<'py>, rank: i64) -> PyResult<Bound<'py, PyDict>> {
        let size = self.space.size();
        let r = if rank < 0 {
            i64::try_from(size).unwrap_or(i64::MAX) + rank
        } else {
            rank
        };
        match u64::try_from(r) {
            Ok(r) if r < size => config_dict(py, &self.space, &self.space.configuration(r)),
            _ => Err(pyo3::exceptions::PyIndexError::new_err(format!(
                "index {rank} is out of range for a space of {size} configurations"
            ))),
        }
    }

    /// `n` distinct valid configurations drawn uniformly (all of them when the space is
    /// smaller), reproducible with `seed`.
    #[pyo3(signature = (n=1, seed=None))]
    fn sample<'py>(
        &self,
        py: Python<'py>,
        n: i64,
        seed: Option<u64>,
    ) -> PyResult<Bound<'py, PyList>> {
        let n = count("n", n)?;
        let mut rng = match seed {
            Some(s) => Rng::seed_from_u64(s),
            None => Rng::seed_from_u64(rand::rng().random()),
        };
        let mut sampler = ktune_space::DistinctSampler::new(self.space.size());
        let list = PyList::empty(py);
        for _ in 0..n {
            let Some(r) = sampler.next_rank(&mut rng) else {
                break;
            };
            list.append(config_dict(py, &self.space, &self.space.configuration(r))?)?;
        }
        Ok(list)
    }

    /// The valid configurations next to `config`: `"hamming"` (one parameter differs, the
    /// default), `"adjacent"` (each parameter at most one valid step away) or
    /// `"strictly_adjacent"`.
    #[pyo3(signature = (config, kind="hamming"))]
    fn neighbours<'py>(
        &self,
        py: Python<'py>,
        config: &Bound<'py, PyDict>,
        kind: &str,
    ) -> PyResult<Bound<'py, PyList>> {
        let kind = match kind {
            "hamming" => Neighbourhood::Hamming,
            "adjacent" => Neighbourhood::Adjacent,
            "strictly_adjacent" => Neighbourhood::StrictlyAdjacent,
            other => {
                return Err(PyValueError::new_err(format!(
                    "kind must be \"hamming\", \"adjacent\" or \"strictly_adjacent\", not {other:?}"
                )));
            }
        };
        let c = config_of(&self.space, config)?;
        let list = PyList::empty(py);
        for n in self.space.neighbours(&c, kind) {
            list.append(config_dict(py, &self.space, &n)?)?;
        }
        Ok(list)
    }

    fn __repr__(&self) -> String {
        format!(
            "SearchSpace({} parameters, {} valid configurations)",
            self.space.dims(),
            self.space.size()
        )
    }
}

/// JSON of a Python option value (bool, int, float, str, or a list of them).
fn json_of(obj: &Bound<'_, PyAny>) -> PyResult<serde_json::Value> {
    if obj.is_instance_of::<pyo3::types::PyBool>() {
        return Ok(serde_json::Value::Bool(obj.extract()?));
    }
    if let Ok(i) = obj.extract::<i64>() {
        return Ok(i.into());
    }
    if let Ok(x) = obj.extract::<f64>() {
        return Ok(serde_json::Number::from_f64(x).map_or(serde_json::Value::Null, Into::into));
    }
    if let Ok(s) = obj.extract::<String>() {
        return Ok(s.into());
    }
    if let Ok(items) = obj.try_iter() {
        return items
            .map(|i| json_of(&i?))
            .collect::<PyResult<Vec<_>>>()
            .map(serde_json::Value::Array);
    }
    Err(PyTypeError::new_err(format!(
        "strategy option {} is not a bool, int, float, str or list",
        obj.repr().map_or_else(|_| "?".into(), |r| r.to_string())
    )))
}

fn failure_kind(name: &str) -> PyResult<FailureKind> {
    FailureKind::from_name(name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "failure must be \"compile\", \"runtime\", \"timeout\", \"wrong_output\" or \"invalid\", not {name:?}"
        ))
    })
}

/// A direction from Python (`"minimize"`/`"min"` or `"maximize"`/`"max"`).
fn parse_direction(name: &str) -> PyResult<Direction> {
    match name {
        "minimize" | "min" => Ok(Direction::Minimize),
        "maximize" | "max" => Ok(Direction::Maximize),
        other => Err(PyValueError::new_err(format!(
            "direction must be \"minimize\" or \"maximize\", not {other:?}"
        ))),
    }
}

/// A strategy (checked) from its name and a dict of its options.
fn strategy_of(
    name: &str,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Box<dyn ktune_core::Strategy + Send>> {
    let mut table = serde_json::Map::new();
    table.insert("name".into(), name.into());
    if let Some(options) = options {
        for (k, v) in options.iter() {
            table.insert(k.extract::<String>()?, json_of(&v)?);
        }
    }
    ktune_strategies::create_from_table(&table)
        .map(|(_, s)| s)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

fn core_error(e: ktune_core::CoreError) -> PyErr {
    KtuneError::new_err(e.to_string())
}

/// An ask/tell tuning study: a strategy proposes configurations (`ask`), you measure them
/// and report (`tell`), or `optimize(fn)` does both. With `storage="sqlite:///path.db"` (or
/// `"postgresql://..."`) every result is committed there before the strategy hears of it, a
/// study opened again on it resumes where it stopped, and any number of processes (and
/// `ktune tune --storage` workers of the same problem) share it: each configuration is
/// claimed before it is handed out, so none is measured twice and the budget holds for all.
#[pyclass(module = "ktune", unsendable, subclass)]
struct Study {
    space: Arc<SearchSpace>,
    session: Session<'static>,
    /// Asked and not yet handed out.
    queue: Vec<Configuration>,
    objective: String,
    stopped: Option<StopReason>,
    /// The study's storage, when it has one.
    shared: Option<Shared>,
    /// Configurations this object recorded (told or measured by `optimize`).
    told: std::collections::HashSet<Configuration>,
}

/// A study in a storage: the open storage and this process's part in it.
struct Shared {
    storage: Box<dyn ktune_core::Storage>,
    me: ktune_core::Participant,
}

/// Where a study is stored and what its workers measure on.
struct StorageChoice {
    location: Location,
    study: String,
    fingerprint: Fingerprint,
    device: Option<String>,
    allow_mixed_hardware: bool,
    lease: f64,
}

impl Drop for Study {
    fn drop(&mut self) {
        // Claims on configurations handed out and never told go back at once rather than
        // when their lease expires.
        if let Some(sh) = &mut self.shared {
            let _ = sh.storage.release(&sh.me.how.worker);
        }
    }
}

#[pymethods]
impl Study {
    #[new]
    #[pyo3(signature = (
        tune_params, restrictions=None, *, strategy="auto", strategy_options=None,
        objective="time", direction="minimize", storage=None, study_name="default",
        max_evals=None, time_limit=None, seed=0, device=None, allow_mixed_hardware=false,
        lease=600.0
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        tune_params: &Bound<'_, PyAny>,
        restrictions: Option<&Bound<'_, PyAny>>,
        strategy: &str,
        strategy_options: Option<&Bound<'_, PyDict>>,
        objective: &str,
        direction: &str,
        storage: Option<&str>,
        study_name: &str,
        max_evals: Option<i64>,
        time_limit: Option<f64>,
        seed: u64,
        device: Option<String>,
        allow_mixed_hardware: bool,
        lease: f64,
    ) -> PyResult<Self> {
        let space = if let Ok(space) = tune_params.cast::<SearchSpacePy>() {
            if restrictions.is_some_and(|r| !r.is_none()) {
                return Err(PyValueError::new_err(
                    "restrictions belong to the SearchSpace given as tune_params; give them there",
                ));
            }
            space.get().space.clone()
        } else {
            let dict = tune_params.cast::<PyDict>().map_err(|_| {
                PyTypeError::new_err(
                    "tune_params must be a dict of parameter values or a ktune.SearchSpace",
                )
            })?;
            Arc::new(build_space(dict, restrictions)?)
        };
        let direction = parse_direction(direction)?;
        let strategy = strategy_of(strategy, strategy_options)?;
        let budget = Budget {
            max_evaluations: max_evals.map(|m| count("max_evals", m)).transpose()?,
            max_seconds: time_limit_of(time_limit)?,
            ..Budget::default()
        };
        let storage = storage
            .map(|url| -> PyResult<StorageChoice> {
                let location =
                    Location::parse(url).map_err(|e| PyValueError::new_err(e.to_string()))?;
                let fingerprint = Fingerprint::new(
                    &space,
                    &format!(
                        r#"{{"runner":"python","direction":"{}"}}"#,
                        direction.name()
                    ),
                    objective,
                );
                Ok(StorageChoice {
                    location,
                    study: study_name.to_string(),
                    fingerprint,
                    device,
                    allow_mixed_hardware,
                    lease,
                })
            })
            .transpose()?;
        Study::build(space, strategy, budget, direction, objective, storage, seed)
    }

    /// A study of the problem a `ktune.toml` describes: its search space, `[strategy]`,
    /// `[budget]`, `[storage]` and the objective (with its direction) of its `[runner]`,
    /// read and checked as `ktune tune` reads them. Keyword arguments override the file.
    /// With a storage, the study is the one `ktune tune` records into (the same study name
    /// and problem fingerprint), so it resumes or extends a run of the command line.
    #[staticmethod]
    #[pyo3(signature = (
        path, *, strategy=None, strategy_options=None, storage=None, study_name=None,
        max_evals=None, time_limit=None, seed=0, device=None, allow_mixed_hardware=false,
        lease=600.0
    ))]
    #[allow(clippy::too_many_arguments)]
    fn from_spec(
        py: Python<'_>,
        path: std::path::PathBuf,
        strategy: Option<&str>,
        strategy_options: Option<&Bound<'_, PyDict>>,
        storage: Option<&str>,
        study_name: Option<String>,
        max_evals: Option<i64>,
        time_limit: Option<f64>,
        seed: u64,
        device: Option<String>,
        allow_mixed_hardware: bool,
        lease: f64,
    ) -> PyResult<Py<Study>> {
        let problem = ktune_problem::ProblemSpec::from_path(&path)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let space = Arc::new(
            problem
                .space
                .build()
                .map_err(|e| PyValueError::new_err(e.to_string()))?,
        );
        let strategy = match (strategy, &problem.strategy) {
            (Some(name), _) => strategy_of(name, strategy_options)?,
            (None, Some(s)) => s
                .create()
                .map_err(|e| PyValueError::new_err(e.to_string()))?,
            (None, None) => strategy_of("auto", strategy_options)?,
        };
        let budget = Budget {
            max_evaluations: max_evals
                .map(|m| count("max_evals", m))
                .transpose()?
                .or(problem.budget.max_evaluations),
            max_seconds: time_limit_of(time_limit)?.or(problem.budget.max_seconds),
            target: problem.budget.target,
        };
        let objective = problem
            .objective()
            .unwrap_or_else(|| ktune_core::Metric::new("time", Direction::Minimize));
        let location = match (storage, &problem.storage) {
            (Some(url), _) => {
                Some(Location::parse(url).map_err(|e| PyValueError::new_err(e.to_string()))?)
            }
            (None, Some(s)) => Some(s.location.clone()),
            (None, None) => None,
        };
        let storage = location.map(|location| StorageChoice {
            location,
            study: study_name.unwrap_or_else(|| problem.study_name()),
            fingerprint: problem.fingerprint(&space, &objective.name),
            device,
            allow_mixed_hardware,
            lease,
        });
        let study = Study::build(
            space,
            strategy,
            budget,
            objective.direction,
            &objective.name,
            storage,
            seed,
        )?;
        Py::new(py, study)
    }

    /// The next configuration to measure, as a dict, or `None` when the study is over (its
    /// budget spent, the space exhausted, or the strategy done).
    fn ask<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        match self.next(py)? {
            Some(c) => Ok(Some(config_dict(py, &self.space, &c)?)),
            None => Ok(None),
        }
    }

    /// Up to `n` configurations to measure at once (fewer near the end of the budget, an
    /// empty list when the study is over); tell each before the study's budget counts it.
    fn ask_batch<'py>(&mut self, py: Python<'py>, n: i64) -> PyResult<Bound<'py, PyList>> {
        let n = count("n", n)?;
        let list = PyList::empty(py);
        if n == 0 {
            return Ok(list);
        }
        self.refill(py, n)?;
        while list.len() < n {
            let Some(c) = self.queue.pop() else { break };
            list.append(config_dict(py, &self.space, &c)?)?;
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
        &mut self,
        config: &Bound<'_, PyDict>,
        value: Option<f64>,
        failure: Option<&str>,
        reason: &str,
        seconds: f64,
    ) -> PyResult<()> {
        let c = config_of(&self.space, config)?;
        let t = Timings {
            benchmark: seconds.max(0.0),
            ..Timings::default()
        };
        let outcome = match (value, failure) {
            (Some(_), Some(_)) => {
                return Err(PyValueError::new_err(
                    "give either a value or a failure, not both",
                ));
            }
            (Some(v), None) if v.is_finite() => Outcome::ok(vec![v], t),
            (Some(v), None) => {
                Outcome::failed(FailureKind::Runtime, format!("the objective was {v}"), t)
            }
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
        let recorded = self.session.history().contains(&c);
        if let Some(r) = recorded
            .then(|| self.session.records().iter().find(|r| r.config == c))
            .flatten()
        {
            let was = r
                .outcome
                .objective()
                .map_or_else(|| "as failed".to_string(), |v| format!("value {v}"));
            // The core drops a repeated record without a word. Told twice here, it is a
            // mistake to show; recorded elsewhere (another worker took over a claim that ran
            // out, an earlier run of a stored study), the first record stands, with a warning.
            if self.told.contains(&c) {
                return Err(PyValueError::new_err(format!(
                    "{} is already recorded ({was}): a study records each configuration once",
                    short_repr(config.as_any()),
                )));
            }
            let py = config.py();
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
        self.record(c, outcome)
    }

    /// Tunes `fn(config: dict) -> float` until the study's budget, `max_evals` more
    /// evaluations or `time_limit` more seconds are spent, whichever comes first. An
    /// exception raised by `fn` records the configuration as failed with its message and
    /// goes on; Ctrl-C stops after recording everything finished. Returns the best result.
    #[pyo3(signature = (func, max_evals=None, time_limit=None))]
    fn optimize<'py>(
        &mut self,
        py: Python<'py>,
        func: &Bound<'py, PyAny>,
        max_evals: Option<i64>,
        time_limit: Option<f64>,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let max_evals = max_evals.map(|m| count("max_evals", m)).transpose()?;
        let time_limit = time_limit_of(time_limit)?;
        let started = Instant::now();
        let mut done = 0usize;
        loop {
            if max_evals.is_some_and(|m| done >= m)
                || time_limit.is_some_and(|t| started.elapsed().as_secs_f64() >= t)
            {
                break;
            }
            if let Err(e) = py.check_signals() {
                self.abandon_queue();
                return Err(e);
            }
            let Some(c) = self.next(py)? else { break };
            let arg = config_dict(py, &self.space, &c)?;
            let t = Instant::now();
            let result = func.call1((arg,));
            let seconds = t.elapsed().as_secs_f64();
            let timings = Timings {
                benchmark: seconds,
                ..Timings::default()
            };
            let outcome = match result {
                Ok(v) => match v.extract::<f64>() {
                    Ok(x) if x.is_finite() => Outcome::ok(vec![x], timings),
                    Ok(x) => Outcome::failed(
                        FailureKind::Runtime,
                        format!("the objective returned {x}"),
                        timings,
                    ),
                    Err(why) => Outcome::failed(
                        FailureKind::Runtime,
                        format!(
                            "the objective returned {}, not a number ({})",
                            short_repr(&v),
                            why.value(py)
                        ),
                        timings,
                    ),
                },
                Err(e) if e.is_instance_of::<PyKeyboardInterrupt>(py) => {
                    // Ctrl-C: the interrupted measurement is not recorded (a later run
                    // measures it), everything before it is.
                    self.session.abandon(std::slice::from_ref(&c), false);
                    self.abandon_queue();
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
            self.record(c, outcome)?;
            done += 1;
        }
        self.best(py)
    }

    /// The best result so far: `{"config": {...}, "value": float}`, or `None`.
    #[getter]
    fn best<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(r) = self.session.best() else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("config", config_dict(py, &self.space, &r.config)?)?;
        d.set_item("value", r.outcome.objective())?;
        Ok(Some(d))
    }

    /// Every result of the study, in order: dicts with `config`, `value` (or `None`),
    /// `status` (`"ok"` or the failure's kind) and `reason`.
    #[getter]
    fn results<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let list = PyList::empty(py);
        for r in self.session.records() {
            let d = PyDict::new(py);
            d.set_item("config", config_dict(py, &self.space, &r.config)?)?;
            d.set_item("value", r.outcome.objective())?;
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
            list.append(d)?;
        }
        // `ktune.ResultList`: a list with `to_pandas()`.
        py.import("ktune")?.getattr("ResultList")?.call1((list,))
    }

    /// The objective's name.
    #[getter]
    fn objective(&self) -> &str {
        &self.objective
    }

    /// Why the study stopped (`"evaluations"`, `"time"`, `"space_exhausted"`, ...), or
    /// `None` while it goes on.
    #[getter]
    fn stopped(&self) -> Option<String> {
        self.stopped.map(|s| s.name().to_string())
    }

    /// The search space.
    #[getter]
    fn space(&self) -> SearchSpacePy {
        SearchSpacePy {
            space: self.space.clone(),
        }
    }

    fn __len__(&self) -> usize {
        self.session.records().len()
    }
}

impl Study {
    /// A study over `space`, recording into `storage` (an SQLite study: its location, name
    /// and problem fingerprint) when given, resumed from what it holds.
    fn build(
        space: Arc<SearchSpace>,
        strategy: Box<dyn ktune_core::Strategy + Send>,
        budget: Budget,
        direction: Direction,
        objective: &str,
        storage: Option<StorageChoice>,
        seed: u64,
    ) -> PyResult<Study> {
        let store_error = |e: ktune_core::CoreError| KtuneError::new_err(e.to_string());
        // A shared study's worker joins first: its rank picks its stream of random numbers.
        let joined = match storage {
            None => None,
            Some(choice) => {
                let lease = ktune_core::checked_seconds(choice.lease)
                    .ok()
                    .filter(|l| !l.is_zero())
                    .ok_or_else(|| {
                        PyValueError::new_err(format!(
                            "lease must be a positive number of seconds, not {}",
                            choice.lease
                        ))
                    })?;
                let mut storage = choice
                    .location
                    .open_study(&choice.study, &choice.fingerprint)
                    .map_err(|e| KtuneError::new_err(e.to_string()))?;
                let worker = ktune_core::Worker::local(choice.device);
                let rank = storage
                    .join(&worker, choice.allow_mixed_hardware)
                    .map_err(store_error)?;
                storage
                    .set_meta(ktune_store::DIRECTION_KEY, direction.name())
                    .map_err(store_error)?;
                if let Some(m) = budget.max_evaluations {
                    storage
                        .set_meta(ktune_store::BUDGET_KEY, &m.to_string())
                        .map_err(store_error)?;
                }
                Some((storage, worker, lease, rank))
            }
        };
        let rank = joined.as_ref().map_or(0, |j| j.3);
        let mut session = Session::new(
            SpaceRef::Shared(space.clone()),
            strategy,
            budget.clone(),
            direction,
            Rng::seed_from_u64(ktune_core::worker_seed(seed, rank)),
        )
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let shared = match joined {
            None => None,
            Some((mut storage, worker, lease, _)) => {
                let mut me = ktune_core::Participant::new(ktune_core::Cooperation {
                    worker: worker.id,
                    lease,
                    poll: std::time::Duration::from_millis(200),
                    batch: 1,
                });
                // Resumed: what the study holds is known before the first ask.
                me.sync(&mut session, storage.as_mut())
                    .map_err(store_error)?;
                Some(Shared { storage, me })
            }
        };
        Ok(Study {
            space,
            session,
            queue: Vec::new(),
            objective: objective.to_string(),
            stopped: None,
            shared,
            told: std::collections::HashSet::new(),
        })
    }

    /// Fills the queue with up to `n` configurations to measure (claimed in the storage,
    /// when there is one); false when the study is over.
    fn refill(&mut self, py: Python<'_>, n: usize) -> PyResult<bool> {
        while self.queue.is_empty() {
            if self.stopped.is_some() {
                return Ok(false);
            }
            let Some(sh) = &mut self.shared else {
                match self.session.ask(n).map_err(core_error)? {
                    Asked::Evaluate(configs) => self.queue.extend(configs.into_iter().rev()),
                    Asked::Stop(reason) => self.stopped = Some(reason),
                }
                continue;
            };
            sh.me.how.batch = n.max(1);
            match sh
                .me
                .turn(&mut self.session, sh.storage.as_mut(), &mut |_, _| {})
                .map_err(core_error)?
            {
                ktune_core::Turn::Evaluate(configs) => self.queue.extend(configs.into_iter().rev()),
                ktune_core::Turn::Stop(reason) => self.stopped = Some(reason),
                ktune_core::Turn::Wait => {
                    // Other processes hold the rest of the budget: their records, or the
                    // expiry of their claims, free it. Ctrl-C interrupts the wait.
                    py.check_signals()?;
                    let poll = sh.me.how.poll;
                    py.detach(|| std::thread::sleep(poll));
                }
            }
        }
        Ok(true)
    }

    /// Records the outcome of a configuration this study handed out (in the storage first).
    fn record(&mut self, config: Configuration, outcome: Outcome) -> PyResult<()> {
        self.queue.retain(|q| *q != config);
        self.told.insert(config.clone());
        match &mut self.shared {
            None => self
                .session
                .tell(vec![(config, outcome)])
                .map_err(core_error),
            Some(sh) => {
                let storage = sh.storage.as_mut();
                // A handed-out configuration's claim lives until its lease runs out; a
                // heartbeat on every tell keeps the others alive while they are measured.
                storage
                    .heartbeat(&sh.me.how.worker, sh.me.how.lease)
                    .map_err(core_error)?;
                sh.me
                    .record(
                        &mut self.session,
                        storage,
                        vec![(config, outcome)],
                        &mut |_, _| {},
                    )
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
        self.session.abandon(&rest, false);
        if let Some(sh) = &mut self.shared {
            let _ = sh.storage.release(&sh.me.how.worker);
        }
    }
}

/// Replays a brute-forced space (a Kernel Tuner cache file, `.json` or `.json.gz`): runs
/// `strategy` (with `strategy_options`) once per seed `0..seeds` with `budget` evaluations
/// (default: the score's, at least 220) and returns per run the objective values in
/// evaluation order (`None` where a configuration failed), the simulated seconds, and the
/// performance score (0: random search, 1: the optimum at once), with the space's summary.
#[pyfunction]
#[pyo3(signature = (cache_file, strategy="auto", strategy_options=None, *, seeds=10, budget=None, objective="time", direction=None))]
#[allow(clippy::too_many_arguments)]
fn simulate<'py>(
    py: Python<'py>,
    cache_file: std::path::PathBuf,
    strategy: &str,
    strategy_options: Option<&Bound<'py, PyDict>>,
    seeds: i64,
    budget: Option<i64>,
    objective: &str,
    direction: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let seeds = count("seeds", seeds)? as u64;
    let budget = budget.map(|b| count("budget", b)).transpose()?;
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
    strategy_of(strategy, strategy_options)?;
    let runs = PyList::empty(py);
    for seed in 0..seeds {
        let mut s = strategy_of(strategy, strategy_options)?;
        let mut runner = sim.runner();
        let run = py
            .detach(|| {
                ktune_core::Tuner::new(
                    sim.space(),
                    &mut runner,
                    Budget {
                        max_evaluations: Some(budget),
                        ..Budget::default()
                    },
                )
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
    out.set_item("runs", runs)?;
    Ok(out)
}

/// The studies of a storage (`sqlite:///path.db` or `postgresql://...`), oldest first: per
/// study its name, evaluations, failures, best objective value (in its direction), direction,
/// budget, workers and when it was made (seconds since the Unix epoch), as dicts.
#[pyfunction]
fn study_summaries<'py>(py: Python<'py>, storage: &str) -> PyResult<Bound<'py, PyList>> {
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

/// The compiled core of the `ktune` package.
#[pymodule]
fn _ktune(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SearchSpacePy>()?;
    m.add_class::<Study>()?;
    m.add_class::<kernel::CudaKernel>()?;
    m.add_function(wrap_pyfunction!(kernel::cuda_available, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(study_summaries, m)?)?;
    m.add("KtuneError", m.py().get_type::<KtuneError>())?;
    // The crate's version is the wheel's (pyproject.toml takes it from Cargo.toml).
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
