//! `_ktune.Kernel`: the CUDA or OpenCL runner for `ktune.tune_kernel`, built from what
//! Kernel Tuner's `tune_kernel` takes (kernel source text, problem size, grid divisors, NumPy
//! arrays as raw bytes with their dtype, `lang`) instead of a `ktune.toml`.
//!
//! Everything is checked when the object is made, before any device is touched, so that a
//! mistake in the arguments is reported on a machine without one too; `open()` then loads
//! the driver and uploads the arguments.

use std::path::PathBuf;

use ktune_core::{Outcome, Runner};
use ktune_runners::cuda::data::{DType, HostArg, HostConstant};
use ktune_runners::cuda::{CudaObjective, Problem, SizeSpec};
use ktune_runners::opencl::{self, Selector};
use ktune_runners::{CudaError, CudaRunner, CudaSpec, OpenClError, OpenClRunner, OpenClSpec};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::convert::Whole;
use crate::{KtuneError, SearchSpacePy, config_of};

/// A kernel argument as the Python side hands it over: name, NumPy `dtype.str`, the
/// elements' bytes (C order), and whether it is an array (else a scalar).
type RawArgument<'py> = (String, String, Bound<'py, PyBytes>, bool);

/// The runner of one kernel of `tune_kernel`: construction checks, `open()` opens the
/// device, `evaluate(configs)` measures.
#[pyclass(name = "Kernel", module = "ktune", unsendable)]
pub(crate) struct Kernel {
    space: std::sync::Arc<ktune_space::SearchSpace>,
    /// The checked problem until `open()`, then the runner.
    backend: Backend,
    iterations: usize,
    compiler_options: Vec<String>,
    /// Why the runner stopped for good (a fault that poisoned the CUDA context, outputs that
    /// all differ from `answer`).
    stopped: Option<String>,
}

/// The kernel's language and its runner, before and after `open()`.
enum Backend {
    CudaProblem(Box<Problem>),
    Cuda(Box<CudaRunner>),
    OpenClProblem(Box<opencl::Problem>),
    OpenCl(Box<OpenClRunner>),
    /// Between `open()`'s taking the problem and its runner's being there (an error).
    Gone,
}

impl Backend {
    fn runner(&mut self) -> Option<&mut dyn Runner> {
        match self {
            Backend::Cuda(r) => Some(r.as_mut()),
            Backend::OpenCl(r) => Some(r.as_mut()),
            _ => None,
        }
    }

    fn device_lost(&self) -> bool {
        let flag = match self {
            Backend::Cuda(r) => r.fresh_process_needed(),
            Backend::OpenCl(r) => r.fresh_process_needed(),
            _ => return false,
        };
        flag.load(std::sync::atomic::Ordering::Relaxed)
    }
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

/// The same for the OpenCL runner.
fn opencl_message(e: OpenClError) -> PyErr {
    let text = e.to_string().replace("[runner] ", "");
    match e {
        OpenClError::Spec(_) | OpenClError::Source { .. } => PyValueError::new_err(text),
        _ => KtuneError::new_err(text),
    }
}

#[pymethods]
impl Kernel {
    #[new]
    #[pyo3(signature = (
        space, kernel_name, source, source_name, problem_size, arguments, *, answers=None,
        atol=1e-6, constants=None, block_size_names=None, grid_div_x=None, grid_div_y=None,
        grid_div_z=None, shared_memory=None, compiler_options=None, device=Whole::ZERO, iterations=Whole::of(7),
        template_args=None, lang="cuda", platform=Whole::ZERO, power=false
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
        lang: &str,
        platform: Whole,
        power: bool,
    ) -> PyResult<Self> {
        let device = device.count("device")?;
        let platform = platform.count("platform")?;
        let opencl = match lang {
            "cuda" => false,
            "opencl" => true,
            other => {
                return Err(PyValueError::new_err(format!(
                    "lang {other:?}: the kernel runners are \"cuda\" and \"opencl\""
                )));
            }
        };
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
        let verify = answers
            .is_some()
            .then_some(ktune_runners::cuda::VerifySpec {
                atol,
                rtol: 0.0,
                reference: None,
            });
        if opencl {
            if power {
                return Err(PyValueError::new_err(
                    "energy and power are measured on CUDA GPUs (through NVML), not with lang=\"OpenCL\"",
                ));
            }
            for (given, what, why) in [
                (
                    !host_constants.is_empty(),
                    "cmem_args",
                    "pass the array as a `__constant` kernel argument",
                ),
                (
                    shared_memory.is_some(),
                    "smem_args",
                    "declare `__local` arrays in the kernel, sized by the parameters",
                ),
                (
                    template_args.as_ref().is_some_and(|t| !t.is_empty()),
                    "a templated kernel name",
                    "OpenCL C has no templates",
                ),
            ] {
                if given {
                    return Err(PyValueError::new_err(format!(
                        "{what} is not supported with lang=\"OpenCL\": {why}"
                    )));
                }
            }
            let spec = OpenClSpec {
                kind: None,
                source: PathBuf::from(&source_name),
                kernel: kernel_name,
                problem_size,
                block_size_names,
                grid_div_x,
                grid_div_y,
                grid_div_z,
                compiler_options: compiler_options.clone(),
                platform: Selector::Index(platform),
                device: Selector::Index(device),
                // Kernel Tuner's `iterations`: that many timed launches, their mean the time.
                warmup: None,
                repeat: Some(iterations),
                measure: None,
                kernel_timeout: 10.0,
                jobs: None,
                objective: CudaObjective::Time,
                objectives: Vec::new(),
                flops: None,
                defines: Default::default(),
                arguments: Vec::new(),
                verify,
            };
            let problem = opencl::Problem::from_parts(
                &spec,
                &space.space,
                source,
                PathBuf::from(source_name),
                args,
            )
            .map_err(opencl_message)?;
            return Ok(Kernel {
                space: space.space.clone(),
                backend: Backend::OpenClProblem(Box::new(problem)),
                iterations,
                compiler_options,
                stopped: None,
            });
        }
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
            // Energy and power, when asked for, from NVML's energy counter over at least
            // a quarter second of launches (in observed: `energy` and `power` per result).
            power: Some(power),
            power_seconds: 0.25,
            defines: Default::default(),
            arguments: Vec::new(),
            constants: Vec::new(),
            verify,
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
        Ok(Kernel {
            space: space.space.clone(),
            backend: Backend::CudaProblem(Box::new(problem)),
            iterations,
            compiler_options,
            stopped: None,
        })
    }

    /// Loads the driver (CUDA and NVRTC, or OpenCL), opens the device and uploads the
    /// arguments. Raises `KtuneError` saying what is missing on a machine without one.
    fn open(&mut self) -> PyResult<()> {
        self.backend = match std::mem::replace(&mut self.backend, Backend::Gone) {
            Backend::CudaProblem(p) => Backend::Cuda(Box::new(
                CudaRunner::open(*p, &self.space).map_err(spec_message)?,
            )),
            Backend::OpenClProblem(p) => Backend::OpenCl(Box::new(
                OpenClRunner::open(*p, &self.space).map_err(opencl_message)?,
            )),
            Backend::Gone => {
                return Err(KtuneError::new_err("the kernel could not be opened before"));
            }
            opened => opened,
        };
        Ok(())
    }

    /// Configurations compiled in parallel: ask the strategy for this many at a time.
    #[getter]
    fn jobs(&self) -> usize {
        match &self.backend {
            Backend::Cuda(r) => r.jobs(),
            Backend::OpenCl(r) => r.jobs(),
            _ => 1,
        }
    }

    /// Why the runner stopped for good, or `None`.
    #[getter]
    fn stopped(&self) -> Option<String> {
        self.stopped.clone()
    }

    /// Measures `configs` (dicts of parameter values): per configuration a dict with
    /// `status` (`"ok"` or the failure's kind), `reason`, `time` (mean milliseconds),
    /// `times` (each timed launch), with `power = True` also `energy` (J per launch) and
    /// `power` (W), and `compile_time`, `verification_time`,
    /// `benchmark_time` in milliseconds. Fewer results than configurations come back when
    /// the GPU became unusable (see `stopped`).
    fn evaluate<'py>(
        &mut self,
        py: Python<'py>,
        configs: Vec<Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyList>> {
        if let Some(why) = &self.stopped {
            return Err(KtuneError::new_err(why.clone()));
        }
        let configs = configs
            .iter()
            .map(|c| config_of(&self.space, c))
            .collect::<PyResult<Vec<_>>>()?;
        let runner = self
            .backend
            .runner()
            .ok_or_else(|| KtuneError::new_err("open() the kernel before evaluating"))?;
        let outcomes = match runner.evaluate(&self.space, &configs) {
            Ok(o) => o,
            Err(ktune_core::CoreError::RunnerStopped {
                message, outcomes, ..
            }) => {
                self.stopped = Some(if self.backend.device_lost() {
                    format!("the device cannot be used any more in this process: {message}")
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

    /// What Kernel Tuner reports as its environment: the device (with CUDA its compute
    /// capability and the compiler, with OpenCL its platform and driver), `iterations` and
    /// `compiler_options`.
    fn environment<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let env = PyDict::new(py);
        match &self.backend {
            Backend::Cuda(r) => {
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
            Backend::OpenCl(r) => {
                let d = r.device_info();
                env.set_item("device_name", &d.name)?;
                env.set_item("platform_name", &d.platform.1)?;
                env.set_item("opencl_version", &d.version)?;
                env.set_item("driver_version", &d.driver)?;
                env.set_item("compile_jobs", r.jobs())?;
                env.set_item("warnings", r.warnings())?;
            }
            _ => {}
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
            // Measured where the kernel was opened with power = True (joules per launch,
            // watts).
            for (key, name) in [("energy_j", "energy"), ("power_w", "power")] {
                if let Some(v) = o.observed().get(key).and_then(|v| v.as_f64()) {
                    d.set_item(name, v)?;
                }
            }
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

/// Whether an OpenCL device is here (a driver and a device on some platform): `tune_kernel`
/// with `lang="OpenCL"` needs one.
#[pyfunction]
pub(crate) fn opencl_available() -> bool {
    opencl::list_devices().is_ok_and(|d| !d.is_empty())
}

/// Whether the CUDA driver library can be loaded here (an NVIDIA GPU with its driver):
/// `tune_kernel` needs it; everything else in ktune works without.
#[pyfunction]
pub(crate) fn cuda_available() -> bool {
    ktune_runners::cuda::driver::driver_available()
}
