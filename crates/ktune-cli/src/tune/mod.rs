//! `ktune tune <spec>`: tune a real program and store every measurement.
//!
//! One process is a study with one worker in `<spec>.db` (or `--db`); with `--storage` (or
//! a `[storage]` section) it is one worker of a shared study. Both take the one study path
//! of `ktune-problem`: the arguments resolved into a plan over the spec, the study joined
//! under its facts, the default configuration queued in the session, the loop of
//! `ktune_core::cooperate` with the progress display as its observers.

mod args;
mod observers;
mod restart;
mod summary;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::{Result, bail};
use ktune_core::{CoreError, Observe, Record, Runner};
use ktune_problem::{
    COMMAND_LINE, Ended, OpenStudy, OpenedRunner, Opening, Participation, Plan, ProblemSpec,
    StudyPlace,
};
use ktune_space::SearchSpace;
use serde_json::json;

pub(crate) use args::TuneArgs;
use restart::restart_if_needed;
use summary::{Overhead, Report};

use crate::results::{RERANK_KEY, reranking_json, reranking_text};
use crate::spec::{open_spec, read_spec};

pub fn run(args: &TuneArgs) -> Result<()> {
    let started = Instant::now();
    let problem = read_spec(&args.spec)?;
    let plan = Plan::resolve(&problem, args.run_args(), &COMMAND_LINE)?;
    plan.require_limit(&COMMAND_LINE)?;
    let Some(place) = plan.place.clone() else {
        bail!("the command line keeps its results in a database; none was resolved");
    };
    let (space, mut opened) = open_spec(&problem, args.chatty(), args.max_enumeration)?;
    let objective = opened.runner.metrics()[0].clone();
    let (stop, signalled) = interrupt_flags();
    let mut study = join(&problem, &plan, &place, &space, &opened)?;
    study.session.stop_flag(&stop);
    let default = match space.default_configuration() {
        Some(d) if !space.contains(&d) => {
            if plan.measure_default && args.chatty() {
                note!(
                    "warning: the default configuration ({}) breaks the constraints: it is not measured",
                    space.describe(&d)
                );
            }
            None
        }
        d => d,
    };
    if plan.measure_default
        && let Some(d) = &default
    {
        study.session.enqueue(d.clone());
    }
    if args.chatty() {
        announce(&study, &place, &plan);
    }
    let mut observers = observers(args, &objective.name, default.clone(), stop.clone());
    let (ended, outside) = tune(&mut study, &mut opened, &mut observers)
        .map_err(|e| restart_if_needed(opened.fresh_process.as_deref(), e.into()))?;
    let (records, overhead) = read_back(&mut study, &space, outside)?;
    let reranked = rerank(args, &space, &mut study, &mut opened, &records)?;
    let report = Report {
        space: &space,
        records: &records,
        default: default.as_deref(),
        objective: &objective.name,
        metrics: opened
            .runner
            .metrics()
            .iter()
            .map(|m| m.name.clone())
            .collect(),
        direction: objective.direction,
        objectives: study.joined.facts.objectives.clone(),
        goal: study.joined.facts.goal.clone(),
        stop: ended.stop,
        resumed: study.resumed,
        mine: overhead.evaluations,
        overhead,
        shared: matches!(place, StudyPlace::Shared { .. }),
        place: describe(&place),
        results_args: results_args(&place),
        started,
    };
    finish(
        args,
        &report,
        &ended,
        &study,
        &place,
        opened.runner.warnings(),
    )?;
    if args.chatty()
        && let Some(r) = &reranked
    {
        crate::out!("{}", reranking_text(r, report.objective))?;
    }
    if signalled.load(Ordering::SeqCst) {
        return Err(crate::Interrupted.into());
    }
    if stop.load(Ordering::SeqCst) {
        // Raised by an observer whose reader went away (stdout or stderr closed): ended as
        // a tool ended by SIGPIPE ends, since the run did not finish.
        return Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe).into());
    }
    Ok(())
}

/// Every record of the study, and the tuner's overhead on this process's: the seconds
/// `outside` the runner plus the runner's own bookkeeping (compiles and kernel runs are
/// excluded even when they overlap).
fn read_back(
    study: &mut OpenStudy<'_>,
    space: &SearchSpace,
    outside: f64,
) -> Result<(Vec<Record>, Overhead)> {
    let all = study.storage.records_since(space, None)?;
    let id = study.worker.id.as_str();
    // Read in the study's order: what this process made comes after what it resumed.
    let mine: Vec<&Record> = all
        .iter()
        .skip(study.resumed)
        .filter(|r| r.worker.as_deref() == Some(id))
        .map(|r| &r.record)
        .collect();
    let overhead = Overhead {
        seconds: outside
            + mine
                .iter()
                .map(|r| r.outcome.timings().framework)
                .filter(|f| f.is_finite())
                .sum::<f64>(),
        evaluations: mine.len(),
    };
    Ok((all.into_iter().map(|r| r.record).collect(), overhead))
}

/// Opens the study and joins it as this process; says what joining noticed, and whether
/// the program changed under the study's results.
fn join<'a>(
    problem: &ProblemSpec,
    plan: &Plan,
    place: &StudyPlace,
    space: &'a SearchSpace,
    opened: &OpenedRunner,
) -> Result<OpenStudy<'a>> {
    let objective = &opened.runner.metrics()[0];
    let mut study = place.join(Opening {
        space: space.into(),
        fingerprint: problem.fingerprint(space, &objective.name),
        facts: plan.facts(problem),
        budget: plan.budget.clone(),
        cap: plan.cap,
        strategy: plan.strategy.build(),
        seed: plan.seed,
        participation: Participation {
            device: plan.device.clone().or_else(|| opened.runner.device()),
            allow_mixed_hardware: plan.allow_mixed_hardware,
            lease: plan.lease,
            batch: opened.jobs,
        },
        priors: plan.priors.iter().map(|p| p.prior.clone()).collect(),
    })?;
    for note in &study.joined.notes {
        match note {
            // `--max-evals 20` on a study of 60: this run stops at 20 (see `Plan::cap`).
            ktune_core::JoinNote::Budget {
                study,
                kept,
                ignored,
            } if plan.cap == Some(*ignored) && ignored < kept => note!(
                "note: study `{study}` has a budget of {kept} evaluations; this run stops when it holds {ignored} (--max-evals), and the study keeps its budget"
            ),
            note => note!("warning: {note}"),
        }
    }
    for (fact, report) in &study.priors {
        note!("prior {}: {report}", fact.source);
    }
    if let (Some(false), Some(goal)) = (study.session.goal_sought(), &study.joined.facts.goal) {
        note!(
            "note: strategy {} does not seek the goal `{goal}`: it optimises `{}`, and the goal picks from what it finds (`auto` and `bayes_opt` seek it)",
            plan.strategy.canonical(),
            objective.name
        );
    }
    // So that `ktune results --rerank` finds the program again.
    if let Ok(abs) = std::path::absolute(&problem.path) {
        study.storage.set_meta("spec", &abs.display().to_string())?;
    }
    // The version of the last ktune that tuned it, for reports and bug reports.
    study
        .storage
        .set_meta("ktune_version", env!("CARGO_PKG_VERSION"))?;
    if let Some(w) = ktune_problem::note_inputs(study.storage.as_mut(), problem, study.resumed)? {
        note!("warning: {w}");
    }
    Ok(study)
}

/// The line that opens a run: the space, the strategy, where the results go, what is
/// resumed, and for a shared study this worker and the budget it shares.
fn announce(study: &OpenStudy<'_>, place: &StudyPlace, plan: &Plan) {
    let worker = match place {
        StudyPlace::Single(_) => String::new(),
        StudyPlace::Shared { .. } => {
            format!("worker {} ({}) on ", study.worker.id, study.worker.device)
        }
    };
    let shared = match (place, study.joined.facts.budget) {
        (StudyPlace::Shared { .. }, Some(m)) => format!(", {m} evaluations shared"),
        _ => String::new(),
    };
    note!(
        "ktune tune: {worker}{} configurations, strategy {}, results in {}{shared}{}",
        study.session.space().size(),
        plan.strategy.canonical(),
        describe(place),
        if study.resumed > 0 {
            format!(" (resuming after {} stored evaluations)", study.resumed)
        } else {
            String::new()
        }
    );
}

/// Where the results are, for messages.
fn describe(place: &StudyPlace) -> String {
    match place {
        StudyPlace::Single(path) => path.display().to_string(),
        StudyPlace::Shared { location, study } => {
            format!("study `{study}` in {}", location.display())
        }
    }
}

/// The arguments of `ktune results` that read them.
fn results_args(place: &StudyPlace) -> String {
    match place {
        StudyPlace::Single(path) => path.display().to_string(),
        StudyPlace::Shared { location, study } => {
            format!("--storage {} --study {study}", location.display())
        }
    }
}

/// The flags the first Ctrl-C (SIGINT) raises: `stop` (the evaluation in flight is
/// finished, recorded, and the run stops; observers raise it too) and `signalled` (so that
/// the process ends with status 130, as an interrupted tool does, and scripts can tell an
/// interrupted run from a finished one). A second Ctrl-C exits at once, ending the programs
/// under test too (they run in process groups of their own, which the terminal's interrupt
/// does not reach); what is committed stays committed.
fn interrupt_flags() -> (Arc<AtomicBool>, Arc<AtomicBool>) {
    let stop = Arc::new(AtomicBool::new(false));
    let signalled = Arc::new(AtomicBool::new(false));
    let (flag, seen) = (stop.clone(), signalled.clone());
    let _ = ctrlc::set_handler(move || {
        if seen.swap(true, Ordering::SeqCst) {
            ktune_runners::command::kill_running_steps();
            std::process::exit(crate::INTERRUPTED_STATUS.into());
        }
        flag.store(true, Ordering::SeqCst);
        note!(
            "\nktune: interrupted: finishing the evaluation in flight, then stopping (Ctrl-C again to abandon it)"
        );
    });
    (stop, signalled)
}

/// What shows the run going: one JSON object per evaluation with `--json`; without a
/// terminal (logs, CI), where a progress bar draws nothing, one line per evaluation; else a
/// progress bar; nothing with `--quiet`.
fn observers(
    args: &TuneArgs,
    objective: &str,
    default: Option<ktune_space::Configuration>,
    stop: Arc<AtomicBool>,
) -> Vec<Box<dyn Observe>> {
    use std::io::IsTerminal;
    let observer: Box<dyn Observe> = if args.json {
        Box::new(observers::JsonLines::new(objective, stop))
    } else if args.quiet {
        return Vec::new();
    } else if !std::io::stderr().is_terminal() {
        Box::new(observers::LogLines {
            objective: objective.to_string(),
            default,
            stop,
            gone: false,
        })
    } else {
        Box::new(observers::Progress::new(objective))
    };
    vec![observer]
}

/// Runs the study, timing the runner apart: returns how it ended and the seconds of the
/// loop spent outside the runner (strategy, storage, progress).
fn tune(
    study: &mut OpenStudy<'_>,
    opened: &mut OpenedRunner,
    observers: &mut Vec<Box<dyn Observe>>,
) -> Result<(Ended, f64), CoreError> {
    let loop_started = Instant::now();
    let mut timed = Timed {
        inner: opened.runner.as_mut(),
        seconds: 0.0,
    };
    let ended = study.run(&mut timed, observers)?;
    let outside = (loop_started.elapsed().as_secs_f64() - timed.seconds).max(0.0);
    if let Some(e) = &ended.heartbeat {
        note!("warning: heartbeats failed: {e}");
    }
    Ok((ended, outside))
}

/// `--rerank K`: the best K measured again, interleaved, before the summary (so that with
/// `--json` the summary stays the last line); the result is kept in the study.
fn rerank(
    args: &TuneArgs,
    space: &SearchSpace,
    study: &mut OpenStudy<'_>,
    opened: &mut OpenedRunner,
    records: &[Record],
) -> Result<Option<serde_json::Value>> {
    let Some(k) = args.rerank.filter(|&k| k > 0) else {
        return Ok(None);
    };
    if args.chatty() {
        note!(
            "re-ranking the best {k} configurations: {} interleaved rounds",
            args.rerank_rounds
        );
    }
    let direction = study.joined.facts.direction;
    let r = ktune_core::rerank(
        space,
        opened.runner.as_mut(),
        records,
        direction,
        k,
        args.rerank_rounds,
    )
    .map_err(|e| restart_if_needed(opened.fresh_process.as_deref(), e.into()))?;
    let stored = reranking_json(space, &r);
    study.storage.set_meta(RERANK_KEY, &stored.to_string())?;
    if args.json {
        outln!("{}", json!({ "rerank": stored }))?;
    }
    Ok(Some(stored))
}

/// The summary, the runner's warnings, and in a shared study this worker's part.
fn finish(
    args: &TuneArgs,
    report: &Report<'_>,
    ended: &Ended,
    study: &OpenStudy<'_>,
    place: &StudyPlace,
    warnings: Vec<String>,
) -> Result<()> {
    if args.json {
        report.json()?;
    } else {
        report.text(args.quiet)?;
    }
    for w in &warnings {
        note!("warning: {w}");
    }
    if let StudyPlace::Shared { study: name, .. } = place
        && args.chatty()
    {
        note!(
            "worker {}: {} evaluations recorded (stopped: {}){}; study `{name}` holds {}{}",
            study.worker.id,
            report.mine,
            summary::stop_text(ended.stop),
            match ended.released {
                0 => String::new(),
                n => format!(", {n} claims released"),
            },
            report.records.len(),
            study
                .joined
                .facts
                .budget
                .map_or(String::new(), |m| format!(" of {m}")),
        );
    }
    Ok(())
}

/// Measures the time spent inside the runner, so the tuner's overhead can be told apart.
struct Timed<'a> {
    inner: &'a mut dyn Runner,
    seconds: f64,
}

impl Runner for Timed<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn metrics(&self) -> &[ktune_core::Metric] {
        self.inner.metrics()
    }
    fn evaluate(
        &mut self,
        space: &SearchSpace,
        configs: &[ktune_space::Configuration],
    ) -> Result<Vec<ktune_core::Outcome>, CoreError> {
        let t = Instant::now();
        let r = self.inner.evaluate(space, configs);
        self.seconds += t.elapsed().as_secs_f64();
        r
    }
    fn set_incumbent(&mut self, best: Option<f64>) {
        self.inner.set_incumbent(best);
    }
    fn set_time_left(&mut self, seconds: Option<f64>) {
        self.inner.set_time_left(seconds);
    }
    fn device(&self) -> Option<String> {
        self.inner.device()
    }
    fn warnings(&self) -> Vec<String> {
        self.inner.warnings()
    }
    fn remeasure(
        &mut self,
        space: &SearchSpace,
        configs: &[ktune_space::Configuration],
        rounds: usize,
    ) -> Result<Vec<ktune_core::Outcome>, CoreError> {
        self.inner.remeasure(space, configs, rounds)
    }
}
