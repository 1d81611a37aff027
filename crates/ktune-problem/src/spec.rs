//! The `ktune.toml` read once into typed sections: the space, the runner, the strategy, the
//! budget and the storage, each checked when the file is read.

use std::path::{Path, PathBuf};

use ktune_core::{Budget, Metric};
use ktune_runners::{CommandSpec, CudaSpec, OpenClSpec};
use ktune_space::spec::SpaceSpec;
use ktune_store::{Fingerprint, Location};
use ktune_strategies::CheckedStrategy;
use serde::Deserialize;

use crate::ProblemError;

/// How configurations are measured: the `[runner]` section, by its `kind`.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum RunnerSpec {
    /// `kind = "command"` (the default): compile and run external programs.
    Command(Box<CommandSpec>),
    /// `kind = "cuda"`: compile with NVRTC and launch on a GPU.
    Cuda(Box<CudaSpec>),
    /// `kind = "opencl"`: build with the OpenCL driver and launch on any OpenCL device.
    OpenCl(Box<OpenClSpec>),
}

impl RunnerSpec {
    /// The runner kinds there are.
    pub const KINDS: &'static [&'static str] = &["command", "cuda", "opencl"];

    /// The runner's kind, as written in the file.
    pub fn kind(&self) -> &'static str {
        match self {
            RunnerSpec::Command(_) => "command",
            RunnerSpec::Cuda(_) => "cuda",
            RunnerSpec::OpenCl(_) => "opencl",
        }
    }

    /// The unit of the objective's values, when known.
    pub fn unit(&self) -> Option<&str> {
        match self {
            RunnerSpec::Command(c) => c
                .objective_specs()
                .ok()
                .and_then(|o| o.first().and_then(|o| o.unit())),
            RunnerSpec::Cuda(c) => c
                .objective_list()
                .ok()
                .and_then(|o| o.first().map(|o| o.unit())),
            RunnerSpec::OpenCl(c) => c
                .objective_list()
                .ok()
                .and_then(|o| o.first().map(|o| o.unit())),
        }
    }

    /// The objective the runner measures, with its direction (the runner's first metric).
    pub fn objective(&self) -> Metric {
        self.objectives().swap_remove(0)
    }

    /// The objectives the runner measures, in order, with their directions (its first
    /// metrics): one, or the list of `objectives`. A list that cannot be used (given beside
    /// `objective`, a name twice) is refused when the runner is made; here it reads as the
    /// list given.
    pub fn objectives(&self) -> Vec<Metric> {
        match self {
            RunnerSpec::Command(c) => match c.objective_specs() {
                Ok(specs) => specs
                    .into_iter()
                    .map(|o| Metric::new(o.name.clone(), o.direction()))
                    .collect(),
                Err(_) => vec![Metric::new(
                    c.objective.name.clone(),
                    c.objective.direction(),
                )],
            },
            RunnerSpec::Cuda(c) => c
                .objective_list()
                .unwrap_or_else(|_| vec![c.objective])
                .into_iter()
                .map(|o| Metric::new(o.name(), o.direction()))
                .collect(),
            RunnerSpec::OpenCl(c) => c
                .objective_list()
                .unwrap_or_else(|_| vec![c.objective])
                .into_iter()
                .map(|o| Metric::new(o.name(), o.direction()))
                .collect(),
        }
    }
}

/// `[budget]`: when to stop. The command line's `--max-evals` and `--time-limit` override it.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BudgetSpec {
    /// Evaluations in total, resumed ones included.
    pub max_evaluations: Option<usize>,
    /// Seconds of tuning.
    pub max_seconds: Option<f64>,
    /// Stop when the objective reaches this value.
    pub target: Option<f64>,
}

impl BudgetSpec {
    /// As a [`Budget`].
    pub fn budget(&self) -> Budget {
        Budget {
            max_evaluations: self.max_evaluations,
            max_seconds: self.max_seconds,
            target: self.target,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StorageSection {
    url: String,
    study: Option<String>,
}

/// `[transfer]`: earlier measurements to start from (see [`crate::prior`]).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransferSpec {
    /// Each prior: a file (a ktune study, a Kernel Tuner cache or a T4 file; relative to the
    /// spec's folder) or a storage URL, either with `#study` to pick a study.
    #[serde(default)]
    pub priors: Vec<String>,
}

/// `[storage]`: a shared study (see `docs/distributed.md`).
#[derive(Clone, Debug, PartialEq)]
pub struct StorageSpec {
    /// Where: `sqlite:///path` or `postgresql://...`.
    pub location: Location,
    /// The study's name (default: the spec's file stem).
    pub study: Option<String>,
}

/// `[[instance]]`: one of the instances every configuration is measured on (a problem size,
/// an input), by its name and its variables (placeholders, defines and environment variables
/// of the command runner, like the parameters).
#[derive(Clone, Debug, PartialEq)]
pub struct InstanceSpec {
    /// Its name (`n512`): the metric `time@n512`, messages, its build folder.
    pub name: String,
    /// Its variables and their values as programs receive them, in the file's order.
    pub vars: Vec<(String, String)>,
}

/// Reads the `[[instance]]` tables: each a `name` and variables, every one with the same
/// variables.
fn instances(value: toml::Value) -> Result<Vec<InstanceSpec>, String> {
    let toml::Value::Array(items) = value else {
        return Err(
            "write each instance as an [[instance]] table with a name and its variables".into(),
        );
    };
    if items.is_empty() {
        return Err("no instance is given".into());
    }
    let mut out: Vec<InstanceSpec> = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        let toml::Value::Table(table) = item else {
            return Err(format!("instance {} is not a table", i + 1));
        };
        let name = match table.get("name") {
            Some(toml::Value::String(n)) => n.clone(),
            _ => return Err(format!("instance {} has no name (name = \"n512\")", i + 1)),
        };
        let safe = |c: char| c.is_ascii_alphanumeric() || "_.-".contains(c);
        if name.is_empty() || !name.chars().all(safe) {
            return Err(format!(
                "instance name {name:?}: use letters, digits, `_`, `.` and `-` (it names a metric and a folder)"
            ));
        }
        if out.iter().any(|o| o.name == name) {
            return Err(format!("two instances are named `{name}`"));
        }
        let mut vars = Vec::new();
        for (key, value) in table.iter().filter(|(k, _)| *k != "name") {
            let identifier = key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !identifier {
                return Err(format!(
                    "instance `{name}`: variable `{key}` is not a name a template or a define can use"
                ));
            }
            let text = match value {
                toml::Value::String(s) => s.clone(),
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Float(x) => x.to_string(),
                toml::Value::Boolean(b) => b.to_string(),
                other => {
                    return Err(format!(
                        "instance `{name}`: {key} = {other} is not a string, number or boolean"
                    ));
                }
            };
            vars.push((key.clone(), text));
        }
        if let Some(first) = out.first() {
            let keys =
                |v: &[(String, String)]| v.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
            if keys(&first.vars) != keys(&vars) {
                return Err(format!(
                    "instance `{name}` has the variables [{}] but `{}` has [{}]: every instance needs the same",
                    keys(&vars).join(", "),
                    first.name,
                    keys(&first.vars).join(", ")
                ));
            }
        }
        out.push(InstanceSpec { name, vars });
    }
    Ok(out)
}

/// Checks a goal's text against a study's objectives: it needs several, and must read
/// ([`Goal::parse`](ktune_core::pareto::Goal::parse)); the message says what is wrong.
pub(crate) fn checked_goal(text: &str, objectives: &[Metric]) -> Result<(), String> {
    if objectives.len() < 2 {
        return Err(format!(
            "`{text}`: a goal picks among several objectives, and the runner has {}; give it `objectives = [...]`",
            match objectives {
                [one] => format!("one (`{}`)", one.name),
                _ => "none".to_string(),
            }
        ));
    }
    ktune_core::pareto::Goal::parse(text, objectives)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// A `ktune.toml`, read once and checked.
#[derive(Clone, Debug)]
pub struct ProblemSpec {
    /// The file.
    pub path: PathBuf,
    /// Its directory: relative paths in the runner are relative to it.
    pub dir: PathBuf,
    /// Parameters and constraints.
    pub space: SpaceSpec,
    /// How configurations are measured, when the file says.
    pub runner: Option<RunnerSpec>,
    /// The `[strategy]` section, checked.
    pub strategy: Option<CheckedStrategy>,
    /// The `[budget]` section (empty when there is none).
    pub budget: BudgetSpec,
    /// The `[storage]` section.
    pub storage: Option<StorageSpec>,
    /// The `[transfer]` section (empty when there is none).
    pub transfer: TransferSpec,
    /// The `[[instance]]` tables: every configuration is measured on each (none: once).
    pub instances: Vec<InstanceSpec>,
    /// `goal`: how a study of several objectives picks one configuration, and what its
    /// strategy seeks (`"energy within 5% of time"`, `"weighted time=1, energy=0.5"`),
    /// checked against the runner's objectives.
    pub goal: Option<String>,
    /// The `[runner]` section as JSON: what a results database is tied to, beside the space
    /// and the objective (unchanged from earlier versions, so older databases resume).
    runner_json: String,
}

impl ProblemSpec {
    /// Reads and checks the `ktune.toml` at `path`.
    pub fn from_path(path: impl AsRef<Path>) -> Result<ProblemSpec, ProblemError> {
        let path = path.as_ref();
        let text = ktune_space::spec::read_text(path, ktune_space::spec::MAX_SPEC_BYTES).map_err(
            |source| ProblemError::Io {
                path: path.to_path_buf(),
                source,
            },
        )?;
        ProblemSpec::from_toml_str(&text, path)
    }

    /// Reads and checks a `ktune.toml` already read from `path`.
    pub fn from_toml_str(text: &str, path: &Path) -> Result<ProblemSpec, ProblemError> {
        let file = path.display().to_string();
        // The space's reader checks the TOML syntax and every top-level key, with positions,
        // and hands back the parsed table for the other sections.
        let (space, mut table) = SpaceSpec::from_toml_document(text, &file)?;
        let section_error = |section: &'static str, message: String| ProblemError::Section {
            section,
            file: file.clone(),
            message,
        };
        let runner_section = table.remove("runner");
        let instances_section = table.remove("instance");
        // A study is tied to its instances too; without any the text is as it always was,
        // so older databases resume.
        let runner_json = match &instances_section {
            None => serde_json::to_value(&runner_section),
            Some(i) => serde_json::to_value(serde_json::json!({
                "runner": runner_section,
                "instances": i,
            })),
        }
        .map(|v| v.to_string())
        .map_err(|e| section_error("runner", e.to_string()))?;
        let instances = instances_section
            .map(instances)
            .transpose()
            .map_err(|m| section_error("instance", m))?
            .unwrap_or_default();
        let runner = runner_section
            .map(|table| -> Result<RunnerSpec, ProblemError> {
                let kind = table
                    .get("kind")
                    .map(|k| k.as_str().map(str::to_string).ok_or(k))
                    .transpose()
                    .map_err(|k| {
                        section_error("runner", format!("kind = {k} is not a runner's name"))
                    })?
                    .unwrap_or_else(|| "command".into());
                match kind.as_str() {
                    "command" => table
                        .try_into()
                        .map(|s| RunnerSpec::Command(Box::new(s)))
                        .map_err(|e| section_error("runner", e.to_string())),
                    "cuda" => table
                        .try_into()
                        .map(|s| RunnerSpec::Cuda(Box::new(s)))
                        .map_err(|e| section_error("runner", e.to_string())),
                    "opencl" => table
                        .try_into()
                        .map(|s| RunnerSpec::OpenCl(Box::new(s)))
                        .map_err(|e| section_error("runner", e.to_string())),
                    other => Err(section_error(
                        "runner",
                        format!(
                            "kind = \"{other}\" is not a runner; available: {}",
                            RunnerSpec::KINDS.join(", ")
                        ),
                    )),
                }
            })
            .transpose()?;
        let strategy = table
            .remove("strategy")
            .map(|t| {
                if !t.is_table() {
                    return Err(section_error(
                        "strategy",
                        format!("expected a table with `name` and the options, found {t}"),
                    ));
                }
                let options = serde_json::to_value(t)
                    .ok()
                    .and_then(|v| v.as_object().cloned())
                    .unwrap_or_default();
                CheckedStrategy::from_table(&options).map_err(|source| ProblemError::Strategy {
                    file: file.clone(),
                    source,
                })
            })
            .transpose()?;
        let budget: BudgetSpec = table
            .remove("budget")
            .map(|b| b.try_into())
            .transpose()
            .map_err(|e| section_error("budget", e.to_string()))?
            .unwrap_or_default();
        budget
            .budget()
            .validate()
            .map_err(|e| section_error("budget", e.to_string()))?;
        let storage = table
            .remove("storage")
            .map(|s| -> Result<StorageSpec, ProblemError> {
                let s: StorageSection = s
                    .try_into()
                    .map_err(|e| section_error("storage", e.to_string()))?;
                let location = Location::parse(&s.url).map_err(|source| ProblemError::Storage {
                    file: file.clone(),
                    source: Box::new(source),
                })?;
                Ok(StorageSpec {
                    location,
                    study: s.study,
                })
            })
            .transpose()?;
        let transfer: TransferSpec = table
            .remove("transfer")
            .map(|t| t.try_into())
            .transpose()
            .map_err(|e| section_error("transfer", e.to_string()))?
            .unwrap_or_default();
        if !instances.is_empty()
            && let Some(r) = &runner
            && r.objectives().len() > 1
        {
            return Err(section_error(
                "instance",
                "a study of several instances has one objective (their geometric mean): \
                 give the runner one `objective`, not `objectives`"
                    .into(),
            ));
        }
        let goal = table
            .remove("goal")
            .map(|g| match g.as_str() {
                Some(text) => {
                    let objectives = runner
                        .as_ref()
                        .map(RunnerSpec::objectives)
                        .unwrap_or_default();
                    checked_goal(text, &objectives)
                        .map(|()| text.to_string())
                        .map_err(|m| section_error("goal", m))
                }
                None => Err(section_error(
                    "goal",
                    format!("goal = {g} is not text such as \"energy within 5% of time\""),
                )),
            })
            .transpose()?;
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        Ok(ProblemSpec {
            path: path.to_path_buf(),
            dir,
            space,
            runner,
            strategy,
            budget,
            storage,
            transfer,
            instances,
            goal,
            runner_json,
        })
    }

    /// The objective and its direction, when the file has a `[runner]`.
    pub fn objective(&self) -> Option<Metric> {
        self.runner.as_ref().map(RunnerSpec::objective)
    }

    /// The objectives and their directions, in order (empty without a `[runner]`).
    pub fn objectives(&self) -> Vec<Metric> {
        self.runner
            .as_ref()
            .map(RunnerSpec::objectives)
            .unwrap_or_default()
    }

    /// What a results database for this problem is tied to: the space, the `[runner]`
    /// section and the objective's name.
    pub fn fingerprint(&self, space: &ktune_space::SearchSpace, objective: &str) -> Fingerprint {
        Fingerprint::new(space, &self.runner_json, objective)
    }

    /// The files the runner reads that a user edits between runs, as the spec names them
    /// (relative to its directory unless absolute): the CUDA runner's source and data files;
    /// for the command runner, see [`CommandSpec::input_files`](ktune_runners::CommandSpec::input_files).
    /// Only regular files that exist. Stored results were measured with what these held;
    /// see [`input_digest`](Self::input_digest).
    pub fn input_files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = Vec::new();
        match &self.runner {
            Some(RunnerSpec::Cuda(c)) => {
                files.push(c.source.clone());
                for a in c.arguments.iter().chain(&c.constants) {
                    files.extend(a.file.iter().chain(&a.expected).cloned());
                }
            }
            Some(RunnerSpec::OpenCl(c)) => {
                files.push(c.source.clone());
                for a in &c.arguments {
                    files.extend(a.file.iter().chain(&a.expected).cloned());
                }
            }
            Some(RunnerSpec::Command(c)) => files.extend(c.input_files()),
            None => {}
        }
        let mut seen = std::collections::BTreeSet::new();
        files.retain(|f| self.dir.join(f).is_file() && seen.insert(f.clone()));
        files
    }

    /// The SHA-256 of each of [`input_files`](Self::input_files) that can be read, by path:
    /// what a results database keeps, to tell when the program changed under its results.
    /// A file over 256 MiB (a data set) is described by its size and modification time
    /// instead, so that starting a run does not read it whole.
    pub fn input_digest(&self) -> std::collections::BTreeMap<String, String> {
        use sha2::Digest;
        const LARGE: u64 = 256 << 20;
        self.input_files()
            .into_iter()
            .filter_map(|f| {
                let path = self.dir.join(&f);
                let meta = std::fs::metadata(&path).ok()?;
                let digest = if meta.len() > LARGE {
                    let modified = meta
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map_or(0, |d| d.as_secs());
                    format!("{} bytes, modified {modified}", meta.len())
                } else {
                    use std::io::Read;
                    let mut hasher = sha2::Sha256::new();
                    let mut file = std::fs::File::open(&path).ok()?;
                    let mut buf = vec![0u8; 1 << 16];
                    loop {
                        match file.read(&mut buf).ok()? {
                            0 => break,
                            n => hasher.update(&buf[..n]),
                        }
                    }
                    hasher
                        .finalize()
                        .iter()
                        .map(|b| format!("{b:02x}"))
                        .collect()
                };
                Some((f.display().to_string(), digest))
            })
            .collect()
    }

    /// The study's name: the `[storage]` section's, else the file's stem.
    pub fn study_name(&self) -> String {
        self.storage
            .as_ref()
            .and_then(|s| s.study.clone())
            .unwrap_or_else(|| {
                self.path
                    .file_stem()
                    .map_or("default".into(), |s| s.to_string_lossy().into_owned())
            })
    }
}
