//! ktune from Python: `ktune.SearchSpace` (Kernel Tuner's `tune_params` and `restrictions`),
//! `ktune.Study` (ask/tell on the same study path as the command line), `tune_kernel`'s CUDA
//! runner, the notebook helpers `simulate` and `study_summaries`, and `select` (a tuned
//! configuration from a wisdom file). This module only
//! registers them; each lives in a file of its own.

use pyo3::create_exception;
use pyo3::prelude::*;

mod convert;
mod kernel;
mod report;
mod select;
mod simulate;
mod space;
mod study;

pub(crate) use convert::config_of;
pub(crate) use space::SearchSpacePy;
use study::Study;

create_exception!(
    ktune,
    KtuneError,
    pyo3::exceptions::PyException,
    "An error of ktune (a storage that cannot be opened or written, a study of another problem)."
);

/// The compiled core of the `ktune` package.
#[pymodule]
fn _ktune(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SearchSpacePy>()?;
    m.add_class::<Study>()?;
    m.add_class::<kernel::Kernel>()?;
    m.add_function(wrap_pyfunction!(kernel::cuda_available, m)?)?;
    m.add_function(wrap_pyfunction!(kernel::opencl_available, m)?)?;
    m.add_function(wrap_pyfunction!(simulate::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(simulate::study_summaries, m)?)?;
    m.add_function(wrap_pyfunction!(select::select, m)?)?;
    m.add_function(wrap_pyfunction!(report::report, m)?)?;
    m.add("KtuneError", m.py().get_type::<KtuneError>())?;
    // The crate's version is the wheel's (pyproject.toml takes it from Cargo.toml).
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
