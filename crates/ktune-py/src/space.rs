//! `ktune.SearchSpace`: Kernel Tuner's `tune_params` and `restrictions` as a search space.

use std::sync::Arc;

use ktune_core::Rng;
use ktune_space::{Neighbourhood, Parameter, SearchSpace, Value};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rand::{RngExt as _, SeedableRng};

use crate::KtuneError;
use crate::convert::{Whole, config_dict, config_of, short_repr, value_of};

/// The parameters of a `tune_params` dict, in its order: integers, reals, strings, or a
/// mixture (kept as ordered values).
fn parameters(tune_params: &Bound<'_, PyDict>) -> PyResult<Vec<Parameter>> {
    let mut params = Vec::with_capacity(tune_params.len());
    for (key, values) in tune_params.iter() {
        let name: String = key
            .extract()
            .map_err(|_| PyTypeError::new_err("tune_params: every key must be a str"))?;
        // A str or a dict iterates too (its characters, its keys), which is never what a
        // parameter's values mean.
        if values.is_instance_of::<pyo3::types::PyString>()
            || values.is_instance_of::<pyo3::types::PyDict>()
        {
            return Err(PyTypeError::new_err(format!(
                "tune_params[{name:?}] must be a list of values, not {} (write [{}] for one value)",
                short_repr(&values),
                short_repr(&values)
            )));
        }
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
pub(crate) fn build_space(
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

/// A search space: the configurations of `tune_params` that satisfy every restriction.
///
/// `tune_params` maps each parameter to its list of values (ints, floats, strs or bools);
/// `restrictions` are expressions over the parameters (`"block_size_x * block_size_y <=
/// 1024"`), all of which a configuration must satisfy.
#[pyclass(name = "SearchSpace", module = "ktune", frozen)]
pub(crate) struct SearchSpacePy {
    pub(crate) space: Arc<SearchSpace>,
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
    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        rank: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let size = self.space.size();
        // An int beyond 64 bits is out of range too (pyo3 alone says only "overflow").
        let rank: i64 = match rank.extract::<i64>() {
            Ok(r) => r,
            Err(_) if rank.is_instance_of::<pyo3::types::PyInt>() => {
                return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                    "index {} is out of range for a space of {size} configurations",
                    short_repr(rank)
                )));
            }
            Err(_) => {
                return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                    "a space is indexed by an int (a configuration's rank), not {}",
                    short_repr(rank)
                )));
            }
        };
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
    #[pyo3(signature = (n=Whole::of(1), seed=None))]
    fn sample<'py>(
        &self,
        py: Python<'py>,
        n: Whole,
        seed: Option<Whole>,
    ) -> PyResult<Bound<'py, PyList>> {
        let n = n.count("n")?;
        let seed = seed.map(|s| s.get("seed")).transpose()?;
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
