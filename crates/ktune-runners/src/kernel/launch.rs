//! From a configuration to a launch: thread-block and grid dimensions, dynamic shared
//! memory, the preprocessor defines and the kernel's name expression, the way Kernel Tuner
//! derives them. Nothing here needs a GPU.

use ktune_space::expr::{Expression, Scalar};
use ktune_space::{Configuration, SearchSpace, Value};

use super::spec::SizeSpec;
use crate::command::{Piece, Word, parse_word};

/// Kernel Tuner's block size when the x dimension has no parameter.
const DEFAULT_BLOCK_X: i64 = 256;

/// The launch rules of a `[runner]` section, as the CUDA and OpenCL runners both write them
/// (Kernel Tuner's `problem_size`, `block_size_names`, `grid_div_x/y/z`).
#[derive(Clone, Copy, Debug)]
pub struct LaunchRules<'a> {
    /// The problem size in x, y, z (one to three entries).
    pub problem_size: &'a [SizeSpec],
    /// The parameters that give the thread-block (work-group) dimensions.
    pub block_size_names: Option<&'a [String]>,
    /// Per dimension, expressions whose product divides the problem size.
    pub grid_div: [Option<&'a [String]>; 3],
    /// Bytes of dynamic shared memory per block (CUDA).
    pub shared_memory: Option<&'a str>,
    /// Floating-point operations per launch.
    pub flops: Option<&'a str>,
    /// The kernel's name.
    pub kernel: &'a str,
    /// Template arguments (CUDA).
    pub template_args: &'a [String],
    /// `[runner.defines]`: constants `#define`d in every configuration's program.
    pub defines: &'a toml::Table,
}

/// Everything needed to launch one configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    /// Blocks in x, y, z.
    pub grid: [u32; 3],
    /// Threads per block in x, y, z.
    pub block: [u32; 3],
    /// Bytes of dynamic shared memory.
    pub shared_bytes: u32,
    /// `-Dname=value` pairs for the compiler, in order.
    pub defines: Vec<(String, String)>,
    /// The kernel with its template arguments (`matmul<float, 16>`).
    pub name_expression: String,
    /// Floating-point operations per launch, when the spec gives them.
    pub flops: Option<f64>,
}

impl Launch {
    /// Threads per block.
    pub fn threads(&self) -> u64 {
        self.block.iter().map(|&b| b as u64).product()
    }
}

enum Dim {
    Const(i64),
    Expr(Expression),
}

/// The compiled launch rules of a spec.
pub struct LaunchPlan {
    problem: [Dim; 3],
    block: [Dim; 3],
    /// `None`: divide by the block dimension; an empty list divides by 1 (the problem size
    /// is the grid), as `grid_div_x = []` does in Kernel Tuner.
    grid_div: [Option<Vec<Expression>>; 3],
    shared: Option<Expression>,
    flops: Option<Expression>,
    kernel: String,
    template: Vec<Word>,
    block_names: [String; 3],
    /// `[runner.defines]` as C text, after the parameters' defines.
    constants: Vec<(String, String)>,
}

/// Compiles `source` (from the spec's `what`) over the space's parameters; a syntax or name
/// error is drawn with a caret.
fn compile(space: &SearchSpace, source: &str, what: &str) -> Result<Expression, String> {
    space
        .expression(source)
        // The rendering starts with the message itself.
        .map_err(|e| format!("[runner] {what}: {}", e.render(source)))
}

fn number(v: Scalar, what: &str, source: &str) -> Result<f64, String> {
    match v {
        Scalar::Int(i) => Ok(i as f64),
        Scalar::Real(r) => Ok(r),
        Scalar::Bool(b) => Ok(f64::from(u8::from(b))),
        Scalar::Str(_) => Err(format!("{what} `{source}` is a string, not a number")),
    }
}

impl LaunchPlan {
    /// Compiles the launch rules of `spec` over `space`'s parameters.
    pub fn new(spec: &LaunchRules<'_>, space: &SearchSpace) -> Result<LaunchPlan, String> {
        if spec.problem_size.is_empty() || spec.problem_size.len() > 3 {
            return Err(format!(
                "[runner] problem_size needs one to three entries (x, y, z), not {}",
                spec.problem_size.len()
            ));
        }
        let mut problem = [Dim::Const(1), Dim::Const(1), Dim::Const(1)];
        for (d, s) in spec.problem_size.iter().enumerate() {
            problem[d] = match s {
                SizeSpec::Int(n) if *n >= 1 => Dim::Const(*n),
                SizeSpec::Int(n) => {
                    return Err(format!(
                        "[runner] problem_size entries must be at least 1, not {n}"
                    ));
                }
                SizeSpec::Expr(e) => Dim::Expr(compile(space, e, "problem_size")?),
            };
        }
        let block_names: [String; 3] = match &spec.block_size_names {
            None => ["block_size_x", "block_size_y", "block_size_z"].map(String::from),
            Some(n) if n.is_empty() || n.len() > 3 => {
                return Err(format!(
                    "[runner] block_size_names needs one to three names, not {}",
                    n.len()
                ));
            }
            Some(n) => {
                let mut names = ["block_size_x", "block_size_y", "block_size_z"].map(String::from);
                for (d, name) in n.iter().enumerate() {
                    names[d] = name.clone();
                }
                names
            }
        };
        let block = [0, 1, 2].map(|d| {
            if space.param_index(&block_names[d]).is_some() {
                // A parameter of that name: its value.
                space
                    .expression(&block_names[d])
                    .map(Dim::Expr)
                    .unwrap_or(Dim::Const(1))
            } else {
                Dim::Const(if d == 0 { DEFAULT_BLOCK_X } else { 1 })
            }
        });
        let mut grid_div: [Option<Vec<Expression>>; 3] = Default::default();
        for (d, given) in spec.grid_div.into_iter().enumerate() {
            if let Some(list) = given {
                let what = ["grid_div_x", "grid_div_y", "grid_div_z"][d];
                grid_div[d] = Some(
                    list.iter()
                        .map(|e| compile(space, e, what))
                        .collect::<Result<_, _>>()?,
                );
            }
        }
        let shared = spec
            .shared_memory
            .map(|e| compile(space, e, "shared_memory"))
            .transpose()?;
        let flops = spec.flops.map(|e| compile(space, e, "flops")).transpose()?;
        let names: Vec<String> = space
            .params()
            .iter()
            .map(|p| p.name().to_string())
            .collect();
        let template = spec
            .template_args
            .iter()
            .map(|t| {
                parse_word(t, "template", &names)
                    .map_err(|e| format!("[runner] template_args: {e}"))
            })
            .collect::<Result<_, _>>()?;
        if spec.kernel.trim().is_empty() {
            return Err("[runner] kernel: the kernel's name is empty".into());
        }
        let mut constants = Vec::new();
        for (name, value) in spec.defines {
            let identifier = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !identifier {
                return Err(format!(
                    "[runner.defines] `{name}` is not a name the preprocessor can define"
                ));
            }
            if space.param_index(name).is_some()
                || block_names.contains(name)
                || [
                    "grid_size_x",
                    "grid_size_y",
                    "grid_size_z",
                    "kernel_tuner",
                    "ktune",
                ]
                .contains(&name.as_str())
            {
                return Err(format!(
                    "[runner.defines] `{name}` is defined for every configuration already (a parameter, a block or grid size, or kernel_tuner/ktune)"
                ));
            }
            let text = super::spec::define_value(value)
                .map_err(|m| format!("[runner.defines] {name}: {m}"))?;
            constants.push((name.clone(), text));
        }
        Ok(LaunchPlan {
            problem,
            block,
            grid_div,
            shared,
            flops,
            kernel: spec.kernel.trim().to_string(),
            template,
            block_names,
            constants,
        })
    }

    /// The launch of `config`. An error (an expression that divides by zero, a dimension
    /// below 1 or beyond the hardware's range) means the configuration cannot run.
    pub fn launch(&self, space: &SearchSpace, config: &Configuration) -> Result<Launch, String> {
        let scalars = space.scalars(config);
        let whole = |e: &Expression, what: &str| -> Result<i64, String> {
            let v = e
                .evaluate(&scalars)
                .map_err(|err| format!("{what} `{}`: {err}", e.source()))?;
            let x = number(v, what, e.source())?;
            if x.fract() != 0.0 {
                return Err(format!(
                    "{what} `{}` is {x}, not a whole number",
                    e.source()
                ));
            }
            Ok(x as i64)
        };
        let eval = |d: &Dim, what: &str| match d {
            Dim::Const(n) => Ok(*n),
            Dim::Expr(e) => whole(e, what),
        };
        let mut block = [1u32; 3];
        let mut grid = [1u32; 3];
        for d in 0..3 {
            let axis = ["x", "y", "z"][d];
            let b = eval(&self.block[d], &format!("block size in {axis}"))?;
            if !(1..=i64::from(u32::MAX)).contains(&b) {
                return Err(format!("the block size in {axis} is {b}"));
            }
            block[d] = b as u32;
            let n = eval(&self.problem[d], &format!("problem size in {axis}"))?;
            let div = match &self.grid_div[d] {
                None => b,
                Some(list) => {
                    let mut div = 1i64;
                    for e in list {
                        let v = whole(e, &format!("grid_div_{axis}"))?;
                        div = div.saturating_mul(v);
                    }
                    div
                }
            };
            if div < 1 {
                return Err(format!("the grid divisor in {axis} is {div}"));
            }
            if n < 1 {
                return Err(format!("the problem size in {axis} is {n}"));
            }
            let g = (n + div - 1) / div;
            grid[d] = u32::try_from(g).map_err(|_| format!("{g} blocks in {axis} is too many"))?;
        }
        let shared_bytes = match &self.shared {
            None => 0,
            Some(e) => {
                let v = whole(e, "shared_memory")?;
                u32::try_from(v).map_err(|_| format!("shared_memory is {v} bytes"))?
            }
        };
        let flops = match &self.flops {
            None => None,
            Some(e) => {
                let v = e
                    .evaluate(&scalars)
                    .map_err(|err| format!("flops `{}`: {err}", e.source()))?;
                Some(number(v, "flops", e.source())?)
            }
        };
        let values = space.values(config);
        // Kernel Tuner's defines: grid and block sizes, then every parameter.
        let mut defines = Vec::new();
        for (name, g) in ["grid_size_x", "grid_size_y", "grid_size_z"]
            .iter()
            .zip(grid)
        {
            defines.push((name.to_string(), g.to_string()));
        }
        for (name, b) in self.block_names.iter().zip(block) {
            if space.param_index(name).is_none() {
                defines.push((name.clone(), b.to_string()));
            }
        }
        for (p, v) in space.params().iter().zip(&values) {
            defines.push((p.name().to_string(), define_text(v)));
        }
        defines.extend(self.constants.iter().cloned());
        defines.push(("kernel_tuner".into(), "1".into()));
        defines.push(("ktune".into(), "1".into()));
        let name_expression = if self.template.is_empty() {
            self.kernel.clone()
        } else {
            let args: Vec<String> = self
                .template
                .iter()
                .map(|w| {
                    w.iter()
                        .map(|p| match p {
                            Piece::Text(t) => t.clone(),
                            Piece::Param(i) => define_text(values[*i]),
                            Piece::BuildDir | Piece::ConfigId => String::new(),
                        })
                        .collect()
                })
                .collect();
            format!("{}<{}>", self.kernel, args.join(", "))
        };
        Ok(Launch {
            grid,
            block,
            shared_bytes,
            defines,
            name_expression,
            flops,
        })
    }
}

/// A parameter value as C source text: booleans as 1/0, permutations as `{a, b, c}`
/// initialisers, everything else as written.
pub fn define_text(v: &Value) -> String {
    match v {
        Value::Bool(b) => u8::from(*b).to_string(),
        Value::Real(r) => format!("{r:?}"),
        Value::Perm(p) => {
            let items: Vec<String> = p.iter().map(|x| x.to_string()).collect();
            format!("{{{}}}", items.join(", "))
        }
        other => other.to_string(),
    }
}
