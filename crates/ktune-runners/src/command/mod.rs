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

use crate::measure::Measure;

mod process;
mod spec;
mod template;

pub use process::kill_running_steps;
use process::{BUDGET_SLACK, Step, run_step, said, tail};
pub use spec::{CommandSpec, CommandTemplate, ObjectiveSpec, default_measure};
use template::{Parser, parse_template, program_exists};
pub(crate) use template::{Piece, Word, parse_word};

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
    /// A parameter (or an instance's variable) has the name of a placeholder the runner
    /// fills in itself.
    #[error(
        "parameter `{name}` has the name of a placeholder the command runner fills in itself ({{build_dir}}, {{config_id}}): rename it"
    )]
    ReservedName {
        /// The name.
        name: String,
    },
    /// An option is out of range.
    #[error("[runner] option `{option}`: {message}")]
    Invalid {
        /// The option.
        option: &'static str,
        /// Why.
        message: String,
    },
    /// The working directory does not exist or is not a directory.
    #[error("[runner] workdir `{}` {problem}", path.display())]
    Workdir {
        /// The directory, resolved against the spec's folder.
        path: PathBuf,
        /// What is wrong with it.
        problem: &'static str,
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

/// Runs configurations as external commands.
pub struct CommandRunner {
    compile: Option<Vec<Word>>,
    run: Vec<Word>,
    shell: bool,
    defines: bool,
    env: bool,
    jobs: usize,
    measure: Measure,
    incumbent: Option<f64>,
    compile_timeout: Duration,
    run_timeout: Duration,
    max_output: u64,
    wrong_output_status: Option<i32>,
    /// When the time budget runs out (set before every batch).
    deadline: Option<Instant>,
    /// How each objective is read, in order.
    parsers: Vec<Parser>,
    metrics: Vec<Metric>,
    workdir: PathBuf,
    build_root: PathBuf,
    /// The parameters' names, then the instance's variables'.
    names: Vec<String>,
    /// The instance's variables' values (none outside a study of instances).
    fixed: Vec<String>,
}

impl CommandRunner {
    /// A runner for `space` from the `[runner]` section; `spec_dir` is the directory of the
    /// spec file (relative paths are relative to it).
    pub fn new(
        spec: &CommandSpec,
        space: &SearchSpace,
        spec_dir: &Path,
    ) -> Result<CommandRunner, CommandError> {
        CommandRunner::for_instance(spec, space, spec_dir, None)
    }

    /// A runner for one instance of a study of several (`[[instance]]`): its variables are
    /// placeholders, defines and environment variables like the parameters, with the same
    /// value for every configuration, and it builds in a folder of its own.
    pub fn for_instance(
        spec: &CommandSpec,
        space: &SearchSpace,
        spec_dir: &Path,
        instance: Option<(&str, &[(String, String)])>,
    ) -> Result<CommandRunner, CommandError> {
        let mut names: Vec<String> = space
            .params()
            .iter()
            .map(|p| p.name().to_string())
            .collect();
        let mut fixed = Vec::new();
        if let Some((_, vars)) = instance {
            for (name, value) in vars {
                if names.contains(name) {
                    return Err(CommandError::Invalid {
                        option: "instance",
                        message: format!("variable `{name}` is also a parameter"),
                    });
                }
                names.push(name.clone());
                fixed.push(value.clone());
            }
        }
        // `{build_dir}` and `{config_id}` are ktune's own: a parameter of that name would
        // never reach the program.
        if let Some(name) = names
            .iter()
            .find(|n| template::RESERVED.contains(&n.as_str()))
        {
            return Err(CommandError::ReservedName { name: name.clone() });
        }
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
        let measure = Measure::from_spec(
            spec.measure.as_ref(),
            spec.warmup,
            spec.repeat,
            &default_measure(),
        )
        .map_err(|(option, message)| CommandError::Invalid { option, message })?;
        let timeout = |option: &'static str, t: f64| {
            ktune_core::checked_seconds(t)
                .map_err(|message| CommandError::Invalid { option, message })
        };
        if !(1024..=1 << 40).contains(&spec.max_output) {
            return Err(CommandError::Invalid {
                option: "max_output",
                message: format!(
                    "must be a number of bytes from 1024 to 2^40, not {}",
                    spec.max_output
                ),
            });
        }
        let compile_timeout = timeout("compile_timeout", spec.compile_timeout)?;
        let run_timeout = timeout("run_timeout", spec.run_timeout)?;
        // Absolute, because commands run in `workdir` while `{build_dir}` may be relative to
        // wherever ktune was started.
        let spec_dir = std::path::absolute(spec_dir).unwrap_or_else(|_| spec_dir.to_path_buf());
        let workdir = match &spec.workdir {
            Some(w) if w.is_absolute() => w.clone(),
            Some(w) => spec_dir.join(w),
            None => spec_dir.clone(),
        };
        // Checked before the programs, which are looked up in it: a missing workdir is not
        // a missing compiler.
        if !workdir.is_dir() {
            return Err(CommandError::Workdir {
                problem: if workdir.exists() {
                    "is not a directory"
                } else {
                    "does not exist"
                },
                path: workdir,
            });
        }
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
        let specs = spec
            .objective_specs()
            .map_err(|message| CommandError::Invalid {
                option: "objectives",
                message,
            })?;
        let parsers = specs
            .iter()
            .map(|o| Parser::of(o))
            .collect::<Result<Vec<_>, _>>()?;
        let build_root = match &spec.build_root {
            Some(b) if b.is_absolute() => b.clone(),
            Some(b) => spec_dir.join(b),
            None => workdir.join(".ktune").join("build"),
        };
        // Each instance builds apart: its variables may reach the compiler.
        let build_root = match instance {
            Some((name, _)) => build_root.join(format!("instance-{name}")),
            None => build_root,
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
            measure,
            incumbent: None,
            compile_timeout,
            run_timeout,
            max_output: spec.max_output,
            wrong_output_status: spec.wrong_output_status.filter(|s| *s != 0),
            deadline: None,
            parsers,
            // The objectives (means over the measured runs), then the first one's spread.
            metrics: specs
                .iter()
                .map(|o| Metric::new(o.name.clone(), o.direction()))
                .chain([Metric::new(
                    format!("{} stdev", specs[0].name),
                    Direction::Minimize,
                )])
                .collect(),
            workdir,
            build_root,
            names,
            fixed,
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
            self.within_budget(self.compile_timeout),
            self.max_output,
        );
        let t = started.elapsed().as_secs_f64();
        match step {
            Step::Finished { status: 0, .. } => Ok(t),
            Step::Finished {
                status,
                stdout,
                stderr,
            } => Err(fail(
                FailureKind::Compile,
                format!("compile exited with {status}: {}", said(&stderr, &stdout)),
                t,
            )),
            Step::TimedOut { stderr } => Err(fail(
                FailureKind::Timeout,
                self.timed_out(
                    self.compile_timeout,
                    ["while compiling", "compile ran past"],
                    &stderr,
                ),
                t,
            )),
            Step::Signalled {
                signal,
                stdout,
                stderr,
            } => Err(fail(
                FailureKind::Compile,
                format!(
                    "compiler killed by signal {signal}: {}",
                    said(&stderr, &stdout)
                ),
                t,
            )),
            Step::SpawnFailed(e) => Err(fail(
                FailureKind::Compile,
                format!("cannot start `{}`: {e}", argv[0]),
                t,
            )),
        }
    }

    /// Runs the program of a compiled configuration once: its objectives' values, or the
    /// failure outcome (with the compile time and the benchmark time since it started).
    fn run_once(&self, run: &ProgramRun<'_>) -> Result<(Vec<f64>, f64), Outcome> {
        let ProgramRun {
            argv,
            values,
            build_dir,
            compile,
            started,
        } = *run;
        let t0 = Instant::now();
        let step = run_step(
            self.command(argv, values),
            build_dir,
            "run",
            self.within_budget(self.run_timeout),
            self.max_output,
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
            Step::Finished {
                status,
                stdout,
                stderr,
            } if Some(status) == self.wrong_output_status => {
                return Err(Outcome::failed(
                    FailureKind::WrongOutput,
                    format!(
                        "wrong output (run exited with {status}, the spec's wrong_output_status): {}",
                        said(&stderr, &stdout)
                    ),
                    timings,
                ));
            }
            Step::Finished {
                status,
                stdout,
                stderr,
            } => {
                return Err(Outcome::failed(
                    FailureKind::Runtime,
                    format!("run exited with {status}: {}", said(&stderr, &stdout)),
                    timings,
                ));
            }
            Step::Signalled {
                signal,
                stdout,
                stderr,
            } => {
                return Err(Outcome::failed(
                    FailureKind::Runtime,
                    format!("run crashed (signal {signal}): {}", said(&stderr, &stdout)),
                    timings,
                ));
            }
            Step::TimedOut { stderr } => {
                return Err(Outcome::failed(
                    FailureKind::Timeout,
                    self.timed_out(
                        self.run_timeout,
                        ["during this run", "run took longer than"],
                        &stderr,
                    ),
                    timings,
                ));
            }
            Step::SpawnFailed(e) => {
                return Err(Outcome::failed(
                    FailureKind::Runtime,
                    format!("cannot start `{}`: {e}", argv[0]),
                    timings,
                ));
            }
        };
        let mut read = Vec::with_capacity(self.parsers.len());
        for (parser, metric) in self.parsers.iter().zip(&self.metrics) {
            match parser.read(&stdout, wall) {
                Some(v) => read.push(v),
                None => {
                    return Err(Outcome::failed(
                        FailureKind::Runtime,
                        format!(
                            "could not read `{}` from the output: {}",
                            metric.name,
                            tail(&stdout)
                        ),
                        timings,
                    ));
                }
            }
        }
        Ok((read, wall))
    }

    /// `k` runs: the means of their values and their total wall time.
    fn run_k(&self, k: usize, run: &ProgramRun<'_>) -> Result<(Vec<f64>, f64), Outcome> {
        let (mut sums, mut seconds) = (vec![0.0; self.parsers.len()], 0.0);
        for _ in 0..k {
            let (v, s) = self.run_once(run)?;
            for (sum, x) in sums.iter_mut().zip(v) {
                *sum += x;
            }
            seconds += s;
        }
        Ok((sums.into_iter().map(|s| s / k as f64).collect(), seconds))
    }

    /// Runs one compiled configuration: warm-up, then measured repetitions as planned.
    fn run_one(&self, values: &[String], build_dir: &Path, id: u64, compile: f64) -> Outcome {
        let argv = self.expand(&self.run, values, build_dir, id);
        let started = Instant::now();
        let incumbent = self.incumbent.map(|b| (b, self.metrics[0].direction));
        let run = ProgramRun {
            argv: &argv,
            values,
            build_dir,
            compile,
            started,
        };
        // The repetitions follow the first objective; every sample's other values are kept
        // to average over the same measured runs (the warm-up's come first and are dropped).
        let mut all: Vec<Vec<f64>> = Vec::new();
        let measured = self.measure.run(incumbent, |k| {
            let (v, seconds) = self.run_k(k, &run)?;
            let first = v[0];
            all.push(v);
            Ok((first, seconds))
        });
        let timings = Timings {
            compile,
            benchmark: started.elapsed().as_secs_f64(),
            ..Timings::default()
        };
        match measured {
            Ok(samples) => {
                let measured = &all[all.len().saturating_sub(samples.values.len())..];
                self.measured(samples, measured, timings)
            }
            Err(failure) => failure,
        }
    }

    /// The outcome of measured `samples` of the first objective, `all` the values of every
    /// objective in the same samples: the first objective's statistic, the others' means,
    /// the first one's spread.
    fn measured(
        &self,
        samples: ktune_core::Samples,
        all: &[Vec<f64>],
        timings: Timings,
    ) -> Outcome {
        let s = samples.summary();
        let mut values = vec![s.value()];
        for i in 1..self.parsers.len() {
            let sum: f64 = all.iter().map(|v| v[i]).sum();
            values.push(sum / all.len().max(1) as f64);
        }
        values.push(s.stdev);
        Outcome::ok(values, timings).with_samples(samples)
    }
}

/// One run of a compiled configuration's program: its command line and parameter values,
/// its build directory, the seconds its compilation took, and when its measurement began.
#[derive(Clone, Copy)]
struct ProgramRun<'a> {
    argv: &'a [String],
    values: &'a [String],
    build_dir: &'a Path,
    compile: f64,
    started: Instant,
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
        // Too little of the time budget left to compile and run anything (the tuning clock
        // counts the evaluations' own times, so it can end a few milliseconds short of the
        // limit): nothing is started, so nothing is recorded as cut by the budget that never
        // ran, and a longer run later measures these.
        if self
            .deadline
            .is_some_and(|d| d.saturating_duration_since(Instant::now()) < BUDGET_SLACK)
        {
            return Err(CoreError::OutOfTime {
                outcomes: Vec::new(),
            });
        }
        let jobs = self.jobs_of(space, configs);
        let compiled = self.compile_all(&jobs);
        let mut outcomes = Vec::with_capacity(jobs.len());
        for ((id, values, dir), c) in jobs.iter().zip(compiled) {
            // A configuration not started when the budget ran out is not evaluated at all
            // (not recorded, so a longer run later measures it).
            if self.deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(CoreError::OutOfTime { outcomes });
            }
            outcomes.push(match c {
                Ok(t) => self.run_one(values, dir, *id, t),
                Err(failure) => failure,
            });
        }
        Ok(outcomes)
    }

    fn set_incumbent(&mut self, best: Option<f64>) {
        self.incumbent = best;
    }

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
        let jobs = self.jobs_of(space, configs);
        let compiled = self.compile_all(&jobs);
        let started = Instant::now();
        let argvs: Vec<Vec<String>> = jobs
            .iter()
            .map(|(id, values, dir)| self.expand(&self.run, values, dir, *id))
            .collect();
        // Per configuration: its runs per sample (calibrated as in the tuning run), its
        // samples (every objective's value in each), or the failure that took it out.
        type Remeasured = Result<(usize, Vec<Vec<f64>>), Outcome>;
        let mut state: Vec<Remeasured> = Vec::new();
        let run = |i: usize, compile: f64| {
            let (_, values, dir) = &jobs[i];
            ProgramRun {
                argv: &argvs[i],
                values,
                build_dir: dir,
                compile,
                started,
            }
        };
        for (i, c) in compiled.into_iter().enumerate() {
            state.push(c.and_then(|t| {
                let runs = self
                    .measure
                    .warm_up(&mut |k| self.run_k(k, &run(i, t)).map(|(v, s)| (v[0], s)))?;
                Ok((runs, Vec::with_capacity(rounds)))
            }));
        }
        for _ in 0..rounds {
            for (i, s) in state.iter_mut().enumerate() {
                if let Ok((runs, samples)) = s {
                    match self.run_k(*runs, &run(i, 0.0)) {
                        Ok((v, _)) => samples.push(v),
                        Err(failure) => *s = Err(failure),
                    }
                }
            }
        }
        let benchmark = started.elapsed().as_secs_f64() / jobs.len().max(1) as f64;
        Ok(state
            .into_iter()
            .map(|r| match r {
                Ok((runs, all)) => {
                    let samples = ktune_core::Samples {
                        values: all.iter().map(|v| v[0]).collect(),
                        runs_per_sample: runs,
                        aborted: false,
                        statistic: self.measure.statistic,
                    };
                    let timings = Timings {
                        benchmark,
                        ..Timings::default()
                    };
                    self.measured(samples, &all, timings)
                }
                Err(failure) => failure,
            })
            .collect())
    }
}

/// Per configuration: its rank (the build directory's name), its values as programs receive
/// them, and its build directory.
type Job = (u64, Vec<String>, PathBuf);

impl CommandRunner {
    fn jobs_of(&self, space: &SearchSpace, configs: &[Configuration]) -> Vec<Job> {
        // Values as programs receive them (a permutation as its item names, `i,k,j`).
        configs
            .iter()
            .map(|c| {
                let id = space.rank(c).unwrap_or(u64::MAX);
                let texts = space
                    .params()
                    .iter()
                    .zip(space.values(c))
                    .map(|(p, v)| p.text(v))
                    .chain(self.fixed.iter().cloned())
                    .collect();
                (id, texts, self.build_root.join(id.to_string()))
            })
            .collect()
    }

    /// Compiles every job, `jobs` at a time: the compile seconds of each, or its failure.
    fn compile_all(&self, jobs: &[Job]) -> Vec<Result<f64, Outcome>> {
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
        compiled
            .into_iter()
            .map(|c| {
                c.unwrap_or_else(|| {
                    Err(Outcome::failed(
                        FailureKind::Compile,
                        "the compile step did not report",
                        Timings::default(),
                    ))
                })
            })
            .collect()
    }
}

impl CommandRunner {
    /// A step's timeout, shortened to what is left of the time budget.
    fn within_budget(&self, own: Duration) -> Duration {
        match self.deadline {
            Some(d) => own.min(d.saturating_duration_since(Instant::now())),
            None => own,
        }
    }

    /// Whether a step that timed out was cut by the time budget rather than its own timeout.
    fn budget_cut(&self, own: Duration) -> bool {
        self.deadline
            .is_some_and(|d| Instant::now() + BUDGET_SLACK >= d)
            && own > BUDGET_SLACK
    }

    /// Why a step with its own limit `own` was killed: the time budget ran out `[when]`, or
    /// `[step] {own} s and was killed`; with the tail of its error output.
    fn timed_out(&self, own: Duration, [when, step]: [&str; 2], stderr: &str) -> String {
        if self.budget_cut(own) {
            format!("the time budget ran out {when}: {}", tail(stderr))
        } else {
            format!(
                "{step} {:.1} s and was killed: {}",
                own.as_secs_f64(),
                tail(stderr)
            )
        }
    }
}

#[cfg(test)]
mod tests;
