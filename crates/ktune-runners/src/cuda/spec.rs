//! The `[runner]` section for `kind = "cuda"`, as written in a `ktune.toml`.

use std::path::PathBuf;

use serde::Deserialize;

pub use crate::kernel::launch::LaunchRules;
use crate::kernel::spec::Binding;
use crate::kernel::spec::objective_list;
pub use crate::kernel::spec::{
    ArgumentSpec, KernelObjective as CudaObjective, SizeSpec, VerifySpec,
};

/// The `[runner]` section of a `ktune.toml` for `kind = "cuda"`.
///
/// ```toml
/// [runner]
/// kind = "cuda"
/// source = "vector_add.cu"
/// kernel = "vector_add"
/// problem_size = [10_000_000]
///
/// [[runner.argument]]
/// name = "c"
/// type = "float32"
/// size = 10_000_000
/// output = true
/// ```
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudaSpec {
    /// `"cuda"`.
    #[serde(default)]
    pub kind: Option<String>,
    /// The CUDA source file (relative to the spec's directory).
    pub source: PathBuf,
    /// The kernel's name (a `__global__` function, `extern "C"` or not).
    pub kernel: String,
    /// Template arguments of the kernel, as C++ text with `{param}` placeholders, e.g.
    /// `["float", "{block_size_x}"]`.
    #[serde(default)]
    pub template_args: Vec<String>,
    /// The problem size in x, y, z (one to three entries; integers or expressions of the
    /// parameters). The grid is the problem size divided by the grid divisors, rounded up.
    pub problem_size: Vec<SizeSpec>,
    /// The parameters that give the thread-block dimensions (default `block_size_x`,
    /// `block_size_y`, `block_size_z`). A name that is not a parameter means 256 threads in x
    /// and 1 in y and z, as in Kernel Tuner.
    pub block_size_names: Option<Vec<String>>,
    /// Expressions whose product divides the problem size in x (default: the block size in
    /// x); Kernel Tuner's `grid_div_x`.
    pub grid_div_x: Option<Vec<String>>,
    /// The same in y.
    pub grid_div_y: Option<Vec<String>>,
    /// The same in z.
    pub grid_div_z: Option<Vec<String>>,
    /// Bytes of dynamic shared memory per block: an expression of the parameters.
    pub shared_memory: Option<String>,
    /// Extra NVRTC options (`-std=c++17`, `--use_fast_math`, `-I...`).
    #[serde(default)]
    pub compiler_options: Vec<String>,
    /// The CUDA device's ordinal.
    #[serde(default)]
    pub device: usize,
    /// Unmeasured launches before the measured ones (the first also checks the output);
    /// default 1 (also `[runner.measure] warmup`).
    pub warmup: Option<usize>,
    /// A fixed number of measured launches, each timed with CUDA events, the objective their
    /// mean (the older way; without it, launches are repeated adaptively as
    /// `[runner.measure]` says).
    pub repeat: Option<usize>,
    /// How measurements are repeated (see [`crate::measure`]).
    pub measure: Option<crate::measure::MeasureSpec>,
    /// Flush the L2 cache before every timed launch (a buffer twice its size is written),
    /// so that no launch profits from data the previous one left there.
    #[serde(default)]
    pub flush_l2: bool,
    /// Warn when the SM clock varied by more than this fraction during a run (0.05 = 5%).
    #[serde(default = "default_clock_tolerance")]
    pub clock_tolerance: f64,
    /// Seconds one launch may take before the configuration is a timeout.
    #[serde(default = "default_kernel_timeout")]
    pub kernel_timeout: f64,
    /// Configurations compiled in parallel while another is benchmarked (default: the CPU
    /// count, at most 4). The strategy is asked for this many configurations at a time, so
    /// a larger value trades a little search adaptivity for throughput.
    pub jobs: Option<usize>,
    /// What to optimise.
    #[serde(default)]
    pub objective: CudaObjective,
    /// Several objectives measured on the same launches, instead of `objective`
    /// (`objectives = ["time", "energy"]`): the first steers repetitions and early abort.
    #[serde(default)]
    pub objectives: Vec<CudaObjective>,
    /// Floating-point operations per launch: an expression of the parameters (needed for
    /// the `GFLOP/s` objectives).
    pub flops: Option<String>,
    /// Measure power and energy through NVML (default: only when the objective needs it).
    pub power: Option<bool>,
    /// Seconds of back-to-back launches over which power is averaged (at least: the
    /// window runs between two updates of NVML's energy counter).
    #[serde(default = "default_power_seconds")]
    pub power_seconds: f64,
    /// Constants `#define`d in every configuration's program (`[runner.defines]`, e.g.
    /// `N = 4096`; an `[[instance]]`'s variables are added to them).
    #[serde(default)]
    pub defines: toml::Table,
    /// The kernel's arguments, in order.
    #[serde(default, rename = "argument")]
    pub arguments: Vec<ArgumentSpec>,
    /// Arrays copied into the kernel's `__constant__` variables of the same names before
    /// its launches (Kernel Tuner's `cmem_args`); a configuration whose code does not
    /// declare one simply does not get it.
    #[serde(default, rename = "constant")]
    pub constants: Vec<ArgumentSpec>,
    /// Output verification.
    pub verify: Option<VerifySpec>,
}

fn default_clock_tolerance() -> f64 {
    0.05
}
fn default_kernel_timeout() -> f64 {
    10.0
}
fn default_power_seconds() -> f64 {
    0.5
}

impl CudaSpec {
    /// The objectives, in order: `objectives` where given, else `objective`.
    ///
    /// # Errors
    /// A message naming the problem where both are given or one is repeated.
    pub fn objective_list(&self) -> Result<Vec<CudaObjective>, String> {
        objective_list(self.objective, &self.objectives)
    }

    /// The launch rules this section gives.
    pub fn launch_rules(&self) -> LaunchRules<'_> {
        LaunchRules {
            problem_size: &self.problem_size,
            block_size_names: self.block_size_names.as_deref(),
            grid_div: [
                self.grid_div_x.as_deref(),
                self.grid_div_y.as_deref(),
                self.grid_div_z.as_deref(),
            ],
            shared_memory: self.shared_memory.as_deref(),
            flops: self.flops.as_deref(),
            kernel: &self.kernel,
            template_args: &self.template_args,
            defines: &self.defines,
        }
    }

    /// This section with its `[runner.defines]` and an `[[instance]]`'s variables (none:
    /// `&[]`) bound, as [`Binding`] says. Binding twice changes nothing more.
    ///
    /// # Errors
    /// A name that is also a parameter, a define that is not a number, boolean or string,
    /// or an expression that does not lex.
    pub fn bound(
        &self,
        vars: &[(String, String)],
        space: &ktune_space::SearchSpace,
    ) -> Result<Self, String> {
        let b = Binding::new(&self.defines, vars, space)?;
        Ok(Self {
            problem_size: b.sizes("problem_size", &self.problem_size)?,
            grid_div_x: b.exprs("grid_div_x", &self.grid_div_x)?,
            grid_div_y: b.exprs("grid_div_y", &self.grid_div_y)?,
            grid_div_z: b.exprs("grid_div_z", &self.grid_div_z)?,
            shared_memory: b.opt_expr("shared_memory", &self.shared_memory)?,
            flops: b.opt_expr("flops", &self.flops)?,
            defines: b.defines(),
            arguments: b.arguments(&self.arguments)?,
            constants: b.arguments(&self.constants)?,
            ..self.clone()
        })
    }
}
