//! What an evaluation produces: values per metric, or a failure of a kind, plus timings.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{Samples, Summary};

/// What a runner observed beside its metrics, by name: the device and its clocks, power,
/// the individual measured times, ... Stored with each result; strategies never see it.
pub type Observed = BTreeMap<String, serde_json::Value>;

/// Whether smaller or larger values of a metric are better.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Smaller is better (time, energy).
    Minimize,
    /// Larger is better (GFLOP/s, throughput).
    Maximize,
}

impl Direction {
    /// The value in minimisation form (negated when larger is better), which is what
    /// strategies see.
    pub fn to_min(self, value: f64) -> f64 {
        match self {
            Direction::Minimize => value,
            Direction::Maximize => -value,
        }
    }

    /// `"minimize"` or `"maximize"`, as specs and stored studies write it.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Minimize => "minimize",
            Direction::Maximize => "maximize",
        }
    }

    /// Whether `a` is strictly better than `b`.
    pub fn better(self, a: f64, b: f64) -> bool {
        self.to_min(a) < self.to_min(b)
    }

    /// The direction a metric usually has, from its name: rates (`GFLOP/s`, `.../s`,
    /// `throughput`, `bandwidth`) are maximised, everything else (time, energy) minimised.
    pub fn guess(name: &str) -> Direction {
        let lower = name.to_ascii_lowercase();
        if lower.contains("/s")
            || lower.contains("flops")
            || lower.contains("throughput")
            || lower.contains("bandwidth")
        {
            Direction::Maximize
        } else {
            Direction::Minimize
        }
    }
}

/// A named quantity a runner reports; the first metric of a runner is the objective.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metric {
    /// Its name (`time`, `GFLOP/s`, ...).
    pub name: String,
    /// Which way is better.
    pub direction: Direction,
}

impl Metric {
    /// A metric.
    pub fn new(name: impl Into<String>, direction: Direction) -> Metric {
        Metric {
            name: name.into(),
            direction,
        }
    }
}

/// Why a configuration failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// It violates the known constraints (only constraint-unaware strategies propose these).
    Invalid,
    /// It did not compile.
    Compile,
    /// It crashed or could not be launched.
    Runtime,
    /// It ran past its time limit.
    Timeout,
    /// It ran but its output was wrong.
    WrongOutput,
}

impl FailureKind {
    /// The name used in records and reports.
    pub fn name(self) -> &'static str {
        match self {
            FailureKind::Invalid => "invalid",
            FailureKind::Compile => "compile",
            FailureKind::Runtime => "runtime",
            FailureKind::Timeout => "timeout",
            FailureKind::WrongOutput => "wrong_output",
        }
    }

    /// The kind called `name` (as [`name`](Self::name) writes it).
    pub fn from_name(name: &str) -> Option<FailureKind> {
        [
            FailureKind::Invalid,
            FailureKind::Compile,
            FailureKind::Runtime,
            FailureKind::Timeout,
            FailureKind::WrongOutput,
        ]
        .into_iter()
        .find(|k| k.name() == name)
    }
}

/// Where an evaluation's time went, in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Timings {
    /// Compiling the configuration.
    pub compile: f64,
    /// Running it (all warm-up and measured repetitions).
    pub benchmark: f64,
    /// Checking its output.
    pub verification: f64,
    /// Everything else the tool spent on it.
    pub framework: f64,
}

impl Timings {
    /// The total.
    pub fn total(&self) -> f64 {
        self.compile + self.benchmark + self.verification + self.framework
    }
}

/// The result of evaluating one configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum Outcome {
    /// It ran: one value per runner metric, the objective first.
    Ok {
        /// The metric values.
        values: Vec<f64>,
        /// Where the time went.
        timings: Timings,
        /// What else the runner observed.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        observed: Observed,
        /// The repeated measurements the objective was computed from, when the runner
        /// measured more than a single value.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        samples: Option<Samples>,
    },
    /// It failed.
    Failed {
        /// Why.
        kind: FailureKind,
        /// A human-readable reason (compiler message, stderr tail, ...).
        reason: String,
        /// Where the time went before it failed.
        timings: Timings,
        /// What else the runner observed.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        observed: Observed,
    },
}

impl Outcome {
    /// A successful outcome.
    pub fn ok(values: Vec<f64>, timings: Timings) -> Outcome {
        Outcome::Ok {
            values,
            timings,
            observed: Observed::new(),
            samples: None,
        }
    }

    /// The same outcome with the samples it was computed from (ignored for a failure).
    pub fn with_samples(mut self, more: Samples) -> Outcome {
        if let Outcome::Ok { samples, .. } = &mut self {
            *samples = Some(more);
        }
        self
    }

    /// The samples of a successful outcome, when the runner kept them.
    pub fn samples(&self) -> Option<&Samples> {
        match self {
            Outcome::Ok { samples, .. } => samples.as_ref(),
            Outcome::Failed { .. } => None,
        }
    }

    /// The summary statistics of the samples, when there are any.
    pub fn summary(&self) -> Option<Summary> {
        self.samples()
            .filter(|s| !s.values.is_empty())
            .map(Samples::summary)
    }

    /// A failure.
    pub fn failed(kind: FailureKind, reason: impl Into<String>, timings: Timings) -> Outcome {
        Outcome::Failed {
            kind,
            reason: reason.into(),
            timings,
            observed: Observed::new(),
        }
    }

    /// The same outcome with `observed` added (replacing entries of the same name).
    pub fn with_observed(mut self, more: Observed) -> Outcome {
        match &mut self {
            Outcome::Ok { observed, .. } | Outcome::Failed { observed, .. } => {
                observed.extend(more)
            }
        }
        self
    }

    /// What the runner observed beside its metrics.
    pub fn observed(&self) -> &Observed {
        match self {
            Outcome::Ok { observed, .. } | Outcome::Failed { observed, .. } => observed,
        }
    }

    /// The objective (the first metric), if it ran.
    pub fn objective(&self) -> Option<f64> {
        match self {
            Outcome::Ok { values, .. } => values.first().copied(),
            Outcome::Failed { .. } => None,
        }
    }

    /// Every metric's value, the objective first, if it ran.
    pub fn values(&self) -> Option<&[f64]> {
        match self {
            Outcome::Ok { values, .. } => Some(values),
            Outcome::Failed { .. } => None,
        }
    }

    /// The failure kind, if it failed.
    pub fn failure(&self) -> Option<FailureKind> {
        match self {
            Outcome::Ok { .. } => None,
            Outcome::Failed { kind, .. } => Some(*kind),
        }
    }

    /// The timings.
    pub fn timings(&self) -> &Timings {
        match self {
            Outcome::Ok { timings, .. } | Outcome::Failed { timings, .. } => timings,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions() {
        assert!(Direction::Minimize.better(1.0, 2.0));
        assert!(Direction::Maximize.better(2.0, 1.0));
        assert_eq!(Direction::Maximize.to_min(3.0), -3.0);
        assert_eq!(Direction::guess("GFLOP/s"), Direction::Maximize);
        assert_eq!(Direction::guess("time"), Direction::Minimize);
    }

    #[test]
    fn outcomes_serialise_with_a_status_tag() {
        let o = Outcome::failed(FailureKind::Compile, "nvcc: error", Timings::default());
        let j = serde_json::to_value(&o).unwrap();
        assert_eq!(j["status"], "failed");
        assert_eq!(j["kind"], "compile");
        assert_eq!(serde_json::from_value::<Outcome>(j.clone()).unwrap(), o);
        // No observed, no key: older readers and golden files stay as they were.
        assert!(j.get("observed").is_none());
    }

    #[test]
    fn observed_values_travel_with_the_outcome() {
        let mut obs = Observed::new();
        obs.insert("device".into(), serde_json::json!("NVIDIA H100"));
        let o = Outcome::ok(vec![1.5], Timings::default()).with_observed(obs.clone());
        assert_eq!(o.observed(), &obs);
        let j = serde_json::to_value(&o).unwrap();
        assert_eq!(j["observed"]["device"], "NVIDIA H100");
        assert_eq!(serde_json::from_value::<Outcome>(j).unwrap(), o);
    }

    #[test]
    fn samples_travel_with_a_success_only() {
        let samples = crate::Samples::new(vec![1.0, 3.0], crate::Statistic::Mean);
        let o = Outcome::ok(vec![2.0], Timings::default()).with_samples(samples.clone());
        assert_eq!(o.samples(), Some(&samples));
        assert_eq!(o.summary().unwrap().mean, 2.0);
        let j = serde_json::to_value(&o).unwrap();
        assert_eq!(j["samples"]["values"], serde_json::json!([1.0, 3.0]));
        assert_eq!(serde_json::from_value::<Outcome>(j).unwrap(), o);
        let f =
            Outcome::failed(FailureKind::Runtime, "x", Timings::default()).with_samples(samples);
        assert_eq!(f.samples(), None);
        assert!(
            serde_json::to_value(Outcome::ok(vec![1.0], Timings::default()))
                .unwrap()
                .get("samples")
                .is_none()
        );
    }
}
