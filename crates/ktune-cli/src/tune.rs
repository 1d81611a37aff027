//! `ktune tune <spec>`: tune a real program and store every measurement (or, with
//! `--storage`, run as one worker of a shared study: `worker.rs`).

use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::results::{RERANK_KEY, reranking_json, reranking_text};
use crate::spec::{Opened, open_spec, read_spec};
use crate::tune_args::{TuneArgs, strategy_and_budget};
use anyhow::{Result, bail};
use ktune_core::{CoreError, Direction, FailureKind, Record, Rng, Runner, StopReason, Tuner};
use ktune_space::SearchSpace;
use ktune_store::{DIRECTION_KEY, Store};
use rand::SeedableRng;
use serde_json::json;

pub fn run(args: &TuneArgs) -> Result<()> {
    let started = Instant::now();
    let spec_path = &args.spec;
    let problem = read_spec(spec_path)?;
    if args.storage.is_some() || args.study.is_some() || problem.storage.is_some() {
        return crate::worker::run(args, &problem);
    }
    let Opened {
        space,
        mut runner,
        jobs,
        fresh_process,
    } = open_spec(&problem, !args.quiet && !args.json, args.max_enumeration)?;
    let objective = runner.metrics()[0].clone();

    let (strategy_name, mut strategy, budget) = strategy_and_budget(args, &problem)?;

    let db_path = args
        .db
        .clone()
        .unwrap_or_else(|| spec_path.with_extension("db"));
    let fingerprint = problem.fingerprint(&space, &objective.name);
    let mut store = Store::open(&db_path, &fingerprint)?;
    store.set_meta("strategy", &strategy_name)?;
    store.set_meta("seed", &args.seed.to_string())?;
    store.set_meta(DIRECTION_KEY, objective.direction.name())?;
    if let Some(unit) = problem.runner.as_ref().and_then(|r| r.unit()) {
        store.set_meta(ktune_store::UNIT_KEY, unit)?;
    }
    // So that `ktune results --rerank` finds the program again.
    if let Ok(abs) = std::path::absolute(spec_path) {
        store.set_meta("spec", &abs.display().to_string())?;
    }
    let mut previous = store.records(&space)?;
    let resumed = previous.len();
    crate::spec::note_inputs(&mut store, &problem, resumed)?;

    // Without a terminal (logs, CI) a progress bar draws nothing: one line per evaluation.
    let log_lines = !args.quiet && !args.json && !std::io::stderr().is_terminal();
    // The default configuration is measured once, so the summary can compare against it.
    let default = space.default_configuration().filter(|c| space.contains(c));
    // It counts against the time budget like any evaluation.
    let spent = previous.last().map_or(0.0, |r| r.clock);
    runner.set_time_left(budget.max_seconds.map(|m| m - spent));
    let measured_default = if !args.no_default
        && let Some(d) = &default
        && !previous.iter().any(|r| &r.config == d)
        && budget.max_seconds.is_none_or(|m| spent < m)
    {
        match runner.evaluate(&space, std::slice::from_ref(d)) {
            Ok(mut outcomes) if !outcomes.is_empty() => Some((d, outcomes.remove(0))),
            Ok(_) | Err(ktune_core::CoreError::OutOfTime { .. }) => None,
            Err(e) => return Err(restart_if_needed(fresh_process.as_deref(), e.into())),
        }
    } else {
        None
    };
    if let Some((d, outcome)) = measured_default {
        let clock = previous.last().map_or(0.0, |r| r.clock) + outcome.timings().total();
        let record = Record {
            config: d.clone(),
            outcome,
            clock,
        };
        if log_lines {
            eprintln!(
                "{} (the default configuration)",
                evaluation_line(
                    previous.len() + 1,
                    args.max_evals.or(budget.max_evaluations),
                    &space,
                    &record,
                    &objective.name,
                    record.outcome.objective()
                )
            );
        }
        store.record(&space, &record)?;
        previous.push(record);
    }

    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        // A second Ctrl-C while the evaluation in flight finishes exits at once, ending the
        // programs under test too (they run in process groups of their own, which the
        // terminal's interrupt does not reach); what is committed stays committed.
        let _ = ctrlc::set_handler(move || {
            if stop.swap(true, Ordering::SeqCst) {
                ktune_runners::command::kill_running_steps();
                std::process::exit(130);
            }
            eprintln!(
                "\nktune: interrupted: finishing the evaluation in flight, then stopping (Ctrl-C again to abandon it)"
            );
        });
    }

    if !args.quiet && !args.json {
        eprintln!(
            "ktune tune: {} configurations, strategy {strategy_name}, results in {}{}",
            space.size(),
            db_path.display(),
            if resumed > 0 {
                format!(" (resuming after {resumed} stored evaluations)")
            } else {
                String::new()
            }
        );
    }
    let progress = (!args.quiet && !args.json && std::io::stderr().is_terminal()).then(|| {
        let pb = indicatif::ProgressBar::new(budget.max_evaluations.unwrap_or(0) as u64);
        pb.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {pos}/{len} evaluations (eta {eta}) {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        pb.set_position(previous.len() as u64);
        pb
    });
    let mut best: Option<f64> = previous
        .iter()
        .filter_map(|r| r.outcome.objective())
        .reduce(|a, b| {
            if objective.direction.better(b, a) {
                b
            } else {
                a
            }
        });
    let mut failures = previous
        .iter()
        .filter(|r| r.outcome.failure().is_some())
        .count();
    let json = args.json;
    let mut reader_gone = false;
    let mut records_seen = previous.len();
    let max_evals = budget.max_evaluations;
    let stop_ref = &*stop;
    let loop_started = Instant::now();
    let mut timed = Timed {
        inner: runner.as_mut(),
        seconds: 0.0,
    };
    let run = {
        let store = &mut store;
        let space_ref = &space;
        let progress = progress.as_ref();
        let objective = &objective;
        Tuner::new(&space, &mut timed, budget.clone())
            .replay(previous)
            // Ask for `jobs` configurations at a time so they compile in parallel (their runs
            // stay sequential in the runner).
            .batch_size(jobs)
            .stop_flag(&stop)
            .on_record(|record| {
                store
                    .record(space_ref, record)
                    .map_err(|e| CoreError::Record(e.to_string()))?;
                match record.outcome.objective() {
                    Some(v) if best.is_none_or(|b| objective.direction.better(v, b)) => {
                        best = Some(v)
                    }
                    Some(_) => {}
                    None => failures += 1,
                }
                if json && !reader_gone {
                    // The reader has gone (`... --json | head -1`): what is recorded stays,
                    // the tuning stops after the evaluations in flight, as on Ctrl-C.
                    if outln!("{}", record_json(space_ref, record, &objective.name)).is_err() {
                        reader_gone = true;
                        stop_ref.store(true, Ordering::SeqCst);
                    }
                } else if log_lines {
                    records_seen += 1;
                    eprintln!(
                        "{}",
                        evaluation_line(
                            records_seen,
                            max_evals,
                            space_ref,
                            record,
                            &objective.name,
                            best
                        )
                    );
                } else if let Some(pb) = progress {
                    pb.inc(1);
                    pb.set_message(format!(
                        "best {} = {}, {failures} failed",
                        objective.name,
                        best.map_or("-".into(), |b| format!("{b:.4}"))
                    ));
                }
                Ok(())
            })
            .run(strategy.as_mut(), &mut Rng::seed_from_u64(args.seed))
    };
    if let Some(pb) = &progress {
        pb.finish_and_clear();
    }
    let run = run.map_err(|e| restart_if_needed(fresh_process.as_deref(), e.into()))?;
    let this_run = &run.records[resumed.min(run.records.len())..];
    // Time outside the runner (strategy, storage, progress) plus the runner's own
    // bookkeeping; compiles and kernel runs are excluded even when they overlap.
    let overhead = Overhead {
        seconds: (loop_started.elapsed().as_secs_f64() - timed.seconds).max(0.0)
            + this_run
                .iter()
                .map(|r| r.outcome.timings().framework)
                .filter(|f| f.is_finite())
                .sum::<f64>(),
        evaluations: this_run.len(),
    };
    let warnings = timed.warnings();
    // The finalists are re-measured before the summary is printed, so that with --json the
    // summary stays the last line.
    let reranked = match args.rerank.filter(|&k| k > 0) {
        Some(k) => {
            if !args.quiet && !args.json {
                eprintln!(
                    "re-ranking the best {k} configurations: {} interleaved rounds",
                    args.rerank_rounds
                );
            }
            let r = ktune_core::rerank(
                &space,
                runner.as_mut(),
                &run.records,
                objective.direction,
                k,
                args.rerank_rounds,
            )
            .map_err(|e| restart_if_needed(fresh_process.as_deref(), e.into()))?;
            let stored = reranking_json(&space, &r);
            store.set_meta(RERANK_KEY, &stored.to_string())?;
            Some(stored)
        }
        None => None,
    };
    if args.json
        && let Some(r) = &reranked
    {
        outln!("{}", json!({ "rerank": r }))?;
    }
    summary(
        &space,
        &run.records,
        &overhead,
        default.as_deref(),
        &objective.name,
        objective.direction,
        run.stop,
        resumed,
        &db_path,
        started,
        args,
    )?;
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    if !args.json
        && !args.quiet
        && let Some(r) = &reranked
    {
        out!("{}", reranking_text(r, &objective.name))?;
    }
    Ok(())
}

/// How many times one `ktune tune` command restarts itself (the count travels in the
/// environment of the new process).
const RESTARTS_ENV: &str = "KTUNE_RESTARTS";
const MAX_RESTARTS: u32 = 100;

/// When the runner needs a new process (`flag` set), replaces this process with a new
/// `ktune tune` with the same arguments, which resumes from the database where every
/// result is already committed; returns `error` otherwise, or when the restart is refused
/// or fails.
fn restart_if_needed(flag: Option<&AtomicBool>, error: anyhow::Error) -> anyhow::Error {
    if !flag.is_some_and(|f| f.load(Ordering::SeqCst)) {
        return error;
    }
    let done: u32 = std::env::var(RESTARTS_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    if done >= MAX_RESTARTS {
        return error.context(format!(
            "ktune restarted itself {done} times in this command and stops here; run the same \
             command again to go on"
        ));
    }
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            return error.context(format!(
                "ktune cannot find its own executable to restart ({e}); run the same command \
                 again to go on"
            ));
        }
    };
    eprintln!(
        "ktune tune: {error:#}\nktune tune: restarting to continue ({} of at most {MAX_RESTARTS})",
        done + 1
    );
    close_on_exec();
    use std::os::unix::process::CommandExt;
    let e = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(RESTARTS_ENV, (done + 1).to_string())
        .exec();
    error.context(format!(
        "restarting ktune failed ({e}); run the same command again to go on"
    ))
}

/// Marks every open file descriptor above stderr close-on-exec, so that the new process
/// does not inherit the GPU device files of the poisoned context (the driver frees that
/// context and its memory when they close) or the database's handle.
fn close_on_exec() {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    let fds: Vec<i32> = dir
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter(|&fd| fd > 2)
        .collect();
    for fd in fds {
        // SAFETY: fcntl on a descriptor number has no memory effects; one that closed in
        // the meantime just fails with EBADF.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}

fn record_json(space: &SearchSpace, r: &Record, objective: &str) -> serde_json::Value {
    let config: serde_json::Map<String, serde_json::Value> = space
        .params()
        .iter()
        .zip(space.values(&r.config))
        .map(|(p, v)| (p.name().to_string(), v.to_json()))
        .collect();
    let (status, reason) = match &r.outcome {
        ktune_core::Outcome::Ok { .. } => ("ok", None),
        ktune_core::Outcome::Failed { kind, reason, .. } => (kind.name(), Some(reason.clone())),
    };
    let mut j = json!({"config": config, "status": status, objective: r.outcome.objective(), "reason": reason, "clock": r.clock, "timings": r.outcome.timings()});
    if let (Some(s), Some(samples)) = (r.outcome.summary(), r.outcome.samples()) {
        j["summary"] = json!(s);
        j["aborted"] = json!(samples.aborted);
    }
    j
}

/// The tuner's own cost during the tuning loop.
struct Overhead {
    seconds: f64,
    evaluations: usize,
}

impl Overhead {
    fn ms_per_evaluation(&self) -> f64 {
        1e3 * self.seconds / self.evaluations.max(1) as f64
    }
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

#[allow(clippy::too_many_arguments)]
fn summary(
    space: &SearchSpace,
    records: &[Record],
    overhead: &Overhead,
    default: Option<&[u32]>,
    objective: &str,
    direction: Direction,
    stop: StopReason,
    resumed: usize,
    db: &Path,
    started: Instant,
    args: &TuneArgs,
) -> Result<()> {
    let best = records
        .iter()
        .filter(|r| r.outcome.objective().is_some())
        .reduce(|a, b| {
            if direction.better(
                b.outcome.objective().unwrap_or(f64::NAN),
                a.outcome.objective().unwrap_or(f64::NAN),
            ) {
                b
            } else {
                a
            }
        });
    let default_value = default
        .and_then(|d| records.iter().find(|r| r.config == d))
        .and_then(|r| r.outcome.objective());
    let mut by_kind: Vec<(FailureKind, usize, String)> = Vec::new();
    for r in records {
        if let ktune_core::Outcome::Failed { kind, reason, .. } = &r.outcome {
            match by_kind.iter_mut().find(|(k, _, _)| k == kind) {
                Some(e) => e.1 += 1,
                None => by_kind.push((*kind, 1, reason.lines().next().unwrap_or("").to_string())),
            }
        }
    }
    let stop_text = match stop {
        StopReason::Evaluations => "the evaluation budget is spent",
        StopReason::Time => "the time limit was reached",
        StopReason::Target => "the target value was reached",
        StopReason::SpaceExhausted => "every configuration has been evaluated",
        StopReason::StrategyExhausted => "the strategy has nothing more to propose",
        StopReason::Interrupted => "interrupted",
    };
    if args.json {
        let failed: Vec<_> = by_kind
            .iter()
            .map(|(k, n, first)| json!({"kind": k.name(), "count": n, "first_reason": first}))
            .collect();
        outln!(
            "{}",
            json!({
                "summary": {
                    "best": best.map(|b| record_json(space, b, objective)),
                    "default": default_value,
                    "evaluations": records.len(),
                    "resumed": resumed,
                    "failed": failed,
                    "stop": stop_text,
                    "database": db.display().to_string(),
                    "seconds": started.elapsed().as_secs_f64(),
                    "overhead_ms_per_evaluation": overhead.ms_per_evaluation(),
                }
            })
        )?;
        if best.is_none() {
            bail!(nothing_ran(records.len(), &by_kind, db));
        }
        return Ok(());
    }
    let Some(best) = best else {
        // Why, by kind, with an example each: the first thing a user needs to fix.
        for (k, n, first) in &by_kind {
            outln!("  {n} {} (e.g. {first})", k.name())?;
        }
        bail!(nothing_ran(records.len(), &by_kind, db));
    };
    let value = best.outcome.objective().unwrap_or(f64::NAN);
    let spread = match (best.outcome.summary(), &best.outcome) {
        (Some(s), _) if s.n > 1 => format!(
            " ({} of {} samples; 95% interval [{:.6}, {:.6}])",
            s.statistic.name(),
            s.n,
            s.ci_low,
            s.ci_high
        ),
        // The command and CUDA runners report the spread last; 0 means one measured run.
        (None, ktune_core::Outcome::Ok { values, .. })
            if values.len() > 1 && values[values.len() - 1] > 0.0 =>
        {
            format!(
                " (± {:.4} over the measured runs)",
                values[values.len() - 1]
            )
        }
        _ => String::new(),
    };
    let aborted = records
        .iter()
        .filter(|r| r.outcome.samples().is_some_and(|s| s.aborted))
        .count();
    if args.quiet {
        outln!(
            "best {objective} = {value:.6}: {}",
            space.describe(&best.config)
        )?;
        return Ok(());
    }
    outln!("best configuration: {}", space.describe(&best.config))?;
    outln!("  {objective} = {value:.6}{spread}")?;
    if let Some(d) = default_value {
        let ratio = match direction {
            Direction::Minimize => d / value,
            Direction::Maximize => value / d,
        };
        outln!("  default configuration: {objective} = {d:.6}; the best is {ratio:.2}x better")?;
    }
    outln!(
        "evaluations: {} ({} this run, {} resumed), stopped because {stop_text}, in {:.1} s",
        records.len(),
        records.len() - resumed.min(records.len()),
        resumed,
        started.elapsed().as_secs_f64()
    )?;
    if aborted > 0 {
        outln!(
            "repetition stopped early for {aborted} configurations clearly worse than the best so far"
        )?;
    }
    let failed: usize = by_kind.iter().map(|(_, n, _)| n).sum();
    if failed > 0 {
        outln!("failed: {failed}")?;
        for (k, n, first) in &by_kind {
            outln!("  {n} {} (e.g. {first})", k.name())?;
        }
    }
    let wall = started.elapsed().as_secs_f64();
    if overhead.evaluations > 0 && wall > 0.0 {
        outln!(
            "tuner overhead: {:.1} ms per evaluation ({:.2}% of the wall time): strategy, storage and bookkeeping, not compiling or running",
            overhead.ms_per_evaluation(),
            100.0 * overhead.seconds / wall,
        )?;
    }
    outln!(
        "results: {}   (ktune results {})",
        db.display(),
        db.display()
    )?;
    Ok(())
}

/// One line on an evaluation, for logs: `ktune: [n/max] configuration: value; best so far`.
fn evaluation_line(
    n: usize,
    max: Option<usize>,
    space: &SearchSpace,
    record: &Record,
    objective: &str,
    best: Option<f64>,
) -> String {
    let what = match record.outcome.objective() {
        Some(v) => format!("{objective} = {v:.6}"),
        None => format!(
            "failed ({})",
            record.outcome.failure().map_or("?", |k| k.name())
        ),
    };
    format!(
        "ktune: [{n}{}] {}: {what}; best {}",
        max.map_or(String::new(), |m| format!("/{m}")),
        space.describe(&record.config),
        best.map_or("-".into(), |b| format!("{b:.6}"))
    )
}

/// The error of a run in which no configuration ran successfully.
fn nothing_ran(
    evaluated: usize,
    by_kind: &[(ktune_core::FailureKind, usize, String)],
    db: &Path,
) -> String {
    let kinds: Vec<String> = by_kind
        .iter()
        .map(|(k, n, _)| format!("{n} {}", k.name()))
        .collect();
    if evaluated == 0 {
        format!("nothing was evaluated; results in {}", db.display())
    } else {
        format!(
            "no configuration ran successfully: {evaluated} evaluated, {} (first reason of each kind above; `ktune results --status failed {}` lists them all)",
            kinds.join(", "),
            db.display()
        )
    }
}
