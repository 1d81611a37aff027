//! Values between Python and ktune: parameter values, configurations as dicts, counts and
//! time limits from keyword arguments, option values as JSON, directions, failure kinds, and
//! errors as Python exceptions.

use ktune_core::{Direction, FailureKind};
use ktune_space::{Configuration, ParamKind, Parameter, SearchSpace, Value};
use pyo3::IntoPyObjectExt;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::KtuneError;

/// A Python value of a tunable parameter.
pub(crate) fn value_of(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Value> {
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

pub(crate) fn value_to_py(py: Python<'_>, v: &Value) -> PyResult<Py<PyAny>> {
    match v {
        Value::Int(i) => i.into_py_any(py),
        Value::Real(x) => x.into_py_any(py),
        Value::Bool(b) => b.into_py_any(py),
        Value::Str(s) => s.into_py_any(py),
        Value::Perm(p) => p.clone().into_py_any(py),
    }
}

/// A configuration as a dict of parameter values.
pub(crate) fn config_dict<'py>(
    py: Python<'py>,
    space: &SearchSpace,
    config: &[u32],
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (p, v) in space.params().iter().zip(space.values(config)) {
        // A permutation as its items in order, as the README, the JSON export and the
        // constraints show it (`["i", "k", "j"]`).
        match p.ordering(v) {
            Some(names) => d.set_item(p.name(), names)?,
            None => d.set_item(p.name(), value_to_py(py, v)?)?,
        }
    }
    Ok(d)
}

/// A permutation parameter's value from Python: its items in order (a list or tuple of the
/// item names, as `ask` hands it out, or the text `"i,k,j"` the command runner gives a
/// program), or their positions in the parameter's `items` (`[0, 2, 1]`).
fn ordering_of(p: &Parameter, items: &[String], v: &Bound<'_, PyAny>) -> PyResult<Value> {
    let bad = |why: String| {
        PyValueError::new_err(format!(
            "`{}`: {} is not an ordering of its items {} ({why})",
            p.name(),
            short_repr(v),
            items.join(", ")
        ))
    };
    let parts: Vec<Bound<'_, PyAny>> = if let Ok(text) = v.extract::<String>() {
        let py = v.py();
        text.split(',')
            .map(|t| t.trim().into_pyobject(py).map(|s| s.into_any()))
            .collect::<Result<_, _>>()?
    } else if v.is_instance_of::<pyo3::types::PyList>()
        || v.is_instance_of::<pyo3::types::PyTuple>()
    {
        v.try_iter()?.collect::<PyResult<_>>()?
    } else {
        return Err(bad("give a list of the item names in order".into()));
    };
    let mut order = Vec::with_capacity(parts.len());
    for part in &parts {
        let position = if let Ok(name) = part.extract::<String>() {
            items
                .iter()
                .position(|i| *i == name)
                .ok_or_else(|| bad(format!("no item `{name}`")))?
        } else if let Ok(i) = part.extract::<usize>()
            && !part.is_instance_of::<pyo3::types::PyBool>()
        {
            i
        } else {
            return Err(bad("each entry is an item's name".into()));
        };
        order.push(u32::try_from(position).map_err(|_| bad("a position out of range".into()))?);
    }
    let mut seen = vec![false; items.len()];
    for &i in &order {
        match seen.get_mut(i as usize) {
            Some(s) if !*s => *s = true,
            Some(_) => return Err(bad("an item twice".into())),
            None => return Err(bad(format!("position {i} out of range"))),
        }
    }
    if order.len() != items.len() {
        return Err(bad(format!("{} of {} items", order.len(), items.len())));
    }
    Ok(Value::Perm(order))
}

/// A whole-number argument as Python gave it: its value, or the text of an int out of range
/// (negative, or beyond 2⁶⁴ − 1), which [`Whole::get`] names with the argument (pyo3's own
/// conversion raises an `OverflowError` that names neither the argument nor why). Anything
/// but an int is a `TypeError`, which pyo3 prefixes with the argument's name.
#[derive(Clone, Debug)]
pub(crate) struct Whole(Result<u64, String>);

impl<'a, 'py> FromPyObject<'a, 'py> for Whole {
    type Error = PyErr;

    fn extract(obj: pyo3::Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if obj.is_instance_of::<pyo3::types::PyBool>()
            || !obj.is_instance_of::<pyo3::types::PyInt>()
        {
            return Err(PyTypeError::new_err(format!(
                "expected a whole number (an int), not {}",
                short_repr(&obj)
            )));
        }
        Ok(Whole(obj.extract::<u64>().map_err(|_| short_repr(&obj))))
    }
}

impl Whole {
    /// 0, as a default.
    pub(crate) const ZERO: Whole = Whole::of(0);

    /// `v`, as a default.
    pub(crate) const fn of(v: u64) -> Whole {
        Whole(Ok(v))
    }

    /// The value of the argument `name`.
    pub(crate) fn get(&self, name: &str) -> PyResult<u64> {
        self.0.clone().map_err(|text| {
            PyValueError::new_err(if text.starts_with('-') {
                format!("{name} must be a whole number, at least 0, not {text}")
            } else {
                format!("{name} is too large: {text} (at most {})", u64::MAX)
            })
        })
    }

    /// The value of the argument `name` as a count.
    pub(crate) fn count(&self, name: &str) -> PyResult<usize> {
        let v = self.get(name)?;
        usize::try_from(v).map_err(|_| PyValueError::new_err(format!("{name} is too large: {v}")))
    }
}

/// A time limit from Python: positive (a NaN one would never be reached); infinity is none.
pub(crate) fn time_limit_of(v: Option<f64>) -> PyResult<Option<f64>> {
    match v {
        Some(t) if t == f64::INFINITY => Ok(None),
        Some(t) if !(t.is_finite() && t > 0.0) => Err(PyValueError::new_err(format!(
            "time_limit must be a positive number of seconds, not {t}"
        ))),
        _ => Ok(v),
    }
}

/// `repr(value)`, cut to 80 characters (an objective may return anything, of any size).
pub(crate) fn short_repr(value: &Bound<'_, PyAny>) -> String {
    let r = value.repr().map_or_else(|_| "?".into(), |r| r.to_string());
    match r.char_indices().nth(80) {
        Some((cut, _)) => format!("{}...", &r[..cut]),
        None => r,
    }
}

/// A dict of parameter values as a configuration of `space` (constraints not checked).
pub(crate) fn config_of(
    space: &SearchSpace,
    config: &Bound<'_, PyDict>,
) -> PyResult<Configuration> {
    let mut values = Vec::with_capacity(space.dims());
    for p in space.params() {
        let v = config.get_item(p.name())?.ok_or_else(|| {
            PyValueError::new_err(format!("the configuration has no `{}`", p.name()))
        })?;
        values.push(match p.kind() {
            ParamKind::Permutation { items } => ordering_of(p, items, &v)?,
            _ => value_of(&v, p.name())?,
        });
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

/// JSON of a Python option value (bool, int, float, str, or a list of them).
pub(crate) fn json_of(obj: &Bound<'_, PyAny>) -> PyResult<serde_json::Value> {
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

pub(crate) fn failure_kind(name: &str) -> PyResult<FailureKind> {
    FailureKind::from_name(name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "failure must be \"compile\", \"runtime\", \"timeout\", \"wrong_output\" or \"invalid\", not {name:?}"
        ))
    })
}

/// A direction from Python (`"minimize"`/`"min"` or `"maximize"`/`"max"`).
pub(crate) fn parse_direction(name: &str) -> PyResult<Direction> {
    match name {
        "minimize" | "min" => Ok(Direction::Minimize),
        "maximize" | "max" => Ok(Direction::Maximize),
        other => Err(PyValueError::new_err(format!(
            "direction must be \"minimize\" or \"maximize\", not {other:?}"
        ))),
    }
}

/// A strategy from its name and a dict of its options, checked once.
pub(crate) fn strategy_of(
    name: &str,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<ktune_strategies::CheckedStrategy> {
    let mut table = ktune_strategies::Options::new();
    if let Some(options) = options {
        for (k, v) in options.iter() {
            table.insert(k.extract::<String>()?, json_of(&v)?);
        }
    }
    ktune_strategies::CheckedStrategy::new(name, &table)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

pub(crate) fn core_error(e: ktune_core::CoreError) -> PyErr {
    KtuneError::new_err(e.to_string())
}

/// How a prior or a list of them was named: a path (`str` or `os.PathLike`) or a storage URL
/// with `#study`, or a list of those.
pub(crate) fn prior_names(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<String>> {
    let Some(obj) = obj else {
        return Ok(Vec::new());
    };
    let one = |o: &Bound<'_, PyAny>| -> PyResult<String> {
        if let Ok(s) = o.extract::<String>() {
            return Ok(s);
        }
        o.extract::<std::path::PathBuf>()
            .map(|p| p.display().to_string())
            .map_err(|_| {
                PyTypeError::new_err(format!(
                    "a prior is a file path or a storage URL, not {}",
                    short_repr(o)
                ))
            })
    };
    if obj.is_instance_of::<pyo3::types::PyString>() || obj.hasattr("__fspath__")? {
        return Ok(vec![one(obj)?]);
    }
    obj.try_iter()
        .map_err(|_| {
            PyTypeError::new_err(format!(
                "priors is a list of file paths or storage URLs, not {}",
                short_repr(obj)
            ))
        })?
        .map(|o| one(&o?))
        .collect()
}

/// The priors `names` name, read (relative to the working directory) for a study of
/// `objective`.
pub(crate) fn load_priors(
    names: &[String],
    objective: &str,
) -> PyResult<Vec<ktune_problem::LoadedPrior>> {
    ktune_problem::prior::load_priors(names, std::path::Path::new("."), objective)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}
