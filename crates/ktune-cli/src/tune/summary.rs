//! What `ktune tune` says at the end: the best configuration beside the default, the
//! evaluations and why the run stopped, failures by kind with an example each, the tuner's
//! own cost, and where the results are; as text, one line with `--quiet`, or one JSON object
//! with `--json`.

use std::time::Instant;

use anyhow::Result;
use ktune_core::{Direction, FailureKind, Record, StopReason};
use ktune_space::SearchSpace;
use serde_json::json;

use super::observers::record_json;

/// The tuner's own cost during the tuning loop.
pub(crate) struct Overhead {
    pub(crate) seconds: f64,
    pub(crate) evaluations: usize,
}

impl Overhead {
    fn ms_per_evaluation(&self) -> f64 {
        1e3 * self.seconds / self.evaluations.max(1) as f64
    }
}

/// Everything the summary reports.
pub(crate) struct Report<'a> {
    pub(crate) space: &'a SearchSpace,
    /// Every record of the study.
    pub(crate) records: &'a [Record],
    pub(crate) overhead: Overhead,
    pub(crate) default: Option<&'a [u32]>,
    pub(crate) objective: &'a str,
    /// The runner's metrics' names, the objective first.
    pub(crate) metrics: Vec<String>,
    pub(crate) direction: Direction,
    /// A study of several objectives: all of them, in order (empty: one objective).
    pub(crate) objectives: Vec<ktune_core::Metric>,
    /// The goal the study sought one configuration by (the study's record of it).
    pub(crate) goal: Option<String>,
    pub(crate) stop: StopReason,
    /// Records the study held when this process opened it.
    pub(crate) resumed: usize,
    /// Records this process made.
    pub(crate) mine: usize,
    /// Whether the study is shared: a worker that found nothing to measure (the others took
    /// the budget, or its time ran out at once) has not failed.
    pub(crate) shared: bool,
    /// Where the results are, and the `ktune results` arguments that read them.
    pub(crate) place: String,
    pub(crate) results_args: String,
    pub(crate) started: Instant,
}

/// Failures of one kind: how many, and the first line of the first one's reason.
struct Failures {
    kind: FailureKind,
    count: usize,
    first: String,
}

impl Report<'_> {
    /// A study of several objectives: its Pareto front, by the first objective.
    fn front(&self) -> Vec<&Record> {
        if self.objectives.len() < 2 {
            return Vec::new();
        }
        let values: Vec<Option<&[f64]>> = self.records.iter().map(|r| r.outcome.values()).collect();
        let front = ktune_core::pareto::front_of(&values, &self.objectives);
        front.into_iter().map(|i| &self.records[i]).collect()
    }

    /// The record the study's goal picks, with the goal's text.
    fn goal_pick(&self) -> Option<(&str, &Record)> {
        let text = self.goal.as_deref()?;
        let goal = ktune_core::pareto::Goal::parse(text, &self.objectives).ok()?;
        let points: Vec<Option<Vec<f64>>> = self
            .records
            .iter()
            .map(|r| r.outcome.values().map(<[f64]>::to_vec))
            .collect();
        let directions: Vec<Direction> = self.objectives.iter().map(|m| m.direction).collect();
        let i = goal.pick(&points, &directions)?;
        Some((text, &self.records[i]))
    }

    /// A record as `--json` writes it, with the other objectives of a study of several by
    /// name.
    fn record_with_objectives(&self, r: &Record) -> serde_json::Value {
        let mut j = record_json(self.space, r, self.objective);
        for (m, v) in self
            .objectives
            .iter()
            .zip(r.outcome.values().unwrap_or(&[]))
            .skip(1)
        {
            j[m.name.as_str()] = json!(v);
        }
        j
    }

    /// The objectives' values of a record of a study of several, as `time = 1.5, energy = 2`.
    fn objective_values(&self, r: &Record) -> String {
        self.objectives
            .iter()
            .zip(r.outcome.values().unwrap_or(&[]))
            .map(|(m, v)| format!("{} = {v:.6}", m.name))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn best(&self) -> Option<&Record> {
        self.records
            .iter()
            .filter(|r| r.outcome.objective().is_some())
            .reduce(|a, b| {
                let (va, vb) = (a.outcome.objective(), b.outcome.objective());
                let better = self
                    .direction
                    .better(vb.unwrap_or(f64::NAN), va.unwrap_or(f64::NAN));
                if better { b } else { a }
            })
    }

    fn default_value(&self) -> Option<f64> {
        let d = self.default?;
        self.records
            .iter()
            .find(|r| r.config == d)
            .and_then(|r| r.outcome.objective())
    }

    fn failures(&self) -> Vec<Failures> {
        let mut by_kind: Vec<Failures> = Vec::new();
        for r in self.records {
            if let ktune_core::Outcome::Failed { kind, reason, .. } = &r.outcome {
                match by_kind.iter_mut().find(|f| f.kind == *kind) {
                    Some(f) => f.count += 1,
                    None => by_kind.push(Failures {
                        kind: *kind,
                        count: 1,
                        first: reason.lines().next().unwrap_or("").to_string(),
                    }),
                }
            }
        }
        by_kind
    }

    fn stop_text(&self) -> &'static str {
        stop_text(self.stop)
    }

    /// The error of a run in which no configuration ran successfully (`None`: a worker of a
    /// shared study that is still empty, which is no error).
    fn nothing_ran(&self, failures: &[Failures]) -> Option<anyhow::Error> {
        if self.records.is_empty() && self.shared {
            return None;
        }
        Some(self.nothing_ran_error(failures))
    }

    fn nothing_ran_error(&self, failures: &[Failures]) -> anyhow::Error {
        let kinds: Vec<String> = failures
            .iter()
            .map(|f| format!("{} {}", f.count, f.kind.name()))
            .collect();
        if self.records.is_empty() {
            anyhow::anyhow!("nothing was evaluated; results in {}", self.place)
        } else {
            anyhow::anyhow!(
                "no configuration ran successfully: {} evaluated, {} (first reason of each kind above; `ktune results --status failed {}` lists them all)",
                self.records.len(),
                kinds.join(", "),
                self.results_args
            )
        }
    }

    /// The summary as one JSON object (`--json`).
    pub(crate) fn json(&self) -> Result<()> {
        let failures = self.failures();
        let failed: Vec<_> = failures
            .iter()
            .map(|f| json!({"kind": f.kind.name(), "count": f.count, "first_reason": f.first}))
            .collect();
        let best = self.best();
        outln!(
            "{}",
            json!({
                "summary": {
                    "best": best.map(|b| record_json(self.space, b, self.objective)),
                    "pareto_front": (self.objectives.len() > 1).then(|| {
                        self.front()
                            .into_iter()
                            .map(|r| self.record_with_objectives(r))
                            .collect::<Vec<_>>()
                    }),
                    "goal": self.goal_pick().map(|(text, r)| {
                        json!({"goal": text, "pick": self.record_with_objectives(r)})
                    }),
                    "default": self.default_value(),
                    "evaluations": self.records.len(),
                    "recorded": self.mine,
                    "resumed": self.resumed,
                    "failed": failed,
                    "stop": self.stop_text(),
                    "database": self.place,
                    "seconds": self.started.elapsed().as_secs_f64(),
                    "overhead_ms_per_evaluation": self.overhead.ms_per_evaluation(),
                }
            })
        )?;
        match best
            .is_none()
            .then(|| self.nothing_ran(&failures))
            .flatten()
        {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The summary as text; one line with `quiet`.
    pub(crate) fn text(&self, quiet: bool) -> Result<()> {
        let failures = self.failures();
        let Some(best) = self.best() else {
            // Why, by kind, with an example each: the first thing a user needs to fix.
            for f in &failures {
                outln!("  {} {} (e.g. {})", f.count, f.kind.name(), f.first)?;
            }
            return match self.nothing_ran(&failures) {
                Some(e) => Err(e),
                None => Ok(outln!(
                    "nothing was evaluated by this worker ({}); the study is in {}",
                    self.stop_text(),
                    self.place
                )?),
            };
        };
        let value = best.outcome.objective().unwrap_or(f64::NAN);
        let objective = self.objective;
        if quiet {
            outln!(
                "best {objective} = {value:.6}: {}",
                self.space.describe(&best.config)
            )?;
            return Ok(());
        }
        outln!("best configuration: {}", self.space.describe(&best.config))?;
        outln!("  {objective} = {value:.6}{}", spread(best, &self.metrics))?;
        if let Some(d) = self.default_value() {
            let ratio = match self.direction {
                Direction::Minimize => d / value,
                Direction::Maximize => value / d,
            };
            outln!(
                "  default configuration: {objective} = {d:.6}; the best is {ratio:.2}x better"
            )?;
        }
        let front = self.front();
        if !front.is_empty() {
            const SHOWN: usize = 10;
            let names: Vec<&str> = self.objectives.iter().map(|m| m.name.as_str()).collect();
            outln!(
                "Pareto front of {}: {} configurations{}",
                names.join(" and "),
                front.len(),
                if front.len() > SHOWN {
                    format!(" (the first {SHOWN} by {})", names[0])
                } else {
                    String::new()
                }
            )?;
            for r in front.iter().take(SHOWN) {
                outln!(
                    "  {}: {}",
                    self.objective_values(r),
                    self.space.describe(&r.config)
                )?;
            }
            outln!(
                "  (all of it: ktune results {} --pareto)",
                self.results_args
            )?;
        }
        if let Some((text, r)) = self.goal_pick() {
            outln!(
                "the goal `{text}` picks: {}",
                self.space.describe(&r.config)
            )?;
            outln!("  {}", self.objective_values(r))?;
        }
        self.evaluations(&failures)?;
        outln!(
            "results: {}   (ktune results {})",
            self.place,
            self.results_args
        )?;
        Ok(())
    }

    /// The lines on the evaluations, the failures and the tuner's overhead.
    fn evaluations(&self, failures: &[Failures]) -> Result<()> {
        let total = self.records.len();
        let others = total.saturating_sub(self.mine + self.resumed);
        outln!(
            "evaluations: {total} ({} this run, {} resumed{}), stopped because {}, in {:.1} s",
            self.mine,
            self.resumed,
            if others > 0 {
                format!(", {others} by other workers")
            } else {
                String::new()
            },
            self.stop_text(),
            self.started.elapsed().as_secs_f64()
        )?;
        let aborted = self
            .records
            .iter()
            .filter(|r| r.outcome.samples().is_some_and(|s| s.aborted))
            .count();
        if aborted > 0 {
            outln!(
                "repetition stopped early for {aborted} configurations clearly worse than the best so far"
            )?;
        }
        let failed: usize = failures.iter().map(|f| f.count).sum();
        if failed > 0 {
            outln!("failed: {failed}")?;
            for f in failures {
                outln!("  {} {} (e.g. {})", f.count, f.kind.name(), f.first)?;
            }
        }
        let wall = self.started.elapsed().as_secs_f64();
        if self.overhead.evaluations > 0 && wall > 0.0 {
            outln!(
                "tuner overhead: {:.1} ms per evaluation ({:.2}% of the wall time): strategy, storage and bookkeeping, not compiling or running",
                self.overhead.ms_per_evaluation(),
                100.0 * self.overhead.seconds / wall,
            )?;
        }
        Ok(())
    }
}

/// How sure the best value is: the interval of its samples, or the spread the runner
/// reported (its `... stdev` metric; 0 for one run); with instances, each one's value.
fn spread(best: &Record, metrics: &[String]) -> String {
    let ktune_core::Outcome::Ok { values, .. } = &best.outcome else {
        return String::new();
    };
    if let Some(s) = best.outcome.summary().filter(|s| s.n > 1) {
        return format!(
            " ({} of {} samples; 95% interval [{:.6}, {:.6}])",
            s.statistic.name(),
            s.n,
            s.ci_low,
            s.ci_high
        );
    }
    let instances: Vec<String> = metrics
        .iter()
        .zip(values)
        .skip(1)
        .filter_map(|(m, v)| m.split_once('@').map(|(_, i)| format!("{i}: {v:.6}")))
        .collect();
    if !instances.is_empty() {
        return format!(" (the geometric mean of {})", instances.join(", "));
    }
    match (metrics.last(), values.last()) {
        (Some(m), Some(&v)) if metrics.len() > 1 && m.ends_with(" stdev") && v > 0.0 => {
            format!(" (± {v:.4} over the measured runs)")
        }
        _ => String::new(),
    }
}

/// Why a run ended, as a person reads it.
pub(crate) fn stop_text(stop: StopReason) -> &'static str {
    match stop {
        StopReason::Evaluations => "the evaluation budget is spent",
        StopReason::Time => "the time limit was reached",
        StopReason::Target => "the target value was reached",
        StopReason::SpaceExhausted => "every configuration has been evaluated",
        StopReason::StrategyExhausted => "the strategy has nothing more to propose",
        StopReason::Interrupted => "interrupted",
    }
}
