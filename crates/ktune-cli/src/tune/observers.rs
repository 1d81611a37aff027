//! What `ktune tune` shows while it tunes, as observers of the study's loop: a progress bar
//! on a terminal, one line per evaluation in a log, one JSON object per evaluation with
//! `--json`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use ktune_core::{Kept, Observe, Record, Session};
use ktune_space::{Configuration, SearchSpace};
use serde_json::json;

/// One line per evaluation on standard error, for logs (where a progress bar draws
/// nothing): `ktune: [n/max] configuration: value; best b`. When standard error's reader
/// goes away (`ktune tune spec 2>&1 | less`, then quitting `less`) it raises the stop flag,
/// as [`JsonLines`] does for standard output.
pub(crate) struct LogLines {
    /// The objective's name.
    pub(crate) objective: String,
    /// The default configuration, named as such on its line.
    pub(crate) default: Option<Configuration>,
    pub(crate) stop: Arc<AtomicBool>,
    pub(crate) gone: bool,
}

impl Observe for LogLines {
    fn record(&mut self, session: &Session<'_>, record: &Record, kept: Kept) {
        if self.gone || !matches!(kept, Kept::Stored(_)) {
            return;
        }
        // Observers hear of a batch after the session holds all of it: its position in the
        // study numbers the line (with `jobs = 2` the length alone said [3/60] twice).
        let records = session.records();
        let n = records
            .iter()
            .rposition(|r| r.config == record.config)
            .map_or(records.len(), |i| i + 1);
        let line = evaluation_line(
            n,
            session.budget().max_evaluations,
            session.space(),
            record,
            &self.objective,
            session.best_value(),
        );
        let default = if self.default.as_ref() == Some(&record.config) {
            " (the default configuration)"
        } else {
            ""
        };
        if errln!("{line}{default}").is_err() {
            self.gone = true;
            self.stop.store(true, Ordering::SeqCst);
        }
    }
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

/// A progress bar on a terminal: evaluations of the budget, the best value, failures.
pub(crate) struct Progress {
    bar: indicatif::ProgressBar,
    objective: String,
    failed: usize,
}

impl Progress {
    pub(crate) fn new(objective: &str) -> Progress {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {pos}/{len} evaluations (eta {eta}) {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Progress {
            bar,
            objective: objective.to_string(),
            failed: 0,
        }
    }
}

impl Observe for Progress {
    fn start(&mut self, session: &Session<'_>) {
        self.bar
            .set_length(session.budget().max_evaluations.unwrap_or(0) as u64);
        self.bar.set_position(session.records().len() as u64);
        self.failed = session
            .records()
            .iter()
            .filter(|r| r.outcome.failure().is_some())
            .count();
    }

    fn record(&mut self, session: &Session<'_>, record: &Record, _: Kept) {
        self.failed += usize::from(record.outcome.failure().is_some());
        self.bar.set_position(session.records().len() as u64);
        self.bar.set_message(format!(
            "best {} = {}, {} failed",
            self.objective,
            session
                .best_value()
                .map_or("-".into(), |b| format!("{b:.4}")),
            self.failed
        ));
    }

    fn stop(&mut self, _: &Session<'_>, _: ktune_core::StopReason) {
        self.bar.finish_and_clear();
    }
}

/// One JSON object per evaluation of this process on standard output (`--json`). When the
/// reader goes away (`ktune tune --json | head -1`) it raises the stop flag: what is recorded
/// stays, and tuning stops after the evaluations in flight, as on Ctrl-C.
pub(crate) struct JsonLines {
    pub(crate) objective: String,
    pub(crate) stop: Arc<AtomicBool>,
    gone: bool,
}

impl JsonLines {
    pub(crate) fn new(objective: &str, stop: Arc<AtomicBool>) -> JsonLines {
        JsonLines {
            objective: objective.to_string(),
            stop,
            gone: false,
        }
    }
}

impl Observe for JsonLines {
    fn record(&mut self, session: &Session<'_>, record: &Record, kept: Kept) {
        if self.gone || !matches!(kept, Kept::Stored(_)) {
            return;
        }
        if outln!("{}", record_json(session.space(), record, &self.objective)).is_err() {
            self.gone = true;
            self.stop.store(true, Ordering::SeqCst);
        }
    }
}

/// A record as `--json` prints it: the configuration by parameter, the status, the
/// objective's value, the failure's reason, the clock, the timings and, for repeated
/// measurements, their summary.
pub(crate) fn record_json(space: &SearchSpace, r: &Record, objective: &str) -> serde_json::Value {
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

#[cfg(test)]
mod tests {
    use super::*;
    use ktune_core::conformance::check_observer;

    #[test]
    fn the_observers_of_ktune_tune_conform() {
        check_observer(|stop| LogLines {
            objective: "time".into(),
            default: None,
            stop,
            gone: false,
        });
        check_observer(|stop| LogLines {
            objective: "time".into(),
            default: Some(vec![0, 0, 0]),
            stop,
            gone: false,
        });
        check_observer(|_| Progress::new("time"));
        check_observer(|stop| JsonLines::new("time", stop));
    }
}
