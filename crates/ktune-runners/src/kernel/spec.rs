//! What the runners of compiled kernels (CUDA, OpenCL) read the same way from their
//! `[runner]` sections: arguments, verification, problem sizes and objectives.

use std::path::PathBuf;

use serde::Deserialize;

/// A problem-size entry: a number or an expression of the parameters.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum SizeSpec {
    /// `4096`
    Int(i64),
    /// `"n * 2"`
    Expr(String),
}

/// The quantity a kernel configuration is judged by (the CUDA runner measures all four; the
/// OpenCL runner, which has no power readings, the time and the throughput).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
pub enum KernelObjective {
    /// Kernel time in milliseconds (minimised).
    #[default]
    #[serde(rename = "time")]
    Time,
    /// Energy per launch in joules, from NVML (minimised; CUDA only).
    #[serde(rename = "energy")]
    Energy,
    /// Throughput from `flops` and the time (maximised).
    #[serde(rename = "GFLOP/s")]
    Gflops,
    /// Throughput per watt of measured power (maximised; CUDA only).
    #[serde(rename = "GFLOP/s per watt", alias = "GFLOPS/W")]
    GflopsPerWatt,
}

impl KernelObjective {
    /// The metric's name.
    pub fn name(self) -> &'static str {
        match self {
            KernelObjective::Time => "time",
            KernelObjective::Energy => "energy",
            KernelObjective::Gflops => "GFLOP/s",
            KernelObjective::GflopsPerWatt => "GFLOP/s per watt",
        }
    }

    /// Whether it is minimised (time, energy) or maximised (throughput).
    pub fn direction(self) -> ktune_core::Direction {
        if self.needs_flops() {
            ktune_core::Direction::Maximize
        } else {
            ktune_core::Direction::Minimize
        }
    }

    /// The unit of its values.
    pub fn unit(self) -> &'static str {
        match self {
            KernelObjective::Time => "ms",
            KernelObjective::Energy => "J",
            KernelObjective::Gflops => "GFLOP/s",
            KernelObjective::GflopsPerWatt => "GFLOP/s/W",
        }
    }

    /// Whether it needs NVML's power readings.
    pub fn needs_power(self) -> bool {
        matches!(
            self,
            KernelObjective::Energy | KernelObjective::GflopsPerWatt
        )
    }

    /// Whether it needs the `flops` expression.
    pub fn needs_flops(self) -> bool {
        matches!(
            self,
            KernelObjective::Gflops | KernelObjective::GflopsPerWatt
        )
    }
}

/// One kernel argument: a device array (with `size`) or a scalar (with `value`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgumentSpec {
    /// Its name (for messages and verification reports).
    pub name: String,
    /// The element type: `float32`/`float`, `float64`/`double`, `int8` ... `int64`,
    /// `uint8` ... `uint64` (`int` is `int32`).
    #[serde(rename = "type")]
    pub dtype: String,
    /// Number of elements of a device array.
    pub size: Option<u64>,
    /// The value of a scalar argument.
    pub value: Option<toml::Value>,
    /// How an array is filled: `"random"`, `"zeros"`, or a number (every element).
    pub fill: Option<toml::Value>,
    /// `[low, high)` of a random fill (default `[0, 1)`, `[0, 100)` for integers).
    pub range: Option<[f64; 2]>,
    /// Seed of a random fill (default: the argument's position).
    pub seed: Option<u64>,
    /// Initial contents from a file: `.npy`, or raw little-endian elements.
    pub file: Option<PathBuf>,
    /// The kernel writes it: it is restored before each configuration and verified.
    #[serde(default)]
    pub output: bool,
    /// The expected contents after a launch (`.npy` or raw), instead of the reference
    /// configuration's output.
    pub expected: Option<PathBuf>,
}

/// `[runner.verify]`: how outputs are checked.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerifySpec {
    /// Absolute tolerance.
    #[serde(default = "default_atol")]
    pub atol: f64,
    /// Relative tolerance (of the expected value).
    #[serde(default)]
    pub rtol: f64,
    /// The configuration whose outputs are the reference, as parameter values (missing
    /// parameters take their default); by default the default configuration.
    pub reference: Option<toml::Table>,
}

fn default_atol() -> f64 {
    1e-6
}

/// The objectives of a `[runner]` section, in order: `objectives` where given, else
/// `objective`.
///
/// # Errors
/// A message naming the problem where both are given or one is repeated.
pub fn objective_list(
    objective: KernelObjective,
    objectives: &[KernelObjective],
) -> Result<Vec<KernelObjective>, String> {
    if objectives.is_empty() {
        return Ok(vec![objective]);
    }
    if objective != KernelObjective::default() {
        return Err("[runner] give either `objective` or `objectives`, not both".into());
    }
    for (i, o) in objectives.iter().enumerate() {
        if objectives[..i].contains(o) {
            return Err(format!(
                "[runner] objectives: `{}` is listed twice",
                o.name()
            ));
        }
    }
    Ok(objectives.to_vec())
}
