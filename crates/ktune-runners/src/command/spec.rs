//! The `[runner]` section of the command runner: its commands, objective, repetitions and
//! timeouts, as written in a spec.

use std::path::{Path, PathBuf};

use ktune_core::{Direction, Statistic};
use serde::Deserialize;

use crate::measure::{Measure, MeasureSpec};

/// A command as written in the spec: an argument vector, or one string (split into words,
/// or given to `sh -c` when `shell = true`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum CommandTemplate {
    /// `["gcc", "-O3", "-DTILE={tile}", "main.c"]`
    Argv(Vec<String>),
    /// `"gcc -O3 -DTILE={tile} main.c"`
    Line(String),
}

/// Where the objective comes from.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ObjectiveSpec {
    /// The metric's name (`time`, `GFLOP/s`, ...).
    #[serde(default = "default_objective_name")]
    pub name: String,
    /// A regular expression with a named group `value` matched against stdout
    /// (e.g. `"time: (?P<value>[0-9.eE+-]+) ms"`); the last match counts.
    pub regex: Option<String>,
    /// A key of a JSON object printed on a line of stdout; the last such line counts.
    pub json_key: Option<String>,
    /// `"minimize"` or `"maximize"`; by default guessed from the name (rates are maximised).
    pub direction: Option<Direction>,
    /// The value's unit (`"ms"`, `"GFLOP/s"`), shown beside it in results; the measured wall
    /// time (no `regex`, no `json_key`) is in seconds.
    pub unit: Option<String>,
}

impl ObjectiveSpec {
    /// The direction given, else the one guessed from the name (rates are maximised).
    pub fn direction(&self) -> Direction {
        self.direction
            .unwrap_or_else(|| Direction::guess(&self.name))
    }

    /// The unit of the objective's values, when known.
    pub fn unit(&self) -> Option<&str> {
        match (&self.unit, &self.regex, &self.json_key) {
            (Some(u), _, _) => Some(u.as_str()),
            (None, None, None) => Some("s"),
            _ => None,
        }
    }
}

fn default_objective_name() -> String {
    "time".into()
}

impl Default for ObjectiveSpec {
    /// The measured wall time of the run step, in seconds.
    fn default() -> Self {
        ObjectiveSpec {
            name: default_objective_name(),
            regex: None,
            json_key: None,
            direction: None,
            unit: None,
        }
    }
}

/// The `[runner]` section of a `ktune.toml` for `kind = "command"`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandSpec {
    /// `"command"`.
    #[serde(default)]
    pub kind: Option<String>,
    /// The compile step (optional).
    pub compile: Option<CommandTemplate>,
    /// The run step.
    pub run: Option<CommandTemplate>,
    /// Run string templates through `sh -c` (off by default).
    #[serde(default)]
    pub shell: bool,
    /// Append `-DNAME=value` for every parameter to the compile command.
    #[serde(default)]
    pub defines: bool,
    /// Set `KTUNE_NAME=value` for every parameter in both steps' environment.
    #[serde(default)]
    pub env: bool,
    /// Compiles in parallel.
    #[serde(default = "one")]
    pub jobs: usize,
    /// Unmeasured runs before the measured ones (default 0; also `[runner.measure] warmup`).
    pub warmup: Option<usize>,
    /// A fixed number of measured runs, the objective their mean (the older way; without
    /// it, runs are repeated adaptively as `[runner.measure]` says).
    pub repeat: Option<usize>,
    /// How measurements are repeated (see [`crate::measure`]).
    pub measure: Option<MeasureSpec>,
    /// Seconds before a compile is killed.
    #[serde(default = "default_compile_timeout")]
    pub compile_timeout: f64,
    /// Seconds before a run is killed.
    #[serde(default = "default_run_timeout")]
    pub run_timeout: f64,
    /// How the objective is read; by default the run step's wall time.
    #[serde(default)]
    pub objective: ObjectiveSpec,
    /// Several objectives, each read from the same runs as `objective` would be (instead
    /// of it): `objectives = [{ name = "time", json_key = "ms" }, { name = "energy",
    /// json_key = "joules" }]`. The first is the study's objective (repetitions and early
    /// abort follow it); the others are the means over the same measured runs.
    #[serde(default)]
    pub objectives: Vec<ObjectiveSpec>,
    /// The directory commands run in (default: the spec's directory).
    pub workdir: Option<PathBuf>,
    /// Where per-configuration build directories go (default: `<workdir>/.ktune/build`).
    pub build_root: Option<PathBuf>,
    /// The most bytes of each step's stdout and stderr that are read (the last ones: the
    /// objective is the last match, a failure shows the tail); larger outputs are cut to
    /// them on disk too.
    #[serde(default = "default_max_output")]
    pub max_output: u64,
    /// An exit status of the run step that means "it ran, but its output was wrong" (a
    /// program that checks its own result against a reference): such a configuration fails
    /// as a wrong output, not as a crash. Other non-zero statuses are runtime failures.
    pub wrong_output_status: Option<i32>,
}

impl CommandSpec {
    /// The objectives, in order: `objectives` where given, else `objective`.
    ///
    /// # Errors
    /// A message naming the problem where both are given or two objectives share a name.
    pub fn objective_specs(&self) -> Result<Vec<&ObjectiveSpec>, String> {
        if self.objectives.is_empty() {
            return Ok(vec![&self.objective]);
        }
        if self.objective != ObjectiveSpec::default() {
            return Err("give either `objective` or `objectives`, not both".into());
        }
        for (i, o) in self.objectives.iter().enumerate() {
            if self.objectives[..i].iter().any(|p| p.name == o.name) {
                return Err(format!(
                    "two objectives are named `{}`: give each its own `name`",
                    o.name
                ));
            }
        }
        Ok(self.objectives.iter().collect())
    }

    /// The files its commands name as the program's inputs, as written (joined to `workdir`
    /// when it is given), for telling when the program changed under stored results. From
    /// the compile command, every word that could be a file: not a flag, not the word after
    /// `-o` or a redirection, no placeholder, not absolute. From the run command only
    /// scripts (`bench.py`, `run.sh`, ...): its other words are arguments and outputs. The
    /// caller keeps those that are files.
    pub fn input_files(&self) -> Vec<PathBuf> {
        const SCRIPTS: &[&str] = &[
            "py", "sh", "bash", "jl", "r", "m", "lua", "pl", "rb", "js", "mjs", "ts",
        ];
        let base = self.workdir.clone().unwrap_or_default();
        let mut files = Vec::new();
        for (template, compile) in [(&self.compile, true), (&self.run, false)] {
            let words: Vec<String> = match template {
                None => continue,
                Some(CommandTemplate::Argv(v)) => v.clone(),
                Some(CommandTemplate::Line(l)) => shlex::split(l).unwrap_or_default(),
            };
            let mut after_output = false;
            for w in words {
                if std::mem::take(&mut after_output) {
                    continue;
                }
                if matches!(w.as_str(), "-o" | ">" | ">>" | "2>" | "&>" | "|" | "tee") {
                    after_output = true;
                    continue;
                }
                let path = Path::new(&w);
                let script = path
                    .extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| SCRIPTS.contains(&e.to_ascii_lowercase().as_str()));
                if w.is_empty()
                    || w.starts_with(['-', '>', '<', '|', '&'])
                    || w.contains('{')
                    || path.is_absolute()
                    || (!compile && !script)
                {
                    continue;
                }
                files.push(base.join(path));
            }
        }
        files
    }
}

/// 16 MiB: far more than any objective needs, and bounded memory for a program that prints
/// gigabytes.
fn default_max_output() -> u64 {
    16 << 20
}

fn one() -> usize {
    1
}

/// The command runner's measurement plan when the spec gives none: no warm-up, 3 to 20 runs
/// until the 95% interval is within ±2% of the mean, at most 30 s of runs per configuration,
/// and early abort at twice the best so far.
pub fn default_measure() -> Measure {
    Measure {
        warmup: 0,
        min: 3,
        max: 20,
        target: Some(0.02),
        max_seconds: 30.0,
        min_sample_seconds: 0.0,
        abort: Some(crate::measure::DEFAULT_ABORT),
        statistic: Statistic::Mean,
    }
}
fn default_compile_timeout() -> f64 {
    120.0
}
fn default_run_timeout() -> f64 {
    60.0
}
