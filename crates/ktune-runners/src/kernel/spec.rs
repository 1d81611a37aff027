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
    /// Number of elements of a device array: a number, or a constant expression of the
    /// `[[instance]]` variables (`"N * N"`).
    pub size: Option<SizeSpec>,
    /// The value of a scalar argument (or a constant expression of the `[[instance]]`
    /// variables, as a string).
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

/// A `[runner.defines]` value as C source text: numbers as written, booleans as 1/0,
/// strings as they are (`"float"` is the C text `float`).
pub fn define_value(value: &toml::Value) -> Result<String, String> {
    match value {
        toml::Value::Integer(n) => Ok(n.to_string()),
        toml::Value::Float(x) => Ok(format!("{x:?}")),
        toml::Value::Boolean(b) => Ok(u8::from(*b).to_string()),
        toml::Value::String(s) => Ok(s.clone()),
        other => Err(format!("{other} is not a number, boolean or string")),
    }
}

/// `[runner.defines]` and one `[[instance]]`'s variables bound into a kernel runner's
/// section, so that one section serves every instance: each is `#define`d in the program (an
/// instance's variable overrides a define of its name), stands for its value in the
/// section's expressions (`problem_size = ["N", "N"]`, `grid_div_x`, `shared_memory`,
/// `flops`, and an argument's `size = "N * N"` or `value = "N"`), and replaces `{N}` in an
/// argument's `file` and `expected` paths (data per instance).
pub struct Binding {
    vars: Vec<(String, String)>,
}

impl Binding {
    /// The binding of `defines` and then `vars` (names and values as text) over `space`'s
    /// parameters.
    ///
    /// # Errors
    /// A name that is also a parameter (which one it means would be ambiguous), a define
    /// that is not a number, boolean or string.
    pub fn new(
        defines: &toml::Table,
        vars: &[(String, String)],
        space: &ktune_space::SearchSpace,
    ) -> Result<Binding, String> {
        let mut all = Vec::new();
        for (name, value) in defines {
            let text = define_value(value).map_err(|m| format!("[runner.defines] {name}: {m}"))?;
            all.push((name.clone(), text));
        }
        for (name, value) in vars {
            all.retain(|(n, _)| n != name);
            all.push((name.clone(), value.clone()));
        }
        if let Some((name, _)) = all.iter().find(|(n, _)| space.param_index(n).is_some()) {
            return Err(format!(
                "`{name}` is both a parameter and an instance variable or a [runner.defines] entry: rename one of them"
            ));
        }
        Ok(Binding { vars: all })
    }

    /// An expression of `key` with the variables bound.
    pub fn expr(&self, key: &str, source: &str) -> Result<String, String> {
        ktune_space::expr::bind_names(source, &self.vars)
            .map_err(|e| format!("[runner] {key}: {}", e.render(source)))
    }

    /// A list of expressions of `key` with the variables bound.
    pub fn exprs(
        &self,
        key: &str,
        list: &Option<Vec<String>>,
    ) -> Result<Option<Vec<String>>, String> {
        list.as_ref()
            .map(|l| l.iter().map(|e| self.expr(key, e)).collect())
            .transpose()
    }

    /// An optional expression of `key` with the variables bound.
    pub fn opt_expr(&self, key: &str, source: &Option<String>) -> Result<Option<String>, String> {
        source.as_deref().map(|e| self.expr(key, e)).transpose()
    }

    /// Problem sizes with the variables bound.
    pub fn sizes(&self, key: &str, sizes: &[SizeSpec]) -> Result<Vec<SizeSpec>, String> {
        sizes.iter().map(|s| self.size(key, s)).collect()
    }

    /// A problem size or array size with the variables bound.
    pub fn size(&self, key: &str, size: &SizeSpec) -> Result<SizeSpec, String> {
        Ok(match size {
            SizeSpec::Int(n) => SizeSpec::Int(*n),
            SizeSpec::Expr(e) => SizeSpec::Expr(self.expr(key, e)?),
        })
    }

    /// A path with every `{name}` of a variable replaced by its value.
    pub fn path(&self, path: &std::path::Path) -> PathBuf {
        let mut text = path.to_string_lossy().into_owned();
        for (name, value) in &self.vars {
            text = text.replace(&format!("{{{name}}}"), value);
        }
        PathBuf::from(text)
    }

    /// Kernel arguments (or constants) with the variables bound.
    pub fn arguments(&self, list: &[ArgumentSpec]) -> Result<Vec<ArgumentSpec>, String> {
        list.iter()
            .map(|a| {
                let key = |k: &str| format!("argument `{}` {k}", a.name);
                Ok(ArgumentSpec {
                    size: a
                        .size
                        .as_ref()
                        .map(|s| self.size(&key("size"), s))
                        .transpose()?,
                    value: match &a.value {
                        Some(toml::Value::String(e)) => {
                            Some(toml::Value::String(self.expr(&key("value"), e)?))
                        }
                        v => v.clone(),
                    },
                    file: a.file.as_deref().map(|p| self.path(p)),
                    expected: a.expected.as_deref().map(|p| self.path(p)),
                    ..a.clone()
                })
            })
            .collect()
    }

    /// `[runner.defines]` with the variables added (a variable overrides a define of its
    /// name).
    pub fn defines(&self) -> toml::Table {
        self.vars
            .iter()
            .map(|(n, v)| (n.clone(), toml::Value::String(v.clone())))
            .collect()
    }
}
