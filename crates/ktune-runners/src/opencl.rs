//! The OpenCL runner: build each configuration's program with `clBuildProgram`, launch it on
//! any OpenCL device (AMD, Intel and NVIDIA GPUs, CPUs through PoCL), time it with
//! profiling events and check its output, the way Kernel Tuner's OpenCL backend does,
//! without Python.
//!
//! It follows the CUDA runner's contract and shares its machinery ([`crate::kernel`]): the
//! parameters reach the kernel as `#define`s put before the source, the work-group size
//! comes from `block_size_x/y/z` (or `block_size_names`), the global size is the problem size
//! divided by `grid_div_x/y/z`, rounded up, times the work-group size; arguments are
//! declared in the spec and live on the device for the whole run. For every batch the
//! programs are built on worker threads while the device measures the configurations
//! already built, in order (OpenCL's API is thread-safe but for setting a kernel's
//! arguments, which stays on this thread).
//!
//! Per configuration: create the kernel, one launch whose outputs are compared with the
//! reference (when verification is on), the rest of the warm-up, then launches repeated as
//! `[runner.measure]` says, each sample timed from the first launch's start to the last
//! one's end. Build errors (with the build log), launch errors (a work-group too large,
//! out of resources), errors while running and wrong output are failed outcomes with their
//! reason. A kernel that outlives its timeout is waited for a grace period, after which the
//! runner stops (keeping every outcome measured so far): OpenCL cannot cancel a kernel.
//!
//! The ICD loader is loaded at run time: on a machine without OpenCL the runner says what
//! to install, and everything else in ktune works.

pub mod device;
pub mod spec;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ktune_core::{CoreError, Direction, FailureKind, Metric, Observed, Outcome, Runner, Timings};
use ktune_space::{Configuration, SearchSpace};
use serde_json::json;

use crate::kernel::data::{self, HostArg};
use crate::kernel::launch::{Launch, LaunchPlan};
use crate::kernel::pipeline::{Overlap, build_and_measure};
use crate::kernel::spec::KernelObjective;
use crate::kernel::wrong_outputs::WrongOutputs;
use crate::kernel::{self, Checking, configuration_to_check, tail};
use crate::measure::Measure;
use device::{Built, DeviceError, DeviceInfo, LoadedKernel, OpenClDevice};
pub use spec::{OpenClSpec, Selector};

/// How long a kernel that ran past its timeout may still take before the runner gives up
/// on the device.
const GRACE: Duration = Duration::from_secs(30);

/// An OpenCL runner could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenClError {
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
    /// No OpenCL library or platform, or the device is not there.
    #[error("OpenCL: {0}")]
    Device(String),
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

/// The spec, checked and compiled, before any device is touched.
pub struct Problem {
    spec: OpenClSpec,
    plan: LaunchPlan,
    source: String,
    source_path: PathBuf,
    args: Vec<HostArg>,
    checking: Checking,
    objectives: Vec<KernelObjective>,
    metrics: Vec<Metric>,
    measure: Measure,
}

impl Problem {
    /// Checks `spec` against `space` and reads what it names (relative paths are relative to
    /// `spec_dir`).
    pub fn new(
        spec: &OpenClSpec,
        space: &SearchSpace,
        spec_dir: &Path,
    ) -> Result<Problem, OpenClError> {
        // `[runner.defines]` stand for their values in the section's expressions.
        let spec = &spec.bound(&[], space).map_err(OpenClError::Spec)?;
        let source_path = spec_dir.join(&spec.source);
        let source = std::fs::read_to_string(&source_path).map_err(|e| OpenClError::Source {
            path: source_path.clone(),
            source: e,
        })?;
        let args = data::build_args(&spec.arguments, spec_dir)
            .map_err(|e| OpenClError::Spec(format!("[runner] {e}")))?;
        Problem::from_parts(spec, space, source, source_path, args)
    }

    /// Checks `spec` against `space` with the kernel's source text and its arguments given
    /// directly (the Python bindings pass NumPy arrays this way); `spec.arguments` is not
    /// read.
    pub fn from_parts(
        spec: &OpenClSpec,
        space: &SearchSpace,
        source: String,
        source_path: PathBuf,
        args: Vec<HostArg>,
    ) -> Result<Problem, OpenClError> {
        let err = OpenClError::Spec;
        if let Some(kind) = &spec.kind
            && kind != "opencl"
        {
            return Err(err(format!(
                "[runner] kind = \"{kind}\" is not the opencl runner"
            )));
        }
        let measure = Measure::from_spec(
            spec.measure.as_ref(),
            spec.warmup,
            spec.repeat,
            &crate::cuda::default_measure(),
        )
        .map_err(|(key, m)| {
            let table = if matches!(key, "repeat" | "warmup") {
                "[runner]"
            } else {
                "[runner.measure]"
            };
            err(format!("{table} {key}: {m}"))
        })?;
        if spec.jobs == Some(0) {
            return Err(err("[runner] jobs: must be at least 1".into()));
        }
        if let Err(m) = ktune_core::checked_seconds(spec.kernel_timeout) {
            return Err(err(format!("[runner] kernel_timeout: {m}")));
        }
        let objectives = spec.objective_list().map_err(err)?;
        if let Some(o) = objectives.iter().find(|o| o.needs_flops())
            && spec.flops.is_none()
        {
            return Err(err(format!(
                "[runner] objective \"{}\" needs `flops`, the floating-point operations of one launch (e.g. flops = \"2 * 1024 * 1024 * 1024\")",
                o.name()
            )));
        }
        let plan = LaunchPlan::new(&spec.launch_rules(), space).map_err(err)?;
        let checking = Checking::new(spec.verify.as_ref(), &args, space).map_err(err)?;
        Ok(Problem {
            metrics: kernel::metrics(&objectives),
            objectives,
            spec: spec.clone(),
            plan,
            source,
            source_path,
            args,
            checking,
            measure,
        })
    }

    /// The metrics every successful outcome reports: the objectives, the kernel time in
    /// milliseconds (when it is not one of them), its standard deviation.
    pub fn metrics(&self) -> &[Metric] {
        &self.metrics
    }

    /// The launch of a configuration.
    pub fn launch(&self, space: &SearchSpace, config: &Configuration) -> Result<Launch, String> {
        self.plan.launch(space, config)
    }

    /// The options given to `clBuildProgram`: the source's directory for includes, then the
    /// spec's options.
    pub fn build_options(&self) -> String {
        let mut options = Vec::new();
        if let Some(dir) = self
            .source_path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
        {
            options.push(format!("-I \"{}\"", dir.display()));
        }
        options.extend(self.spec.compiler_options.iter().cloned());
        options.join(" ")
    }

    /// The program source of one configuration: its defines as `#define` lines, as Kernel
    /// Tuner puts them, then the source from its first line (`#line` keeps the build log's
    /// line numbers those of the file).
    pub fn source_with_defines(&self, launch: &Launch) -> String {
        kernel::source_with_defines(
            &self.source,
            &kernel::file_name(&self.source_path, "kernel.cl"),
            launch,
        )
    }
}

/// Runs configurations of an OpenCL kernel on one device.
pub struct OpenClRunner {
    problem: Arc<Problem>,
    /// `None` once abandoned: a kernel that never finished holds the queue, and releasing
    /// it would wait for that kernel.
    device: Option<OpenClDevice>,
    info: DeviceInfo,
    jobs: usize,
    /// Expected contents per argument (outputs only), once known.
    expected: Vec<Option<Vec<u8>>>,
    /// Set when the device can no longer be used in this process.
    broken: Option<String>,
    /// Set together with `broken`: only a new process can use the device again.
    fresh_process: Arc<std::sync::atomic::AtomicBool>,
    wrong_outputs: WrongOutputs,
    /// Why no more configurations are measured, when the expected output is suspect.
    outputs_differ: Option<String>,
    base: Observed,
    /// The best objective so far, for early abort.
    incumbent: Option<f64>,
    /// When the time budget runs out: no configuration starts after it.
    deadline: Option<Instant>,
}

/// Why measuring stopped.
enum Measured {
    Device(DeviceError),
    WrongOutput(String),
}

impl From<DeviceError> for Measured {
    fn from(e: DeviceError) -> Self {
        Measured::Device(e)
    }
}

impl OpenClRunner {
    /// Checks the spec, opens the device, uploads the arguments and, when verification is
    /// on, runs the reference configuration.
    pub fn new(
        spec: &OpenClSpec,
        space: &SearchSpace,
        spec_dir: &Path,
    ) -> Result<OpenClRunner, OpenClError> {
        let problem = Problem::new(spec, space, spec_dir)?;
        OpenClRunner::open(problem, space)
    }

    /// Opens the device for a checked problem.
    pub fn open(problem: Problem, space: &SearchSpace) -> Result<OpenClRunner, OpenClError> {
        let device =
            OpenClDevice::open(&problem.spec.platform, &problem.spec.device, &problem.args)
                .map_err(|e| OpenClError::Device(e.to_string()))?;
        let info = device.info.clone();
        let mut base = Observed::new();
        base.insert("device".into(), json!(info.name));
        base.insert("platform".into(), json!(info.platform.1));
        base.insert("opencl".into(), json!(info.version));
        base.insert("driver".into(), json!(info.driver));
        let jobs = problem.spec.jobs.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
                .min(4)
        });
        let expected = kernel::expected_outputs(&problem.args);
        let mut runner = OpenClRunner {
            problem: Arc::new(problem),
            device: Some(device),
            info,
            jobs,
            expected,
            broken: None,
            fresh_process: Arc::default(),
            wrong_outputs: WrongOutputs::default(),
            outputs_differ: None,
            base,
            incumbent: None,
            deadline: None,
        };
        match runner.problem.checking.reference.clone() {
            Some(reference) => runner.record_reference(space, &reference)?,
            None => runner.check_arguments(space)?,
        }
        Ok(runner)
    }

    /// Programs built in parallel (ask the strategy for this many at a time).
    pub fn jobs(&self) -> usize {
        self.jobs
    }

    /// What is known about the device.
    pub fn device_info(&self) -> &DeviceInfo {
        &self.info
    }

    /// A flag that becomes true when this runner stopped because the device cannot be used
    /// again in this process (a kernel that never finished); a program that owns the
    /// process then starts afresh and resumes from its database.
    pub fn fresh_process_needed(&self) -> Arc<std::sync::atomic::AtomicBool> {
        Arc::clone(&self.fresh_process)
    }

    /// Sets `flag` instead of a flag of its own (see [`Self::fresh_process_needed`]): runners
    /// of one device in one process (the instances of a study) share their fate.
    pub fn share_fresh_process(&mut self, flag: Arc<std::sync::atomic::AtomicBool>) {
        self.fresh_process = flag;
    }

    fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.problem.spec.kernel_timeout)
    }

    fn device(&self) -> Result<&OpenClDevice, DeviceError> {
        self.device
            .as_ref()
            .ok_or_else(|| DeviceError::Setup("the device was given up".into()))
    }

    fn build(&self, launch: &Launch) -> Result<Built, String> {
        let device = self.device().map_err(|e| e.to_string())?;
        device.build(
            &self.problem.source_with_defines(launch),
            &self.problem.build_options(),
        )
    }

    /// Builds and loads the default configuration (or the first) once to compare the
    /// arguments with the kernel's parameters before anything is measured: a mismatch
    /// would fail every configuration alike. One that does not build tells nothing.
    fn check_arguments(&mut self, space: &SearchSpace) -> Result<(), OpenClError> {
        let Some(config) = configuration_to_check(space) else {
            return Ok(());
        };
        let Ok(launch) = self.problem.launch(space, &config) else {
            return Ok(());
        };
        let Ok(built) = self.build(&launch) else {
            return Ok(());
        };
        let device = self
            .device()
            .map_err(|e| OpenClError::Device(e.to_string()))?;
        match device.load(&built, &self.problem.spec.kernel, &self.problem.args) {
            Err(DeviceError::Arguments(m)) => Err(OpenClError::Arguments(m)),
            _ => Ok(()),
        }
    }

    /// Runs the reference configuration once and keeps its outputs as the expected ones.
    fn record_reference(
        &mut self,
        space: &SearchSpace,
        config: &Configuration,
    ) -> Result<(), OpenClError> {
        let failed = |reason: String| OpenClError::Reference {
            configuration: space.describe(config),
            reason,
        };
        let launch = self.problem.launch(space, config).map_err(failed)?;
        let built = self
            .build(&launch)
            .map_err(|log| failed(format!("build: {}", tail(&log))))?;
        let loaded = self
            .device()
            .and_then(|d| d.load(&built, &self.problem.spec.kernel, &self.problem.args))
            .map_err(|e| match e {
                DeviceError::Arguments(m) => OpenClError::Arguments(m),
                e => failed(e.to_string()),
            })?;
        let timeout = self.timeout();
        let outputs = self.reset_outputs().and_then(|()| {
            self.device()?.run(&loaded, &launch, timeout)?;
            self.read_outputs()
        });
        let outputs = outputs.map_err(|e| failed(e.to_string()))?;
        for (i, out) in outputs {
            if self.expected[i].is_none() {
                self.expected[i] = Some(out);
            }
        }
        Ok(())
    }

    /// Restores every output array to its initial contents.
    fn reset_outputs(&mut self) -> Result<(), DeviceError> {
        let problem = Arc::clone(&self.problem);
        let device = self
            .device
            .as_mut()
            .ok_or_else(|| DeviceError::Setup("the device was given up".into()))?;
        for (i, a) in problem.args.iter().enumerate() {
            if let HostArg::Array {
                output: true,
                bytes,
                ..
            } = a
            {
                device.upload(i, bytes)?;
            }
        }
        Ok(())
    }

    /// The contents of every output array.
    fn read_outputs(&self) -> Result<Vec<(usize, Vec<u8>)>, DeviceError> {
        let device = self.device()?;
        let mut out = Vec::new();
        for (i, a) in self.problem.args.iter().enumerate() {
            if let HostArg::Array {
                output: true,
                bytes,
                ..
            } = a
            {
                out.push((i, device.download(i, bytes.len())?));
            }
        }
        Ok(out)
    }

    /// Benchmarks one built configuration.
    fn benchmark(&mut self, launch: &Launch, built: &Built, build_s: f64) -> Outcome {
        let started = Instant::now();
        let mut timings = Timings {
            compile: build_s,
            ..Timings::default()
        };
        let mut observed = self.base.clone();
        let global: Vec<u64> = (0..3)
            .map(|d| u64::from(launch.grid[d]) * u64::from(launch.block[d]))
            .collect();
        observed.insert("global_size".into(), json!(global));
        observed.insert("local_size".into(), json!(launch.block));
        if self.info.max_work_group_size > 0
            && launch.threads() > self.info.max_work_group_size as u64
        {
            return Outcome::failed(
                FailureKind::Runtime,
                format!(
                    "a work-group of {} work-items ({}x{}x{}) is more than the device's maximum of {}",
                    launch.threads(),
                    launch.block[0],
                    launch.block[1],
                    launch.block[2],
                    self.info.max_work_group_size
                ),
                timings,
            )
            .with_observed(observed);
        }
        let loaded = match self
            .device()
            .and_then(|d| d.load(built, &self.problem.spec.kernel, &self.problem.args))
        {
            Ok(k) => k,
            Err(e) => return self.failure(e, timings, observed),
        };
        let result = self.measure(&loaded, launch, &mut timings, &mut observed);
        timings.framework =
            (started.elapsed().as_secs_f64() - timings.benchmark - timings.verification).max(0.0);
        match result {
            Ok((values, samples)) => Outcome::ok(values, timings)
                .with_observed(observed)
                .with_samples(samples),
            Err(Measured::Device(e)) => self.failure(e, timings, observed),
            Err(Measured::WrongOutput(reason)) => {
                Outcome::failed(FailureKind::WrongOutput, reason, timings).with_observed(observed)
            }
        }
    }

    fn measure(
        &mut self,
        loaded: &LoadedKernel,
        launch: &Launch,
        timings: &mut Timings,
        observed: &mut Observed,
    ) -> Result<(Vec<f64>, ktune_core::Samples), Measured> {
        let timeout = self.timeout();
        let mut plan = self.problem.measure.clone();
        if self.problem.checking.tolerances.is_some() {
            let t = Instant::now();
            self.reset_outputs()?;
            self.device()?.run(loaded, launch, timeout)?;
            let outputs = self.read_outputs()?;
            let checked =
                self.problem
                    .checking
                    .compare(&self.problem.args, &self.expected, &outputs);
            timings.verification = t.elapsed().as_secs_f64();
            checked.map_err(Measured::WrongOutput)?;
            // The checked launch was a warm-up too.
            plan.warmup = plan.warmup.saturating_sub(1);
        }
        let t = Instant::now();
        let incumbent = self
            .incumbent
            .and_then(|b| kernel::incumbent_time(self.problem.objectives[0], b, launch.flops));
        let device = self.device()?;
        let samples = plan.run(incumbent.map(|b| (b, Direction::Minimize)), |k| {
            let ms = device.time_launches(loaded, launch, k, timeout)?;
            Ok::<_, DeviceError>((ms, ms * k as f64 * 1e-3))
        })?;
        timings.benchmark = t.elapsed().as_secs_f64();
        let summary = samples.summary();
        let (mean, stdev) = (summary.value(), summary.stdev);
        observed.insert("times_ms".into(), json!(samples.values));
        let gflops = launch.flops.map(|f| f / (mean * 1e-3) / 1e9);
        if let Some(g) = gflops {
            observed.insert("gflops".into(), json!(g));
        }
        let values = kernel::values(&self.problem.objectives, mean, stdev, gflops, None)
            .map_err(|m| Measured::Device(DeviceError::Launch(m)))?;
        Ok((values, samples))
    }

    /// The outcome of a device error; a timeout waits for the kernel to end, and gives the
    /// device up when it does not.
    fn failure(&mut self, e: DeviceError, timings: Timings, observed: Observed) -> Outcome {
        let (kind, reason) = match e {
            DeviceError::Load(m) | DeviceError::Arguments(m) => (FailureKind::Compile, m),
            DeviceError::Launch(m) | DeviceError::Setup(m) => (FailureKind::Runtime, m),
            DeviceError::NoLibrary | DeviceError::NoPlatform => {
                (FailureKind::Runtime, e.to_string())
            }
            DeviceError::Timeout(s) => {
                let finished = self.device().is_ok_and(|d| d.finish(GRACE).is_ok());
                if !finished {
                    self.stop_process(format!(
                        "a kernel ran for over {:.0} s and is still running; only ending this \
                         process stops it",
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

    /// Stops this runner for good: the device is not touched again in this process.
    fn stop_process(&mut self, why: String) {
        // Releasing a queue waits for what it runs: forget the handles instead (the driver
        // frees them when the process ends).
        if let Some(d) = self.device.take() {
            std::mem::forget(d);
        }
        self.fresh_process
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.broken = Some(format!(
            "{why}; every result so far is saved, and a new process resumes from them"
        ));
    }
}

impl Runner for OpenClRunner {
    fn name(&self) -> &str {
        "opencl"
    }

    fn metrics(&self) -> &[Metric] {
        &self.problem.metrics
    }

    fn device(&self) -> Option<String> {
        Some(self.info.name.clone())
    }

    fn evaluate(
        &mut self,
        space: &SearchSpace,
        configs: &[Configuration],
    ) -> Result<Vec<Outcome>, CoreError> {
        let stopped = |message, outcomes| kernel::stopped("opencl", message, outcomes);
        if let Some(m) = self.broken.as_ref().or(self.outputs_differ.as_ref()) {
            return Err(stopped(m.clone(), Vec::new()));
        }
        let deadline = self.deadline;
        let out_of_time = || deadline.is_some_and(|d| Instant::now() >= d);
        if out_of_time() {
            return Err(CoreError::OutOfTime {
                outcomes: Vec::new(),
            });
        }
        let builder = match self.device() {
            Ok(d) => d.builder(),
            Err(e) => return Err(stopped(e.to_string(), Vec::new())),
        };
        let launches: Vec<Result<Launch, String>> = configs
            .iter()
            .map(|c| self.problem.launch(space, c))
            .collect();
        let problem = Arc::clone(&self.problem);
        let options = problem.build_options();
        let build = |launch: &Launch| {
            let t = Instant::now();
            builder
                .build(&problem.source_with_defines(launch), &options)
                .map(|b| (b, t.elapsed().as_secs_f64()))
        };
        // A CPU device runs kernels on the cores the builds would take.
        let overlap = if self.info.is_cpu {
            Overlap::BuildFirst
        } else {
            Overlap::WhileMeasuring
        };
        let outcomes = build_and_measure(
            &launches,
            self.jobs,
            overlap,
            "clBuildProgram",
            &build,
            &out_of_time,
            &mut |launch, (built, seconds)| {
                let outcome = self.benchmark(launch, &built, seconds);
                (outcome, self.broken.is_some())
            },
        );
        if let Some(m) =
            self.problem
                .checking
                .wrong_outputs_stop(&mut self.wrong_outputs, &outcomes, space)
        {
            self.outputs_differ = Some(m);
        }
        kernel::batch_result("opencl", outcomes, configs.len(), self.broken.as_ref())
    }

    fn set_incumbent(&mut self, best: Option<f64>) {
        self.incumbent = best;
    }

    /// Checked before each configuration of a batch: one in flight is measured to the end
    /// (a running kernel cannot be cancelled, and `kernel_timeout` bounds it).
    fn set_time_left(&mut self, seconds: Option<f64>) {
        self.deadline =
            seconds.map(|s| Instant::now() + Duration::from_secs_f64(s.clamp(0.0, 1e9)));
    }

    fn remeasure(
        &mut self,
        space: &SearchSpace,
        configs: &[Configuration],
        rounds: usize,
    ) -> Result<Vec<Outcome>, CoreError> {
        if let Some(m) = &self.broken {
            return Err(CoreError::Runner {
                runner: "opencl".into(),
                message: m.clone(),
            });
        }
        let timeout = self.timeout();
        let plan = self.problem.measure.clone();
        // Each configuration built, loaded and warmed up, with its launches per sample.
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
            let built = match self.build(&launch) {
                Ok(b) => b,
                Err(log) => {
                    ready.push(Err(Outcome::failed(
                        FailureKind::Compile,
                        format!("clBuildProgram: {}", tail(&log)),
                        Timings::default(),
                    )));
                    continue;
                }
            };
            let loaded = self.device().and_then(|d| {
                let k = d.load(&built, &self.problem.spec.kernel, &self.problem.args)?;
                let runs = plan.warm_up(&mut |n| {
                    let ms = d.time_launches(&k, &launch, n, timeout)?;
                    Ok((ms, ms * n as f64 * 1e-3))
                })?;
                Ok((k, runs))
            });
            match loaded {
                Ok((k, runs)) => ready.push(Ok((launch, k, runs, Vec::with_capacity(rounds)))),
                Err(e) => {
                    let failed = self.failure(e, Timings::default(), Observed::new());
                    ready.push(Err(failed));
                    if self.broken.is_some() {
                        break;
                    }
                }
            }
        }
        let started = Instant::now();
        'rounds: for _ in 0..rounds {
            for slot in ready.iter_mut() {
                let Ok((launch, k, runs, samples)) = slot else {
                    continue;
                };
                let timed = match self.device.as_ref() {
                    Some(d) => d.time_launches(k, launch, *runs, timeout),
                    None => break 'rounds,
                };
                match timed {
                    Ok(ms) => samples.push(ms),
                    Err(e) => {
                        *slot = Err(self.failure(e, Timings::default(), Observed::new()));
                        if self.broken.is_some() {
                            break 'rounds;
                        }
                    }
                }
            }
        }
        let benchmark = started.elapsed().as_secs_f64() / configs.len().max(1) as f64;
        let mut outcomes: Vec<Outcome> = ready
            .into_iter()
            .map(|r| match r {
                Ok((launch, _, runs, values)) if !values.is_empty() => kernel::remeasured(
                    &self.problem.objectives,
                    plan.statistic,
                    values,
                    runs,
                    benchmark,
                    launch.flops,
                ),
                Ok(_) => Outcome::failed(
                    FailureKind::Runtime,
                    "not measured again: the device stopped",
                    Timings::default(),
                ),
                Err(failed) => failed,
            })
            .collect();
        outcomes.resize_with(configs.len(), || {
            Outcome::failed(
                FailureKind::Runtime,
                "not measured again: the device stopped",
                Timings::default(),
            )
        });
        Ok(outcomes)
    }
}

/// A configuration being re-measured: its launch, its loaded kernel, launches per sample and
/// the samples so far.
type Finalist = (Launch, LoadedKernel, usize, Vec<f64>);

/// The OpenCL devices of this machine, one line each, for `ktune devices`; `Err` says why
/// there are none (no library, no platform).
pub fn list_devices() -> Result<Vec<DeviceInfo>, String> {
    device::devices().map_err(|e| e.to_string())
}
