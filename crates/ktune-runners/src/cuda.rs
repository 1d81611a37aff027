//! The CUDA runner: compile each configuration with NVRTC, launch it through the driver API,
//! time it with CUDA events and check its output, the way Kernel Tuner's CUDA backends do,
//! without Python.
//!
//! Parameters reach the kernel as preprocessor defines (and optionally template
//! arguments); block dimensions come from `block_size_x/y/z`, the grid from the problem size
//! divided by `grid_div_x/y/z` ([`launch`]). Arguments are declared in the spec and live on
//! the GPU for the whole run ([`data`]). For every batch of configurations the compiles run
//! on worker threads while the GPU benchmarks the configurations already compiled, in order.
//!
//! Per configuration: load the module; one launch whose outputs are compared with the
//! reference (when verification is on), the rest of the warm-up, then `repeat` launches,
//! each timed with a pair of events; optionally a power measurement through NVML. Compile
//! errors, launch errors (too many resources, invalid dimensions), faults and wrong output
//! are failed outcomes with their reason. A fault poisons a CUDA context, so the runner
//! resets it and uploads the arguments again; a kernel that outlives its timeout is given a
//! grace period, after which the runner stops (keeping every outcome measured so far),
//! since a running kernel cannot be cancelled from the host.
//!
//! The driver, NVRTC and NVML are loaded at run time: on a machine without them the runner
//! says which one is missing, and everything else in ktune works.
//!
//! Why one file of over 800 lines: the runner's state machine (compile on worker threads,
//! measure in order on the GPU, recover from faults, stop on a hung kernel) is one loop over
//! one struct; its parts with a job of their own are the files of `cuda/`.

pub mod driver;
pub mod nvml;
pub mod nvrtc;
pub mod spec;

pub use crate::kernel::{data, launch, wrong_outputs};

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ktune_core::{
    CoreError, Direction, FailureKind, Metric, Observed, Outcome, Runner, Samples, Timings,
};
use ktune_space::{Configuration, SearchSpace};
use serde_json::json;

use crate::measure::Measure;

use crate::kernel::pipeline::{Overlap, build_and_measure};
use crate::kernel::{self, Checking, configuration_to_check, tail};
use data::{HostArg, HostConstant};
use driver::{Gpu, GpuError, Kernel};
use launch::{Launch, LaunchPlan};
pub use spec::{ArgumentSpec, CudaObjective, CudaSpec, SizeSpec, VerifySpec};

/// How long a kernel that ran past its timeout may still take before the runner gives up
/// on the GPU.
const GRACE: Duration = Duration::from_secs(30);

/// A CUDA runner could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CudaError {
    /// The `[runner]` section is wrong.
    #[error("{0}")]
    Spec(String),
    /// The kernel source cannot be read.
    #[error("cannot read the kernel source `{}`: {source}", path.display())]
    Source {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// No CUDA driver library.
    #[error(
        "no CUDA driver found (libcuda.so could not be loaded): the cuda runner needs an NVIDIA GPU and its driver; \
         on a machine without one, tune with the command runner (kind = \"command\") or simulate from a cache file"
    )]
    NoDriver,
    /// No NVRTC library: where it was looked for.
    #[error("{0}")]
    NoNvrtc(String),
    /// The device cannot be used.
    #[error("CUDA device: {0}")]
    Device(String),
    /// NVML is needed and missing.
    #[error("{0}")]
    Nvml(String),
    /// The arguments do not fit the kernel's parameters (found when the first configuration
    /// was loaded, before anything was measured).
    #[error("the kernel's arguments: {0}")]
    Arguments(String),
    /// The reference configuration for verification did not run.
    #[error("verification: the reference configuration {configuration} failed: {reason}")]
    Reference {
        /// The configuration, described.
        configuration: String,
        /// Why.
        reason: String,
    },
}

/// The spec, checked and compiled, before any GPU is touched.
pub struct Problem {
    spec: CudaSpec,
    plan: LaunchPlan,
    source: String,
    source_path: PathBuf,
    args: Vec<HostArg>,
    constants: Vec<HostConstant>,
    checking: Checking,
    /// The objectives, in order (the spec's `objectives`, or its one `objective`).
    objectives: Vec<CudaObjective>,
    metrics: Vec<Metric>,
    measure: Measure,
}

/// The CUDA runner's measurement plan when the spec gives none: one warm-up launch, then 5
/// to 100 samples until the 95% interval is within ±2% of the mean, at most 2 s of launches
/// per configuration, each sample at least 1 ms of launches (kernels shorter than that are
/// launched several times per sample), and early abort at twice the best so far.
pub fn default_measure() -> Measure {
    Measure {
        warmup: 1,
        min: 5,
        max: 100,
        target: Some(0.02),
        max_seconds: 2.0,
        min_sample_seconds: 0.001,
        abort: Some(crate::measure::DEFAULT_ABORT),
        statistic: ktune_core::Statistic::Mean,
    }
}

impl Problem {
    /// Checks `spec` against `space` and reads what it names (relative paths are relative to
    /// `spec_dir`).
    pub fn new(
        spec: &CudaSpec,
        space: &SearchSpace,
        spec_dir: &Path,
    ) -> Result<Problem, CudaError> {
        let err = |m: String| CudaError::Spec(m);
        // `[runner.defines]` stand for their values in the section's expressions.
        let spec = &spec.bound(&[], space).map_err(err)?;
        let source_path = spec_dir.join(&spec.source);
        let source = std::fs::read_to_string(&source_path).map_err(|e| CudaError::Source {
            path: source_path.clone(),
            source: e,
        })?;
        let args = data::build_args(&spec.arguments, spec_dir)
            .map_err(|e| err(format!("[runner] {e}")))?;
        let constants = data::build_constants(&spec.constants, spec.arguments.len(), spec_dir)
            .map_err(|e| err(format!("[runner] {e}")))?;
        Problem::from_parts(spec, space, source, source_path, args, constants)
    }

    /// Checks `spec` against `space` with the kernel's source text and its arguments given
    /// directly rather than read from the files the spec names (the Python bindings pass
    /// NumPy arrays this way). `source_path` names the source in compiler messages; its
    /// directory, when it has one, is on the include path. `spec.arguments` and
    /// `spec.constants` are not read.
    pub fn from_parts(
        spec: &CudaSpec,
        space: &SearchSpace,
        source: String,
        source_path: PathBuf,
        args: Vec<HostArg>,
        constants: Vec<HostConstant>,
    ) -> Result<Problem, CudaError> {
        let err = |m: String| CudaError::Spec(m);
        if let Some(kind) = &spec.kind
            && kind != "cuda"
        {
            return Err(err(format!(
                "[runner] kind = \"{kind}\" is not the cuda runner"
            )));
        }
        let measure = Measure::from_spec(
            spec.measure.as_ref(),
            spec.warmup,
            spec.repeat,
            &default_measure(),
        )
        .map_err(|(key, m)| {
            let table = if matches!(key, "repeat" | "warmup") {
                "[runner]"
            } else {
                "[runner.measure]"
            };
            err(format!("{table} {key}: {m}"))
        })?;
        if !(spec.clock_tolerance > 0.0 && spec.clock_tolerance <= 1.0) {
            return Err(err(format!(
                "[runner] clock_tolerance: must be a fraction between 0 and 1 (0.05 = 5%), not {}",
                spec.clock_tolerance
            )));
        }
        if spec.jobs == Some(0) {
            return Err(err("[runner] jobs: must be at least 1".into()));
        }
        for (name, t) in [
            ("kernel_timeout", spec.kernel_timeout),
            ("power_seconds", spec.power_seconds),
        ] {
            if let Err(m) = ktune_core::checked_seconds(t) {
                return Err(err(format!("[runner] {name}: {m}")));
            }
        }
        let objectives = spec.objective_list().map_err(err)?;
        for o in &objectives {
            if o.needs_flops() && spec.flops.is_none() {
                return Err(err(format!(
                    "[runner] objective \"{}\" needs `flops`, the floating-point operations of one launch (e.g. flops = \"2 * 4096 * 4096 * 4096\")",
                    o.name()
                )));
            }
            if o.needs_power() && spec.power == Some(false) {
                return Err(err(format!(
                    "[runner] objective \"{}\" needs power measurements, but power = false",
                    o.name()
                )));
            }
        }
        let plan = LaunchPlan::new(&spec.launch_rules(), space).map_err(err)?;
        let checking = Checking::new(spec.verify.as_ref(), &args, space).map_err(err)?;
        let metrics = kernel::metrics(&objectives);
        Ok(Problem {
            objectives,
            spec: spec.clone(),
            plan,
            source,
            source_path,
            args,
            constants,
            checking,
            metrics,
            measure,
        })
    }

    /// The metrics every successful outcome reports: the objectives, the kernel time in
    /// milliseconds (when it is not one of them), its standard deviation.
    pub fn metrics(&self) -> &[Metric] {
        &self.metrics
    }

    /// Whether some objective needs NVML's power readings.
    fn needs_power(&self) -> bool {
        self.objectives.iter().any(|o| o.needs_power())
    }

    /// An outcome's values (one per metric); see [`kernel::values`].
    fn values(
        &self,
        mean: f64,
        stdev: f64,
        gflops: Option<f64>,
        power: Option<(f64, f64)>,
    ) -> Result<Vec<f64>, String> {
        kernel::values(&self.objectives, mean, stdev, gflops, power)
    }

    /// The launch of a configuration.
    pub fn launch(&self, space: &SearchSpace, config: &Configuration) -> Result<Launch, String> {
        self.plan.launch(space, config)
    }

    /// The reference configuration for verification, when one is needed.
    pub fn reference(&self) -> Option<&Configuration> {
        self.checking.reference.as_ref()
    }

    /// The kernel arguments as built on the host.
    pub fn args(&self) -> &[HostArg] {
        &self.args
    }

    /// NVRTC options: the architecture, the source's directory for includes, the spec's
    /// options.
    pub fn compiler_options(&self, arch: &str) -> Vec<String> {
        let mut options = vec![arch.to_string()];
        if let Some(dir) = self
            .source_path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
        {
            options.push(format!("--include-path={}", dir.display()));
        }
        options.extend(self.spec.compiler_options.iter().cloned());
        options
    }

    /// The kernel source of one configuration: its defines as `#define` lines, then the
    /// source from its first line.
    ///
    /// The defines go into the text, as Kernel Tuner puts them, and not on the command line
    /// (`-D`): NVRTC includes its built-in CUDA headers before the source, and a `-D` define
    /// applies to them too, so a parameter with a name those headers use (`mode`, `layer`,
    /// ...) broke them with errors inside `__nv_nvrtc_builtin_header.h`. The `#line`
    /// directive keeps the compiler's messages on the file's own line numbers.
    pub fn source_with_defines(&self, launch: &Launch) -> String {
        kernel::source_with_defines(&self.source, &self.file_name(), launch)
    }

    /// The source's file name, for the compiler's messages.
    fn file_name(&self) -> String {
        kernel::file_name(&self.source_path, "kernel.cu")
    }
}

/// Runs configurations of a CUDA kernel on a GPU.
pub struct CudaRunner {
    /// Shared with the compiler threads.
    problem: Arc<Problem>,
    nvrtc: &'static nvrtc::Nvrtc,
    gpu: Gpu,
    power: Option<nvml::PowerMeter>,
    measure_power: bool,
    arch: String,
    cubin: bool,
    jobs: usize,
    /// Expected contents per argument (outputs only), once known.
    expected: Vec<Option<Vec<u8>>>,
    /// Set when the GPU can no longer be used in this process (a kernel fault the context
    /// could not be reset from, a kernel that never finished).
    broken: Option<String>,
    /// Shared with whoever owns the process: set together with `broken`, when only a new
    /// process can use the GPU again (see [`CudaRunner::fresh_process_needed`]).
    fresh_process: Arc<std::sync::atomic::AtomicBool>,
    /// Outputs that matched and differed so far; when the first to run all differ, the
    /// expected output is suspect and the run stops ([`wrong_outputs`]).
    wrong_outputs: wrong_outputs::WrongOutputs,
    /// Why no more configurations are measured, when the expected output is suspect.
    outputs_differ: Option<String>,
    base: Observed,
    /// The best objective so far, for early abort.
    incumbent: Option<f64>,
    /// When the time budget runs out: no configuration starts after it.
    deadline: Option<Instant>,
    clocks: ClockRange,
}

/// The SM clocks seen during a run.
#[derive(Debug, Default)]
struct ClockRange {
    low: Option<u32>,
    high: Option<u32>,
    /// Configurations during whose measurement the clock varied beyond the tolerance.
    varied: usize,
}

/// `(hi - lo) / hi`.
fn spread(lo: u32, hi: u32) -> f64 {
    if hi > 0 {
        f64::from(hi.saturating_sub(lo)) / f64::from(hi)
    } else {
        0.0
    }
}

impl ClockRange {
    /// Adds the clocks read while measuring one configuration; true when they varied by more
    /// than `tolerance` (a fraction).
    fn note(&mut self, clocks: &[u32], tolerance: f64) -> bool {
        let (Some(&lo), Some(&hi)) = (clocks.iter().min(), clocks.iter().max()) else {
            return false;
        };
        self.low = Some(self.low.map_or(lo, |l| l.min(lo)));
        self.high = Some(self.high.map_or(hi, |h| h.max(hi)));
        let varied = spread(lo, hi) > tolerance;
        self.varied += usize::from(varied);
        varied
    }

    /// The warning for a run whose clocks varied by more than `tolerance`.
    fn warning(&self, tolerance: f64) -> Option<String> {
        let (lo, hi) = (self.low?, self.high?);
        let spread = spread(lo, hi);
        (spread > tolerance || self.varied > 0).then(|| {
            format!(
                "the SM clock varied between {lo} and {hi} MHz during this run ({:.0}%, more \
                 than the {:.0}% tolerated; within the measurement of {} configurations), so \
                 their timings are not fully comparable; locking the clocks (nvidia-smi \
                 --lock-gpu-clocks) gives stabler measurements",
                spread * 100.0,
                tolerance * 100.0,
                self.varied
            )
        })
    }
}

impl CudaRunner {
    /// Checks the spec, opens the device, uploads the arguments and, when verification is
    /// on, runs the reference configuration.
    pub fn new(
        spec: &CudaSpec,
        space: &SearchSpace,
        spec_dir: &Path,
    ) -> Result<CudaRunner, CudaError> {
        let problem = Problem::new(spec, space, spec_dir)?;
        CudaRunner::open(problem, space)
    }

    /// Opens the GPU for a checked problem.
    pub fn open(problem: Problem, space: &SearchSpace) -> Result<CudaRunner, CudaError> {
        if !driver::driver_available() {
            return Err(CudaError::NoDriver);
        }
        let nvrtc = nvrtc::Nvrtc::get().map_err(CudaError::NoNvrtc)?;
        // cudarc panics when the driver library lacks an entry point it binds lazily (a
        // driver older than the bindings); that must be an error, not a crash.
        let opened = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            Gpu::open(problem.spec.device, &problem.args)
        }))
        .map_err(|p| {
            let what = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            CudaError::Device(format!(
                "the CUDA driver library could not be used (too old for CUDA 12 bindings?): {what}"
            ))
        })?;
        let gpu = opened.map_err(|e| CudaError::Device(e.to_string()))?;
        let (arch, cubin) =
            nvrtc::arch_option(gpu.info.compute_capability, &nvrtc.supported_archs());
        let wants_power = problem.spec.power.unwrap_or(problem.needs_power());
        let power = match nvml::PowerMeter::open(&gpu.info.uuid) {
            Ok(p) => Some(p),
            Err(e) if wants_power => {
                return Err(CudaError::Nvml(format!(
                    "power measurements need NVML (libnvidia-ml.so.1), which is unavailable: {e}"
                )));
            }
            Err(_) => None,
        };
        let mut base = Observed::new();
        base.insert("device".into(), json!(gpu.info.name));
        if let Some((major, minor)) = nvrtc.version() {
            base.insert("nvrtc".into(), json!(format!("{major}.{minor}")));
        }
        base.insert(
            "compute_capability".into(),
            json!(format!(
                "{}.{}",
                gpu.info.compute_capability / 10,
                gpu.info.compute_capability % 10
            )),
        );
        let jobs = problem.spec.jobs.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
                .min(4)
        });
        let expected = kernel::expected_outputs(&problem.args);
        let mut runner = CudaRunner {
            problem: Arc::new(problem),
            nvrtc,
            gpu,
            power,
            measure_power: wants_power,
            arch,
            cubin,
            jobs,
            expected,
            broken: None,
            fresh_process: Arc::default(),
            wrong_outputs: Default::default(),
            outputs_differ: None,
            base,
            incumbent: None,
            deadline: None,
            clocks: ClockRange::default(),
        };
        if runner.problem.spec.flush_l2 {
            runner
                .gpu
                .set_l2_flush(true)
                .map_err(|e| CudaError::Device(e.to_string()))?;
        }
        match runner.problem.checking.reference.clone() {
            Some(reference) => runner.record_reference(space, &reference)?,
            None => runner.check_arguments(space)?,
        }
        Ok(runner)
    }

    /// Loads the default configuration (or, in a space without one, such as Kernel Tuner's
    /// `tune_params`, the first configuration) once to compare the arguments with the
    /// kernel's parameters before anything is measured: a mismatch would fail every
    /// configuration alike, and recorded, those failures would outlive the fix. A
    /// configuration that does not compile or load for another reason tells nothing; then
    /// each configuration is checked when it is loaded.
    fn check_arguments(&mut self, space: &SearchSpace) -> Result<(), CudaError> {
        let Some(config) = configuration_to_check(space) else {
            return Ok(());
        };
        let Ok(launch) = self.problem.launch(space, &config) else {
            return Ok(());
        };
        let Ok(compiled) = self.compile(&launch) else {
            return Ok(());
        };
        match self.gpu.load(&compiled, &launch, &self.problem.constants) {
            Ok(kernel) => {
                self.gpu.unload(kernel);
                Ok(())
            }
            Err(GpuError::Arguments(m)) => Err(CudaError::Arguments(m)),
            Err(_) => Ok(()),
        }
    }

    /// Configurations compiled in parallel (ask the strategy for this many at a time).
    pub fn jobs(&self) -> usize {
        self.jobs
    }

    /// A flag that becomes true when this runner stopped because the GPU cannot be used
    /// again in this process. A kernel fault (illegal address, ...) is "sticky": it poisons
    /// the process's CUDA context, and current drivers refuse a new one in the same process
    /// too (CUDA 13, driver 580: `cuDevicePrimaryCtxReset` and a new retain both fail with
    /// the fault's error). A kernel that never ends cannot be stopped from the host either.
    /// The runner records the failing configuration and stops; a program that owns the
    /// process (`ktune tune`) then starts itself afresh, and resumes from its database.
    pub fn fresh_process_needed(&self) -> Arc<std::sync::atomic::AtomicBool> {
        Arc::clone(&self.fresh_process)
    }

    /// Sets `flag` instead of a flag of its own (see [`Self::fresh_process_needed`]): runners
    /// of one device in one process (the instances of a study) share their fate.
    pub fn share_fresh_process(&mut self, flag: Arc<std::sync::atomic::AtomicBool>) {
        self.fresh_process = flag;
    }

    /// The NVRTC in use: its version and the library it was loaded from.
    pub fn compiler(&self) -> (Option<(i32, i32)>, &Path) {
        (self.nvrtc.version(), &self.nvrtc.path)
    }

    /// What is known about the device.
    pub fn device(&self) -> &driver::DeviceInfo {
        &self.gpu.info
    }

    /// Runs the reference configuration once and keeps its outputs as the expected ones.
    fn record_reference(
        &mut self,
        space: &SearchSpace,
        config: &Configuration,
    ) -> Result<(), CudaError> {
        let failed = |reason: String| CudaError::Reference {
            configuration: space.describe(config),
            reason,
        };
        let launch = self.problem.launch(space, config).map_err(failed)?;
        let compiled = self.compile(&launch).map_err(failed)?;
        let kernel = self
            .gpu
            .load(&compiled, &launch, &self.problem.constants)
            .map_err(|e| match e {
                GpuError::Arguments(m) => CudaError::Arguments(m),
                e => failed(e.to_string()),
            })?;
        let outputs = self.reset_outputs().and_then(|()| {
            self.gpu
                .run(&kernel, &launch, self.timeout())
                .and_then(|_| self.read_outputs())
        });
        self.gpu.unload(kernel);
        let outputs = outputs.map_err(|e| failed(e.to_string()))?;
        for (i, out) in outputs {
            if self.expected[i].is_none() {
                self.expected[i] = Some(out);
            }
        }
        Ok(())
    }

    fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.problem.spec.kernel_timeout)
    }

    fn compile(&self, launch: &Launch) -> Result<nvrtc::Compiled, String> {
        compile_one(self.nvrtc, &self.problem, &self.arch, self.cubin, launch)
    }

    /// Restores every output array to its initial contents.
    fn reset_outputs(&self) -> Result<(), GpuError> {
        for (i, a) in self.problem.args.iter().enumerate() {
            if let HostArg::Array {
                output: true,
                bytes,
                ..
            } = a
            {
                self.gpu.upload(i, bytes)?;
            }
        }
        Ok(())
    }

    /// The contents of every output array.
    fn read_outputs(&self) -> Result<Vec<(usize, Vec<u8>)>, GpuError> {
        let mut out = Vec::new();
        for (i, a) in self.problem.args.iter().enumerate() {
            if let HostArg::Array {
                output: true,
                bytes,
                ..
            } = a
            {
                out.push((i, self.gpu.download(i, bytes.len())?));
            }
        }
        Ok(out)
    }

    /// Compares the outputs with the expected ones; `Err` says which differs and how.
    fn check_outputs(&self, outputs: &[(usize, Vec<u8>)]) -> Result<(), String> {
        self.problem
            .checking
            .compare(&self.problem.args, &self.expected, outputs)
    }

    /// Benchmarks one compiled configuration.
    fn benchmark(
        &mut self,
        launch: &Launch,
        compiled: &nvrtc::Compiled,
        compile_s: f64,
    ) -> Outcome {
        let started = Instant::now();
        let mut timings = Timings {
            compile: compile_s,
            ..Timings::default()
        };
        let mut observed = self.base.clone();
        observed.insert("grid".into(), json!(launch.grid));
        observed.insert("block".into(), json!(launch.block));
        let kernel = match self.gpu.load(compiled, launch, &self.problem.constants) {
            Ok(k) => k,
            Err(e) => return self.failure(e, timings, observed),
        };
        let result = self.measure(&kernel, launch, &mut timings, &mut observed);
        self.gpu.unload(kernel);
        timings.framework =
            (started.elapsed().as_secs_f64() - timings.benchmark - timings.verification).max(0.0);
        match result {
            Ok((values, samples)) => Outcome::ok(values, timings)
                .with_observed(observed)
                .with_samples(samples),
            Err(Measured::Gpu(e)) => self.failure(e, timings, observed),
            Err(Measured::WrongOutput(reason)) => {
                Outcome::failed(FailureKind::WrongOutput, reason, timings).with_observed(observed)
            }
        }
    }

    fn measure(
        &mut self,
        kernel: &Kernel,
        launch: &Launch,
        timings: &mut Timings,
        observed: &mut Observed,
    ) -> Result<(Vec<f64>, Samples), Measured> {
        let timeout = self.timeout();
        let mut plan = self.problem.measure.clone();
        if self.problem.checking.tolerances.is_some() {
            let t = Instant::now();
            self.reset_outputs()?;
            self.gpu.run(kernel, launch, timeout)?;
            let outputs = self.read_outputs()?;
            let checked = self.check_outputs(&outputs);
            timings.verification = t.elapsed().as_secs_f64();
            checked.map_err(Measured::WrongOutput)?;
            // The checked launch was a warm-up too.
            plan.warmup = plan.warmup.saturating_sub(1);
        }
        let t = Instant::now();
        let incumbent = self.incumbent_time(launch);
        let (gpu, power) = (&self.gpu, &self.power);
        let mut clocks: Vec<u32> = Vec::new();
        let samples = plan.run(incumbent.map(|b| (b, Direction::Minimize)), |k| {
            let ms = gpu.time_launches(kernel, launch, k, timeout)?;
            if let Some(c) = power.as_ref().and_then(|m| m.sm_clock()) {
                clocks.push(c);
            }
            Ok::<_, GpuError>((ms, ms * k as f64 * 1e-3))
        })?;
        let summary = samples.summary();
        let (mean, stdev) = (summary.value(), summary.stdev);
        observed.insert("times_ms".into(), json!(samples.values));
        if !clocks.is_empty() {
            self.note_clocks(&clocks, observed);
        }
        let spec = &self.problem.spec;
        if let Some(meter) = &self.power {
            observed.extend(meter.snapshot());
        }
        let mut watts = None;
        if self.measure_power
            && let Some(meter) = &self.power
        {
            let gpu = &self.gpu;
            // Batches of about 5 ms of kernel time between waits.
            let batch = (5.0 / mean.max(1e-4)).ceil().clamp(1.0, 10_000.0) as usize;
            let p = meter.measure(mean, spec.power_seconds, || {
                gpu.run_batch(kernel, launch, batch, timeout)
            })?;
            if let Some(p) = p {
                observed.insert("power_w".into(), json!(p.watts));
                observed.insert("energy_j".into(), json!(p.joules_per_launch));
                observed.insert("power_source".into(), json!(p.source));
                observed.insert("power_samples_w".into(), json!(p.samples));
                observed.insert("power_window_s".into(), json!(p.seconds));
                watts = Some(p);
            }
        }
        timings.benchmark = t.elapsed().as_secs_f64();
        let gflops = launch.flops.map(|f| f / (mean * 1e-3) / 1e9);
        if let Some(g) = gflops {
            observed.insert("gflops".into(), json!(g));
        }
        let power = watts.as_ref().map(|p| (p.watts, p.joules_per_launch));
        let values = self
            .problem
            .values(mean, stdev, gflops, power)
            .map_err(|m| Measured::Gpu(GpuError::Launch(m)))?;
        Ok((values, samples))
    }

    /// The best so far as a kernel time for `launch` (the unit of the samples), when the
    /// objective is a time or a rate of the time.
    fn incumbent_time(&self, launch: &Launch) -> Option<f64> {
        kernel::incumbent_time(self.problem.objectives[0], self.incumbent?, launch.flops)
    }

    /// Keeps the SM clocks seen while measuring one configuration: flagged when they varied
    /// by more than the tolerance, and remembered for [`CudaRunner::clock_warning`].
    fn note_clocks(&mut self, clocks: &[u32], observed: &mut Observed) {
        observed.insert("sm_clocks_mhz".into(), json!(clocks));
        if self.clocks.note(clocks, self.problem.spec.clock_tolerance) {
            observed.insert("clock_varied".into(), json!(true));
        }
    }

    /// A warning when the SM clock varied by more than `clock_tolerance` over the
    /// configurations measured so far (thermal or power throttling, another process, boost
    /// clocks): timings taken at different clocks are not comparable. Lock the clocks
    /// (`nvidia-smi --lock-gpu-clocks`) for stable measurements.
    pub fn clock_warning(&self) -> Option<String> {
        self.clocks.warning(self.problem.spec.clock_tolerance)
    }

    /// The outcome of a GPU error, after putting the GPU back in order.
    fn failure(&mut self, e: GpuError, timings: Timings, observed: Observed) -> Outcome {
        let (kind, reason) = match &e {
            GpuError::Load(m) => (FailureKind::Compile, m.clone()),
            // Checked at start-up with the default configuration: this one's parameters
            // depend on its own values (a template type, an #if on a parameter).
            GpuError::Arguments(m) => (FailureKind::Compile, m.clone()),
            GpuError::Launch(m) | GpuError::Setup(m) => (FailureKind::Runtime, m.clone()),
            GpuError::Fault(m) => {
                let reason = match self.gpu.recover(&self.problem.args) {
                    Ok(()) => format!("kernel fault: {m} (the CUDA context was reset)"),
                    Err(r) => {
                        self.stop_process(format!(
                            "a kernel fault ({m}) left the CUDA context unusable in this process ({r})"
                        ));
                        format!("kernel fault: {m}")
                    }
                };
                (FailureKind::Runtime, reason)
            }
            GpuError::Timeout(s) => {
                let finished = match self.gpu.wait(GRACE) {
                    Ok(()) => true,
                    Err(GpuError::Timeout(_)) => false,
                    // It ended by faulting: reset the context as for any fault.
                    Err(_) => self.gpu.recover(&self.problem.args).is_ok(),
                };
                if !finished {
                    self.stop_process(format!(
                        "a kernel ran for over {:.0} s and is still running or left the context \
                         unusable; only ending this process stops it",
                        s + GRACE.as_secs_f64()
                    ));
                }
                (
                    FailureKind::Timeout,
                    format!(
                        "the kernel ran past its {:.1} s timeout (kernel_timeout)",
                        self.problem.spec.kernel_timeout
                    ),
                )
            }
        };
        Outcome::failed(kind, reason, timings).with_observed(observed)
    }
}

impl CudaRunner {
    /// Stops this runner for good: the GPU is not touched again in this process.
    fn stop_process(&mut self, why: String) {
        self.gpu.abandon();
        self.fresh_process
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.broken = Some(format!(
            "{why}; every result so far is saved, and a new process resumes from them"
        ));
    }
}

/// Why measuring stopped.
enum Measured {
    Gpu(GpuError),
    WrongOutput(String),
}

impl From<GpuError> for Measured {
    fn from(e: GpuError) -> Self {
        Measured::Gpu(e)
    }
}

/// Compiles one configuration (on any thread).
fn compile_one(
    nvrtc: &nvrtc::Nvrtc,
    problem: &Problem,
    arch: &str,
    cubin: bool,
    launch: &Launch,
) -> Result<nvrtc::Compiled, String> {
    let options = problem.compiler_options(arch);
    nvrtc.compile(
        &problem.source_with_defines(launch),
        &problem.file_name(),
        &launch.name_expression,
        &options,
        cubin,
    )
}

impl Runner for CudaRunner {
    fn name(&self) -> &str {
        "cuda"
    }

    fn metrics(&self) -> &[Metric] {
        &self.problem.metrics
    }

    fn device(&self) -> Option<String> {
        self.base
            .get("device")
            .and_then(|d| d.as_str())
            .map(str::to_string)
    }

    fn evaluate(
        &mut self,
        space: &SearchSpace,
        configs: &[Configuration],
    ) -> Result<Vec<Outcome>, CoreError> {
        let stopped = |message, outcomes| kernel::stopped("cuda", message, outcomes);
        if let Some(m) = self.broken.as_ref().or(self.outputs_differ.as_ref()) {
            return Err(stopped(m.clone(), Vec::new()));
        }
        let deadline = self.deadline;
        let out_of_time = || deadline.is_some_and(|d| Instant::now() >= d);
        // A configuration not started when the budget ran out is neither compiled nor
        // recorded, so that a longer run later measures it.
        if out_of_time() {
            return Err(CoreError::OutOfTime {
                outcomes: Vec::new(),
            });
        }
        self.gpu
            .bind()
            .map_err(|e| stopped(e.to_string(), Vec::new()))?;
        let launches: Vec<Result<Launch, String>> = configs
            .iter()
            .map(|c| self.problem.launch(space, c))
            .collect();
        let problem = Arc::clone(&self.problem);
        let (arch, cubin, nvrtc) = (self.arch.clone(), self.cubin, self.nvrtc);
        let compile = |launch: &Launch| compile_one(nvrtc, &problem, &arch, cubin, launch);
        let outcomes = build_and_measure(
            &launches,
            self.jobs,
            Overlap::WhileMeasuring,
            "NVRTC",
            &compile,
            &out_of_time,
            &mut |launch, compiled| {
                let compile_s = compiled.seconds;
                let outcome = self.benchmark(launch, &compiled, compile_s);
                (outcome, self.broken.is_some())
            },
        );
        // The batch's outcomes are returned (and recorded) either way; the next batch is
        // refused (above).
        if let Some(m) =
            self.problem
                .checking
                .wrong_outputs_stop(&mut self.wrong_outputs, &outcomes, space)
        {
            self.outputs_differ = Some(m);
        }
        kernel::batch_result("cuda", outcomes, configs.len(), self.broken.as_ref())
    }

    fn set_incumbent(&mut self, best: Option<f64>) {
        self.incumbent = best;
    }

    /// Checked before each configuration of a batch: one in flight is measured to the end
    /// (a running kernel cannot be cancelled from the host, and `kernel_timeout` bounds it).
    fn set_time_left(&mut self, seconds: Option<f64>) {
        self.deadline =
            seconds.map(|s| Instant::now() + Duration::from_secs_f64(s.clamp(0.0, 1e9)));
    }

    fn warnings(&self) -> Vec<String> {
        self.clock_warning().into_iter().collect()
    }

    fn remeasure(
        &mut self,
        space: &SearchSpace,
        configs: &[Configuration],
        rounds: usize,
    ) -> Result<Vec<Outcome>, CoreError> {
        let refuse = |message: String| CoreError::Runner {
            runner: "cuda".into(),
            message,
        };
        if let Some(objective) = self.problem.objectives.iter().find(|o| o.needs_power()) {
            return Err(refuse(format!(
                "re-measuring times the kernels; the objective `{}` needs a power measurement \
                 per configuration, which is not repeated",
                objective.name()
            )));
        }
        if let Some(m) = &self.broken {
            return Err(refuse(m.clone()));
        }
        self.gpu.bind().map_err(|e| refuse(e.to_string()))?;
        let timeout = self.timeout();
        let plan = self.problem.measure.clone();
        // Each configuration compiled, loaded and warmed up, with its launches per sample.
        let mut ready: Vec<Result<Finalist, Outcome>> = Vec::new();
        for c in configs {
            let launch = match self.problem.launch(space, c) {
                Ok(l) => l,
                Err(why) => {
                    ready.push(Err(Outcome::failed(
                        FailureKind::Runtime,
                        format!("cannot be launched: {why}"),
                        Timings::default(),
                    )));
                    continue;
                }
            };
            let compiled =
                match compile_one(self.nvrtc, &self.problem, &self.arch, self.cubin, &launch) {
                    Ok(c) => c,
                    Err(log) => {
                        ready.push(Err(Outcome::failed(
                            FailureKind::Compile,
                            format!("NVRTC: {}", tail(&log)),
                            Timings::default(),
                        )));
                        continue;
                    }
                };
            let loaded = self
                .gpu
                .load(&compiled, &launch, &self.problem.constants)
                .and_then(|kernel| {
                    let runs = plan.warm_up(&mut |k| {
                        let ms = self.gpu.time_launches(&kernel, &launch, k, timeout)?;
                        Ok((ms, ms * k as f64 * 1e-3))
                    });
                    match runs {
                        Ok(runs) => Ok((kernel, runs)),
                        Err(e) => {
                            self.gpu.unload(kernel);
                            Err(e)
                        }
                    }
                });
            match loaded {
                Ok((kernel, runs)) => {
                    ready.push(Ok((launch, kernel, runs, Vec::with_capacity(rounds))));
                }
                Err(e) => {
                    let failed = self.failure(e, Timings::default(), Observed::new());
                    ready.push(Err(failed));
                    if self.broken.is_some() {
                        break;
                    }
                }
            }
        }
        // A, B, C, A, B, C, ...: a fault ends the rounds (it takes every loaded kernel with it).
        let started = Instant::now();
        'rounds: for _ in 0..rounds {
            for slot in ready.iter_mut() {
                let Ok((launch, kernel, runs, samples)) = slot else {
                    continue;
                };
                match self.gpu.time_launches(kernel, launch, *runs, timeout) {
                    Ok(ms) => samples.push(ms),
                    Err(e) => {
                        *slot = Err(self.failure(e, Timings::default(), Observed::new()));
                        break 'rounds;
                    }
                }
            }
        }
        let benchmark = started.elapsed().as_secs_f64() / configs.len().max(1) as f64;
        let mut outcomes = Vec::with_capacity(configs.len());
        for r in ready {
            outcomes.push(match r {
                Ok((launch, loaded, runs, values)) if !values.is_empty() => {
                    if self.broken.is_none() {
                        self.gpu.unload(loaded);
                    }
                    kernel::remeasured(
                        &self.problem.objectives,
                        plan.statistic,
                        values,
                        runs,
                        benchmark,
                        launch.flops,
                    )
                }
                Ok((_, loaded, _, _)) => {
                    if self.broken.is_none() {
                        self.gpu.unload(loaded);
                    }
                    Outcome::failed(
                        FailureKind::Runtime,
                        "not measured again: another configuration faulted first",
                        Timings::default(),
                    )
                }
                Err(failed) => failed,
            });
        }
        outcomes.resize_with(configs.len(), || {
            Outcome::failed(
                FailureKind::Runtime,
                "not measured again: the GPU stopped",
                Timings::default(),
            )
        });
        Ok(outcomes)
    }
}

/// A configuration being re-measured: its launch, its loaded kernel, launches per sample and
/// the samples so far.
type Finalist = (Launch, Kernel, usize, Vec<f64>);
