//! The command runner: compile and run external programs, one configuration at a time.
//!
//! Each configuration gets its own build directory. The optional compile step and the run step
//! are command templates (`{param}`, `{build_dir}`, `{config_id}` placeholders; `{{` and `}}`
//! for literal braces), executed directly as argument vectors (a string template is split
//! like a shell would split it, but no shell runs unless `shell = true`). Parameters can also
//! be passed as `-DNAME=value` defines to the compiler and as `KTUNE_NAME=value` environment
//! variables. A permutation reaches programs as its item names in order, joined by commas
//! (`i,k,j`). Compiles run in parallel (`jobs`); runs are strictly sequential so that their
//! timings do not disturb each other. Every step has a timeout that kills its whole process
//! group. A compile error, a crash, a non-zero exit, a timeout or output the objective cannot be
//! parsed from is a failed configuration with its reason and the tail of stderr; tuning goes
//! on.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ktune_core::{CoreError, Direction, FailureKind, Metric, Outcome, Runner, Timings};
use ktune_space::{Configuration, SearchSpace};
use serde::Deserialize;

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
    /// Unmeasured runs before the measured ones.
    #[serde(default)]
    pub warmup: usize,
    /// Measured runs; the objective is their mean.
    #[serde(default = "one")]
    pub repeat: usize,
    /// Seconds before a compile is killed.
    #[serde(default = "default_compile_timeout")]
    pub compile_timeout: f64,
    /// Seconds before a run is killed.
    #[serde(default = "default_run_timeout")]
    pub run_timeout: f64,
    /// How the objective is read; by default the run step's wall time.
    #[serde(default)]
    pub objective: ObjectiveSpec,
    /// The directory commands run in (default: the spec's directory).
    pub workdir: Option<PathBuf>,
    /// Where per-configuration build directories go (default: `<workdir>/.ktune/build`).
    pub build_root: Option<PathBuf>,
}

fn one() -> usize {
    1
}
fn default_compile_timeout() -> f64 {
    120.0
}
fn default_run_timeout() -> f64 {
    60.0
}

/// A command runner could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommandError {
    /// The spec has no run step.
    #[error(
        "the [runner] section has no `run` command: add e.g. `run = [\"./program\", \"{{n}}\"]`"
    )]
    NoRunCommand,
    /// A placeholder names no parameter.
    #[error(
        "placeholder `{{{name}}}` in the {step} command names no parameter; parameters: {known}"
    )]
    UnknownPlaceholder {
        /// The name in braces.
        name: String,
        /// `compile` or `run`.
        step: &'static str,
        /// The parameters that exist.
        known: String,
    },
    /// A template is malformed.
    #[error("the {step} command is malformed: {message}")]
    Template {
        /// `compile` or `run`.
        step: &'static str,
        /// Why.
        message: String,
    },
    /// The program of a step does not exist.
    #[error("the {step} program `{program}` was not found (not a file, and not on PATH)")]
    MissingProgram {
        /// `compile` or `run`.
        step: &'static str,
        /// The program.
        program: String,
    },
    /// The objective regex does not compile or lacks the `value` group.
    #[error("objective regex: {0}")]
    Regex(String),
    /// An option is out of range.
    #[error("[runner] option `{option}`: {message}")]
    Invalid {
        /// The option.
        option: &'static str,
        /// Why.
        message: String,
    },
    /// The build directory cannot be created.
    #[error("cannot create the build directory `{}`: {source}", path.display())]
    BuildDir {
        /// The directory.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
}

/// One word of a command template, split into literal text and placeholders.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Piece {
    Text(String),
    Param(usize),
    BuildDir,
    ConfigId,
}

pub(crate) type Word = Vec<Piece>;

/// Runs configurations as external commands.
pub struct CommandRunner {
    compile: Option<Vec<Word>>,
    run: Vec<Word>,
    shell: bool,
    defines: bool,
    env: bool,
    jobs: usize,
    warmup: usize,
    repeat: usize,
    compile_timeout: Duration,
    run_timeout: Duration,
    objective: Parser,
    metrics: Vec<Metric>,
    workdir: PathBuf,
    build_root: PathBuf,
    names: Vec<String>,
}

enum Parser {
    WallTime,
    Regex(regex::Regex),
    JsonKey(String),
}

fn parse_template(
    t: &CommandTemplate,
    shell: bool,
    step: &'static str,
    names: &[String],
) -> Result<Vec<Word>, CommandError> {
    let words: Vec<String> = match t {
        CommandTemplate::Argv(v) => v.clone(),
        CommandTemplate::Line(s) if shell => vec!["sh".into(), "-c".into(), s.clone()],
        CommandTemplate::Line(s) => shlex::split(s).ok_or_else(|| CommandError::Template {
            step,
            message: format!("unbalanced quotes in `{s}`"),
        })?,
    };
    if words.is_empty() || words[0].is_empty() {
        return Err(CommandError::Template {
            step,
            message: "the command is empty".into(),
        });
    }
    words.iter().map(|w| parse_word(w, step, names)).collect()
}

pub(crate) fn parse_word(
    w: &str,
    step: &'static str,
    names: &[String],
) -> Result<Word, CommandError> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut chars = w.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                text.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                text.push('}');
            }
            '{' => {
                let name: String = chars.by_ref().take_while(|&c| c != '}').collect();
                if !text.is_empty() {
                    out.push(Piece::Text(std::mem::take(&mut text)));
                }
                out.push(match name.as_str() {
                    "build_dir" => Piece::BuildDir,
                    "config_id" => Piece::ConfigId,
                    n => Piece::Param(names.iter().position(|p| p == n).ok_or_else(|| {
                        CommandError::UnknownPlaceholder {
                            name: n.to_string(),
                            step,
                            known: names.join(", "),
                        }
                    })?),
                });
            }
            '}' => {
                return Err(CommandError::Template {
                    step,
                    message: format!("unmatched `}}` in `{w}` (write `}}}}` for a literal brace)"),
                });
            }
            c => text.push(c),
        }
    }
    if !text.is_empty() {
        out.push(Piece::Text(text));
    }
    Ok(out)
}

/// Whether `program` can be executed: a path that exists, or a name found on PATH.
fn program_exists(program: &str, workdir: &Path) -> bool {
    if program.contains('/') {
        let p = Path::new(program);
        return if p.is_absolute() {
            p.exists()
        } else {
            workdir.join(p).exists()
        };
    }
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
        .unwrap_or(false)
}

impl CommandRunner {
    /// A runner for `space` from the `[runner]` section; `spec_dir` is the directory of the
    /// spec file (relative paths are relative to it).
    pub fn new(
        spec: &CommandSpec,
        space: &SearchSpace,
        spec_dir: &Path,
    ) -> Result<CommandRunner, CommandError> {
        let names: Vec<String> = space
            .params()
            .iter()
            .map(|p| p.name().to_string())
            .collect();
        let run_t = spec.run.as_ref().ok_or(CommandError::NoRunCommand)?;
        let run = parse_template(run_t, spec.shell, "run", &names)?;
        let compile = spec
            .compile
            .as_ref()
            .map(|t| parse_template(t, spec.shell, "compile", &names))
            .transpose()?;
        if spec.jobs == 0 {
            return Err(CommandError::Invalid {
                option: "jobs",
                message: "must be at least 1".into(),
            });
        }
        if spec.repeat == 0 {
            return Err(CommandError::Invalid {
                option: "repeat",
                message: "must be at least 1".into(),
            });
        }
        for (name, t) in [
            ("compile_timeout", spec.compile_timeout),
            ("run_timeout", spec.run_timeout),
        ] {
            if !(t > 0.0 && t.is_finite()) {
                return Err(CommandError::Invalid {
                    option: name,
                    message: format!("must be a positive number of seconds, not {t}"),
                });
            }
        }
        // Absolute, because commands run in `workdir` while `{build_dir}` may be relative to
        // wherever ktune was started.
        let spec_dir = std::path::absolute(spec_dir).unwrap_or_else(|_| spec_dir.to_path_buf());
        let workdir = match &spec.workdir {
            Some(w) if w.is_absolute() => w.clone(),
            Some(w) => spec_dir.join(w),
            None => spec_dir.clone(),
        };
        // The programs that do not depend on the configuration must exist now.
        for (step, words) in [("compile", compile.as_ref()), ("run", Some(&run))] {
            if let Some(words) = words
                && let [Piece::Text(program)] = words[0].as_slice()
                && !program_exists(program, &workdir)
            {
                return Err(CommandError::MissingProgram {
                    step,
                    program: program.clone(),
                });
            }
        }
        let objective = match (&spec.objective.regex, &spec.objective.json_key) {
            (Some(_), Some(_)) => {
                return Err(CommandError::Invalid {
                    option: "objective",
                    message: "give either `regex` or `json_key`, not both".into(),
                });
            }
            (Some(r), None) => {
                let re = regex::Regex::new(r).map_err(|e| CommandError::Regex(e.to_string()))?;
                if !re.capture_names().any(|n| n == Some("value")) {
                    return Err(CommandError::Regex(format!(
                        "`{r}` has no named group `value`: write e.g. `time: (?P<value>[0-9.]+)`"
                    )));
                }
                Parser::Regex(re)
            }
            (None, Some(k)) => Parser::JsonKey(k.clone()),
            (None, None) => Parser::WallTime,
        };
        let direction = spec
            .objective
            .direction
            .unwrap_or_else(|| Direction::guess(&spec.objective.name));
        let build_root = match &spec.build_root {
            Some(b) if b.is_absolute() => b.clone(),
            Some(b) => spec_dir.join(b),
            None => workdir.join(".ktune").join("build"),
        };
        std::fs::create_dir_all(&build_root).map_err(|source| CommandError::BuildDir {
            path: build_root.clone(),
            source,
        })?;
        Ok(CommandRunner {
            compile,
            run,
            shell: spec.shell,
            defines: spec.defines,
            env: spec.env,
            jobs: spec.jobs,
            warmup: spec.warmup,
            repeat: spec.repeat,
            compile_timeout: Duration::from_secs_f64(spec.compile_timeout),
            run_timeout: Duration::from_secs_f64(spec.run_timeout),
            objective,
            // The objective (mean over the measured runs), then its spread.
            metrics: vec![
                Metric::new(spec.objective.name.clone(), direction),
                Metric::new(
                    format!("{} stdev", spec.objective.name),
                    Direction::Minimize,
                ),
            ],
            workdir,
            build_root,
            names,
        })
    }

    /// The parameters named by the templates (for reports and checks).
    pub fn placeholders(&self) -> BTreeSet<String> {
        self.compile
            .iter()
            .flatten()
            .chain(&self.run)
            .flatten()
            .filter_map(|p| match p {
                Piece::Param(i) => Some(self.names[*i].clone()),
                _ => None,
            })
            .collect()
    }

    fn expand(&self, words: &[Word], values: &[String], build_dir: &Path, id: u64) -> Vec<String> {
        words
            .iter()
            .map(|w| {
                w.iter()
                    .map(|p| match p {
                        Piece::Text(t) => t.clone(),
                        Piece::Param(i) => values[*i].clone(),
                        Piece::BuildDir => build_dir.display().to_string(),
                        Piece::ConfigId => id.to_string(),
                    })
                    .collect()
            })
            .collect()
    }

    fn command(&self, argv: &[String], values: &[String]) -> Command {
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .current_dir(&self.workdir)
            .stdin(Stdio::null());
        if self.env {
            for (n, v) in self.names.iter().zip(values) {
                cmd.env(format!("KTUNE_{n}"), v);
            }
        }
        cmd
    }

    /// Compiles one configuration into its build directory; `Err` is the failure outcome.
    fn compile_one(&self, values: &[String], build_dir: &Path, id: u64) -> Result<f64, Outcome> {
        let started = Instant::now();
        let fail = |kind, reason: String, t: f64| {
            Outcome::failed(
                kind,
                reason,
                Timings {
                    compile: t,
                    ..Timings::default()
                },
            )
        };
        if let Err(e) = std::fs::create_dir_all(build_dir) {
            return Err(fail(
                FailureKind::Compile,
                format!("cannot create {}: {e}", build_dir.display()),
                0.0,
            ));
        }
        let Some(words) = &self.compile else {
            return Ok(0.0);
        };
        let mut argv = self.expand(words, values, build_dir, id);
        if self.defines {
            let defines = self
                .names
                .iter()
                .zip(values)
                .map(|(n, v)| format!("-D{n}={v}"));
            if self.shell {
                let extra: Vec<String> = defines.collect();
                if let Some(script) = argv.last_mut() {
                    script.push(' ');
                    script.push_str(&extra.join(" "));
                }
            } else {
                argv.extend(defines);
            }
        }
        let step = run_step(
            self.command(&argv, values),
            build_dir,
            "compile",
            self.compile_timeout,
        );
        let t = started.elapsed().as_secs_f64();
        match step {
            Step::Finished { status: 0, .. } => Ok(t),
            Step::Finished { status, stderr, .. } => Err(fail(
                FailureKind::Compile,
                format!("compile exited with {status}: {}", tail(&stderr)),
                t,
            )),
            Step::TimedOut { stderr } => Err(fail(
                FailureKind::Timeout,
                format!(
                    "compile ran past {:.1} s and was killed: {}",
                    self.compile_timeout.as_secs_f64(),
                    tail(&stderr)
                ),
                t,
            )),
            Step::Signalled { signal, stderr } => Err(fail(
                FailureKind::Compile,
                format!("compiler killed by signal {signal}: {}", tail(&stderr)),
                t,
            )),
            Step::SpawnFailed(e) => Err(fail(
                FailureKind::Compile,
                format!("cannot start `{}`: {e}", argv[0]),
                t,
            )),
        }
    }

    /// Runs one compiled configuration: warm-up, then measured repetitions.
    fn run_one(&self, values: &[String], build_dir: &Path, id: u64, compile: f64) -> Outcome {
        let argv = self.expand(&self.run, values, build_dir, id);
        let started = Instant::now();
        let mut measured = Vec::with_capacity(self.repeat);
        for i in 0..self.warmup + self.repeat {
            let t0 = Instant::now();
            let step = run_step(
                self.command(&argv, values),
                build_dir,
                "run",
                self.run_timeout,
            );
            let wall = t0.elapsed().as_secs_f64();
            let timings = Timings {
                compile,
                benchmark: started.elapsed().as_secs_f64(),
                ..Timings::default()
            };
            let stdout = match step {
                Step::Finished {
                    status: 0, stdout, ..
                } => stdout,
                Step::Finished { status, stderr, .. } => {
                    return Outcome::failed(
                        FailureKind::Runtime,
                        format!("run exited with {status}: {}", tail(&stderr)),
                        timings,
                    );
                }
                Step::Signalled { signal, stderr } => {
                    return Outcome::failed(
                        FailureKind::Runtime,
                        format!("run crashed (signal {signal}): {}", tail(&stderr)),
                        timings,
                    );
                }
                Step::TimedOut { stderr } => {
                    return Outcome::failed(
                        FailureKind::Timeout,
                        format!(
                            "run took longer than {:.1} s and was killed: {}",
                            self.run_timeout.as_secs_f64(),
                            tail(&stderr)
                        ),
                        timings,
                    );
                }
                Step::SpawnFailed(e) => {
                    return Outcome::failed(
                        FailureKind::Runtime,
                        format!("cannot start `{}`: {e}", argv[0]),
                        timings,
                    );
                }
            };
            if i < self.warmup {
                continue;
            }
            match self.parse(&stdout, wall) {
                Some(v) => measured.push(v),
                None => {
                    return Outcome::failed(
                        FailureKind::Runtime,
                        format!(
                            "could not read `{}` from the output: {}",
                            self.metrics[0].name,
                            tail(&stdout)
                        ),
                        timings,
                    );
                }
            }
        }
        let (mean, stdev) = mean_and_stdev(&measured);
        Outcome::ok(
            vec![mean, stdev],
            Timings {
                compile,
                benchmark: started.elapsed().as_secs_f64(),
                ..Timings::default()
            },
        )
    }

    fn parse(&self, stdout: &str, wall: f64) -> Option<f64> {
        let v = match &self.objective {
            Parser::WallTime => Some(wall),
            Parser::Regex(re) => re
                .captures_iter(stdout)
                .last()
                .and_then(|c| c.name("value"))
                .and_then(|m| m.as_str().trim().parse().ok()),
            Parser::JsonKey(k) => stdout
                .lines()
                .rev()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l.trim()).ok())
                .find_map(|j| j.get(k).and_then(serde_json::Value::as_f64)),
        };
        v.filter(|x| x.is_finite())
    }
}

impl Runner for CommandRunner {
    fn name(&self) -> &str {
        "command"
    }

    fn metrics(&self) -> &[Metric] {
        &self.metrics
    }

    fn evaluate(
        &mut self,
        space: &SearchSpace,
        configs: &[Configuration],
    ) -> Result<Vec<Outcome>, CoreError> {
        // Values as programs receive them (a permutation as its item names, `i,k,j`).
        let jobs: Vec<(u64, Vec<String>, PathBuf)> = configs
            .iter()
            .map(|c| {
                let id = space.rank(c).unwrap_or(u64::MAX);
                let texts = space
                    .params()
                    .iter()
                    .zip(space.values(c))
                    .map(|(p, v)| p.text(v))
                    .collect();
                (id, texts, self.build_root.join(id.to_string()))
            })
            .collect();
        // Compile in parallel, `jobs` at a time; runs stay sequential below.
        let mut compiled: Vec<Option<Result<f64, Outcome>>> =
            (0..jobs.len()).map(|_| None).collect();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let results = std::sync::Mutex::new(&mut compiled);
        std::thread::scope(|s| {
            for _ in 0..self.jobs.min(jobs.len()) {
                s.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some((id, values, dir)) = jobs.get(i) else {
                            break;
                        };
                        let r = self.compile_one(values, dir, *id);
                        if let Ok(mut slots) = results.lock() {
                            slots[i] = Some(r);
                        }
                    }
                });
            }
        });
        Ok(jobs
            .iter()
            .zip(compiled)
            .map(|((id, values, dir), c)| match c {
                Some(Ok(t)) => self.run_one(values, dir, *id, t),
                Some(Err(failure)) => failure,
                None => Outcome::failed(
                    FailureKind::Compile,
                    "the compile step did not report",
                    Timings::default(),
                ),
            })
            .collect())
    }
}

/// The mean and the sample standard deviation (0 for a single value).
pub(crate) fn mean_and_stdev(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

/// How a step ended.
enum Step {
    Finished {
        status: i32,
        stdout: String,
        stderr: String,
    },
    Signalled {
        signal: i32,
        stderr: String,
    },
    TimedOut {
        stderr: String,
    },
    SpawnFailed(std::io::Error),
}

/// Runs a command in its own process group, output to files in `dir` (no pipe can fill up),
/// and kills the whole group when it runs past `timeout`.
fn run_step(mut cmd: Command, dir: &Path, name: &str, timeout: Duration) -> Step {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    use wait_timeout::ChildExt;
    let out_path = dir.join(format!("{name}.stdout"));
    let err_path = dir.join(format!("{name}.stderr"));
    let (out, err) = match (
        std::fs::File::create(&out_path),
        std::fs::File::create(&err_path),
    ) {
        (Ok(o), Ok(e)) => (o, e),
        (Err(e), _) | (_, Err(e)) => return Step::SpawnFailed(e),
    };
    cmd.stdout(out).stderr(err).process_group(0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Step::SpawnFailed(e),
    };
    let read =
        |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned();
    match child.wait_timeout(timeout) {
        Ok(Some(status)) => match status.code() {
            Some(code) => Step::Finished {
                status: code,
                stdout: read(&out_path),
                stderr: read(&err_path),
            },
            None => Step::Signalled {
                signal: status.signal().unwrap_or(0),
                stderr: read(&err_path),
            },
        },
        Ok(None) | Err(_) => {
            // SAFETY: kill(2) on the child's process group (its pid, as process_group(0) made
            // it a group leader); no memory is involved.
            unsafe {
                libc::kill(-(child.id() as i32), libc::SIGKILL);
            }
            let _ = child.wait();
            Step::TimedOut {
                stderr: read(&err_path),
            }
        }
    }
}

/// The last few lines of an output, for failure reasons.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    let start = lines.len().saturating_sub(6);
    let t = lines[start..].join("\n");
    if t.is_empty() {
        "(no output)".into()
    } else {
        t
    }
}

#[cfg(test)]
mod tests;
