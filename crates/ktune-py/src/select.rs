//! `ktune.select(wisdom, device, problem_size)`: the configuration `ktune export`'s wisdom
//! file gives a device and problem size, by [`ktune_select`]'s rule (the one the C header
//! follows too).

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::KtuneError;

fn value_to_py(py: Python<'_>, v: &ktune_select::Value) -> PyResult<Py<PyAny>> {
    Ok(match v {
        ktune_select::Value::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        ktune_select::Value::Real(x) => x.into_pyobject(py)?.into_any().unbind(),
        ktune_select::Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        ktune_select::Value::Str(s) => s.into_pyobject(py)?.into_any().unbind(),
    })
}

/// The configuration for `device` at `problem_size` (an int, or a list or tuple of ints:
/// missing extents are 1, extents beyond the third multiply into it, as in Rust and C) from
/// the wisdom file `wisdom`: a dict with `config` (the parameters' values),
/// `matched` (`"exact"`, `"nearest_size"`, `"same_architecture"`, `"same_vendor"` or
/// `"default"`), and the chosen record's `device`, `problem_size` and `objective` (None for
/// the default); None where nothing matches and the file has no default. `kernel` checks that
/// the file is that kernel's.
#[pyfunction]
#[pyo3(signature = (wisdom, device, problem_size, kernel=None))]
pub(crate) fn select<'py>(
    py: Python<'py>,
    wisdom: std::path::PathBuf,
    device: &str,
    problem_size: &Bound<'py, PyAny>,
    kernel: Option<&str>,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let whole = |x: &Bound<'py, PyAny>| -> PyResult<u64> {
        if x.is_instance_of::<pyo3::types::PyBool>() || !x.is_instance_of::<pyo3::types::PyInt>() {
            return Err(PyTypeError::new_err(format!(
                "problem_size holds {}, not a whole number",
                crate::convert::short_repr(x)
            )));
        }
        x.extract::<u64>().map_err(|_| {
            PyValueError::new_err(format!(
                "problem_size holds {}: give whole numbers from 0 to 2**64 - 1",
                crate::convert::short_repr(x)
            ))
        })
    };
    let size: Vec<u64> = if problem_size.is_instance_of::<PyList>()
        || problem_size.is_instance_of::<pyo3::types::PyTuple>()
    {
        problem_size
            .try_iter()?
            .map(|x| whole(&x?))
            .collect::<PyResult<_>>()?
    } else {
        vec![whole(problem_size)?]
    };
    let shown = wisdom.display().to_string();
    let w = match kernel {
        Some(k) => ktune_select::Wisdom::read_for(&wisdom, k),
        None => ktune_select::Wisdom::read(&wisdom),
    }
    .map_err(|e| match e {
        ktune_select::WisdomError::Io { .. } => KtuneError::new_err(e.to_string()),
        e => KtuneError::new_err(format!("wisdom file `{shown}`: {e}")),
    })?;
    let Some(s) = w.select(device, &size) else {
        return Ok(None);
    };
    let out = PyDict::new(py);
    let config = PyDict::new(py);
    for (name, v) in w.parameters.iter().zip(s.config) {
        config.set_item(name, value_to_py(py, v)?)?;
    }
    out.set_item("config", config)?;
    out.set_item("matched", s.matched.name())?;
    out.set_item("device", s.record.map(|r| r.device.clone()))?;
    out.set_item("problem_size", s.record.map(|r| r.problem_size.to_vec()))?;
    out.set_item("objective", s.record.map(|r| r.objective))?;
    Ok(Some(out))
}
