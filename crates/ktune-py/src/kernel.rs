//! `_ktune.CudaKernel`: the CUDA runner for `ktune.tune_kernel`, built from what Kernel
//! Tuner's `tune_kernel` takes (kernel source text, problem size, grid divisors, NumPy arrays
//! as raw bytes with their dtype) instead of a `ktune.toml`.
//!
//! Everything is checked when the object is made, before any GPU is touched, so that a
//! mistake in the arguments is reported on a machine without one too; `open()` then loads
//! the driver and uploads the arguments.

use std::path::PathBuf;

use ktune_core::{Outcome, Runner};
use ktune_runners::cuda::data::{DType, HostArg, HostConstant};
use ktune_runners::cuda::{CudaObjective, Problem, SizeSpec};
use ktune_runners::{CudaError, CudaRunner, CudaSpec};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::convert::Whole;
use crate::{KtuneError, SearchSpacePy, config_of};

/// A kernel argument as the Python side hands it over: name, NumPy `dtype.str`, the
/// elements' bytes (C order), and whether it is an array (else a scalar).
type RawArgument<'py> = (String, String, Bound<'py, PyBytes>, bool);

/// The CUDA runner for one kernel of `tune_kernel`: construction checks, `open()` opens the
/// GPU, `evaluate(configs)` measures.
#[pyclass(name = "CudaKernel", module = "ktune", unsendable)]
pub(crate) struct CudaKernel {
    space: std::sync::Arc<ktune_space::SearchSpace>,
    /// Until `open()`.
    problem: Option<Problem>,
    runner: Option<CudaRunner>,
    iterations: usize,
    compiler_options: Vec<String>,
    /// Why the runner stopped for good (a fault that poisoned the CUDA context, outputs that
    /// all differ from `answer`).
    stopped: Option<String>,
}

fn dtype_of(what: &str, descr: &str) -> PyResult<DType> {
    DType::from_npy_descr(descr).ok_or_else(|| {
        PyValueError::new_err(format!(
            "{what}: a kernel argument cannot have NumPy dtype `{descr}`; use float32, float64, \
             int8, int16, int32, int64, uint8, uint16, uint32 or uint64 (little-endian)"
        ))
    })
}

/// Kernel Tuner's messages name its arguments, not the `[runner]` section of a spec.
fn spec_message(e: CudaError) -> PyErr {
    let text = e.to_string().replace("[runner] ", "");
    match e {
        CudaError::Spec(_) | CudaError::Source { .. } => PyValueError::new_err(text),
        _ => KtuneError::new_err(text),
    }
}

#[pymethods]
impl CudaKernel {
    #[new]
    #[pyo3(signature = (
        space, kernel_name, source, source_name, problem_size, arguments, *, answers=None,
        atol=1e-6, constants=None, block_size_names=None, grid_div_x=None, grid_div_y=None,
        grid_div_z=None, shared_memory=None, compiler_options=None, device=Whole::ZERO, iterations=Whole::of(7),
        template_args=None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        space: &SearchSpacePy,
        kernel_name: String,
        source: String,
        source_name: String,
        problem_size: Vec<Bound<'_, PyAny>>,
        arguments: Vec<RawArgument<'_>>,
        answers: Option<Vec<Option<Bound<'_, PyBytes>>>>,
        atol: f64,
        constants: Option<Vec<(String, String, Bound<'_, PyBytes>)>>,
        block_size_names: Option<Vec<String>>,
        grid_div_x: Option<Vec<String>>,
        grid_div_y: Option<Vec<String>>,
        grid_div_z: Option<Vec<String>>,
        shared_memory: Option<String>,
        compiler_options: Option<Vec<String>>,
        device: Whole,
        iterations: Whole,
        template_args: Option<Vec<String>>,
    ) -> PyResult<Self> {
        let device = device.count("device")?;
        let iterations = iterations.count("iterations")?;
        if problem_size.is_empty() || problem_size.len() > 3 {
            return Err(PyValueError::new_err(format!(
                "problem_size has {} entries; give one to three (x, y, z)",
                problem_size.len()
            )));
        }
        let problem_size = problem_size
            .iter()
            .enumerate()
            .map(|(i, p)| {
                if let Ok(n) = p.extract::<i64>() {
                    Ok(SizeSpec::Int(n))
                } else if let Ok(s) = p.extract::<String>() {
                    Ok(SizeSpec::Expr(s))
                } else {
                    Err(PyValueError::new_err(format!(
                        "problem_size[{i}] is {}; give an int or the name of a parameter (an expression of the parameters)",
                        p.repr().map_or_else(|_| "?".into(), |r| r.to_string())
                    )))
                }
            })
            .collect::<PyResult<Vec<_>>>()?;
        if iterations == 0 {
            return Err(PyValueError::new_err("iterations must be at least 1"));
        }
        if atol.is_nan() || atol < 0.0 {
            return Err(PyValueError::new_err(format!(
                "atol must be at least 0, not {atol}"
            )));
        }
        if let Some(a) = &answers
            && a.len() != arguments.len()
        {
            return Err(PyValueError::new_err(format!(
                "answer has {} entries but there are {} arguments; give one per argument (None where nothing is checked)",
                a.len(),
                arguments.len()
            )));
        }
        let mut args = Vec::with_capacity(arguments.len());
        for (i, (name, descr, data, is_array)) in arguments.iter().enumerate() {
            let what = format!("arguments[{i}]");
            let dtype = dtype_of(&what, descr)?;
            let bytes = data.as_bytes().to_vec();
            let expected = answers
                .as_ref()
                .and_then(|a| a[i].as_ref())
                .map(|b| b.as_bytes().to_vec());
            if *is_array {
                if let Some(e) = &expected
                    && e.len() != bytes.len()
                {
                    return Err(PyValueError::new_err(format!(
                        "answer[{i}] holds {} bytes but arguments[{i}] holds {}; the expected output must have the argument's size and dtype",
                        e.len(),
                        bytes.len()
                    )));
                }
                args.push(HostArg::Array {
                    name: name.clone(),
                    dtype,
                    bytes,
                    output: expected.is_some(),
                    expected,
                });
            } else {
                if expected.is_some() {
                    return Err(PyValueError::new_err(format!(
                        "answer[{i}] is given, but arguments[{i}] is a scalar, which a kernel cannot change; give None there"
                    )));
                }
                if bytes.len() != dtype.size() {
                    return Err(PyValueError::new_err(format!(
                        "{what}: a scalar of dtype `{descr}` has {} bytes, not {}",
                        dtype.size(),
                        bytes.len()
                    )));
                }
                args.push(HostArg::Scalar {
                    name: name.clone(),
                    dtype,
                    bytes,
                });
            }
        }
        let mut host_constants = Vec::new();
        for (name, descr, data) in constants.unwrap_or_default() {
            dtype_of(&format!("cmem_args[{name:?}]"), &descr)?;
            let name = std::ffi::CString::new(name)
                .map_err(|_| PyValueError::new_err("cmem_args: a name contains a NUL byte"))?;
            host_constants.push(HostConstant {
                name,
                bytes: data.as_bytes().to_vec(),
            });
        }
        let compiler_options = compiler_options.unwrap_or_default();
        let spec = CudaSpec {
            kind: None,
            source: PathBuf::from(&source_name),
            kernel: kernel_name,
            template_args: template_args.unwrap_or_default(),
            problem_size,
            block_size_names,
            grid_div_x,
            grid_div_y,
            grid_div_z,
            shared_memory,
            compiler_options: compiler_options.clone(),
            device,
            // Kernel Tuner's `iterations`: that many timed launches, their mean the time.
            warmup: None,
            repeat: Some(iterations),
            measure: None,
            flush_l2: false,
            clock_tolerance: 0.05,
            kernel_timeout: 10.0,
            jobs: None,
            objective: CudaObjective::Time,
            objectives: Vec::new(),
            flops: None,
            power: Some(false),
            power_seconds: 0.5,
            arguments: Vec::new(),
            constants: Vec::new(),
            verify: answers
                .is_some()
                .then_some(ktune_runners::cuda::VerifySpec {
                    atol,
                    rtol: 0.0,
                    reference: None,
                }),
        };
        let problem = Problem::from_parts(
            &spec,
            &space.space,
            source,
            PathBuf::from(source_name),
            args,
            host_constants,
        )
        .map_err(spec_message)?;
        Ok(CudaKernel {
            space: space.space.clone(),
            problem: Some(problem),
            runner: None,
            iterations,
            compiler_options,
            stopped: None,
        })
    }

    /// Loads the CUDA driver and NVRTC, opens the device and uploads the arguments. Raises
    /// `KtuneError` saying what is missing on a machine without a GPU.
    fn open(&mut self) -> PyResult<()> {
        if self.runner.is_some() {
            return Ok(());
        }
        let problem = self
            .problem
            .take()
            .ok_or_else(|| KtuneError::new_err("the kernel could not be opened before"))?;
        let runner = CudaRunner::open(problem, &self.space).map_err(spec_message)?;
        self.runner = Some(runner);
        Ok(())
    }

    /// Configurations compiled in parallel: ask the strategy for this many at a time.
    #[getter]
    fn jobs(&self) -> usize {
        self.runner.as_ref().map_or(1, CudaRunner::jobs)
    }

    /// Why the runner stopped for good, or `None`.
    #[getter]
    fn stopped(&self) -> Option<String> {
        self.stopped.clone()
    }

    /// Measures `configs` (dicts of parameter values): per configuration a dict with
    /// `status` (`"ok"` or the failure's kind), `reason`, `time` (mean milliseconds),
    /// `times` (each timed launch), and `compile_time`, `verification_time`,
    /// `benchmark_time` in milliseconds. Fewer results than configurations come back when
    /// the GPU became unusable (see `stopped`).
    fn evaluate<'py>(
        &mut self,
        py: Python<'py>,
        configs: Vec<Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let runner = self
            .runner
            .as_mut()
            .ok_or_else(|| KtuneError::new_err("open() the kernel before evaluating"))?;
        if let Some(why) = &self.stopped {
            return Err(KtuneError::new_err(why.clone()));
        }
        let configs = configs
            .iter()
            .map(|c| config_of(&self.space, c))
            .collect::<PyResult<Vec<_>>>()?;
        let outcomes = match runner.evaluate(&self.space, &configs) {
            Ok(o) => o,
            Err(ktune_core::CoreError::RunnerStopped {
                message, outcomes, ..
            }) => {
                let gpu_lost = runner
                    .fresh_process_needed()
                    .load(std::sync::atomic::Ordering::Relaxed);
                self.stopped = Some(if gpu_lost {
                    format!("the GPU cannot be used any more in this process: {message}")
                } else {
                    message
                });
                outcomes
            }
            Err(e) => return Err(KtuneError::new_err(e.to_string())),
        };
        let list = PyList::empty(py);
        for o in &outcomes {
            list.append(outcome_dict(py, o)?)?;
        }
        Ok(list)
    }

    /// What Kernel Tuner reports as its environment: the device, its compute capability,
    /// the compiler, `iterations` and `compiler_options`.
    fn environment<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let env = PyDict::new(py);
        if let Some(r) = &self.runner {
            let d = r.device();
            env.set_item("device_name", &d.name)?;
            env.set_item("uuid", &d.uuid)?;
            env.set_item(
                "compute_capability",
                format!("{}{}", d.compute_capability / 10, d.compute_capability % 10),
            )?;
            env.set_item(
                "cuda_version",
                format!(
                    "{}.{}",
                    d.driver_version / 1000,
                    (d.driver_version % 1000) / 10
                ),
            )?;
            let (version, library) = r.compiler();
            env.set_item("nvrtc_version", version.map(|(a, b)| format!("{a}.{b}")))?;
            env.set_item("nvrtc_library", library.display().to_string())?;
            env.set_item("compile_jobs", r.jobs())?;
            env.set_item("warnings", r.warnings())?;
        }
        env.set_item("iterations", self.iterations)?;
        env.set_item("compiler_options", self.compiler_options.clone())?;
        Ok(env)
    }
}

fn outcome_dict<'py>(py: Python<'py>, o: &Outcome) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let t = o.timings();
    match o {
        Outcome::Ok { values, .. } => {
            d.set_item("status", "ok")?;
            d.set_item("reason", py.None())?;
            d.set_item("time", values.first().copied())?;
            let times: Vec<f64> = o.samples().map(|s| s.values.clone()).unwrap_or_default();
            d.set_item("times", times)?;
        }
        Outcome::Failed { kind, reason, .. } => {
            d.set_item("status", kind.name())?;
            d.set_item("reason", reason)?;
        }
    }
    d.set_item("compile_time", 1000.0 * t.compile)?;
    d.set_item("verification_time", 1000.0 * t.verification)?;
    d.set_item("benchmark_time", 1000.0 * t.benchmark)?;
    d.set_item("framework_time", 1000.0 * t.framework)?;
    Ok(d)
}

/// Whether the CUDA driver library can be loaded here (an NVIDIA GPU with its driver):
/// `tune_kernel` needs it; everything else in ktune works without.
#[pyfunction]
pub(crate) fn cuda_available() -> bool {
    ktune_runners::cuda::driver::driver_available()
}
