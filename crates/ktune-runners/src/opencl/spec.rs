//! The `[runner]` section for `kind = "opencl"`, as written in a `ktune.toml`.

use std::path::PathBuf;

use serde::Deserialize;

use crate::kernel::launch::LaunchRules;
use crate::kernel::spec::{
    ArgumentSpec, Binding, KernelObjective, SizeSpec, VerifySpec, objective_list,
};

/// The `[runner]` section of a `ktune.toml` for `kind = "opencl"`: the CUDA runner's keys
/// where OpenCL has the same thing (launch rules, arguments, verification, measurement),
/// and the platform and device to run on.
///
/// ```toml
/// [runner]
/// kind = "opencl"
/// source = "vector_add.cl"
/// kernel = "vector_add"
/// problem_size = [1_000_000]
/// platform = 0          # or a part of its name: "Portable Computing Language"
/// device = 0            # or a part of its name
///
/// [[runner.argument]]
/// name = "c"
/// type = "float32"
/// size = 1_000_000
/// output = true
/// ```
///
/// The global work size is the grid (the problem size divided by the grid divisors,
/// rounded up) times the work-group size, as Kernel Tuner's OpenCL backend launches.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenClSpec {
    /// `"opencl"`.
    #[serde(default)]
    pub kind: Option<String>,
    /// The OpenCL C source file (relative to the spec's directory).
    pub source: PathBuf,
    /// The kernel's name (a `__kernel` function).
    pub kernel: String,
    /// The problem size in x, y, z (one to three entries; integers or expressions of the
    /// parameters).
    pub problem_size: Vec<SizeSpec>,
    /// The parameters that give the work-group dimensions (default `block_size_x`,
    /// `block_size_y`, `block_size_z`, as in Kernel Tuner).
    pub block_size_names: Option<Vec<String>>,
    /// Expressions whose product divides the problem size in x (default: the work-group
    /// size in x).
    pub grid_div_x: Option<Vec<String>>,
    /// The same in y.
    pub grid_div_y: Option<Vec<String>>,
    /// The same in z.
    pub grid_div_z: Option<Vec<String>>,
    /// Options for `clBuildProgram` (`-cl-fast-relaxed-math`, `-I dir`, ...).
    #[serde(default)]
    pub compiler_options: Vec<String>,
    /// The platform: its index in the loader's list, or a part of its name.
    #[serde(default)]
    pub platform: Selector,
    /// The device on that platform: its index, or a part of its name.
    #[serde(default)]
    pub device: Selector,
    /// Unmeasured launches before the measured ones (the first also checks the output).
    pub warmup: Option<usize>,
    /// A fixed number of measured launches (without it, launches are repeated adaptively
    /// as `[runner.measure]` says).
    pub repeat: Option<usize>,
    /// How measurements are repeated (see [`crate::measure`]).
    pub measure: Option<crate::measure::MeasureSpec>,
    /// Seconds one launch may take before the configuration is a timeout.
    #[serde(default = "default_kernel_timeout")]
    pub kernel_timeout: f64,
    /// Programs built in parallel while another configuration is measured (default: the
    /// CPU count, at most 4).
    pub jobs: Option<usize>,
    /// What to optimise: `"time"` (ms) or `"GFLOP/s"` (with `flops`).
    #[serde(default)]
    pub objective: KernelObjective,
    /// Several objectives measured on the same launches, instead of `objective`.
    #[serde(default)]
    pub objectives: Vec<KernelObjective>,
    /// Floating-point operations per launch: an expression of the parameters.
    pub flops: Option<String>,
    /// Constants `#define`d in every configuration's program (`[runner.defines]`, e.g.
    /// `N = 4096`; an `[[instance]]`'s variables are added to them).
    #[serde(default)]
    pub defines: toml::Table,
    /// The kernel's arguments, in order.
    #[serde(default, rename = "argument")]
    pub arguments: Vec<ArgumentSpec>,
    /// Output verification.
    pub verify: Option<VerifySpec>,
}

fn default_kernel_timeout() -> f64 {
    10.0
}

/// A platform or device: by index, or by a part of its name (case-insensitive).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Selector {
    /// Its position in the list, from 0.
    Index(usize),
    /// A part of its name.
    Name(String),
}

impl Default for Selector {
    fn default() -> Self {
        Selector::Index(0)
    }
}

impl std::fmt::Display for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Selector::Index(i) => write!(f, "{i}"),
            Selector::Name(n) => write!(f, "named \"{n}\""),
        }
    }
}

impl OpenClSpec {
    /// The objectives, in order: `objectives` where given, else `objective`.
    ///
    /// # Errors
    /// A message naming the problem where both are given, one is repeated, or one needs
    /// power readings, which OpenCL does not give.
    pub fn objective_list(&self) -> Result<Vec<KernelObjective>, String> {
        let list = objective_list(self.objective, &self.objectives)?;
        if let Some(o) = list.iter().find(|o| o.needs_power()) {
            return Err(format!(
                "[runner] objective \"{}\" needs power readings, which the OpenCL runner does not take (it measures \"time\" and \"GFLOP/s\")",
                o.name()
            ));
        }
        Ok(list)
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
            shared_memory: None,
            flops: self.flops.as_deref(),
            kernel: &self.kernel,
            template_args: &[],
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
            flops: b.opt_expr("flops", &self.flops)?,
            defines: b.defines(),
            arguments: b.arguments(&self.arguments)?,
            ..self.clone()
        })
    }
}
